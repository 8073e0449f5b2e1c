package model

import (
	"fmt"

	"cdcspec/spec"
)

// A property check returns "" when the property holds, otherwise the
// violation message: the guarantee plus its coordinates.
//
// A property's definition is its spec monitor (spec/monitors.go); these
// predicates judge the same property on the model's states, which is what
// the checker needs. agree_test.go holds each to its monitor in both
// directions on every step of random walks and counterexample stories.

// invErrorNeverDropped: every retryable error that reaches the coordinator
// while the checkpoint is stuck reaches the backoff (D.S4; pingcap/ticdc#5709,
// fixed by #5779). The ghost ErrDrop is set by updateStatus when an accepted
// status carried an error, did not advance the checkpoint past the stored one
// or the retry baseline, did not flip BootstrapDone, and the error reached
// neither "changefeed maintainer report an error" nor the restarting rule:
// exactly when no event of spec.ErrorHandling's set follows the status
// (progress counts only with a stored-checkpoint advance, so an error
// ignored past a lagging baseline, toggle-keeps-baseline, is a drop). The
// monitor can only tell at the next accepted status.
func invErrorNeverDropped(cfg *Config, prev, s *State) string {
	g := &s.ErrDrop
	if !g.Set {
		return ""
	}
	if g.Fast {
		return fmt.Sprintf("a fast-fail error must fail the changefeed at once, but the coordinator accepted the status carrying it and the changefeed did not fail: changefeed %s, node %s, epoch %d, status checkpoint %d, stored checkpoint %d, error %q",
			Changefeed, NodeName(g.Node), g.Epoch, g.Reported, g.Stored, spec.FastFailErrText)
	}
	return fmt.Sprintf("a retryable error must reach the backoff while the checkpoint is stuck, but the coordinator dropped the status carrying it: changefeed %s, node %s, epoch %d, status checkpoint %d, stored checkpoint %d, error %q",
		Changefeed, NodeName(g.Node), g.Epoch, g.Reported, g.Stored, sinkErrText)
}

// invCheckpointMonotonic: the stored changefeed checkpoint never goes down
// (D.S1). Resume with an overwritten checkpoint, the one allowed exception,
// is the only client request that moves it (ClientOps counts requests).
func invCheckpointMonotonic(cfg *Config, prev, s *State) string {
	if prev == nil || s.Coord.Ckpt >= prev.Coord.Ckpt || s.ClientOps != prev.ClientOps {
		return ""
	}
	return fmt.Sprintf("the stored checkpoint must never go down, but it went from %d to %d: changefeed %s, epoch %d",
		prev.Coord.Ckpt, s.Coord.Ckpt, Changefeed, s.Coord.Epoch)
}

// invCheckpointNotPastUnflushed: the stored checkpoint never passes a row
// change the sink has not acknowledged (D.S2; #5401 fixed by #5402, #3846,
// #2943, #4703). Every table has a row at every ts after its creation; the
// ghost Flushed[t] is the highest ts up to which the sink holds every row of
// t with no gap (a dispatcher that starts above it leaves a gap).
func invCheckpointNotPastUnflushed(cfg *Config, prev, s *State) string {
	for t := 1; t <= MaxTables; t++ {
		if dropped(s, uint8(t)) && s.Flushed[t]+1 >= s.BlkT {
			continue // every row of the dropped table reached the sink
		}
		if s.BlkT != 0 && s.Flushed[t]+1 == s.BlkT && s.Coord.Ckpt == s.BlkT {
			continue // the barrier DDL's ts has no row
		}
		if s.TableT[t] != none && s.Flushed[t] < s.Coord.Ckpt {
			return fmt.Sprintf("the checkpoint must never pass unflushed data, but checkpoint %d is stored while the sink holds the rows of table %d only up to ts %d (row at commitTs %d not acknowledged): changefeed %s, span %s, epoch %d",
				s.Coord.Ckpt, t, s.Flushed[t], s.Flushed[t]+1, Changefeed, spec.WholeTable(int64(t)), s.Coord.Epoch)
		}
	}
	return ""
}

