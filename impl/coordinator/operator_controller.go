package coordinator

import (
	"fmt"

	"go.uber.org/zap"

	"cdcspec/impl/core"
	"cdcspec/impl/logging"
	"cdcspec/spec"
)

// operator is a coordinator/operator maintainer operator. At most one per
// changefeed. Schedule is called about every 500 ms and its message is sent
// every time (no throttle).
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
	String() string
	event(kind spec.Kind) spec.Event
}

const operatorPeriodMs = 500

// operatorController is coordinator/operator/operator_controller.go.
type operatorController struct {
	c       *Coordinator
	ops     map[core.ChangefeedID]operator
	lastRun int64
}

// AddOperator starts op unless one exists for the changefeed. For Add and
// Move the caller bumped (and persisted, in the same Effects, ordered before
// any send) the changefeed epoch first.
func (oc *operatorController) AddOperator(op operator, out *core.Effects) bool {
	if _, ok := oc.ops[op.ID()]; ok {
		oc.c.lg.Info("operator_controller.go", 246, "add operator failed, operator already exists",
			logging.Role("coordinator"), zap.String("operator", op.String()))
		return false
	}
	oc.checkAffectedNodes(op)
	oc.ops[op.ID()] = op
	op.Start()
	oc.c.lg.Event(out, op.event(spec.MaintainerOpStarted), logging.Role("coordinator"), zap.String("operator", op.String()))
	return true
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
// operator except a pending remove-stop".
func (oc *operatorController) replaceWithStop(stop *StopChangefeedOperator, out *core.Effects) {
	if old, ok := oc.ops[stop.ID()]; ok {
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

// poll runs every 500 ms: finished operators are post-finished and deleted,
// the others re-send their message.
func (oc *operatorController) poll(now int64, out *core.Effects) {
	if now-oc.lastRun < operatorPeriodMs {
		return
	}
	oc.lastRun = now
	for _, id := range oc.sortedIDs() {
		op := oc.ops[id]
		if oc.maybeFinish(op, out) {
			continue
		}
		if to, msg := op.Schedule(); msg != nil {
			oc.c.lg.Debug("operator_controller.go", 108, "send command to maintainer", logging.Role("coordinator"),
				zap.String("operator", op.String()), zap.String("to", string(to)))
			out.SendTo(oc.c.self, to, msg)
		}
		oc.maybeFinish(op, out)
	}
}

func (oc *operatorController) maybeFinish(op operator, out *core.Effects) bool {
	if !op.IsFinished() {
		return false
	}
	if oc.ops[op.ID()] != op {
		return true
	}
	delete(oc.ops, op.ID())
	op.PostFinish(out)
	oc.c.lg.Event(out, op.event(spec.MaintainerOpFinished), logging.Role("coordinator"),
		zap.String("operator", op.String()))
	return true
}

// onStatus hands a status to the changefeed's operator (step 1 of
// handleMaintainerStatus).
func (oc *operatorController) onStatus(from core.NodeID, s *core.MaintainerStatus, out *core.Effects) bool {
	op, ok := oc.ops[s.Changefeed]
	if !ok {
		return false
	}
	op.Check(from, s)
	oc.maybeFinish(op, out)
	return true
}

func (oc *operatorController) onNodeRemoved(n core.NodeID, out *core.Effects) {
	for _, id := range oc.sortedIDs() {
		op := oc.ops[id]
		op.OnNodeRemove(n)
		oc.maybeFinish(op, out)
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

func (o *AddMaintainerOperator) OnNodeRemove(n core.NodeID) {
	if n == o.dest && !o.finished {
		o.finished, o.removed = true, true
	}
}
func (o *AddMaintainerOperator) IsFinished() bool { return o.finished }
func (o *AddMaintainerOperator) PostFinish(out *core.Effects) {
	if o.c.db.Get(o.cf.ID) != o.cf || o.c.db.IsStopped(o.cf.ID) {
		return
	}
	if o.removed {
		o.c.db.MarkMaintainerAbsent(o.cf)
		return
	}
	o.c.db.MarkMaintainerReplicating(o.cf)
	o.cf.isNew = false
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
	if n == o.origin && o.state == moveRemoveOrigin {
		o.c.lg.Info("operator_move.go", 148, "origin node is stopped", zap.String("origin", string(o.origin)), zap.String("changefeed", string(o.cf.ID)))
		o.state = moveOriginStopped
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
func (o *MoveMaintainerOperator) PostFinish(out *core.Effects) {
	if o.state != moveDoneSuccess || o.c.db.Get(o.cf.ID) != o.cf || o.c.db.IsStopped(o.cf.ID) {
		return
	}
	o.c.lg.Info("operator_move.go", 295, "move changefeed operator finished", zap.String("changefeed", string(o.cf.ID)))
	o.c.db.MarkMaintainerReplicating(o.cf)
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
