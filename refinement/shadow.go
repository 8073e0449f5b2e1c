package refinement

import (
	"fmt"
	"strings"

	"cdcspec/impl/core"
	"cdcspec/impl/sim"
	"cdcspec/model"
	"cdcspec/refinement/drive"
	"cdcspec/spec"
)

// The mapping from the implementation's domain actions (drive.Step) to the
// model, compared at quiescence. The package's other two mappings work at
// other grains: the Tracker (refinement.go, mapping.go) maps each of the
// simulation's own steps (a delivery, a tick) and compares a model.View
// after each; ReplayModel (replay.go) maps the other way, a model
// counterexample onto drive.Steps. The model (model/) is
// deliberately more abstract than the implementation: one changefeed, at
// most three node slots (slot 0 hosts the coordinator and never crashes), at
// most three tables, timestamps 1..TsMax, and message-level steps
// (deliveries, ticks) instead of virtual time. The Shadow steps a bounded
// model instance alongside a Driver: every mirrored domain action becomes the
// model actions below, after which the model runs its own fair schedule
// until it repeats itself ("settles": the model is always quiescent between
// two domain actions, the implementation is not). The two are compared only
// at quiescent points: after the faults heal and both settle.
//
//	step (drive.Op)                 model actions                   notes
//	------------------------------  ------------------------------  ------------------------------------------
//	create-changefeed cf1           (none)                          the model's changefeed exists from Init
//	pause/resume/remove cf1         -- shadow stops --              the model has no pause, resume or remove
//	move-maintainer cf1 -> node     move-maintainer slot            if enabled (replicating, no operator, the
//	                                                                slot is not the bound one)
//	any action on another feed      (none)                          the model has one changefeed
//	create-table                    create-table                    while the model has DDL tables left, the
//	                                                                upstream is not stalled and ts < TsMax
//	advance-time                    upstream-advance                while ts < TsMax and not stalled
//	move-table cf1 t -> node        maintainer-move m t -> slot     if t <= 3, both nodes have slots, enabled
//	split-table, remove-table-      (none)                          the model's shadow configurations have
//	  dispatchers                                                   no splits (Config.Splits = 0) and no
//	                                                                remove of a table's dispatchers
//	kill-capture / expire-session / expire-session slot,           a capture without slot: nothing; slot 0
//	  kill-maintainer-capture         detect-node-left slot         (the coordinator's node): shadow stops
//	restart-capture                 restart-capture slot            the lowest detected slot; the new capture
//	                                                                takes that slot
//	add-capture                     (none)                          the model's slots are fixed at Init
//	sink-error cf1 node             sink-error d                    d = the lowest working table dispatcher on
//	                                                                the node's slot without a sink error
//	stall-upstream                  stall-upstream                  while the stall budget lasts
//	resume-upstream                 resume-upstream
//	drop/duplicate/delay-messages,  (none)                          transient: the heal removes them; the model
//	  random-message-faults,                                        checker explores message faults
//	  partition, heal-network,                                      exhaustively instead
//	  failpoints
//	heal + quiesce                  resume-upstream, upstream-      the model's fair schedule, as in its
//	                                  advance to TsMax, settle      liveness check
//
// Compared at the end (changefeed cf1 only, both after heal and settle):
// Quiescence, the model's side read from its model.View (the
// abstraction the refinement Tracker compares after every step).
//
// Blind spots: the model never sees tables beyond its three, nodes beyond
// its three slots, split spans, message faults or a second changefeed; a run
// that pauses, removes or moves cf1's maintainer is not compared at all.

// Shadow is the bounded model stepped alongside a drive.Driver (its
// drive.Follower).
type Shadow struct {
	Cfg     model.Config
	State   model.State
	Trace   []model.Action // every model action applied, settle steps included
	Stopped string         // why the shadow stopped following ("" = following)
	slots   map[core.NodeID]uint8
	bySlot  [model.MaxNodes]core.NodeID
}

// ShadowFeed is the changefeed the shadow mirrors.
const ShadowFeed = "cf1"

// NewShadow builds the model instance for a setup: HEAD's protocol with the
// setup's bugs switched on in the model too.
func NewShadow(su drive.Setup) *Shadow {
	cfg := model.Base()
	cfg.Name = "proptest-shadow"
	cfg.Nodes = su.Nodes
	if cfg.Nodes > model.MaxNodes {
		cfg.Nodes = model.MaxNodes
	}
	cfg.Tables = su.Tables
	if cfg.Tables > 2 {
		cfg.Tables = 2
	}
	cfg.DDLTables = model.MaxTables - cfg.Tables
	cfg.TsMax = 9
	cfg.Crashes, cfg.Restarts, cfg.SinkErrors, cfg.Stalls, cfg.FastFails = 7, 7, 7, 7, 7
	cfg.SpanMoves = true
	cfg.MaintMoves = 7
	sh := &Shadow{slots: map[core.NodeID]uint8{}}
	for _, name := range su.Bugs {
		b, ok := spec.LookupBug(name)
		if !ok || b.ModelGap != "" {
			sh.Stopped = fmt.Sprintf("bug %q has no model switch", name)
			continue
		}
		cfg.Bugs = cfg.Bugs.With(b.ID)
		if b.ID == spec.BugStuckAfterUpstreamFailure {
			cfg.Puller = true
		}
	}
	if su.RawWatermark {
		if f, ok := model.ParseFeature("committed-checkpoint"); ok {
			cfg.Features &^= f
		}
	}
	sh.Cfg = cfg
	if err := cfg.Validate(); err != nil {
		sh.Stopped = err.Error()
		return sh
	}
	sh.State = model.Init(&sh.Cfg)
	return sh
}