// invAtMostOneDispatcherPerSpan: at most one live dispatcher replicates any
// key of a table span, across all nodes (D.S3; #6202, #5083 fixed by
// #5434-#5436). Dispatchers of a crashed node died with it; a removing
// dispatcher still runs until it finishes closing; a merge source closed by
// its merge (dMergeClosed) writes nothing and does not count.
func invAtMostOneDispatcherPerSpan(cfg *Config, prev, s *State) string {
	for i := range s.Disp {
		first := &s.Disp[i]
		if first.ID == 0 || first.Table == 0 || first.St == dMergeClosed {
			continue
		}
		for j := i + 1; j < len(s.Disp); j++ {
			d := &s.Disp[j]
			if d.ID == 0 || d.Table != first.Table || d.St == dMergeClosed || !partsOverlap(first.Part, d.Part) {
				continue
			}
			span := partSpan(d.Table, d.Part)
			if first.Part != partWhole {
				span = partSpan(first.Table, first.Part)
			}
			return fmt.Sprintf("at most one dispatcher may replicate a span, but %s on node %s (startTs %d) and %s on node %s (startTs %d) both replicate it: changefeed %s, span %s, epoch %d",
				dispName(first.ID), NodeName(s.Ident(first.Node)), first.StartTs, dispName(d.ID), NodeName(s.Ident(d.Node)), d.StartTs,
				Changefeed, span, s.Coord.Epoch)
		}
	}
	return ""
}

// invRunningMaintainerBootstrapped: a changefeed is marked replicating on a
// node only if a bootstrapped, non-removal-only maintainer of the operator's
// epoch runs there (D.S5; #3952 fixed by #3976, #4115). Checked on the step
// that marks it replicating, as the spec monitor does. Blind spot (the
// monitor's too): a status that arrives after its node died is not judged
// (the node's removal makes the changefeed absent again).
func invRunningMaintainerBootstrapped(cfg *Config, prev, s *State) string {
	c := &s.Coord
	if prev == nil || c.Repl != replReplicating || prev.Coord.Repl == replReplicating || (prev.Coord.Op != copAdd && prev.Coord.Op != copMove) || s.CoordFails != prev.CoordFails {
		// Judged when an add or move operator finishes (a new coordinator
		// adopting a running maintainer is not an add).
		return ""
	}
	slot := slotOf(c.Node)
	mt := &s.Maint[slot]
	why := ""
	switch {
	case !s.live(c.Node):
		// The maintainer reported and then its node died; the coordinator
		// cannot know yet and makes it absent when it sees the node leave.
		return ""
	case !mt.Exists:
		why = "no maintainer runs there"
	case mt.RemovalOnly:
		why = "the maintainer there is a removal-only maintainer, which never bootstraps"
	case !mt.Bootstrapped:
		why = "the maintainer there never bootstrapped"
	case cfg.has(FeatEpochs) && mt.Epoch != prev.Coord.OpEpoch:
		why = fmt.Sprintf("the maintainer there has epoch %d", mt.Epoch)
	default:
		return ""
	}
	return fmt.Sprintf("a running maintainer must be bootstrapped, but the add maintainer operator finished and marked the changefeed replicating while %s: changefeed %s, node %s, epoch %d, checkpoint %d",
		why, Changefeed, NodeName(c.Node), prev.Coord.OpEpoch, c.Ckpt)
}

// invSingleMaintainerGeneration: at most one bootstrapped maintainer of a
// changefeed runs on live nodes at a time (D.S6; #5083, #5179).
func invSingleMaintainerGeneration(cfg *Config, prev, s *State) string {
	first := -1
	for i := range s.Maint {
		mt := &s.Maint[i]
		if !mt.Exists || !mt.Bootstrapped || mt.Removed || s.NodeSt[i] != nodeAlive {
			continue
		}
		if first < 0 {
			first = i
			continue
		}
		return fmt.Sprintf("one maintainer generation must own a changefeed at a time, but maintainers on node %s (epoch %d) and node %s (epoch %d) are both bootstrapped and running: changefeed %s, checkpoint %d",
			NodeName(s.Ident(uint8(first))), s.Maint[first].Epoch, NodeName(s.Ident(uint8(i))), mt.Epoch, Changefeed, s.Coord.Ckpt)
	}
	return ""
}

// invErrorStuckFails: a changefeed whose errors persist without checkpoint
// progress fails once the backoff's budget is spent (error-stuck-fails;
// coordinator/changefeed/backoff.go HandleError). Retries counts the
// restarts of the current streak exactly as the monitor does: both reset at
// recovery, resume, failure and a coordinator's bootstrap
// (spec.Config.ErrorStuckRestarts = Config.ErrorStuckRestarts; 0: no
// budget, nothing to check).
func invErrorStuckFails(cfg *Config, prev, s *State) string {
	c := &s.Coord
	if cfg.ErrorStuckRestarts == 0 || int(c.Retries) <= cfg.ErrorStuckRestarts {
		return ""
	}
	return fmt.Sprintf("a changefeed whose errors persist without checkpoint progress must fail once the backoff's budget is spent, but it was restarted again: restart %d of a streak without checkpoint progress, past the budget of %d restarts; changefeed %s, checkpoint %d, epoch %d",
		c.Retries, cfg.ErrorStuckRestarts, Changefeed, c.Ckpt, c.Epoch)
}

