package coordinator

import (
	"cmp"
	"fmt"
	"slices"

	"go.uber.org/zap"

	"cdcspec/impl/core"
	"cdcspec/impl/logging"
	"cdcspec/spec"
)

// operator is a coordinator/operator maintainer operator. At most one per
// changefeed.
type operator interface {
	ID() core.ChangefeedID
	Type() spec.Op
	Start()
	// Schedule returns the message to (re-)send and its destination, or nil.
	Schedule() (core.NodeID, core.Message)
	Check(from core.NodeID, s *core.MaintainerStatus)
	OnNodeRemove(n core.NodeID)
	// AffectedNodes are the nodes the operator depends on; one already gone
	// when the operator is added gets OnNodeRemove at once.
	AffectedNodes() []core.NodeID
	IsFinished() bool
	PostFinish(out *core.Effects)
	// postFinishSched is the replica state PostFinish will leave the
	// changefeed in; ok is false when PostFinish leaves it alone.
	postFinishSched() (st SchedState, ok bool)
	String() string
	event(kind spec.Kind) spec.Event
}

// Periods of coordinator/operator/operator_controller.go at b813e76f9:
// Execute runs again 200 ms after a poll that emptied its due operators
// (line 90; 50 ms after a full batch, line 115, which one handler call does
// not distinguish), and an operator it scheduled is due again NotifyAt =
// now + 500 ms later (pollQueueingOperator, line 529). Schedule's message is
// sent every time it is due (no send throttle).
const (
	operatorPollMs   = 200
	operatorNotifyMs = 500
)

// opEntry is operator.OperatorWithTime (pkg/scheduler/operator/
// operator_queue.go): the operator, when it is next due (NotifyAt) and the
// push order that breaks NotifyAt ties.
type opEntry struct {
	op       operator
	notifyAt int64
	seq      uint64
}

// operatorController is coordinator/operator/operator_controller.go.
//
// Contract (HEAD's, at b813e76f9): a status only calls the operator's Check
// (UpdateOperatorStatus, lines 382-392) and a node leaving only calls
// OnNodeRemove (OnNodeRemoved, lines 397-410). A finished operator stays in
// the controller, still occupying the changefeed's operator slot, until the
// next poll pops it: then it is post-finished and deleted
// (pollQueueingOperator, lines 510-521). An unfinished operator sends its
// message from the poll once its NotifyAt has passed, never from a handler.
type operatorController struct {
	c        *Coordinator
	ops      map[core.ChangefeedID]*opEntry
	lastPoll int64
	pushSeq  uint64
}

// op returns the changefeed's operator, or nil.
func (oc *operatorController) op(id core.ChangefeedID) operator {
	if e := oc.ops[id]; e != nil {
		return e.op
	}
	return nil
}

// AddOperator starts op unless one exists for the changefeed. For Add and
// Move the caller bumped (and persisted, in the same Effects, ordered before
// any send) the changefeed epoch first.
func (oc *operatorController) AddOperator(op operator, out *core.Effects) bool {
	if _, ok := oc.ops[op.ID()]; ok {
		oc.c.lg.Info("operator_controller.go", 167, "add operator failed, operator already exists",
			logging.Role("coordinator"), zap.String("operator", op.String()))
		return false
	}
	oc.pushOperator(op, out)
	return true
}

// pushOperator is operator_controller.go:535-545: the affected-node check,
// then the operator enters the controller and the running queue, due at
// once, and Start runs. Its first message goes out at the next poll.
func (oc *operatorController) pushOperator(op operator, out *core.Effects) {
	oc.checkAffectedNodes(op)
	oc.pushSeq++
	oc.ops[op.ID()] = &opEntry{op: op, notifyAt: oc.c.now, seq: oc.pushSeq}
	op.Start()
	oc.c.lg.Event(out, op.event(spec.MaintainerOpStarted), logging.Role("coordinator"), zap.String("operator", op.String()))
}

