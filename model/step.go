package model

import (
	"fmt"

	"cdcspec/spec"
)

const nodeUnused = 3 // NodeSt of a slot beyond Config.Nodes

// emitter collects the events of one step; a nil emitter discards them (the
// checker's hot path).
type emitter struct {
	evs []spec.Event
	// renumbered: canonicalize compacted the DispatcherIDs; rank maps the
	// old IDs to the new ones (for stable names in stories).
	renumbered bool
	rank       [256]uint8
}

func (e *emitter) add(ev spec.Event) {
	if e == nil {
		return
	}
	ev.Changefeed = Changefeed
	e.evs = append(e.evs, ev)
}

// Init returns the initial state: the changefeed was just created with
// checkpoint 1 over tables 1..cfg.Tables; no maintainer runs yet.
func Init(cfg *Config) State {
	var s State
	for i := 0; i < MaxNodes; i++ {
		if i >= cfg.Nodes {
			s.NodeSt[i] = nodeUnused
		}
	}
	s.UpTs, s.PullTs = 1, 1
	for t := 0; t <= MaxTables; t++ {
		s.TableT[t] = none
	}
	for t := 1; t <= cfg.Tables; t++ {
		s.TableT[t] = 0
		setFlushed(&s, uint8(t), 1)
	}
	s.NextID = 1
	for i := range s.MgrCoord {
		s.MgrCoord[i] = coordSlot // every manager answered the first coordinator's bootstrap
	}
	c := &s.Coord
	c.Node, c.Ckpt, c.Baseline, c.OpNode = none, 1, 1, none
	if cfg.has(FeatEpochs) {
		c.Epoch = 1
	}
	if cfg.Puller {
		s.Pull = Puller{Started: true, Worker: gorRunning, Receiver: gorRunning, Region: regActive}
	}
	return s
}

// InitEvents are the events that describe the initial state.
func InitEvents(cfg *Config) []spec.Event {
	tables := make([]int64, 0, cfg.Tables)
	for t := 1; t <= cfg.Tables; t++ {
		tables = append(tables, int64(t))
	}
	ev := []spec.Event{{Kind: spec.ChangefeedCreated, Changefeed: Changefeed, Checkpoint: 1, Tables: tables}}
	for i := 0; i < cfg.Nodes; i++ {
		ev = append(ev, spec.Event{Kind: spec.NodeJoined, Changefeed: Changefeed, Node: NodeName(uint8(i))})
	}
	return ev
}

// Step applies a to s and returns the next state and the events. It does not
// check that a is enabled; an action that is not enabled leaves the state
// unchanged (Replay reports it).
func Step(cfg Config, s State, a Action) (State, []spec.Event) {
	e := &emitter{}
	step(&cfg, &s, a, e)
	return s, e.evs
}