// MonitorConfig is the spec monitors' configuration that judges this
// configuration's event streams as the predicates judge its states.
func (c *Config) MonitorConfig() spec.Config {
	return spec.Config{ErrorStuckRestarts: c.ErrorStuckRestarts}
}

// modelProp is the model's side of one row of spec's property table: a
// safety predicate judged on every step, a liveness goal judged at the fair
// schedule's quiescence (target: the upstream resolved ts at heal time), or
// the reason the model does not judge the property.
type modelProp struct {
	name   spec.Property
	safety func(cfg *Config, prev, s *State) string
	goal   func(cfg *Config, s *State, target uint8) string
	reason string
}

// modelProps registers the model's predicate per property: the safety
// predicates in the order checkSafety tries them, the liveness goals in the
// order checkGoals judges them (a stuck barrier also stops the checkpoint;
// the barrier goals come first so the story names the cause).
// TestEveryPropertyHasAModelPredicate fails when a property of the table has
// neither a predicate nor a reason.
var modelProps = []modelProp{
	{name: spec.ErrorNeverDropped, safety: invErrorNeverDropped},
	{name: spec.CheckpointMonotonic, safety: invCheckpointMonotonic},
	{name: spec.CheckpointNotPastUnflushed, safety: invCheckpointNotPastUnflushed},
	{name: spec.AtMostOneDispatcherPerSpan, safety: invAtMostOneDispatcherPerSpan},
	{name: spec.RunningMaintainerBootstrapped, safety: invRunningMaintainerBootstrapped},
	{name: spec.SingleMaintainerGeneration, safety: invSingleMaintainerGeneration},
	{name: spec.HandoffKeepsCheckpoint, safety: invHandoffKeepsCheckpoint},
	{name: spec.ErrorStuckFails, safety: invErrorStuckFails},
	{name: spec.DDLOrderedWithRows, safety: invDDLOrderedWithRowsAndCreated},
	{name: spec.StoppedStaysStopped, safety: invStoppedStaysStopped},
	{name: spec.EverySpanReplicated, goal: func(cfg *Config, s *State, _ uint8) string { return goalEverySpanReplicated(cfg, s) }},
	{name: spec.BarrierEventuallyPasses, goal: func(cfg *Config, s *State, _ uint8) string { return goalBarrierEventuallyPasses(cfg, s) }},
	{name: spec.TableSetFollowsDDLs, goal: func(cfg *Config, s *State, _ uint8) string { return goalTableSetFollowsDDLs(cfg, s) }},
	{name: spec.CheckpointAdvancesAfterHeal, goal: goalCheckpointAdvancesAfterHeal},
	{name: spec.StopClosesDispatchers, goal: func(cfg *Config, s *State, _ uint8) string { return goalStopClosesDispatchers(cfg, s) }},
	{name: spec.MaintainerOperatorsFinish, goal: func(cfg *Config, s *State, _ uint8) string { return goalMaintainerOperatorsFinish(cfg, s) }},
}

type safetyProp struct {
	name spec.Property
	fn   func(cfg *Config, prev, s *State) string
}

// safetyProps are modelProps' safety predicates, in order.
var safetyProps = func() []safetyProp {
	var out []safetyProp
	for _, p := range modelProps {
		if p.safety != nil {
			out = append(out, safetyProp{p.name, p.safety})
		}
	}
	return out
}()

// goalProp is a liveness goal of modelProps.
type goalProp struct {
	name spec.Property
	fn   func(cfg *Config, s *State, target uint8) string
}

// goalProps are modelProps' liveness goals, in the order checkGoals judges
// them.
var goalProps = func() []goalProp {
	var out []goalProp
	for _, p := range modelProps {
		if p.goal != nil {
			out = append(out, goalProp{p.name, p.goal})
		}
	}
	return out
}()

// safetyNames names safetyProps, in order (the search's property indices).
var safetyNames = func() []spec.Property {
	out := make([]spec.Property, len(safetyProps))
	for i, p := range safetyProps {
		out[i] = p.name
	}
	return out
}()

// checkSafety returns the first safety property the step prev -> s violates.
func checkSafety(cfg *Config, prev, s *State) (spec.Property, string) {
	for _, p := range safetyProps {
		if msg := p.fn(cfg, prev, s); msg != "" {
			return p.name, msg
		}
	}
	return "", ""
}

