package refinement

import (
	"fmt"

	"cdcspec/impl/core"
	"cdcspec/impl/sim"
	"cdcspec/model"
	"cdcspec/spec"
)

// filter says which model actions an implementation step may stand for;
// depth is the number of model actions already taken for it.
type filter func(a model.Action, s *model.State, depth int) bool

func nothing(model.Action, *model.State, int) bool { return false }

func coordinatorAction(a model.Action) bool {
	switch a.Kind {
	case model.ACoordSchedule, model.ACoordTick, model.ACoordRetryTimer:
		return true
	}
	return false
}

// nodeAction: a periodic or follow-up action of the components on slot sl
// (the coordinator's when sl is 0).
func nodeAction(a model.Action, s *model.State, sl uint8) bool {
	switch a.Kind {
	case model.ACoordSchedule, model.ACoordTick, model.ACoordRetryTimer:
		return sl == 0
	case model.AMaintTick, model.AMaintCleanup, model.AMaintSchedule, model.ADMTick, model.ADMComplete, model.AMergePostFinish, model.AOpPostFinish:
		return a.Node == sl
	case model.ADispClosed:
		d, ok := s.DispatcherSlot(a.Arg)
		return ok && d == sl
	}
	return false
}

// modelKinds maps an implementation message to the model message kinds it
// carries and the Tracker follows (core.MessageKind.ModelKinds without
// untracked); nil for messages it does not.
func modelKinds(m core.Message) []string {
	k, ok := core.KindOf(m)
	if !ok {
		return nil
	}
	var out []string
	for _, mk := range k.ModelKinds {
		if untracked[mk] == "" {
			out = append(out, mk)
		}
	}
	return out
}

// untracked are the model's message kinds the Tracker never matches a
// delivery against, with the reason.
var untracked = map[string]string{
	// The model starts with its coordinator bootstrapped and has these
	// messages only after a coordinator failover (model/lifecycle.go),
	// where the Tracker stops following.
	"CoordinatorBootstrapRequest":  "coordinator failover: the Tracker stops",
	"CoordinatorBootstrapResponse": "coordinator failover: the Tracker stops",
	// The Tracker stops at a blocking DDL or syncpoint (refinement.go, the
	// steps it does not follow), so no barrier message reaches a match.
	"BlockStatusRequest":        "blocking DDL: the Tracker stops",
	"HeartBeatResponse(action)": "blocking DDL: the Tracker stops",
}

// mapStep maps one implementation step to a description, the model actions
// it may stand for and whether at least one must be taken; or to the reason
// the Tracker must stop following.
func (t *Tracker) mapStep(st sim.Step) (what string, f filter, mustAct bool, stop string) {
	switch st.Kind {
	case sim.StepDeliver:
		return t.mapDeliver(st)
	case sim.StepTick:
		return t.mapTick(st)
	case sim.StepUpstream:
		if !t.upstreamCanAdvance() {
			t.tsExhausted = true
		}
		// The model's timestamps are 1..TsMax: its upstream follows the
		// implementation's only while it leaves two ts for each table a
		// CREATE TABLE may still create (its commit ts, and one past it).
		return "upstream advances", func(a model.Action, s *model.State, depth int) bool {
			return depth == 0 && a.Kind == model.AUpstreamAdvance && int(s.UpTs)+2*uncreated(s) < int(t.Cfg.TsMax)
		}, true, ""
	case sim.StepSinkResult:
		// A write's outcome moves a dispatcher's checkpoint (not in the
		// View) or records a sink error the model took at the fault.
		return "sink result on " + t.name(st.Node), nothing, false, ""
	case sim.StepMembership:
		return t.mapMembership(st)
	}
	// Faults and API calls.
	what = st.Name
	if st.Node != "" {
		what += " " + t.name(st.Node)
	}
	if f, mustAct, stop, ok := t.mapFault(st, &what); ok {
		return what, f, mustAct, stop
	}
	return t.mapAction(st, what)
}