// step applies a in place; the result is canonical (see canonicalize).
//
// Long: one case per action kind (Kind's list), each a handler call or a few lines of state update.
func step(cfg *Config, s *State, a Action, e *emitter) {
	switch a.Kind {
	case AUpstreamAdvance:
		s.UpTs++
		if !cfg.Puller {
			s.PullTs = s.UpTs
		}
		for t := 1; t <= MaxTables; t++ {
			if s.TableT[t] != none && !dropped(s, uint8(t)) {
				if e != nil {
					if cfg.Splits > 0 || cfg.Merges > 0 {
						// a row in each half a split may create (split.go)
						e.add(spec.Event{Kind: spec.DataWritten, Span: spec.Span{Table: int64(t), Start: splitRowLeft}, Checkpoint: uint64(s.UpTs)})
					}
					e.add(spec.Event{Kind: spec.DataWritten, Span: spec.Span{Table: int64(t), Start: "r"}, Checkpoint: uint64(s.UpTs)})
				}
			}
		}
	case ACreateTable:
		td := uint8(cfg.Tables) + s.DDLs + 1
		s.DDLs++
		s.UpTs++
		if !cfg.Puller {
			s.PullTs = s.UpTs
		}
		s.TableT[td] = s.UpTs
		setFlushed(s, td, s.UpTs)
		if e != nil {
			e.add(spec.Event{Kind: spec.TableCreated, Span: spec.WholeTable(int64(td)), Checkpoint: uint64(s.UpTs)})
		}
	case ABlockDDL:
		commitBlockDDL(cfg, s, e)
	case AUpstreamStall:
		s.Stalls++
		s.Stalled = true
		s.Pull.Down = true
		if e != nil {
			e.add(spec.Event{Kind: spec.UpstreamStalled, Checkpoint: uint64(s.UpTs)})
		}
	case AUpstreamResume:
		s.Stalled = false
		s.Pull.Down = false
		if e != nil {
			e.add(spec.Event{Kind: spec.UpstreamResumed, Checkpoint: uint64(s.UpTs)})
		}
	case ACrash:
		crash(s, a.Node, e)
	case ADetect:
		detect(cfg, s, a.Node, e)
	case ARestart:
		s.Restarts++
		s.NodeSt[a.Node] = nodeAlive
		s.Inc[a.Node]++
		// The coordinator's bootstrap of a joining node is taken with the
		// join: the node's manager knows the current coordinator, and its
		// answer (a fresh node runs no maintainer) adds nothing. At HEAD a
		// request reaching it before the bootstrap request is dropped and
		// re-sent (maintainer_manager.go:216 isBootstrap): a delay only.
		s.MgrCoord[a.Node] = s.coordID()
		if e != nil {
			e.add(spec.Event{Kind: spec.NodeJoined, Node: NodeName(s.Ident(a.Node))})
		}
		onNodeJoined(cfg, s, a.Node)
	case ASinkError:
		if d := s.disp(a.Arg); d != nil {
			s.SinkErrs++
			d.SinkErr = true
			s.DMs[d.Node].Err = true
			if e != nil {
				e.add(spec.Event{Kind: spec.SinkError, Node: NodeName(s.Ident(d.Node)), Dispatcher: dispName(d.ID), Span: partSpan(d.Table, d.Part),
					Err: "[CDC:ErrKafkaAsyncSendMessage]kafka async send message failed"})
			}
		}
	case ADeliver, ADuplicate:
		i := s.findHead(a.Msg)
		if i < 0 {
			return
		}
		if a.Kind == ADeliver {
			s.removeMsg(i)
		} else {
			s.Dups++
		}
		deliver(cfg, s, a.Msg, e)
	case ADrop:
		if i := s.findHead(a.Msg); i >= 0 {
			s.removeMsg(i)
			s.Drops++
		}
	case ACoordSchedule:
		coordSchedule(cfg, s, a.Node, e)
	case ACoordTick:
		coordResend(cfg, s)
	case ACoordRetryTimer:
		s.Coord.RetryWait = false
	case AMaintTick:
		maintTick(cfg, s, a.Node, e)
	case AMaintCleanup:
		m := &s.Maint[a.Node]
		if e != nil {
			e.add(spec.Event{Kind: spec.MaintainerClosed, Node: NodeName(s.Ident(a.Node)), Epoch: uint64(m.Epoch), Checkpoint: uint64(m.Reported), Reason: "removed from the maintainer manager"})
		}
		*m = Maint{}
	case AMaintSchedule:
		maintSchedule(cfg, s, a.Node, a.Arg, a.Arg2, e)
	case AMaintMove:
		maintMove(cfg, s, a.Node, a.Arg, a.Arg2, e)
	case ASplit:
		maintSplit(cfg, s, a.Node, a.Arg, a.Arg2&3, a.Arg2>>2, e)
	case ADMTick:
		dmTick(cfg, s, a.Node, e)
	case ADMComplete:
		dmCompleteStatus(s, a.Node)
	case ADispClosed:
		dispClosed(cfg, s, a.Arg, e)
	case AFastFail:
		fastFail(s, a.Arg, e)
	case APause:
		pauseChangefeed(cfg, s, e)
	case AResume:
		resumeChangefeed(cfg, s, a.Arg, e)
	case ARemove:
		removeChangefeed(cfg, s, e)
	case ACoordFailover:
		coordFailover(cfg, s, e)
	case AMaintApplyWM:
		maintApplyWatermark(cfg, s, a.Node, a.Arg)
	case ACoordMove:
		coordMoveMaintainer(cfg, s, a.Node, e)
	case AMerge:
		maintMerge(cfg, s, a.Node, a.Arg, e)
	case AMergePostFinish:
		if sp := s.Maint[a.Node].mergeOf(a.Arg); sp != nil {
			mergePostFinish(s, a.Node, sp, e)
		}
	case AOpPostFinish:
		if sp := s.Maint[a.Node].spanByKey(a.Arg); sp != nil && sp.Op == mopRemove && sp.OpPh == remFinished {
			opPostFinish(s, a.Node, sp, e)
		}
	default:
		pullStep(cfg, s, a.Kind)
	}
	canonicalize(s, e)
}

// crash kills a capture: its maintainer, dispatcher manager, dispatchers and
// receive queues vanish at once (A.11). Messages it sent stay in flight.
func crash(s *State, slot uint8, e *emitter) {
	s.Crashes++
	if e != nil {
		e.add(spec.Event{Kind: spec.CaptureSuicide, Node: NodeName(s.Ident(slot)), Err: "[CDC:ErrCaptureSuicide]capture suicide"})
	}
	s.NodeSt[slot] = nodeDead
	s.Maint[slot] = Maint{}
	s.DMs[slot] = DM{}
	for i := range s.Disp {
		if s.Disp[i].ID != 0 && s.Disp[i].Node == slot {
			s.Disp[i] = Disp{}
		}
	}
	s.purgeTo(slot)
}