// checkSafetyIndex is checkSafety returning the property's index (-1: none).
func checkSafetyIndex(cfg *Config, prev, s *State) (int, string) {
	for i, p := range safetyProps {
		if msg := p.fn(cfg, prev, s); msg != "" {
			return i, msg
		}
	}
	return -1, ""
}

// goalEverySpanReplicated: once faults stop, every table of a running
// changefeed is covered by exactly one working dispatcher (D.L1; #3411 fixed
// by #3691). Judged at quiescence of the fair schedule.
func goalEverySpanReplicated(cfg *Config, s *State) string {
	if !running(&s.Coord) {
		return ""
	}
	for t := uint8(1); t <= MaxTables; t++ {
		if s.TableT[t] == none || dropped(s, t) {
			continue
		}
		// Each half of the table's key range is covered by exactly one
		// working dispatcher (a whole-table one covers both).
		n := 1
		for h := uint8(partLeft); h <= partRight && n == 1; h++ {
			n = 0
			for i := range s.Disp {
				if d := &s.Disp[i]; d.ID != 0 && d.Table == t && d.St == dWorking && partCovers(d.Part, h) {
					n++
				}
			}
		}
		if n != 1 {
			what := "has no working dispatcher"
			if n > 1 {
				what = fmt.Sprintf("has %d working dispatchers", n)
			}
			return fmt.Sprintf("every span must eventually be replicated, but after faults healed and the cluster quiesced table %d %s: changefeed %s, span %s, epoch %d, checkpoint %d",
				t, what, Changefeed, spec.WholeTable(int64(t)), s.Coord.Epoch, s.Coord.Ckpt)
		}
	}
	return ""
}

// goalCheckpointAdvancesAfterHeal: once faults stop, the stored checkpoint
// of a running changefeed reaches the upstream resolved ts at heal time
// (D.L2; tiflow#9595, #5709, #3952). Heal time is after the fair schedule
// resumed the upstream and let it reach the top of the ts range.
func goalCheckpointAdvancesAfterHeal(cfg *Config, s *State, target uint8) string {
	if !running(&s.Coord) || s.Coord.Ckpt >= target {
		return ""
	}
	return fmt.Sprintf("the checkpoint must advance once faults heal, but after the cluster quiesced the stored checkpoint is %d, below the upstream resolved ts %d at heal time (state %s, %s on %s): changefeed %s, epoch %d",
		s.Coord.Ckpt, target, cfStateName(s.Coord.State), replName(s.Coord.Repl), NodeName(s.Coord.Node), Changefeed, s.Coord.Epoch)
}

// goalStopClosesDispatchers: once faults stop, a stopped, failed
// or removed changefeed has no live dispatcher on any node (C.2, C.4, A.4:
// the cascade close is Stopped only when every node ACKed). A crash takes
// its node's dispatchers with it; a merge source its merge closed writes
// nothing and was reported removed then (as invAtMostOneDispatcherPerSpan
// counts it). Judged at quiescence of the fair schedule.
func goalStopClosesDispatchers(cfg *Config, s *State) string {
	if running(&s.Coord) {
		return ""
	}
	n, first := 0, -1
	for i := range s.Disp {
		if d := &s.Disp[i]; d.ID != 0 && d.St != dMergeClosed {
			if first < 0 {
				first = i
			}
			n++
		}
	}
	if n == 0 {
		return ""
	}
	d := &s.Disp[first]
	return fmt.Sprintf("a stopped changefeed must close every dispatcher, but after faults healed and the cluster quiesced the %s changefeed still has %d live dispatcher(s), first %s on node %s (span %s): changefeed %s, node %s, epoch %d",
		cfStateName(s.Coord.State), n, dispName(d.ID), NodeName(s.Ident(d.Node)), partSpan(d.Table, d.Part), Changefeed, NodeName(s.Ident(d.Node)), s.Coord.Epoch)
}