// checkAffectedNodes is HEAD's pushOperator check: an operator that names a
// node the coordinator no longer sees alive gets OnNodeRemove for it before
// it starts. A stop aimed at a node that already left (a move's dead origin)
// is so re-targeted to the coordinator's own node, as it would have been had
// the node left after the stop was added.
func (oc *operatorController) checkAffectedNodes(op operator) {
	for _, n := range op.AffectedNodes() {
		if _, ok := oc.c.nodes[n]; !ok {
			op.OnNodeRemove(n)
		}
	}
}

// replaceWithStop installs a stop operator: "a new stop replaces any
// operator except a pending remove-stop" (pushStopChangefeedOperator,
// operator_controller.go:351-380). The replaced operator leaves the
// controller at once, finished or not.
func (oc *operatorController) replaceWithStop(stop *StopChangefeedOperator, out *core.Effects) {
	if old := oc.op(stop.ID()); old != nil {
		if s, isStop := old.(*StopChangefeedOperator); isStop {
			if s.removed && !stop.removed {
				return
			}
			// A pause or remove while the warning path's stop is still
			// pending: HEAD (catalogue entry stop-replaces-pending-stop,
			// #6134) replaces it with a stop aimed at the coordinator's node
			// and the new epoch, so the old-epoch maintainer is never told
			// to stop. The new stop inherits the pending stop's target node
			// and epoch, as #6135 does.
			if !s.finished && !oc.c.opts.Bugs.Has(spec.BugStopReplacesPendingStop) {
				stop.node, stop.epoch = s.node, s.epoch
			}
		}
		// Stop during move uses the origin (node, epoch) while the origin may
		// still run and until the target is bound (RemoveOrigin and
		// OriginStopped: operator_move.go originStopTarget at b813e76f9);
		// stop during add (or after the move's add was sent) uses the
		// destination and the operator's epoch.
		switch o := old.(type) {
		case *MoveMaintainerOperator:
			if o.state == moveRemoveOrigin || o.state == moveOriginStopped {
				stop.node, stop.epoch = o.origin, o.originEpoch
			} else {
				stop.node, stop.epoch = o.dest, o.epoch
			}
		case *AddMaintainerOperator:
			if !o.removed {
				stop.node, stop.epoch = o.dest, o.epoch
			}
		}
		delete(oc.ops, stop.ID())
	}
	oc.AddOperator(stop, out)
}

func (oc *operatorController) sortedIDs() []core.ChangefeedID { return core.SortedKeys(oc.ops) }

// queue lists the running queue in pop order (NotifyAt, then push order).
func (oc *operatorController) queue() []*opEntry {
	q := make([]*opEntry, 0, len(oc.ops))
	for _, e := range oc.ops {
		q = append(q, e)
	}
	slices.SortFunc(q, func(a, b *opEntry) int {
		if a.notifyAt != b.notifyAt {
			return cmp.Compare(a.notifyAt, b.notifyAt)
		}
		return cmp.Compare(a.seq, b.seq)
	})
	return q
}

// poll is Execute over pollQueueingOperator (operator_controller.go:85-118,
// 497-532), every operatorPollMs: pop by NotifyAt; a finished operator is
// post-finished and deleted; the first one not yet due ends the poll; a due
// one is due again 500 ms later and sends its message.
func (oc *operatorController) poll(now int64, out *core.Effects) {
	if now-oc.lastPoll < operatorPollMs {
		return
	}
	oc.lastPoll = now
	for _, e := range oc.queue() {
		if oc.ops[e.op.ID()] != e {
			continue // replaced by an earlier entry's PostFinish
		}
		if e.op.IsFinished() {
			oc.finalizeOperator(e, out)
			continue
		}
		if now < e.notifyAt {
			return
		}
		e.notifyAt = now + operatorNotifyMs
		if to, msg := e.op.Schedule(); msg != nil {
			oc.c.lg.Info("operator_controller.go", 108, "send command to maintainer", logging.Role("coordinator"),
				zap.String("operator", e.op.String()))
			out.SendTo(oc.c.self, to, msg)
		}
	}
}

