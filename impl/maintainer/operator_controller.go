package maintainer

import (
	"fmt"
	"slices"

	"go.uber.org/zap"

	"cdcspec/impl/core"
	"cdcspec/impl/logging"
	"cdcspec/spec"
)

// dispatcherOperator is a maintainer/operator operator. At most one per
// DispatcherID.
type dispatcherOperator interface {
	ID() core.DispatcherID
	Start()
	// Schedule returns the message to send (throttled by the controller).
	Schedule() (core.NodeID, core.Message)
	Check(from core.NodeID, st *core.TableSpanStatus)
	OnNodeRemove(n core.NodeID)
	// AffectedNodes are the nodes the operator depends on; one already gone
	// when the operator is added gets OnNodeRemove at once.
	AffectedNodes() []core.NodeID
	// OnTaskRemoved: the span was removed by someone else (DDL, close).
	OnTaskRemoved()
	IsFinished() bool
	PostFinish()
	// BlockTsForward: does the span bound the global checkpoint (add, move,
	// split) or not (remove)?
	BlockTsForward() bool
	// phase changes reset the send throttle (move).
	Phase() int
	String() string
	event(k spec.Kind) spec.Event
}

const (
	operatorPollMs         = 500
	minSendMessageInterval = 10_000
)

type opEntry struct {
	op       dispatcherOperator
	lastSent int64
	phase    int
}

// OperatorController is maintainer/operator/operator_controller.go.
type OperatorController struct {
	m        *Maintainer
	ops      map[core.DispatcherID]*opEntry
	lastPoll int64
	out      *core.Effects
}

func newOperatorController(m *Maintainer) *OperatorController {
	return &OperatorController{m: m, ops: map[core.DispatcherID]*opEntry{}}
}

// AddOperator refuses when quiescing (the maintainer is being removed,
// #4828), when an operator exists, or when the span is unknown.
func (oc *OperatorController) AddOperator(op dispatcherOperator, out *core.Effects) bool {
	m := oc.m
	fields := []zap.Field{logging.Role("maintainer"), zap.String("changefeedID", string(m.id)), zap.String("operator", op.String())}
	if m.removing {
		m.lg.Info("operator_controller.go", 237, "add operator failed, controller is quiescing", fields...)
		return false
	}
	if _, ok := oc.ops[op.ID()]; ok {
		m.lg.Info("operator_controller.go", 246, "add operator failed, operator already exists", fields...)
		return false
	}
	if m.spans.GetTaskByID(op.ID()) == nil {
		m.lg.Info("operator_controller.go", 256, "add operator failed, span not found", fields...)
		return false
	}
	oc.checkAffectedNodes(op)
	oc.ops[op.ID()] = &opEntry{op: op, phase: op.Phase()}
	m.opSeq++
	m.spans.GetTaskByID(op.ID()).opSeq = m.opSeq
	op.Start()
	m.lg.Event(out, op.event(spec.DispatcherOpStarted), logging.Role("maintainer"), zap.String("operator", op.String()))
	// Send the first message at once.
	oc.send(oc.ops[op.ID()], m.now, out)
	return true
}

func (oc *OperatorController) sortedIDs() []core.DispatcherID { return core.SortedKeys(oc.ops) }

func (oc *OperatorController) send(e *opEntry, now int64, out *core.Effects) {
	if ph := e.op.Phase(); ph != e.phase {
		e.phase = ph
		e.lastSent = 0
	}
	if e.lastSent != 0 && now-e.lastSent < minSendMessageInterval {
		return
	}
	to, msg := e.op.Schedule()
	if msg == nil || to == "" {
		return
	}
	e.lastSent = now
	out.SendTo(oc.m.self, to, msg)
}