// mapDeliver maps a delivery: the model's deliveries of the message's
// kinds (deliverMatching) and the receiver's own follow-up actions.
func (t *Tracker) mapDeliver(st sim.Step) (what string, f filter, mustAct bool, stop string) {
	sl, ok := t.currentSlot(st.Node)
	what = fmt.Sprintf("%s delivered %s->%s", st.Msg.TypeName(), t.name(st.From), t.name(st.Node))
	kinds := modelKinds(st.Msg)
	if !ok || kinds == nil {
		return what, nothing, false, ""
	}
	if rm, isRm := st.Msg.(*core.RemoveMaintainerRequest); isRm && !rm.Cascade && rm.Changefeed == t.Feed {
		// The implementation's origin removes its table trigger over
		// several steps (a Remove to its own DM, the trigger's async
		// close, its Stopped, the next re-sent remove), the model's in
		// one (SPEC.md 7.1, item 16): the model takes the remove at the
		// step that closes the implementation's maintainer, and until
		// then implView shows the origin as before the remove (see
		// closingOrigin).
		if info, ok := t.maintainerOn(st.Node); ok && info.Removing && !info.Removed {
			t.closingOrigin[st.Node] = true
			t.holdDelivery = true
		} else if t.closingOrigin[st.Node] {
			t.closedOrigin = true // this re-sent remove closed it: the model takes the remove now
		}
	}
	if req, isReq := st.Msg.(*core.ScheduleDispatcherRequest); isReq && t.closingOrigin[st.Node] && req.Config.Span.Table == 0 && req.Action == core.ScheduleRemove {
		// The closing origin's Remove of its own table trigger: the
		// model has no such message (its remove took the trigger).
		t.holdDelivery = true
	}
	if t.tsExhausted && t.reportsError(st.Msg) {
		return what, nil, false, "an error report after the model's timestamps ran out: whether it comes with checkpoint progress, which decides the backoff, is beyond the model's ts range"
	}
	return what, func(a model.Action, s *model.State, depth int) bool {
		return !periodicKind(a.Kind) && a.Kind != model.ADeliver && nodeAction(a, s, sl)
	}, false, ""
}

// mapTick maps a tick of a node: its periodic actions (Tracker.periodic)
// and the choices the implementation makes at a tick.
func (t *Tracker) mapTick(st sim.Step) (what string, f filter, mustAct bool, stop string) {
	sl, ok := t.currentSlot(st.Node)
	what = "tick on " + t.name(st.Node)
	if !ok {
		return what, nothing, false, ""
	}
	return what, func(a model.Action, s *model.State, _ int) bool {
		if a.Kind == model.ADeliver && !a.Msg.ToCoordinator() && a.Msg.DstSlot() == sl && tickDelivers(s, a.Msg) {
			// The implementation's dispatcher manager creates a
			// requested dispatcher at its next tick (the journaled
			// Create); the model creates it on delivery, after what
			// its channel holds ahead of the Create.
			return true
		}
		if a.Kind == model.ADeliver && a.Msg.IsMerge() && !a.Msg.ToCoordinator() && a.Msg.DstSlot() == sl {
			// The implementation's dispatcher manager journals a
			// MergeDispatcherRequest on delivery and commits the merge
			// at a later tick (doMerges, once no source has a write in
			// flight); the model's commits on delivery (SPEC.md 7.1,
			// item 14), so it takes the delivery at a tick.
			return true
		}
		if a.Kind == model.AMaintTick && a.Node == sl && s.Maint[sl].Removed {
			// The manager's tick sends its MaintainerHeartbeat, with a
			// closed maintainer's Stopped status, and then deletes the
			// closed maintainer (maintainer_manager.go Run at
			// b813e76f9: sendHeartbeat, then
			// cleanupRemovedMaintainers). The model's cleanup is an
			// action of its own and the tick's periodic heartbeat is
			// taken after the tick's choices, when the cleaned-up
			// maintainer no longer reports: so the heartbeat may come
			// first, as a choice, for the cleanup to follow it.
			return true
		}
		if a.Kind == model.ACoordTick && sl == 0 {
			// a coordinator tick that binds a moved changefeed to its
			// target (see coordTickActs)
			n, _ := model.Step(t.Cfg, *s, a)
			return coordTickActs(s, &n)
		}
		return !periodicKind(a.Kind) && nodeAction(a, s, sl)
	}, false, ""
}