// finalizeOperator is pollQueueingOperator's finished branch
// (operator_controller.go:510-521): PostFinish, then the operator leaves the
// controller.
func (oc *operatorController) finalizeOperator(e *opEntry, out *core.Effects) {
	delete(oc.ops, e.op.ID())
	e.op.PostFinish(out)
	oc.c.lg.Event(out, e.op.event(spec.MaintainerOpFinished), logging.Role("coordinator"),
		zap.String("operator", e.op.String()))
}

// ExecuteOperators runs one poll of the operator controller now, as a TiCDC
// unit test calls Controller.Execute: finished operators are post-finished,
// due ones scheduled.
func (c *Coordinator) ExecuteOperators(now int64, out *core.Effects) {
	c.now = now
	c.oc.lastPoll = now - operatorPollMs
	c.oc.poll(now, out)
}

// onStatus hands a status to the changefeed's operator (step 1 of
// handleMaintainerStatus; UpdateOperatorStatus checks it, nothing more).
func (oc *operatorController) onStatus(from core.NodeID, s *core.MaintainerStatus) bool {
	op := oc.op(s.Changefeed)
	if op == nil {
		return false
	}
	op.Check(from, s)
	return true
}

// onNodeRemoved tells every operator that n left (OnNodeRemoved's second
// loop); a finished one is post-finished at the next poll.
func (oc *operatorController) onNodeRemoved(n core.NodeID) {
	for _, id := range oc.sortedIDs() {
		oc.ops[id].op.OnNodeRemove(n)
	}
}

// --- AddMaintainerOperator ---

// AddMaintainerOperator (coordinator/operator/operator_add.go) starts a
// maintainer on dest.
type AddMaintainerOperator struct {
	c        *Coordinator
	cf       *Changefeed
	dest     core.NodeID
	epoch    uint64
	finished bool
	removed  bool // canceled: dest left or changefeed gone
}

func (o *AddMaintainerOperator) ID() core.ChangefeedID { return o.cf.ID }
func (o *AddMaintainerOperator) Type() spec.Op         { return spec.OpAdd }
func (o *AddMaintainerOperator) Start()                { o.c.db.BindChangefeedToNode(o.cf, o.dest) }
func (o *AddMaintainerOperator) Schedule() (core.NodeID, core.Message) {
	if o.finished {
		return "", nil
	}
	return o.dest, &core.AddMaintainerRequest{Changefeed: o.cf.ID, CheckpointTs: o.cf.status.CheckpointTs, IsNew: o.cf.isNew, Epoch: o.epoch}
}

// Check finishes the add on a Working report from dest with the current
// epoch and BootstrapDone (#3976). With the bug add-accepts-unbootstrapped-
// maintainer it is the pre-#3976, pre-epoch check: any Working report from
// dest.
func (o *AddMaintainerOperator) Check(from core.NodeID, s *core.MaintainerStatus) {
	if o.finished || from != o.dest || s.State != core.ComponentWorking {
		return
	}
	if !o.c.opts.Bugs.Has(spec.BugAddAcceptsUnbootstrappedMaintainer) {
		if !s.BootstrapDone || (s.Epoch != 0 && s.Epoch != o.epoch) {
			return
		}
	}
	o.c.lg.Info("operator_add.go", 78, "maintainer report working status", zap.String("changefeed", string(o.cf.ID)))
	o.finished = true
}
func (o *AddMaintainerOperator) AffectedNodes() []core.NodeID { return []core.NodeID{o.dest} }

// OnNodeRemove cancels the add when its destination leaves, even one that
// finished but was not yet post-finished (operator_add.go:95-100): its
// PostFinish then marks the changefeed absent, not replicating.
func (o *AddMaintainerOperator) OnNodeRemove(n core.NodeID) {
	if n == o.dest {
		o.finished, o.removed = true, true
	}
}
func (o *AddMaintainerOperator) IsFinished() bool { return o.finished }