// poll runs about every 500 ms.
func (oc *OperatorController) poll(now int64, out *core.Effects) {
	if now-oc.lastPoll < operatorPollMs {
		return
	}
	oc.lastPoll = now
	oc.m.finishReleasedMerges()
	for _, id := range oc.sortedIDs() {
		e := oc.ops[id]
		if e == nil || oc.maybeFinish(e, out) {
			continue
		}
		oc.send(e, now, out)
	}
}

func (oc *OperatorController) maybeFinish(e *opEntry, out *core.Effects) bool {
	if !e.op.IsFinished() {
		return false
	}
	if oc.ops[e.op.ID()] != e {
		return true
	}
	delete(oc.ops, e.op.ID())
	oc.out = out // a PostFinish may add operators (the split's postFinish)
	e.op.PostFinish()
	oc.out = nil
	oc.m.lg.Event(out, e.op.event(spec.DispatcherOpFinished), logging.Role("maintainer"),
		zap.String("operatorID", string(e.op.ID())), zap.String("operator", e.op.String()))
	return true
}

// UpdateOperatorStatus hands a status to its operator; reports whether
// there was one. While the maintainer is removing the controller is
// quiesced: every operator except the table trigger's is frozen and sees
// no status (it keeps holding its span). Follows
// maintainer/operator/operator_controller.go Controller.QuiesceExcept and
// UpdateOperatorStatus at b813e76f9.
func (oc *OperatorController) UpdateOperatorStatus(from core.NodeID, st *core.TableSpanStatus, out *core.Effects) bool {
	e := oc.ops[st.ID]
	if e == nil {
		return false
	}
	if !oc.allowed(st.ID) {
		return true
	}
	e.op.Check(from, st)
	if !oc.maybeFinish(e, out) {
		oc.send(e, oc.m.now, out) // a phase change sends at once
	}
	return true
}

// allowed: not quiesced, or the table trigger (the only operator that
// keeps running while the maintainer is removing).
func (oc *OperatorController) allowed(id core.DispatcherID) bool {
	return !oc.m.removing || id == oc.m.ddlSpanID
}

// checkAffectedNodes is HEAD's pushOperator check: an operator that names a
// node the maintainer no longer sees alive gets OnNodeRemove for it before
// it starts, as it would have had the node left after it was added.
func (oc *OperatorController) checkAffectedNodes(op dispatcherOperator) {
	alive := oc.m.mgr.aliveNodes()
	for _, n := range op.AffectedNodes() {
		if !slices.Contains(alive, n) {
			op.OnNodeRemove(n)
		}
	}
}

// OnNodeRemoved: every operator gets OnNodeRemove.
func (oc *OperatorController) OnNodeRemoved(n core.NodeID, out *core.Effects) {
	for _, id := range oc.sortedIDs() {
		if e := oc.ops[id]; e != nil {
			e.op.OnNodeRemove(n)
			if !oc.maybeFinish(e, out) {
				oc.send(e, oc.m.now, out)
			}
		}
	}
}

// RemoveTasksByTableIDs removes every span of the tables (a DDL dropped
// them): an existing operator is replaced (OnTaskRemoved), an absent span
// is untracked at once, a placed one gets a remove operator that untracks
// it when its dispatcher stopped.
func (oc *OperatorController) RemoveTasksByTableIDs(tables []int64, out *core.Effects) {
	m := oc.m
	for _, t := range tables {
		for _, s := range m.spans.tableSpans(t) {
			if e := oc.ops[s.ID]; e != nil {
				e.op.OnTaskRemoved()
				delete(oc.ops, s.ID)
				m.lg.Event(out, e.op.event(spec.DispatcherOpFinished), logging.Role("maintainer"),
					zap.String("operatorID", string(e.op.ID())), zap.String("operator", e.op.String()))
			}
			if s.nodeID == "" {
				m.spans.RemoveSpan(s)
				continue
			}
			s := s
			oc.AddOperator(&RemoveDispatcherOperator{m: m, span: s, node: s.nodeID, opType: core.OpTypeRemove, postFinish: func() {
				if m.spans.GetTaskByID(s.ID) == s {
					m.spans.RemoveSpan(s)
				}
			}}, out)
		}
	}
}