// invStoppedStaysStopped: until a resume, a paused, failed or removed
// changefeed keeps its state, and once its stop finished it gets no new
// dispatcher and no maintainer that schedules (C.2, C.3, C.4;
// coordinator/changefeed/changefeed_db.go StopByChangefeedID clears the
// node, so coordinator/controller.go validateMaintainerNode drops the late
// statuses of the stopped maintainer). The stop finished when the
// changefeed is stopped, no stop operator runs and no new coordinator is
// still bootstrapping with the stop persisted as pending (a new
// coordinator's stop reopens the window, as the monitor's
// MaintainerOpStarted does). A client request (ClientOps) is the only way
// back to running.
//
// A coordinator failover loses the old coordinator's stop operator, but not
// the stop: PauseChangefeed persisted ProgressStopping with the state
// (coordinator/changefeed/etcd_backend.go:344-378 at b813e76f9, called by
// coordinator/controller.go:978-995 before StopChangefeed), and the new
// coordinator's finishBootstrap stops the changefeed again
// (coordinator/controller.go:768-781). Until then the old coordinator's
// AddMaintainerRequest, sent before the pause, may still create its
// maintainer: the manager takes it while the old coordinator is still the
// one it knows (maintainer/maintainer_manager_maintainers.go:105-135), and
// the maintainer is in the bootstrap answer that the re-issued stop closes.
// The stop has not finished then, as the monitor says (no stop operator's
// MaintainerOpFinished).
func invStoppedStaysStopped(cfg *Config, prev, s *State) string {
	if prev == nil || running(&prev.Coord) {
		return ""
	}
	c := &s.Coord
	if running(c) && s.ClientOps == prev.ClientOps {
		return fmt.Sprintf("a stopped changefeed must stay stopped until a resume, but after it was %s its state went back to %s without a resume: changefeed %s, epoch %d",
			cfStateName(prev.Coord.State), cfStateName(c.State), Changefeed, c.Epoch)
	}
	if prev.Coord.Op != copNone || s.ClientOps != prev.ClientOps || (prev.Coord.Booting && prev.Coord.Prog == progStopping) {
		return "" // the stop has not finished: what it has not closed yet it will
	}
	for i := range s.Disp {
		d := &s.Disp[i]
		if d.ID != 0 && !hasDisp(prev, d.ID, d.Node) {
			return fmt.Sprintf("a stopped changefeed must stay stopped until a resume, but after it was %s dispatcher %s was created on node %s: changefeed %s, node %s, span %s",
				cfStateName(prev.Coord.State), dispName(d.ID), NodeName(s.Ident(d.Node)), Changefeed, NodeName(s.Ident(d.Node)), partSpan(d.Table, d.Part))
		}
	}
	for i := range s.Maint {
		mt, was := &s.Maint[i], &prev.Maint[i]
		if !mt.Exists || s.NodeSt[i] != nodeAlive {
			continue
		}
		switch {
		case !mt.RemovalOnly && (!was.Exists || was.RemovalOnly || s.Ident(uint8(i)) != prev.Ident(uint8(i))):
			return fmt.Sprintf("a stopped changefeed must stay stopped until a resume, but after it was %s a maintainer that schedules (not removal-only) was created on node %s: changefeed %s, node %s, epoch %d",
				cfStateName(prev.Coord.State), NodeName(s.Ident(uint8(i))), Changefeed, NodeName(s.Ident(uint8(i))), mt.Epoch)
		case mt.Bootstrapped && !was.Bootstrapped:
			return fmt.Sprintf("a stopped changefeed must stay stopped until a resume, but after it was %s a maintainer bootstrapped on node %s: changefeed %s, node %s, epoch %d",
				cfStateName(prev.Coord.State), NodeName(s.Ident(uint8(i))), Changefeed, NodeName(s.Ident(uint8(i))), mt.Epoch)
		}
	}
	return ""
}

// hasDisp reports whether s has dispatcher id on node slot.
func hasDisp(s *State, id, node uint8) bool {
	for i := range s.Disp {
		if s.Disp[i].ID == id && s.Disp[i].Node == node {
			return true
		}
	}
	return false
}

// invDDLOrderedWithRowsAndCreated is ddl-ordered-with-rows: the barrier
// rules of invDDLOrderedWithRows (barrier.go), and no row of the table the
// barrier DDL creates (a truncate's new table, whose rows start above the
// DDL: TableT = BlkT) reaches the sink before the DDL is written. That none
// of its rows is lost across the DDL is invCheckpointNotPastUnflushed's gap
// rule: the ghost Flushed tracks it from the DDL's ts.
func invDDLOrderedWithRowsAndCreated(cfg *Config, prev, s *State) string {
	if msg := invDDLOrderedWithRows(cfg, prev, s); msg != "" {
		return msg
	}
	k := barrierOf(cfg)
	if k == nil || !k.add || s.BlkT == 0 || s.DDLWrit != 0 {
		return ""
	}
	nt := newBarrierTable(cfg)
	if s.Flushed[nt] <= s.BlkT {
		return ""
	}
	return fmt.Sprintf("no row of a table a DDL creates or truncates may be written before the DDL, but the sink holds the rows of table %d up to ts %d while the %s at commitTs %d (influence %s) was not written: changefeed %s, span %s, ts %d",
		nt, s.Flushed[nt], k.reason, s.BlkT, k.influence, Changefeed, spec.WholeTable(int64(nt)), s.BlkT)
}
