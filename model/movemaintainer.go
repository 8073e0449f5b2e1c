package model

import (
	"fmt"

	"cdcspec/spec"
)

// Maintainer move (C.6): the coordinator's MoveMaintainerOperator
// (coordinator/operator/operator_move.go at b813e76f9; impl/coordinator
// operator_controller.go). A balance or drain decision (the action
// move-maintainer, bounded by Config.MaintMoves) moves the maintainer of a
// replicating changefeed to another node NodeManager lists (schedulable):
//
//  1. the operator is created with the origin's epoch, then AddOperator
//     bumps and persists the changefeed's epoch (requiresNewMaintainerOwnership)
//     and the changefeed is marked scheduling, still bound to the origin;
//  2. RemoveOrigin: a non-cascade RemoveMaintainerRequest with the origin's
//     epoch, re-sent by Schedule; the origin removes only its table trigger
//     (the dispatchers stay for the next maintainer) and reports Stopped
//     with its last checkpoint and its own, now older, epoch;
//  3. Check: that non-Working report from the origin with the origin's
//     epoch moves the operator to OriginStopped; the same report then goes
//     through the coordinator's node and epoch checks. HEAD drops it as
//     stale ("drop stale maintainer status"), so the checkpoint the origin
//     reached since the epoch bump never reaches the changefeed's status
//     (pingcap/ticdc#6283, catalogue entry move-final-stopped-rejected).
//     #6280 (after b813e76f9), cdcspec's rule, lets the final report of the
//     active move's origin through the epoch check, so UpdateStatus stores
//     its checkpoint; every other stale report is still dropped;
//  4. the next Schedule (coordinator-tick) binds the changefeed to the
//     target and sends AddMaintainerRequest with the move's epoch and the
//     changefeed's checkpoint, re-sent until the target reports Working and
//     BootstrapDone with that epoch (PostFinish: replicating, StartFinished).
//
// OnNodeRemove follows onTargetNodeRemovedLocked: the target's removal
// before the add was sent falls back to the origin (unless the origin left
// too), after it aborts the move (the changefeed becomes absent and the
// basic scheduler adds it with a fresh epoch); the origin's removal during
// RemoveOrigin counts as its Stopped.

// Coordinator move phases (Coord.OpPh while Op is copMove).
const (
	cmovRemoveOrigin  = 0
	cmovOriginStopped = 1
	cmovAddTarget     = 2
)

// HandoffGhost is the history handoff-keeps-checkpoint needs, kept as the
// spec monitor keeps it (spec/handoff.go): the last maintainer move from
// its start until another coordinator operator starts, whether the origin's
// final Stopped report reached the coordinator, and its checkpoint.
type HandoffGhost struct {
	Active     bool
	Removing   bool  // the origin's final report has not arrived yet
	Origin     uint8 // identity
	Epoch      uint8 // the move's epoch
	HasFinal   bool
	Final      uint8 // checkpoint of the origin's final report
	FinalEpoch uint8
}

// coordMoveMaintainer: the balance scheduler (or a drain) moves the
// maintainer to slot's node.
func coordMoveMaintainer(cfg *Config, s *State, slot uint8, e *emitter) {
	s.MaintMoves++
	c := &s.Coord
	origin, originEpoch := c.Node, c.Epoch
	if cfg.has(FeatEpochs) {
		c.Epoch++
		if e != nil {
			e.add(spec.Event{Kind: spec.EpochBumped, Epoch: uint64(c.Epoch)})
		}
	}
	target := s.Ident(slot)
	c.Op, c.OpNode, c.OpEpoch = copMove, target, c.Epoch
	c.OpOrigin, c.OpOrigEpoch, c.OpPh, c.OpOrigGone = origin, originEpoch, cmovRemoveOrigin, false
	c.Repl = replScheduling
	s.Hand = HandoffGhost{Active: true, Removing: true, Origin: origin, Epoch: c.Epoch}
	if e != nil {
		e.add(spec.Event{Kind: spec.MaintainerOpStarted, Op: spec.OpMove, Node: NodeName(target), Origin: NodeName(origin), Epoch: uint64(c.Epoch)})
	}
	s.send(coordOpMsg(s))
}

