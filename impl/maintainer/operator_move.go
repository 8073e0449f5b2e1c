package maintainer

import (
	"fmt"

	"go.uber.org/zap"

	"cdcspec/impl/core"
	"cdcspec/spec"
)

// moveState is maintainer/operator/operator_move.go's moveState at
// b813e76f9 (lines 30-51).
type moveState int

const (
	// moveStateRemoveOrigin: the Remove (O_Move) goes to the origin until
	// it reports a non-Working status or leaves.
	moveStateRemoveOrigin moveState = iota
	// moveStateAddDest: the span is bound to the destination, the Create
	// (O_Move) goes there until it reports Working.
	moveStateAddDest
	// moveStateAbortRemoveOrigin: the destination left first; the origin
	// is still removed, and the span goes absent once the origin stopped or
	// left (not before: a dispatcher may still run there).
	moveStateAbortRemoveOrigin
	// moveStateDoneSuccess: the destination reported Working; PostFinish
	// marks the span replicating.
	moveStateDoneSuccess
	// moveStateDoneNoPostFinish: finished with the span already put where
	// it goes (absent, or replicating on OnTaskRemoved); PostFinish does
	// nothing.
	moveStateDoneNoPostFinish
)

// MoveDispatcherOperator is HEAD's MoveDispatcherOperator: Remove (O_Move)
// to the origin, then Create (O_Move) to the destination.
//
//	removeOrigin --(origin stopped or gone)--> addDest --(dest Working)--> doneSuccess
//	     | (dest gone)                           | (dest gone)
//	     v                                       v
//	abortRemoveOrigin --(origin stopped or gone)--> doneNoPostFinish (span absent at once)
//
// The span is marked absent in the call that aborts the move (finishAsAbsent,
// operator_move.go:89-99), not by the next poll's PostFinish.
//
// The destination's Create starts at the span's stored checkpoint: the
// origin's Stopped status only drives the state machine (Check,
// operator_move.go:118-147), and the status handler does not store it,
// because Check has already rebound the span to the destination (or to no
// node) and the status's sender no longer matches ("nodeID not match",
// maintainer_controller.go:252-260).
type MoveDispatcherOperator struct {
	m      *Maintainer
	span   *SpanReplication
	origin core.NodeID
	dest   core.NodeID
	state  moveState
	// throttleResets counts HEAD's sendThrottler.reset() calls (the origin
	// stopped or left): each lets the next poll send at once. Phase
	// reports it to the controller's throttle.
	throttleResets int
	// deadDest: under cdcspec's rule for finished-move-binds-dead-node the
	// destination left after the move finished; PostFinish marks the span
	// absent instead of replicating.
	deadDest bool
}

func (o *MoveDispatcherOperator) ID() core.DispatcherID { return o.span.ID }
func (o *MoveDispatcherOperator) Phase() int            { return o.throttleResets }

func (o *MoveDispatcherOperator) isFinished() bool {
	return o.state == moveStateDoneSuccess || o.state == moveStateDoneNoPostFinish
}

// enterAddDest binds the span to the destination.
func (o *MoveDispatcherOperator) enterAddDest() {
	o.m.spans.BindSpanToNode(o.span, o.dest)
	o.state = moveStateAddDest
}

// finishAsAbsent aborts the move and marks the span absent at once
// (operator_move.go:89-99).
func (o *MoveDispatcherOperator) finishAsAbsent() {
	o.m.lg.Info("operator_move.go", 92, "move dispatcher operator aborted, mark span absent for rescheduling",
		zap.String("changefeedID", string(o.m.id)), zap.String("dispatcherID", string(o.span.ID)),
		zap.String("origin", string(o.origin)), zap.String("dest", string(o.dest)))
	o.m.spans.MarkSpanAbsent(o.span)
	o.state = moveStateDoneNoPostFinish
}

// Start (operator_move.go:253-268): a move to its own origin is done at
// once; otherwise the span is scheduling.
func (o *MoveDispatcherOperator) Start() {
	if o.dest == o.origin && o.origin != "" {
		o.m.lg.Info("operator_move.go", 258, "origin and dest are the same, no need to move",
			zap.String("origin", string(o.origin)), zap.String("dest", string(o.dest)), zap.String("replicaSet", string(o.span.ID)))
		o.state = moveStateDoneSuccess
		return
	}
	o.m.spans.MarkSpanScheduling(o.span)
	o.state = moveStateRemoveOrigin
}

// Schedule (operator_move.go:149-169).
func (o *MoveDispatcherOperator) Schedule() (core.NodeID, core.Message) {
	switch o.state {
	case moveStateRemoveOrigin, moveStateAbortRemoveOrigin:
		return o.origin, o.m.removeMessage(o.span, core.OpTypeMove)
	case moveStateAddDest:
		return o.dest, o.m.createMessage(o.span, core.OpTypeMove)
	}
	return "", nil
}