// PostFinish (operator_add.go:129-138) marks the changefeed replicating, or
// absent when the destination left.
func (o *AddMaintainerOperator) PostFinish(out *core.Effects) {
	switch st, ok := o.postFinishSched(); {
	case !ok:
	case st == Absent:
		o.c.db.MarkMaintainerAbsent(o.cf)
	default:
		o.c.db.MarkMaintainerReplicating(o.cf)
		o.cf.isNew = false
	}
}

// postFinishSched: absent when the destination left, replicating
// otherwise; nothing for a changefeed gone or stopped meanwhile.
func (o *AddMaintainerOperator) postFinishSched() (SchedState, bool) {
	switch {
	case o.c.db.Get(o.cf.ID) != o.cf || o.c.db.IsStopped(o.cf.ID):
		return 0, false
	case o.removed:
		return Absent, true
	}
	return Replicating, true
}
func (o *AddMaintainerOperator) String() string {
	return fmt.Sprintf("add maintainer operator: %s, dest:%s", o.cf.ID, o.dest)
}
func (o *AddMaintainerOperator) event(k spec.Kind) spec.Event {
	e := spec.Event{Kind: k, Changefeed: string(o.cf.ID), Op: spec.OpAdd, Node: string(o.dest), Epoch: o.epoch}
	if k == spec.MaintainerOpFinished && o.removed {
		// Canceled (dest left): nothing was marked replicating.
		e.Reason = "canceled"
	}
	return e
}

// --- MoveMaintainerOperator ---

type moveState uint8

const (
	moveRemoveOrigin moveState = iota
	moveOriginStopped
	moveAddTarget
	moveDoneSuccess
	moveDoneNoPostFinish
)

// String names the state as operator_move.go:33-37 does, without the
// moveMaintainerState prefix.
func (s moveState) String() string {
	return [...]string{"RemoveOrigin", "OriginStopped", "AddTarget", "DoneSuccess", "DoneNoPostFinish"}[s]
}

// MoveMaintainerOperator (operator_move.go): RemoveOrigin -> OriginStopped ->
// AddTarget -> DoneSuccess (or DoneNoPostFinish).
type MoveMaintainerOperator struct {
	c           *Coordinator
	cf          *Changefeed
	origin      core.NodeID
	dest        core.NodeID
	originEpoch uint64
	epoch       uint64
	state       moveState
	// originRemoved: the origin's node left while the move ran; a move
	// whose target fell back to the origin then has no live owner to add.
	originRemoved bool
}

func (o *MoveMaintainerOperator) ID() core.ChangefeedID { return o.cf.ID }
func (o *MoveMaintainerOperator) Type() spec.Op         { return spec.OpMove }
func (o *MoveMaintainerOperator) Start()                { o.c.db.MarkMaintainerScheduling(o.cf) }
func (o *MoveMaintainerOperator) Schedule() (core.NodeID, core.Message) {
	switch o.state {
	case moveRemoveOrigin:
		return o.origin, &core.RemoveMaintainerRequest{Changefeed: o.cf.ID, Cascade: false, Removed: false, Epoch: o.originEpoch}
	case moveOriginStopped:
		o.c.db.BindChangefeedToNode(o.cf, o.dest)
		o.state = moveAddTarget
		fallthrough
	case moveAddTarget:
		return o.dest, &core.AddMaintainerRequest{Changefeed: o.cf.ID, CheckpointTs: o.cf.status.CheckpointTs, IsNew: o.cf.isNew, Epoch: o.epoch}
	}
	return "", nil
}
func (o *MoveMaintainerOperator) Check(from core.NodeID, s *core.MaintainerStatus) {
	switch o.state {
	case moveRemoveOrigin:
		if from == o.origin && s.State != core.ComponentWorking && (s.Epoch == 0 || s.Epoch == o.originEpoch) {
			o.c.lg.Info("operator_move.go", 87, "changefeed removed from origin node", zap.String("changefeed", string(o.cf.ID)))
			o.state = moveOriginStopped
		}
	case moveAddTarget:
		if from == o.dest && s.State == core.ComponentWorking && s.BootstrapDone && (s.Epoch == 0 || s.Epoch == o.epoch) {
			o.c.lg.Info("operator_move.go", 96, "changefeed added to dest node", zap.String("changefeed", string(o.cf.ID)),
				zap.String("dest", string(o.dest)))
			o.state = moveDoneSuccess
		}
	}
}