// GetOperator returns the operator of a span, or nil.
func (oc *OperatorController) GetOperator(id core.DispatcherID) dispatcherOperator {
	if e := oc.ops[id]; e != nil {
		return e.op
	}
	return nil
}

// --- AddDispatcherOperator ---

// AddDispatcherOperator creates the span's dispatcher on dest.
type AddDispatcherOperator struct {
	m        *Maintainer
	span     *SpanReplication
	dest     core.NodeID
	opType   core.OperatorType
	finished bool
	removed  bool
}

func (o *AddDispatcherOperator) ID() core.DispatcherID { return o.span.ID }
func (o *AddDispatcherOperator) Start()                { o.m.spans.BindSpanToNode(o.span, o.dest) }
func (o *AddDispatcherOperator) Schedule() (core.NodeID, core.Message) {
	if o.finished {
		return "", nil
	}
	return o.dest, o.m.createMessage(o.span, o.opType)
}
func (o *AddDispatcherOperator) Check(from core.NodeID, st *core.TableSpanStatus) {
	if o.finished || from != o.dest {
		return
	}
	switch st.State {
	case core.ComponentWorking:
		o.m.lg.Info("operator_add.go", 88, "dispatcher report working status", zap.String("changefeed", string(o.m.id)),
			zap.String("replicaSet", string(o.span.ID)))
		o.finished = true
	case core.ComponentRemoved:
		o.m.lg.Info("operator_add.go", 93, "dispatcher report removed status", zap.String("changefeed", string(o.m.id)),
			zap.String("replicaSet", string(o.span.ID)))
		o.finished, o.removed = true, true
	}
}
func (o *AddDispatcherOperator) AffectedNodes() []core.NodeID { return []core.NodeID{o.dest} }
func (o *AddDispatcherOperator) OnNodeRemove(n core.NodeID) {
	if n == o.dest {
		o.finished, o.removed = true, true
	}
}
func (o *AddDispatcherOperator) OnTaskRemoved()       { o.finished, o.removed = true, true }
func (o *AddDispatcherOperator) IsFinished() bool     { return o.finished }
func (o *AddDispatcherOperator) BlockTsForward() bool { return true }
func (o *AddDispatcherOperator) Phase() int           { return 0 }
func (o *AddDispatcherOperator) PostFinish() {
	if o.m.spans.GetTaskByID(o.span.ID) != o.span {
		return
	}
	if o.removed {
		o.m.spans.MarkSpanAbsent(o.span)
		return
	}
	o.m.spans.MarkSpanReplicating(o.span)
}
func (o *AddDispatcherOperator) String() string {
	return fmt.Sprintf("add dispatcher operator: %s, dest:%s", o.span.ID, o.dest)
}
func (o *AddDispatcherOperator) event(k spec.Kind) spec.Event {
	return spec.Event{Kind: k, Changefeed: string(o.m.id), Op: spec.OpAdd, Dispatcher: string(o.span.ID), Span: o.span.Span, Node: string(o.dest)}
}

// --- RemoveDispatcherOperator ---

// RemoveDispatcherOperator removes the span's dispatcher from its node;
// postFinish runs unless the task was removed.
type RemoveDispatcherOperator struct {
	m           *Maintainer
	span        *SpanReplication
	node        core.NodeID
	opType      core.OperatorType
	finished    bool
	taskRemoved bool
	postFinish  func()
}