func (sh *Shadow) stop(format string, args ...any) {
	if sh.Stopped == "" {
		sh.Stopped = fmt.Sprintf(format, args...)
	}
}

// apply steps the model if a is enabled; it reports whether it was.
func (sh *Shadow) apply(a model.Action) bool {
	for _, b := range model.Actions(sh.Cfg, sh.State) {
		if b == a {
			sh.State, _ = model.Step(sh.Cfg, sh.State, a)
			sh.Trace = append(sh.Trace, a)
			return true
		}
	}
	return false
}

func (sh *Shadow) enabled(k model.ActKind) bool {
	for _, b := range model.Actions(sh.Cfg, sh.State) {
		if b.Kind == k {
			return true
		}
	}
	return false
}

// learn assigns model slots to the implementation's first captures.
func (sh *Shadow) learn(caps []core.NodeID) {
	for _, id := range caps {
		if _, ok := sh.slots[id]; ok {
			continue
		}
		for sl := 0; sl < sh.Cfg.Nodes; sl++ {
			if sh.bySlot[sl] == "" {
				sh.bySlot[sl] = id
				sh.slots[id] = uint8(sl)
				break
			}
		}
	}
}

// Mirror applies the model actions of one domain step (see the table above)
// and settles the model. before is the list of running captures before the
// step (Step.Node indexes it).
func (sh *Shadow) Mirror(d *drive.Driver, st drive.Step, before []core.NodeID) {
	if sh.Stopped != "" {
		return
	}
	if len(sh.bySlot[0]) == 0 {
		sh.learn(before)
		sh.settle()
	}
	nodeAt := func(i int) (core.NodeID, bool) {
		if i < 0 || i >= len(before) {
			return "", false
		}
		return before[i], true
	}
	mine := st.Feed == "" || st.Feed == ShadowFeed
	switch st.Op {
	case drive.OpPauseChangefeed, drive.OpResumeChangefeed, drive.OpRemoveChangefeed:
		if mine {
			sh.stop("%s %s: the model has no such action", st.Op, st.Feed)
		}
	case drive.OpMoveMaintainer:
		// Applied when the model can: the end comparison does not look at
		// the maintainer's node, so a move one side refused is harmless.
		if n, ok := nodeAt(st.Node); ok && mine {
			if dst, ok := sh.slots[n]; ok {
				sh.apply(model.Action{Kind: model.ACoordMove, Node: dst})
			}
		}
	case drive.OpCreateTable:
		sh.apply(model.Action{Kind: model.ACreateTable})
	case drive.OpBlockingDDL:
		sh.stop("%s: the model's barrier is one DDL kind per configuration (Config.Barrier), not a drawn action", st.Op)
		return
	case drive.OpAdvanceTime:
		sh.apply(model.Action{Kind: model.AUpstreamAdvance})
	case drive.OpMoveTable:
		n, ok := nodeAt(st.Node)
		dst, ok2 := sh.slots[n]
		if !mine || !ok || !ok2 || st.Table > model.MaxTables {
			break
		}
		for m := uint8(0); m < uint8(sh.Cfg.Nodes); m++ {
			if sh.apply(model.Action{Kind: model.AMaintMove, Node: m, Arg: uint8(st.Table), Arg2: dst}) {
				break
			}
		}
	case drive.OpKillCapture, drive.OpExpireSession, drive.OpKillMaintainer:
		n, ok := nodeAt(st.Node)
		if st.Op == drive.OpKillMaintainer {
			n, ok = sh.killed(before, d.Sim.Captures())
		}
		sl, ok2 := sh.slots[n]
		if !ok || !ok2 {
			break
		}
		if sl == 0 {
			sh.stop("%s of the coordinator's node: the model's slot 0 never crashes", st.Op)
			return
		}
		if sh.apply(model.Action{Kind: model.ACrash, Node: sl}) {
			sh.apply(model.Action{Kind: model.ADetect, Node: sl})
		}
	case drive.OpRestartCapture:
		caps := d.Sim.Captures()
		newest := caps[len(caps)-1]
		for sl := uint8(1); sl < uint8(sh.Cfg.Nodes); sl++ {
			if sh.apply(model.Action{Kind: model.ARestart, Node: sl}) {
				delete(sh.slots, sh.bySlot[sl])
				sh.bySlot[sl] = newest
				sh.slots[newest] = sl
				break
			}
		}
	case drive.OpSinkError, drive.OpFastFail:
		n, ok := nodeAt(st.Node)
		sl, ok2 := sh.slots[n]
		if !mine || !ok || !ok2 {
			break
		}
		kind := model.ASinkError
		if st.Op == drive.OpFastFail {
			kind = model.AFastFail
		}
		for _, a := range model.Actions(sh.Cfg, sh.State) {
			if a.Kind == kind && sh.dispNode(a.Arg) == sl {
				sh.apply(a)
				break
			}
		}
	case drive.OpStallUpstream:
		sh.apply(model.Action{Kind: model.AUpstreamStall})
	case drive.OpResumeUpstream:
		sh.apply(model.Action{Kind: model.AUpstreamResume})
	}
	sh.settle()
}