// Check (operator_move.go:118-147): the origin's non-Working status moves
// on to the destination, or ends an aborted move with the span absent;
// the destination's Working finishes the move. Nothing else counts (a
// Removed from the destination included).
func (o *MoveDispatcherOperator) Check(from core.NodeID, st *core.TableSpanStatus) {
	if o.isFinished() {
		return
	}
	if from == o.origin && st.State != core.ComponentWorking {
		o.m.lg.Info("operator_move.go", 127, "replica set removed from origin node", zap.String("replicaSet", string(o.span.ID)))
		o.throttleResets++
		switch o.state {
		case moveStateAbortRemoveOrigin:
			o.finishAsAbsent()
		case moveStateRemoveOrigin:
			o.enterAddDest()
		}
	}
	if o.state == moveStateAddDest && from == o.dest && st.State == core.ComponentWorking {
		o.m.lg.Info("operator_move.go", 142, "replica set added to dest node",
			zap.String("dest", string(o.dest)), zap.String("replicaSet", string(o.span.ID)))
		o.state = moveStateDoneSuccess
	}
}

func (o *MoveDispatcherOperator) AffectedNodes() []core.NodeID {
	return []core.NodeID{o.origin, o.dest}
}

// OnNodeRemove (operator_move.go:171-219).
func (o *MoveDispatcherOperator) OnNodeRemove(n core.NodeID) {
	if o.isFinished() {
		o.onNodeRemoveFinished(n)
		return
	}
	if n == o.dest {
		o.m.lg.Info("operator_move.go", 191, "dest node is offline, abort move and reschedule span",
			zap.String("dest", string(o.dest)), zap.String("origin", string(o.origin)), zap.String("replicaSet", string(o.span.ID)))
		switch o.state {
		case moveStateAddDest:
			// the origin's dispatcher is gone already
			o.finishAsAbsent()
		case moveStateRemoveOrigin:
			o.state = moveStateAbortRemoveOrigin
		}
		return
	}
	if n == o.origin {
		o.m.lg.Info("operator_move.go", 206, "origin node is stopped",
			zap.String("origin", string(o.origin)), zap.String("replicaSet", string(o.span.ID)))
		o.throttleResets++
		switch o.state {
		case moveStateAbortRemoveOrigin:
			o.finishAsAbsent()
		case moveStateRemoveOrigin:
			o.enterAddDest()
		}
	}
}

// onNodeRemoveFinished: the destination leaves after it reported Working,
// before the next poll post-finishes the move. HEAD's OnNodeRemove returns
// for a finished move ("move dispatcher operator is finished, no need to
// handle node remove", operator_move.go:175-181 at b813e76f9), and
// OnNodeRemoved skips the span because it still has an operator
// (operator_controller.go:291-298), so PostFinish marks it replicating on
// the dead node (:270-282), whose watermark was deleted
// (maintainer.go:627-630): the checkpoint passes the span's unflushed rows
// and no dispatcher is re-created (catalogue entry
// finished-move-binds-dead-node). cdcspec's rule does as HEAD's
// AddDispatcherOperator does for its finished add (operator_add.go:117-121,
// 150-160): the span goes absent at PostFinish.
func (o *MoveDispatcherOperator) onNodeRemoveFinished(n core.NodeID) {
	if o.state != moveStateDoneSuccess || n != o.dest || o.m.opts.Bugs.Has(spec.BugFinishedMoveBindsDeadNode) {
		o.m.lg.Info("operator_move.go", 176, "move dispatcher operator is finished, no need to handle node remove",
			zap.String("replicaSet", string(o.span.ID)), zap.String("origin", string(o.origin)), zap.String("dest", string(o.dest)))
		return
	}
	o.m.lg.Info("operator_move.go", 92, "move dispatcher operator aborted, mark span absent for rescheduling",
		zap.String("changefeedID", string(o.m.id)), zap.String("dispatcherID", string(o.span.ID)),
		zap.String("origin", string(o.origin)), zap.String("dest", string(o.dest)))
	o.deadDest = true
}

// OnTaskRemoved (a DDL removed the table) marks the span replicating on
// the node it is bound to and finishes the move without a post-finish
// (operator_move.go:242-251).
func (o *MoveDispatcherOperator) OnTaskRemoved() {
	o.m.lg.Info("operator_move.go", 246, "replicaset is removed, mark move dispatcher operator finished",
		zap.String("replicaSet", string(o.span.ID)), zap.String("changefeed", string(o.m.id)))
	if o.m.spans.GetTaskByID(o.span.ID) == o.span {
		o.m.spans.MarkSpanReplicating(o.span)
	}
	o.state = moveStateDoneNoPostFinish
}

func (o *MoveDispatcherOperator) IsFinished() bool     { return o.isFinished() }
func (o *MoveDispatcherOperator) BlockTsForward() bool { return true }

// PostFinish (operator_move.go:270-282): only a successful move has one.
func (o *MoveDispatcherOperator) PostFinish() {
	if o.state != moveStateDoneSuccess || o.m.spans.GetTaskByID(o.span.ID) != o.span {
		return
	}
	if o.deadDest {
		o.m.spans.MarkSpanAbsent(o.span)
		return
	}
	o.m.lg.Info("operator_move.go", 278, "move dispatcher operator finished",
		zap.String("changefeedID", string(o.m.id)), zap.String("dispatcherID", string(o.span.ID)))
	o.m.spans.MarkSpanReplicating(o.span)
}

func (o *MoveDispatcherOperator) String() string {
	return fmt.Sprintf("move dispatcher operator: %s, origin:%s, dest:%s", o.span.ID, o.origin, o.dest)
}

func (o *MoveDispatcherOperator) event(k spec.Kind) spec.Event {
	return spec.Event{Kind: k, Changefeed: string(o.m.id), Op: spec.OpMove, Dispatcher: string(o.span.ID), Span: o.span.Span,
		Node: string(o.dest), Origin: string(o.origin)}
}