func (o *RemoveDispatcherOperator) ID() core.DispatcherID { return o.span.ID }
func (o *RemoveDispatcherOperator) Start()                {}
func (o *RemoveDispatcherOperator) Schedule() (core.NodeID, core.Message) {
	if o.finished {
		return "", nil
	}
	return o.node, o.m.removeMessage(o.span, o.opType)
}
func (o *RemoveDispatcherOperator) Check(from core.NodeID, st *core.TableSpanStatus) {
	if o.finished || from != o.node {
		return
	}
	if st.State == core.ComponentStopped || st.State == core.ComponentRemoved {
		o.m.lg.Info("operator_remove.go", 102, "dispatcher report non-working status", zap.String("changefeed", string(o.m.id)),
			zap.String("replicaSet", string(o.span.ID)))
		if st.CheckpointTs > o.span.checkpointTs {
			o.span.checkpointTs = st.CheckpointTs
		}
		o.finished = true
	}
}
func (o *RemoveDispatcherOperator) AffectedNodes() []core.NodeID { return []core.NodeID{o.node} }
func (o *RemoveDispatcherOperator) OnNodeRemove(n core.NodeID) {
	if n == o.node {
		o.finished = true
	}
}
func (o *RemoveDispatcherOperator) OnTaskRemoved() {
	o.m.lg.Info("operator_remove.go", 152, "remove dispatcher operator finished", zap.String("changefeed", string(o.m.id)),
		zap.String("replicaSet", string(o.span.ID)), zap.Bool("taskRemoved", true))
	o.finished, o.taskRemoved = true, true
}
func (o *RemoveDispatcherOperator) IsFinished() bool { return o.finished }

// BlockTsForward: a remove holds the checkpoint back, because the span's
// data is still owed (it is re-added or repaired afterwards). TiCDC's
// remove operator does not (catalogue entry
// remove-operator-passes-checkpoint): for a remove restored from the
// journal the span still counts as replicating, its closed dispatcher has
// left its node's watermark, and the checkpoint can pass its unflushed rows.
func (o *RemoveDispatcherOperator) BlockTsForward() bool {
	return !o.m.opts.Bugs.Has(spec.BugRemoveOperatorPassesCheckpoint)
}
func (o *RemoveDispatcherOperator) Phase() int { return 0 }
func (o *RemoveDispatcherOperator) PostFinish() {
	if o.taskRemoved || o.postFinish == nil {
		return
	}
	o.postFinish()
}
func (o *RemoveDispatcherOperator) String() string {
	return fmt.Sprintf("remove dispatcher operator: %s, dest %s", o.span.ID, o.node)
}
func (o *RemoveDispatcherOperator) event(k spec.Kind) spec.Event {
	return spec.Event{Kind: k, Changefeed: string(o.m.id), Op: spec.OpRemove, Dispatcher: string(o.span.ID), Span: o.span.Span, Node: string(o.node)}
}

// --- MoveDispatcherOperator ---

type movePhase int

const (
	moveRemoveOrigin movePhase = iota
	moveAbortRemoveOrigin
	moveAddDest
	moveDone
)

// MoveDispatcherOperator: Remove(O_Move) to origin, then Create(O_Move) to
// dest.
type MoveDispatcherOperator struct {
	m        *Maintainer
	span     *SpanReplication
	origin   core.NodeID
	dest     core.NodeID
	phase    movePhase
	finished bool
	absent   bool
}