// detect is the node-change handling of the coordinator (OnNodeRemoved) and
// of every maintainer (C.9) when the dead node's capture key expires.
func detect(cfg *Config, s *State, slot uint8, e *emitter) {
	id := s.Ident(slot)
	s.NodeSt[slot] = nodeDetected
	if e != nil {
		e.add(spec.Event{Kind: spec.NodeLeft, Node: NodeName(id)})
	}
	coordOnNodeRemoved(cfg, s, id, e)
	for i := range s.Maint {
		if s.Maint[i].Exists && s.NodeSt[i] == nodeAlive {
			maintOnNodeRemoved(cfg, s, uint8(i), slot, e)
		}
	}
}

func (s *State) disp(id uint8) *Disp {
	if id == 0 {
		return nil
	}
	for i := range s.Disp {
		if s.Disp[i].ID == id {
			return &s.Disp[i]
		}
	}
	return nil
}

// dispOn returns dispatcher id on node slot: a DispatcherID is unique per
// dispatcher manager, and two managers may hold the same one (a duplicate
// Create, split-double-add).
func (s *State) dispOn(id, slot uint8) *Disp {
	for i := range s.Disp {
		if d := &s.Disp[i]; d.ID == id && id != 0 && d.Node == slot {
			return d
		}
	}
	return nil
}

func (s *State) newDisp() *Disp {
	for i := range s.Disp {
		if s.Disp[i].ID == 0 {
			return &s.Disp[i]
		}
	}
	s.Overflow = true
	return nil
}

func (s *State) allocID() uint8 {
	id := s.NextID
	s.NextID++
	return id
}

func deliver(cfg *Config, s *State, m Msg, e *emitter) {
	switch m.Kind {
	case mStatus:
		coordHandleStatus(cfg, s, m, e)
	case mAddMaintainer:
		if managerFromCoordinator(s, m) {
			managerHandleAdd(cfg, s, m, e)
		}
	case mRemoveMaintainer:
		if managerFromCoordinator(s, m) {
			managerHandleRemove(cfg, s, m, e)
		}
	case mCoordBootReq:
		managerHandleCoordBootstrap(s, m)
	case mCoordBootResp:
		coordHandleBootstrapResponse(cfg, s, m, e)
	case mBootReq:
		dmHandleBootstrap(cfg, s, m, e)
	case mSchedule:
		dmHandleSchedule(cfg, s, m, e)
	case mCloseReq:
		dmHandleClose(cfg, s, m, e)
	case mAck:
		dmHandleAck(cfg, s, m)
	case mBlockAction:
		dmHandleBlockAction(cfg, s, m, e)
	case mMerge:
		dmHandleMerge(cfg, s, m, e)
	default:
		maintHandleDM(cfg, s, m, e)
	}
}

// Actions appends the enabled actions of s to buf, in a fixed order.
func Actions(cfg Config, s State) []Action {
	return appendActions(&cfg, &s, nil, true)
}