// tickDelivers reports whether a tick of m's receiver may deliver m, with
// a Create queued for the receiver (the Create is taken at the receiver's
// tick, see mapTick): a schedule request on the channel of such a Create
// (the Create itself, or a request ahead of it that the model must
// deliver first), a HeartBeatRequest(watermark) or a
// RemoveMaintainerRequest. A message of another kind never stands ahead
// of a Create (model/net.go, recvQueue) and the implementation delivers
// its own copy at a delivery step of its own (deliverMatching): letting
// the tick deliver those too (a re-sent AddMaintainerRequest or
// MaintainerBootstrapRequest, a MaintainerBootstrapResponse) multiplied
// the candidates by every subset of stale re-sends the tick might have
// consumed, states whose Views are equal (SPEC.md 10.1, route 2). The
// two other kinds are what the runs of refine@N need (without them, some
// of them diverge on the original model): the watermarks the model's
// dispatcher manager sends at every tick, ahead of its status reports on
// their channel, and a move origin's remove, taken at the step that
// closes the implementation's maintainer (closingOrigin). This only
// narrows the old rule (any message to the receiver while a Create is
// queued for it), so each candidate set is a subset of the old one and
// no divergence the old rule reported is lost.
func tickDelivers(s *model.State, m model.Msg) bool {
	switch m.KindName() {
	case "HeartBeatRequest(watermark)", "RemoveMaintainerRequest":
		return s.CreateQueuedFor(m.DstSlot())
	case "ScheduleDispatcherRequest":
		for _, c := range s.InFlight() {
			if c.IsCreate() && !c.ToCoordinator() && c.DstSlot() == m.DstSlot() && c.Src == m.Src {
				return true
			}
		}
	}
	return false
}

// mapMembership maps capture keys expiring: the model detects every
// mapped slot that left.
func (t *Tracker) mapMembership(st sim.Step) (what string, f filter, mustAct bool, stop string) {
	var left []uint8
	for _, id := range st.Left {
		if sl, ok := t.currentSlot(id); ok {
			left = append(left, sl)
			t.detected[sl] = true
		}
	}
	what = fmt.Sprintf("capture keys expired: %v left", st.Left)
	if len(left) == 0 {
		return what, nothing, false, ""
	}
	return what, detects(left), true, ""
}

// mapFault maps a fault of the vocabulary; ok is false for a name it
// does not map (mapAction then judges it). It may rename *what.
func (t *Tracker) mapFault(st sim.Step, what *string) (filter, bool, string, bool) {
	switch spec.Fault(st.Name) {
	case spec.FaultKillCapture, spec.FaultExpireSession:
		sl, ok := t.currentSlot(st.Node)
		if !ok {
			return nothing, false, "", true
		}
		if sl == 0 {
			return nil, false, "the coordinator's capture died: the model's coordinator failover is a resign (slot 0 keeps its maintainer and dispatchers), not a kill", true
		}
		if spec.Fault(st.Name) == spec.FaultExpireSession {
			t.detected[sl] = true
		} else {
			return func(a model.Action, _ *model.State, depth int) bool {
				return depth == 0 && a.Kind == model.ACrash && a.Node == sl
			}, true, "", true
		}
		return func(a model.Action, _ *model.State, depth int) bool {
			return (depth == 0 && a.Kind == model.ACrash && a.Node == sl) || (depth == 1 && a.Kind == model.ADetect && a.Node == sl)
		}, true, "", true
	case spec.FaultAddCapture:
		sl, ok := t.restartSlot()
		if !ok {
			return nil, false, "a capture joined and no model slot is free", true
		}
		t.inc[sl]++
		t.slot[st.Node], t.ident[st.Node] = sl, model.IdentOf(sl, t.inc[sl])
		t.detected[sl] = false
		*what = string(spec.FaultAddCapture) + " " + t.name(st.Node)
		return func(a model.Action, _ *model.State, depth int) bool {
			return depth == 0 && a.Kind == model.ARestart && a.Node == sl
		}, true, "", true
	case spec.FaultSinkError, spec.FaultFastFailError:
		sl, ok := t.currentSlot(st.Node)
		if !ok {
			return nothing, false, "", true
		}
		kind := model.ASinkError
		if spec.Fault(st.Name) == spec.FaultFastFailError {
			kind = model.AFastFail
		}
		return func(a model.Action, s *model.State, depth int) bool {
			d, ok := s.DispatcherSlot(a.Arg)
			return depth == 0 && a.Kind == kind && ok && d == sl
		}, false, "", true
	case spec.FaultStallUpstream:
		t.stalled = true
		return only(model.AUpstreamStall), false, "", true
	case spec.FaultResumeUpstream:
		t.stalled = false
		return only(model.AUpstreamResume), false, "", true
	case spec.FaultHeal:
		t.stalled = false
		return nothing, false, "", true
	case spec.FaultSlowCloseDispatcher:
		// The failpoint only delays when the capture's dispatchers finish
		// closing; the model's dispatcher-closed is a choice of any later
		// tick already.
		return nothing, false, "", true
	case spec.FaultRandomMessageFaults, spec.FaultDropMessages, spec.FaultDuplicateMessages,
		spec.FaultDelayMessages, spec.FaultPartition, spec.FaultHealNetwork:
		return nothing, false, "", true
	}
	return nil, false, "", false
}