func (o *MoveDispatcherOperator) ID() core.DispatcherID { return o.span.ID }
func (o *MoveDispatcherOperator) Start()                { o.span.state = SpanScheduling }
func (o *MoveDispatcherOperator) Phase() int            { return int(o.phase) }
func (o *MoveDispatcherOperator) Schedule() (core.NodeID, core.Message) {
	switch o.phase {
	case moveRemoveOrigin, moveAbortRemoveOrigin:
		return o.origin, o.m.removeMessage(o.span, core.OpTypeMove)
	case moveAddDest:
		return o.dest, o.m.createMessage(o.span, core.OpTypeMove)
	}
	return "", nil
}
func (o *MoveDispatcherOperator) Check(from core.NodeID, st *core.TableSpanStatus) {
	switch o.phase {
	case moveRemoveOrigin, moveAbortRemoveOrigin:
		if from == o.origin && st.State != core.ComponentWorking {
			if st.CheckpointTs > o.span.checkpointTs {
				o.span.checkpointTs = st.CheckpointTs
			}
			if o.phase == moveAbortRemoveOrigin {
				o.finished, o.absent = true, true
				return
			}
			o.m.lg.Info("operator_move.go", 127, "replica set removed from origin node", zap.String("changefeed", string(o.m.id)),
				zap.String("replicaSet", string(o.span.ID)))
			o.m.spans.BindSpanToNode(o.span, o.dest)
			o.phase = moveAddDest
		}
	case moveAddDest:
		if from == o.dest && st.State == core.ComponentWorking {
			o.m.lg.Info("operator_move.go", 142, "replica set added to dest node", zap.String("changefeed", string(o.m.id)),
				zap.String("replicaSet", string(o.span.ID)))
			o.phase = moveDone
			o.finished = true
		} else if from == o.dest && st.State == core.ComponentRemoved {
			o.finished, o.absent = true, true
		}
	}
}
func (o *MoveDispatcherOperator) AffectedNodes() []core.NodeID {
	return []core.NodeID{o.origin, o.dest}
}
func (o *MoveDispatcherOperator) OnNodeRemove(n core.NodeID) {
	switch o.phase {
	case moveRemoveOrigin:
		if n == o.origin {
			o.m.spans.BindSpanToNode(o.span, o.dest)
			o.phase = moveAddDest
		} else if n == o.dest {
			o.phase = moveAbortRemoveOrigin
		}
	case moveAbortRemoveOrigin:
		if n == o.origin {
			o.finished, o.absent = true, true
		}
	case moveAddDest:
		if n == o.dest {
			o.m.lg.Info("operator_move.go", 92, "move dispatcher operator aborted, mark span absent for rescheduling",
				zap.String("changefeed", string(o.m.id)), zap.String("replicaSet", string(o.span.ID)))
			o.finished, o.absent = true, true
		}
	}
}
func (o *MoveDispatcherOperator) OnTaskRemoved()       { o.finished = true }
func (o *MoveDispatcherOperator) IsFinished() bool     { return o.finished }
func (o *MoveDispatcherOperator) BlockTsForward() bool { return true }
func (o *MoveDispatcherOperator) PostFinish() {
	if o.m.spans.GetTaskByID(o.span.ID) != o.span {
		return
	}
	if o.absent {
		o.m.spans.MarkSpanAbsent(o.span)
		return
	}
	if o.phase == moveDone {
		o.m.spans.MarkSpanReplicating(o.span)
	}
}
func (o *MoveDispatcherOperator) String() string {
	return fmt.Sprintf("move dispatcher operator: %s, origin:%s, dest:%s", o.span.ID, o.origin, o.dest)
}
func (o *MoveDispatcherOperator) event(k spec.Kind) spec.Event {
	return spec.Event{Kind: k, Changefeed: string(o.m.id), Op: spec.OpMove, Dispatcher: string(o.span.ID), Span: o.span.Span,
		Node: string(o.dest), Origin: string(o.origin)}
}

// --- SplitDispatcherOperator ---

// SplitDispatcherOperator removes the origin dispatcher, then replaces the
// span with its parts. Without target nodes (the API's split_table) the
// parts are absent and the basic scheduler adds them; with target nodes
// (the split scheduler) aligned with the parts they are bound to them and
// postFinish adds each to its target; with target nodes not aligned with
// the parts they are absent and postFinish is skipped (#4078).
type SplitDispatcherOperator struct {
	m          *Maintainer
	span       *SpanReplication
	origin     core.NodeID
	parts      []spec.Span
	targets    []core.NodeID
	finished   bool
	checkpoint uint64
	absent     bool
}