// OnNodeRemove follows coordinator/operator/operator_move.go
// MoveMaintainerOperator.OnNodeRemove and onTargetNodeRemovedLocked at
// b813e76f9: the target's removal is handled first; before the add was sent
// the target falls back to the origin (once the old epoch has stopped there),
// and a move with no live owner left finishes as absent so the scheduler
// retries with a fresh epoch.
func (o *MoveMaintainerOperator) OnNodeRemove(n core.NodeID) {
	if o.state == moveDoneNoPostFinish {
		return
	}
	if n == o.origin {
		o.originRemoved = true
	}
	if n == o.dest {
		o.onTargetNodeRemoved()
		return
	}
	if n == o.origin {
		o.c.lg.Info("operator_move.go", 149, "origin node is stopped", zap.String("origin", string(o.origin)), zap.String("changefeed", string(o.cf.ID)))
		if o.state == moveRemoveOrigin {
			o.state = moveOriginStopped
		}
	}
}

func (o *MoveMaintainerOperator) AffectedNodes() []core.NodeID {
	return []core.NodeID{o.origin, o.dest}
}

func (o *MoveMaintainerOperator) onTargetNodeRemoved() {
	switch o.state {
	case moveRemoveOrigin:
		if o.dest == o.origin {
			o.abort()
			return
		}
		o.c.lg.Info("operator_move.go", 170, "destination node removed before origin maintainer stopped",
			zap.String("dest", string(o.dest)), zap.String("origin", string(o.origin)), zap.String("changefeed", string(o.cf.ID)))
		o.dest = o.origin
	case moveOriginStopped:
		if o.dest == o.origin {
			o.abort()
			return
		}
		o.c.lg.Info("operator_move.go", 182, "destination node removed after origin maintainer stopped",
			zap.String("dest", string(o.dest)), zap.String("origin", string(o.origin)), zap.String("changefeed", string(o.cf.ID)))
		if o.originRemoved {
			o.abort()
			return
		}
		o.dest = o.origin
	case moveAddTarget, moveDoneSuccess:
		o.abort()
	}
}

func (o *MoveMaintainerOperator) abort() {
	o.c.lg.Info("operator_move.go", 205, "move maintainer operator aborted, mark changefeed absent", zap.String("changefeed", string(o.cf.ID)))
	o.state = moveDoneNoPostFinish
	if o.c.db.Get(o.cf.ID) == o.cf {
		o.c.db.MarkMaintainerAbsent(o.cf)
	}
}

func (o *MoveMaintainerOperator) IsFinished() bool {
	return o.state == moveDoneSuccess || o.state == moveDoneNoPostFinish
}

// PostFinish (operator_move.go:287-298) marks a moved changefeed
// replicating; an aborted move already marked it absent.
func (o *MoveMaintainerOperator) PostFinish(out *core.Effects) {
	if _, ok := o.postFinishSched(); !ok {
		return
	}
	o.c.lg.Info("operator_move.go", 295, "move changefeed operator finished", zap.String("changefeed", string(o.cf.ID)))
	o.c.db.MarkMaintainerReplicating(o.cf)
}

// postFinishSched: replicating after a successful move; an aborted move
// already marked the changefeed absent.
func (o *MoveMaintainerOperator) postFinishSched() (SchedState, bool) {
	if o.state != moveDoneSuccess || o.c.db.Get(o.cf.ID) != o.cf || o.c.db.IsStopped(o.cf.ID) {
		return 0, false
	}
	return Replicating, true
}
func (o *MoveMaintainerOperator) String() string {
	return fmt.Sprintf("move maintainer operator: %s, origin:%s, dest:%s", o.cf.ID, o.origin, o.dest)
}
func (o *MoveMaintainerOperator) event(k spec.Kind) spec.Event {
	e := spec.Event{Kind: k, Changefeed: string(o.cf.ID), Op: spec.OpMove, Node: string(o.dest), Origin: string(o.origin), Epoch: o.epoch}
	if k == spec.MaintainerOpFinished && o.state != moveDoneSuccess {
		e.Reason = "aborted"
	}
	return e
}