// mapAction maps a domain action (an API call); anything else stops the
// Tracker.
func (t *Tracker) mapAction(st sim.Step, what string) (string, filter, bool, string) {
	switch spec.Action(st.Name) {
	case spec.ActionCreateTable:
		if st.Arg > model.MaxTables {
			return what, nil, false, fmt.Sprintf("table %d: the model has tables 1..%d", st.Arg, model.MaxTables)
		}
		if t.stalled {
			return what, nil, false, "create-table while the upstream is stalled: the model's DDLs need a live upstream"
		}
		if t.ddls++; t.ddls > 1 {
			// Found by this check: with two CREATE TABLEs the model's
			// trigger (one pending NONE slot) never reports the second
			// one, while the implementation schedules both.
			return what, nil, false, "a second create-table: the model's table trigger holds one pending CREATE TABLE"
		}
		return what, only(model.ACreateTable), true, ""
	case spec.ActionMoveTable:
		return t.mapMoveTable(st, what)
	case spec.ActionBlockingDDL:
		// What stops a barrier mapping: the model's upstream commits the one
		// blocking DDL of its configuration (Config.Barrier fixes its kind
		// and tables) at its next ts, not a drawn one, and model.View has no
		// block stage, so a followed barrier would compare only its effect on
		// the table set.
		return what, nil, false, "blocking-ddl: the model commits the one blocking DDL of its configuration (Config.Barrier fixes kind and tables), and its View has no block stage to compare"
	case spec.ActionSplitTable:
		return t.mapSplit(st, what)
	case spec.ActionMergeTable:
		return t.mapMerge(st, what)
	case spec.ActionMoveMaintainer:
		// The step names the coordinator's capture, not the target: any
		// target slot, the Views that follow tell them apart.
		return what, only(model.ACoordMove), true, ""
	case spec.ActionPauseChangefeed, spec.ActionResumeChangefeed:
		// Found by TestProtocol: after a pause the cascade close of a
		// dispatcher manager removes its dispatchers at once in the model
		// (dmHandleClose) and asynchronously in the implementation, so the
		// Views differ while the close runs.
		return what, nil, false, st.Name + ": the model's cascade close removes a dispatcher manager's dispatchers at once, the implementation's asynchronously"
	case spec.ActionRemoveChangefeed:
		return what, nil, false, "remove-changefeed: the implementation forgets a removed changefeed, the model keeps it as removed (its View would differ by design)"
	}
	return what, nil, false, st.Name + ": the model has no " + st.Name
}