// killed is the capture in before that no longer runs.
func (sh *Shadow) killed(before, after []core.NodeID) (core.NodeID, bool) {
	alive := map[core.NodeID]bool{}
	for _, id := range after {
		alive[id] = true
	}
	for _, id := range before {
		if !alive[id] {
			return id, true
		}
	}
	return "", false
}

func (sh *Shadow) dispNode(id uint8) uint8 {
	if sl, ok := sh.State.DispatcherSlot(id); ok {
		return sl
	}
	return 0xFF
}

// fair reports whether the settle schedule may take a: no fault, no
// environment move (upstream, DDL, balance); the upstream is resumed only by
// the heal.
func fair(a *model.Action) bool {
	switch a.Kind {
	case model.AMaintMove, model.ACoordMove, model.ACreateTable, model.AUpstreamAdvance, model.AUpstreamStall, model.AUpstreamResume:
		return false
	}
	return !a.Kind.IsFault()
}

func actKey(a *model.Action) uint64 {
	k := uint64(a.Kind) << 40
	if a.Kind == model.ADeliver {
		// one key per deliverable message: a pair may have several (one per
		// receiving queue of the message center, model/net.go)
		return k | uint64(a.Msg.Src)<<32 | uint64(a.Msg.Dst)<<24 | uint64(a.Msg.Kind)<<16
	}
	return k | uint64(a.Node)<<32 | uint64(a.Arg)<<24 | uint64(a.Arg2)<<16
}

const maxSettleSteps = 4000

// settle runs the model's round-robin fair schedule (the same rule as the
// model's liveness check: the next enabled fair action after the previous
// one in a fixed key order) until (state, cursor) repeats.
func (sh *Shadow) settle() {
	seen := map[string]bool{}
	cursor := uint64(0)
	for i := 0; i < maxSettleSteps; i++ {
		if sh.State.Overflow {
			sh.stop("the model's state left its bounds (network or dispatcher slots full)")
			return
		}
		key := string(sh.State.Bytes()) + fmt.Sprint(cursor)
		if seen[key] {
			return
		}
		seen[key] = true
		var pick, first *model.Action
		acts := model.Actions(sh.Cfg, sh.State)
		for j := range acts {
			a := &acts[j]
			if !fair(a) {
				continue
			}
			k := actKey(a)
			if first == nil || k < actKey(first) {
				first = a
			}
			if k > cursor && (pick == nil || k < actKey(pick)) {
				pick = a
			}
		}
		if pick == nil {
			pick = first
		}
		if pick == nil {
			return
		}
		cursor = actKey(pick)
		sh.State, _ = model.Step(sh.Cfg, sh.State, *pick)
		sh.Trace = append(sh.Trace, *pick)
	}
	sh.stop("the model did not settle within %d steps", maxSettleSteps)
}

// ModelQuiescence heals and settles the model and abstracts it
// (Quiescence: the one abstraction of both sides).
func (sh *Shadow) ModelQuiescence() Quiescence {
	if sh.State.Stalled {
		sh.apply(model.Action{Kind: model.AUpstreamResume})
	}
	for sh.apply(model.Action{Kind: model.AUpstreamAdvance}) {
	}
	sh.settle()
	return ModelQuiescence(&sh.State)
}

// ImplQuiescence abstracts the implementation's ShadowFeed after the
// driver's Finish healed it.
func (sh *Shadow) ImplQuiescence(d *drive.Driver) Quiescence {
	return ImplQuiescence(d.Sim, sim.CfID(ShadowFeed), d.HealTarget)
}

// Compare heals and settles the model and compares it with the
// implementation (after Finish). "" means they agree or the shadow stopped
// following (see Stopped).
func (sh *Shadow) Compare(d *drive.Driver) string {
	if sh.Stopped != "" || d.FeedState(ShadowFeed) != drive.FeedRunning {
		return ""
	}
	m := sh.ModelQuiescence()
	if sh.Stopped != "" {
		return ""
	}
	i := sh.ImplQuiescence(d)
	if m.Agrees(i) {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "after heal and quiescence the implementation and the model disagree on changefeed %s:\n  impl:  %s\n  model: %s", ShadowFeed, i, m)
	return b.String()
}