// --- StopChangefeedOperator ---

// StopChangefeedOperator (operator_stop.go) cascade-removes the maintainer.
type StopChangefeedOperator struct {
	c        *Coordinator
	id       core.ChangefeedID
	node     core.NodeID
	removed  bool
	epoch    uint64
	finished bool
}

func (o *StopChangefeedOperator) ID() core.ChangefeedID { return o.id }
func (o *StopChangefeedOperator) Type() spec.Op         { return spec.OpStop }
func (o *StopChangefeedOperator) Start()                {}
func (o *StopChangefeedOperator) Schedule() (core.NodeID, core.Message) {
	if o.finished {
		return "", nil
	}
	return o.node, &core.RemoveMaintainerRequest{Changefeed: o.id, Cascade: true, Removed: o.removed, Epoch: o.epoch}
}

// Check finishes on a non-Working report from the node with a matching
// epoch.
func (o *StopChangefeedOperator) Check(from core.NodeID, s *core.MaintainerStatus) {
	if o.finished || from != o.node || s.State == core.ComponentWorking {
		return
	}
	if s.Epoch != 0 && o.epoch != 0 && s.Epoch != o.epoch {
		return
	}
	// A stop that replaced a move in RemoveOrigin targets the origin with
	// the origin epoch. In HEAD (catalogue entry
	// remove-during-move-leaks-dispatchers) the origin's Stopped from the
	// move's non-cascade remove, which closed only the table trigger,
	// finishes it, so the dispatcher managers never close. cdcspec ends a
	// stop only on a Stopped that reports a finished cascade close.
	if !s.CascadeClosed && !o.c.opts.Bugs.Has(spec.BugRemoveDuringMoveLeaksDispatchers) {
		return
	}
	o.c.lg.Info("operator_stop.go", 68, "maintainer report non-working status", zap.String("maintainer", string(o.id)))
	o.finished = true
}

// OnNodeRemove re-targets the stop to the coordinator's own node, where a
// removal-only maintainer does the cascade close.
func (o *StopChangefeedOperator) OnNodeRemove(n core.NodeID) {
	if n == o.node {
		o.node = o.c.self
	}
}
func (o *StopChangefeedOperator) AffectedNodes() []core.NodeID { return []core.NodeID{o.node} }
func (o *StopChangefeedOperator) IsFinished() bool             { return o.finished }

// postFinishSched: a stop's PostFinish writes etcd, not the replica state.
func (o *StopChangefeedOperator) postFinishSched() (SchedState, bool) { return 0, false }

func (o *StopChangefeedOperator) PostFinish(out *core.Effects) {
	o.c.lg.Info("operator_stop.go", 135, "stop maintainer operator finished", zap.String("changefeed", string(o.id)))
	if o.removed {
		o.c.be.add(out, o.id, "delete",
			core.MetaOp{Kind: core.MetaDelete, Key: InfoKey(o.id), ExpectModRev: -1},
			core.MetaOp{Kind: core.MetaDelete, Key: StatusKey(o.id), ExpectModRev: -1})
		o.c.db.emitRemoved(out, o.id)
		return
	}
	if cf := o.c.db.Get(o.id); cf != nil {
		o.c.be.add(out, o.id, "progress", putOp(StatusKey(o.id), ChangefeedStatus{CheckpointTs: cf.status.CheckpointTs, Progress: ProgressNone}, -1))
		cf.progress = ProgressNone
	}
}
func (o *StopChangefeedOperator) String() string {
	return fmt.Sprintf("stop maintainer operator: %s, dest %s, remove %t", o.id, o.node, o.removed)
}
func (o *StopChangefeedOperator) event(k spec.Kind) spec.Event {
	return spec.Event{Kind: k, Changefeed: string(o.id), Op: spec.OpStop, Node: string(o.node), Epoch: o.epoch, Removed: o.removed}
}