// periodicKind: the actions Tracker.periodic takes at every tick of a node
// and nowhere else.
func periodicKind(k model.ActKind) bool {
	switch k {
	case model.AMaintTick, model.ADMTick, model.ADMComplete, model.ACoordTick:
		return true
	}
	return false
}

func only(k model.ActKind) filter {
	return func(a model.Action, _ *model.State, depth int) bool { return depth == 0 && a.Kind == k }
}

// detects: the model sees every slot in left leave, in any order.
func detects(left []uint8) filter {
	return func(a model.Action, _ *model.State, depth int) bool {
		if a.Kind != model.ADetect || depth >= len(left) {
			return false
		}
		for _, sl := range left {
			if a.Node == sl {
				return true
			}
		}
		return false
	}
}

// deliverMatching delivers, in s, the model messages an implementation
// message stands for: for each model kind it carries, the first deliverable
// message of that kind from the sender to the receiver. A kind with no such
// message is skipped: the model sent it earlier or not yet, or this is a
// duplicate.
func (t *Tracker) deliverMatching(s model.State, st sim.Step, kinds []string) model.State {
	if req, ok := st.Msg.(*core.ScheduleDispatcherRequest); ok && req.Action == core.ScheduleCreate {
		return s // taken at the receiver's next tick (see mapStep)
	}
	if _, ok := st.Msg.(*core.MergeDispatcherRequest); ok {
		return s // taken at a tick of the receiver (see mapStep)
	}
	toCoord := core.TopicOf(st.Msg) == core.TopicCoordinator
	fromSl, fromOK := t.slot[st.From]
	toSl := t.slot[st.Node]
	// A heartbeat batches the statuses of several dispatchers, the model
	// sends one status message per status change or complete-status round:
	// for each status of the heartbeat, the model's status messages on the
	// channel are delivered up to the first one of the status's component
	// state (Removed stands for Stopped; the older ones are what the
	// implementation's dispatcher manager coalesced into its latest
	// heartbeat), or, when none of that state is in flight, the first one.
	var states []string
	if hb, ok := st.Msg.(*core.HeartBeatRequest); ok {
		for _, ts := range hb.Statuses {
			name := ts.State.String()
			if ts.State == core.ComponentRemoved {
				name = "Stopped"
			}
			states = append(states, name)
		}
	}
	for _, k := range kinds {
		if k == "HeartBeatRequest(status)" && states != nil {
			for _, name := range states {
				if !fromOK || !s.StatusQueued(t.ident[st.From], toSl, name) {
					s, _ = t.deliverOne(s, k, "", toCoord, fromSl, fromOK, toSl, st.From)
					continue
				}
				for i := 0; i < maxCoalesced; i++ {
					n, ok := t.deliverOne(s, k, name, toCoord, fromSl, fromOK, toSl, st.From)
					if ok {
						s = n
						break
					}
					if s, ok = t.deliverOne(s, k, "", toCoord, fromSl, fromOK, toSl, st.From); !ok {
						break
					}
				}
			}
			continue
		}
		switch k {
		case "ScheduleDispatcherRequest":
			s = t.dropStale(s, fromOK, func(m model.Msg) bool {
				return m.IsCreate() && !m.ToCoordinator() && m.DstSlot() == toSl && m.Src == t.ident[st.From]
			})
		case "RemoveMaintainerRequest":
			s = t.dropStale(s, fromOK && fromSl == 0, func(m model.Msg) bool {
				return m.KindName() == "AddMaintainerRequest" && m.FromCoordinator() && !m.ToCoordinator() && m.DstSlot() == toSl
			})
		}
		s, _ = t.deliverOne(s, k, "", toCoord, fromSl, fromOK, toSl, st.From)
	}
	return s
}