func (o *SplitDispatcherOperator) ID() core.DispatcherID { return o.span.ID }
func (o *SplitDispatcherOperator) Start()                { o.span.state = SpanScheduling }
func (o *SplitDispatcherOperator) Phase() int            { return 0 }
func (o *SplitDispatcherOperator) Schedule() (core.NodeID, core.Message) {
	if o.finished {
		return "", nil
	}
	return o.origin, o.m.removeMessage(o.span, core.OpTypeSplit)
}
func (o *SplitDispatcherOperator) Check(from core.NodeID, st *core.TableSpanStatus) {
	if o.finished || from != o.origin || st.State == core.ComponentWorking {
		return
	}
	o.checkpoint = st.CheckpointTs
	o.finished = true
}
func (o *SplitDispatcherOperator) AffectedNodes() []core.NodeID { return []core.NodeID{o.origin} }
func (o *SplitDispatcherOperator) OnNodeRemove(n core.NodeID) {
	if n == o.origin {
		o.finished, o.absent = true, true
	}
}
func (o *SplitDispatcherOperator) OnTaskRemoved()       { o.finished, o.absent = true, true }
func (o *SplitDispatcherOperator) IsFinished() bool     { return o.finished }
func (o *SplitDispatcherOperator) BlockTsForward() bool { return true }
func (o *SplitDispatcherOperator) PostFinish() {
	if o.m.spans.GetTaskByID(o.span.ID) != o.span {
		return
	}
	if o.absent {
		o.m.spans.MarkSpanAbsent(o.span)
		return
	}
	news, inScheduling := o.m.spans.ReplaceReplicaSet(o.span, o.parts, o.checkpoint, o.targets)
	out := o.m.ops.out
	switch {
	case inScheduling:
		for i, n := range news {
			if !o.m.ops.AddOperator(&AddDispatcherOperator{m: o.m, span: n, dest: o.targets[i], opType: core.OpTypeAdd}, out) {
				o.m.lg.Error("operator_split.go", 189, "post finish in split dispatcher operator failed, set the span absent",
					zap.String("id", string(o.span.ID)), zap.String("span", string(n.ID)), zap.String("targetNode", string(o.targets[i])))
				o.m.spans.MarkSpanAbsent(n)
			}
		}
	case len(o.targets) > 0 && o.m.opts.Bugs.Has(spec.BugSplitDoubleAdd):
		// Before #4078 postFinish ran although the new spans are absent.
		// In TiCDC its AddDispatcherOperator races the basic scheduler,
		// which runs on its own goroutine: both pass AddOperator's
		// existence check, both push, and the scheduler's push replaces
		// the entry. The simulation is single-threaded, so it takes that
		// interleaving: postFinish's operator sends its Create to the
		// target and its entry is gone; the span stays absent for the
		// basic scheduler.
		for i, n := range news {
			if i < len(o.targets) {
				out.SendTo(o.m.self, o.targets[i], o.m.createMessage(n, core.OpTypeAdd))
			}
		}
	case len(o.targets) > 0:
		o.m.lg.Warn("operator_split.go", 196, "skip post finish because split target nodes are not aligned with actual split result",
			zap.String("id", string(o.span.ID)), zap.Int("targetNodeCount", len(o.targets)), zap.Int("newReplicaCount", len(news)))
	}
	o.m.lg.Info("operator_split.go", 206, "split dispatcher operator post finish finished", zap.String("changefeed", string(o.m.id)),
		zap.String("replicaSet", string(o.span.ID)))
}
func (o *SplitDispatcherOperator) String() string {
	return fmt.Sprintf("split dispatcher operator: %s, splitSpans:%v", o.span.ID, o.parts)
}
func (o *SplitDispatcherOperator) event(k spec.Kind) spec.Event {
	return spec.Event{Kind: k, Changefeed: string(o.m.id), Op: spec.OpSplit, Dispatcher: string(o.span.ID), Span: o.span.Span, Origin: string(o.origin)}
}