// coordMoveMsg is the move's request in its phase: the origin's non-cascade
// remove, then the target's add.
func coordMoveMsg(s *State) Msg {
	c := &s.Coord
	if c.OpPh == cmovRemoveOrigin {
		return Msg{Kind: mRemoveMaintainer, Src: s.coordID(), Dst: c.OpOrigin, Epoch: c.OpOrigEpoch}
	}
	return Msg{Kind: mAddMaintainer, Src: s.coordID(), Dst: c.OpNode, Epoch: c.OpEpoch, A: c.Ckpt}
}

// coordMoveSchedule is Schedule in OriginStopped: bind the changefeed to the
// target (BindChangefeedToNode) and go on to AddTarget.
func coordMoveSchedule(s *State) {
	c := &s.Coord
	if c.Op == copMove && c.OpPh == cmovOriginStopped {
		c.OpPh = cmovAddTarget
		c.Node = c.OpNode
	}
}

// coordMoveCheck is MoveMaintainerOperator.Check.
func coordMoveCheck(cfg *Config, s *State, m Msg, e *emitter) {
	c := &s.Coord
	working, bootDone := m.A == 1, m.C == 1
	if c.OpPh == cmovRemoveOrigin && m.Src == c.OpOrigin && !working && (!cfg.has(FeatEpochs) || m.Epoch == c.OpOrigEpoch) {
		c.OpPh = cmovOriginStopped // "changefeed removed from origin node"
	}
	if c.OpPh == cmovAddTarget && m.Src == c.OpNode && (!cfg.has(FeatEpochs) || m.Epoch == c.OpEpoch) && working && (bootDone || cfg.mut(MutMoveAddNeedsBootstrapDone)) {
		// "changefeed added to dest node"; PostFinish.
		if e != nil {
			e.add(spec.Event{Kind: spec.MaintainerOpFinished, Op: spec.OpMove, Node: NodeName(c.OpNode), Origin: NodeName(c.OpOrigin), Epoch: uint64(c.OpEpoch)})
		}
		c.Repl = replReplicating
		c.Restarting = false // StartFinished
		c.Op, c.OpNode = copNone, none
		clearMove(c)
	}
}

// moveFinalReport reports whether status m is the active move's origin's
// final Stopped report, which #6280 lets through the epoch check.
func moveFinalReport(cfg *Config, s *State, m Msg) bool {
	c := &s.Coord
	return c.Op == copMove && c.OpPh == cmovOriginStopped && m.Src == c.OpOrigin && m.Epoch == c.OpOrigEpoch && m.A != 1 &&
		!cfg.bug(spec.BugMoveFinalStoppedRejected)
}

// coordMoveOnNodeRemoved is MoveMaintainerOperator.OnNodeRemove.
func coordMoveOnNodeRemoved(s *State, id uint8, e *emitter) {
	c := &s.Coord
	if id == c.OpOrigin {
		c.OpOrigGone = true
	}
	if id == c.OpNode {
		switch {
		case c.OpPh == cmovRemoveOrigin && c.OpNode != c.OpOrigin,
			c.OpPh == cmovOriginStopped && c.OpNode != c.OpOrigin && !c.OpOrigGone:
			c.OpNode = c.OpOrigin // keep removing the origin first, then add back there
		default:
			coordMoveAbort(s, e)
		}
		return
	}
	if id == c.OpOrigin && c.OpPh == cmovRemoveOrigin {
		c.OpPh = cmovOriginStopped // "origin node is stopped"
	}
}

// coordMoveAbort is finishAsAbsentLocked: the move ends without PostFinish
// and the changefeed is absent.
func coordMoveAbort(s *State, e *emitter) {
	c := &s.Coord
	if e != nil {
		e.add(spec.Event{Kind: spec.MaintainerOpFinished, Op: spec.OpMove, Node: NodeName(c.OpNode), Origin: NodeName(c.OpOrigin), Epoch: uint64(c.OpEpoch), Reason: "aborted"})
	}
	c.Op, c.OpNode = copNone, none
	c.Repl, c.Node = replAbsent, none
	clearMove(c)
}

// clearMove zeroes the move's fields once the coordinator's operator is no
// longer a move (the state stays canonical).
func clearMove(c *Coord) {
	c.OpOrigin, c.OpOrigEpoch, c.OpPh, c.OpOrigGone = 0, 0, 0, false
}

// handoffOtherOpStarted: a coordinator operator other than a move started;
// handoff-keeps-checkpoint stops following the last move.
func handoffOtherOpStarted(s *State) { s.Hand = HandoffGhost{} }