// appendActions lists the enabled actions; faults only if withFaults.
//
// Long: one guarded append per action kind, in the fixed order Actions promises; read top to bottom.
func appendActions(cfg *Config, s *State, buf []Action, withFaults bool) []Action {
	if s.Overflow {
		return buf
	}
	// upstream
	if !s.Stalled && s.UpTs < cfg.TsMax {
		buf = append(buf, Action{Kind: AUpstreamAdvance})
		if int(s.DDLs) < cfg.DDLTables {
			buf = append(buf, Action{Kind: ACreateTable})
		}
		if blockDDLEnabled(cfg, s) {
			buf = append(buf, Action{Kind: ABlockDDL})
		}
	}
	if s.Stalled {
		buf = append(buf, Action{Kind: AUpstreamResume})
	} else if withFaults && int(s.Stalls) < cfg.Stalls {
		buf = append(buf, Action{Kind: AUpstreamStall})
	}
	if cfg.Puller {
		buf = appendPullActions(cfg, s, buf)
	}
	// nodes
	for i := uint8(0); i < uint8(cfg.Nodes); i++ {
		switch s.NodeSt[i] {
		case nodeAlive:
			if withFaults && i > 0 && int(s.Crashes) < cfg.Crashes {
				buf = append(buf, Action{Kind: ACrash, Node: i})
			}
		case nodeDead:
			buf = append(buf, Action{Kind: ADetect, Node: i})
		case nodeDetected:
			if withFaults && int(s.Restarts) < cfg.Restarts && s.Inc[i] < 63 {
				buf = append(buf, Action{Kind: ARestart, Node: i})
			}
		}
	}
	// network
	n := s.nmsgs()
	for i := 0; i < n; i++ {
		if !s.isHead(i) {
			continue
		}
		m := s.Net[i]
		buf = append(buf, Action{Kind: ADeliver, Msg: m})
		if withFaults && int(s.Drops) < cfg.Drops {
			buf = append(buf, Action{Kind: ADrop, Msg: m})
		}
		if withFaults && int(s.Dups) < cfg.Dups {
			buf = append(buf, Action{Kind: ADuplicate, Msg: m})
		}
	}
	// coordinator
	c := &s.Coord
	if c.Op == copNone && c.Repl == replAbsent && !c.RetryWait && running(c) && !c.Booting {
		for i := uint8(0); i < uint8(cfg.Nodes); i++ {
			if s.schedulable(i) {
				buf = append(buf, Action{Kind: ACoordSchedule, Node: i})
			}
		}
	}
	if coordTickEnabled(s) {
		buf = append(buf, Action{Kind: ACoordTick})
	}
	if c.RetryWait {
		buf = append(buf, Action{Kind: ACoordRetryTimer})
	}
	buf = appendLifecycleActions(cfg, s, buf, withFaults)
	buf = appendMoveActions(cfg, s, buf)
	// maintainers
	for i := uint8(0); i < uint8(cfg.Nodes); i++ {
		m := &s.Maint[i]
		if !m.Exists || s.NodeSt[i] != nodeAlive {
			continue
		}
		buf = append(buf, Action{Kind: AMaintTick, Node: i})
		buf = appendHeartbeatActions(s, i, buf)
		if m.Removed {
			buf = append(buf, Action{Kind: AMaintCleanup, Node: i})
			continue
		}
		if !m.Bootstrapped || m.Removing {
			continue
		}
		buf = appendPostFinishActions(s, i, buf)
		for j := range m.Spans {
			sp := &m.Spans[j]
			if sp.ID == 0 || sp.Op != mopNone {
				continue
			}
			for d := uint8(0); d < uint8(cfg.Nodes); d++ {
				if !s.schedulable(d) {
					continue
				}
				if sp.State == replAbsent {
					buf = append(buf, Action{Kind: AMaintSchedule, Node: i, Arg: sp.key(), Arg2: d})
				} else if cfg.SpanMoves && sp.State == replReplicating && sp.Node != s.Ident(d) && (cfg.MaxMoves == 0 || int(s.Moves) < cfg.MaxMoves) {
					buf = append(buf, Action{Kind: AMaintMove, Node: i, Arg: sp.key(), Arg2: d})
				}
			}
			buf = appendSplitActions(cfg, s, i, sp, buf)
		}
		if cfg.Merges > 0 {
			buf = appendMergeActions(cfg, s, i, buf)
		}
	}
	// dispatcher managers and dispatchers
	for i := uint8(0); i < uint8(cfg.Nodes); i++ {
		if s.DMs[i].Exists && s.NodeSt[i] == nodeAlive {
			buf = append(buf, Action{Kind: ADMTick, Node: i})
			if dmCompleteWouldSend(s, i) {
				buf = append(buf, Action{Kind: ADMComplete, Node: i})
			}
		}
	}
	for i := range s.Disp {
		d := &s.Disp[i]
		if d.ID == 0 {
			continue
		}
		switch d.St {
		case dWorking:
			if withFaults && d.Table != 0 && !d.SinkErr && int(s.SinkErrs) < cfg.SinkErrors {
				buf = append(buf, Action{Kind: ASinkError, Arg: d.ID})
			}
		case dRemoving, dMergeClosed:
			buf = append(buf, Action{Kind: ADispClosed, Arg: d.ID})
		}
	}
	return buf
}

// Replay applies actions from the initial state and returns every state
// (states[0] is the initial one) and the events of each step. It fails on
// the first action that is not enabled.
func Replay(cfg Config, actions []Action) ([]State, [][]spec.Event, error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	s := Init(&cfg)
	states := []State{s}
	var evs [][]spec.Event
	for i, a := range actions {
		if !enabled(&cfg, &s, a) {
			return states, evs, fmt.Errorf("replay step %d: action %s is not enabled", i+1, a)
		}
		next, ev := Step(cfg, s, a)
		for j := range ev {
			ev[j].Time = int64(i + 1)
		}
		s = next
		states = append(states, s)
		evs = append(evs, ev)
	}
	return states, evs, nil
}

func enabled(cfg *Config, s *State, a Action) bool {
	for _, b := range appendActions(cfg, s, nil, true) {
		if b == a {
			return true
		}
	}
	return false
}