// dropStale delivers, in s, up to maxCoalesced model messages that stale
// selects and that stand ahead of the request the implementation delivers,
// each one only if the model's receiver ignores it (the View does not
// change). ok false leaves s as it is (the sender is not mapped).
//
// Two kinds of re-send the model queues where the implementation did not,
// both from the same sender on the same channel: the model's maintainer
// re-sends a running operator's request at every tick, the
// implementation's operator controller every 500 ms, so after a move's
// Create was taken (at the receiver's tick, see mapStep) and before its
// operator finished, the model may queue a re-sent Create the
// implementation never sent, which stays ahead of the next operator's
// Remove (ScheduleDispatcherRequest). Likewise the model's coordinator
// re-sends an add operator's AddMaintainerRequest at every tick until the
// maintainer's status finishes it: a re-sent Add to a maintainer move's
// target stays ahead of the next move's RemoveMaintainerRequest to that
// node, and the maintainer manager rejects it (HEAD at b813e76f9:
// coordinator/operator/operator_add.go:85 re-sends until the operator
// finishes; maintainer/maintainer_manager_maintainers.go:202, a duplicate
// add of the same epoch is not admitted; the model's managerHandleAdd). A request the model would act on is left in place,
// and the delivery then finds no match (the View shows the difference).
func (t *Tracker) dropStale(s model.State, ok bool, stale func(model.Msg) bool) model.State {
	if !ok {
		return s
	}
	for i := 0; i < maxCoalesced; i++ {
		dropped := false
		for _, a := range model.Actions(t.Cfg, s) {
			if a.Kind != model.ADeliver || !stale(a.Msg) {
				continue
			}
			if n, _ := model.Step(t.Cfg, s, a); !n.Overflow && n.View().Diff(s.View()) == "" {
				s, dropped = n, true
				break
			}
		}
		if !dropped {
			break
		}
	}
	return s
}

// maxCoalesced bounds the older model status messages delivered ahead of
// the one a heartbeat's status stands for.
const maxCoalesced = 4

// deliverOne delivers, in s, the first deliverable model message of kind k
// (with component status state, unless "") from the sender to the
// receiver, if any, and reports whether it found one.
func (t *Tracker) deliverOne(s model.State, k, state string, toCoord bool, fromSl uint8, fromOK bool, toSl uint8, from core.NodeID) (model.State, bool) {
	{
		for _, a := range model.Actions(t.Cfg, s) {
			m := a.Msg
			if a.Kind != model.ADeliver || m.KindName() != k || m.IsCreate() || m.ToCoordinator() != toCoord || (!toCoord && m.DstSlot() != toSl) ||
				(state != "" && m.StatusName() != state) {
				continue
			}
			if m.FromCoordinator() {
				if fromSl != 0 || !fromOK {
					continue
				}
			} else if !fromOK || m.Src != t.ident[from] {
				continue
			}
			if n, _ := model.Step(t.Cfg, s, a); !n.Overflow {
				return n, true
			}
			return s, true
		}
	}
	return s, false
}

// uncreated counts the model's tables not created yet.
// upstreamCanAdvance reports whether some candidate's upstream can follow
// the implementation's next advance (see the StepUpstream mapping).
func (t *Tracker) upstreamCanAdvance() bool {
	for i := range t.cands {
		if int(t.cands[i].UpTs)+2*uncreated(&t.cands[i]) < int(t.Cfg.TsMax) {
			return true
		}
	}
	return false
}

// reportsError reports whether m is a MaintainerHeartbeat that carries an
// error of the followed changefeed.
func (t *Tracker) reportsError(m core.Message) bool {
	hb := heartbeatOf(m)
	if hb == nil {
		return false
	}
	for _, s := range hb.Statuses {
		if s.Changefeed == t.Feed && len(s.Err) > 0 {
			return true
		}
	}
	return false
}

func uncreated(s *model.State) int {
	n := 0
	for t := 1; t <= model.MaxTables; t++ {
		if !s.TableCreated(t) {
			n++
		}
	}
	return n
}