// handoffStatusReceived: the coordinator received status m.
func handoffStatusReceived(s *State, m Msg) {
	if h := &s.Hand; h.Active && h.Removing && m.Src == h.Origin && m.A != 1 {
		h.Removing, h.HasFinal, h.Final, h.FinalEpoch = false, true, m.B, m.Epoch
	}
}

// handoffNodeLeft: the coordinator saw node id leave.
func handoffNodeLeft(s *State, id uint8) {
	if h := &s.Hand; h.Active && h.Removing && h.Origin == id {
		h.Removing = false
	}
}

// managerNonCascadeRemove is a move's RemoveMaintainerRequest (cascade
// false) at an existing maintainer of its epoch (onRemoveMaintainer,
// maintainer.go at b813e76f9): ignored before bootstrap (#4114); otherwise
// the maintainer removes its table trigger and, once it is gone, reports
// Stopped with its last checkpoint (one step here: SPEC.md section 7.1).
// The other dispatchers stay for the next maintainer.
func managerNonCascadeRemove(cfg *Config, s *State, slot uint8, e *emitter) {
	mt := &s.Maint[slot]
	if mt.Removing || (!mt.Bootstrapped && !mt.RemovalOnly && !cfg.mut(MutNonCascadeRemoveBeforeBootstrap)) {
		return
	}
	mt.Removing, mt.Removed = true, true
	for i := range s.Disp {
		if d := &s.Disp[i]; d.ID != 0 && d.ID == mt.TriggerID && d.Node == slot {
			if e != nil {
				e.add(spec.Event{Kind: spec.DispatcherRemoved, Node: NodeName(s.Ident(slot)), Dispatcher: dispName(d.ID), Checkpoint: uint64(d.Ckpt)})
			}
			*d = Disp{}
			dm := &s.DMs[slot]
			dm.NoneT, dm.NoneTable, dm.AckedT = 0, 0, 0
		}
	}
	if e != nil {
		e.add(spec.Event{Kind: spec.MaintainerClosed, Node: NodeName(s.Ident(slot)), Epoch: uint64(mt.Epoch), Checkpoint: uint64(mt.Reported)})
	}
}

// appendMoveActions lists the enabled move-maintainer actions: a
// replicating changefeed with no operator may move to any other node
// NodeManager lists (schedulable).
func appendMoveActions(cfg *Config, s *State, buf []Action) []Action {
	c := &s.Coord
	if int(s.MaintMoves) >= cfg.MaintMoves || c.Op != copNone || c.Repl != replReplicating || !running(c) {
		return buf
	}
	for i := uint8(0); i < uint8(cfg.Nodes); i++ {
		if s.schedulable(i) && s.Ident(i) != c.Node {
			buf = append(buf, Action{Kind: ACoordMove, Node: i})
		}
	}
	return buf
}

// invHandoffKeepsCheckpoint: a maintainer move starts the target maintainer
// at or above the checkpoint of the origin's final Stopped report that
// reached the coordinator (C.6; #6283 fixed by #6280). Judged on the step
// that creates a maintainer of the move's epoch, as the monitor judges
// MaintainerCreated.
func invHandoffKeepsCheckpoint(cfg *Config, prev, s *State) string {
	h := &s.Hand
	if prev == nil || !h.Active || !h.HasFinal {
		return ""
	}
	for i := range s.Maint {
		mt, pm := &s.Maint[i], &prev.Maint[i]
		if !mt.Exists || mt.RemovalOnly || mt.Epoch != h.Epoch || mt.StartTs >= h.Final {
			continue
		}
		if pm.Exists && pm.Epoch == mt.Epoch && !pm.RemovalOnly {
			continue // not created by this step
		}
		return handoffMsg(h, s.Ident(uint8(i)), mt.StartTs)
	}
	return ""
}

func handoffMsg(h *HandoffGhost, node, start uint8) string {
	return fmt.Sprintf("a maintainer move must hand the origin's checkpoint to the target, but the origin %s reported Stopped at checkpoint %d (epoch %d) and the move's maintainer on %s starts at %d: changefeed %s, node %s, epoch %d, ts %d",
		NodeName(h.Origin), h.Final, h.FinalEpoch, NodeName(node), start, Changefeed, NodeName(node), h.Epoch, start)
}