// mapSplit maps a split-table request to the maintainer's split operator
// (maintainer-split) on the table's whole span, with target nodes: the
// implementation's split checker passes the span's node and every other
// bootstrapped node (impl/maintainer SplitTable), so the targets are
// aligned with the two halves when two nodes run and not aligned otherwise;
// the model's split keeps the left half on the origin and names the right
// half's target, and the Views that follow tell the choices apart. The
// request may start nothing (the span is not replicating, or has an
// operator): the model may stutter.
func (t *Tracker) mapSplit(st sim.Step, what string) (string, filter, bool, string) {
	sl, ok := t.slot[st.Node]
	switch {
	case !ok || t.ident[st.Node] != t.current(sl):
		return what, nothing, false, ""
	case t.Cfg.Splits == 0:
		return what, nil, false, "split-table: the model's configuration has no split (Config.Splits is 0: its span slots hold every table)"
	case st.Arg < 1 || st.Arg > model.MaxTables:
		return what, nil, false, fmt.Sprintf("split-table of table %d: the model has tables 1..%d", st.Arg, model.MaxTables)
	case t.splitTables[st.Arg]:
		return what, nil, false, "a second split-table of one table: the model splits a whole span once, into two halves (no nested split)"
	}
	if t.splits >= t.Cfg.Splits {
		return what, nil, false, fmt.Sprintf("split-table number %d: the model's configuration has %d", t.splits+1, t.Cfg.Splits)
	}
	t.splits++
	t.splitTables[st.Arg] = true
	table := uint8(st.Arg)
	return what, func(a model.Action, _ *model.State, depth int) bool {
		return depth == 0 && a.Kind == model.ASplit && a.Node == sl && a.Arg == table && a.SplitHasTargets()
	}, false, ""
}

// heartbeatOf returns m as a MaintainerHeartbeat, or nil.
func heartbeatOf(m core.Message) *core.MaintainerHeartbeat {
	switch v := m.(type) {
	case core.MaintainerHeartbeat:
		return &v
	case *core.MaintainerHeartbeat:
		return v
	}
	return nil
}

// currentSlot is the model slot of implementation node id, if the Tracker
// maps it and id is the slot's current incarnation.
func (t *Tracker) currentSlot(id core.NodeID) (uint8, bool) {
	sl, ok := t.slot[id]
	return sl, ok && t.ident[id] == t.current(sl)
}

// mapMoveTable maps a move-table request (a move dispatcher operator for
// every replicating span of the table that is not on the destination) to
// the maintainer's span moves (maintainer-move) of the table's spans, one
// or two (a split table's halves). The step does not name the destination:
// any, the Views that follow tell them apart. The request may start nothing.
func (t *Tracker) mapMoveTable(st sim.Step, what string) (string, filter, bool, string) {
	sl, ok := t.currentSlot(st.Node)
	switch {
	case !ok:
		return what, nothing, false, ""
	case !t.Cfg.SpanMoves:
		return what, nil, false, "move-table: the model's configuration moves no span (Config.SpanMoves)"
	case st.Arg < 1 || st.Arg > model.MaxTables:
		return what, nil, false, fmt.Sprintf("move-table of table %d: the model has tables 1..%d", st.Arg, model.MaxTables)
	}
	table := uint8(st.Arg)
	return what, func(a model.Action, _ *model.State, depth int) bool {
		return depth < 2 && a.Kind == model.AMaintMove && a.Node == sl && a.SpanTable() == table
	}, false, ""
}

// mapMerge maps a merge-table request to the maintainer's merge operator
// (maintainer-merge) on the table's two halves: occupy operators, the merged
// span scheduling, the MergeDispatcherRequest. The model merges the halves
// of a table pre-split at creation (Config.Merges; the implementation's
// EnableTableAcrossNodes). The request may start nothing (the halves are
// not both replicating on one node).
func (t *Tracker) mapMerge(st sim.Step, what string) (string, filter, bool, string) {
	sl, ok := t.currentSlot(st.Node)
	switch {
	case !ok:
		return what, nothing, false, ""
	case t.Cfg.Merges == 0:
		return what, nil, false, "merge-table: the model's configuration has no merge (Config.Merges is 0; the model merges the halves of a table split at creation)"
	case t.splits > 0:
		return what, nil, false, "merge-table after a split-table: the model merges only a table split at creation (Config.Merges excludes Config.Splits)"
	}
	table := uint8(st.Arg)
	return what, func(a model.Action, _ *model.State, depth int) bool {
		return depth == 0 && a.Kind == model.AMerge && a.Node == sl && a.Arg == table
	}, false, ""
}
