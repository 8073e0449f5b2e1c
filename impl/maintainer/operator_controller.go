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

// Periods of maintainer/operator/operator_controller.go at b813e76f9: the
// controller polls its running queue every emptyPollInterval (200 ms; 50 ms
// while a batch is left, which the handlers do not distinguish), and an
// operator it scheduled is due again NotifyAt = now + 500 ms later
// (pollQueueingOperator). minSendMessageInterval is the operators' own
// sendThrottler (operator/helper.go).
const (
	operatorPollMs         = 200
	operatorNotifyMs       = 500
	minSendMessageInterval = 10_000
)

// opEntry is operator.OperatorWithTime: the operator, when it is next due
// (NotifyAt), whether it is still in the running queue, and IsRemoved (set
// once by finalizeOperator).
type opEntry struct {
	op       dispatcherOperator
	lastSent int64
	phase    int
	notifyAt int64
	seq      uint64 // push order: ties of notifyAt pop in push order
	queued   bool
	removed  bool
}

// OperatorController is maintainer/operator/operator_controller.go.
//
// Contract (HEAD's, at b813e76f9): a status only calls the operator's Check
// (UpdateOperatorStatus, line 265); the operator is finalised, PostFinish
// included, and removed from the controller by the next poll that pops it
// (pollQueueingOperator, lines 368-392), and an unfinished operator sends
// its message from the poll once its NotifyAt has passed, never from the
// status handler. While the maintainer is removing (QuiesceExcept) a
// frozen operator leaves the running queue at its next poll but stays in
// the controller, so it keeps bounding the checkpoint until Close.
type OperatorController struct {
	m        *Maintainer
	ops      map[core.DispatcherID]*opEntry
	lastPoll int64
	pushSeq  uint64
	out      *core.Effects
}

func newOperatorController(m *Maintainer) *OperatorController {
	return &OperatorController{m: m, ops: map[core.DispatcherID]*opEntry{}}
}

// AddOperator refuses when quiescing (the maintainer is being removed,
// #4828), when an operator exists, or when the span is unknown; otherwise it
// pushes the operator (HEAD operator_controller.go AddOperator, line 230).
func (oc *OperatorController) AddOperator(op dispatcherOperator, out *core.Effects) bool {
	m := oc.m
	fields := []zap.Field{logging.Role("maintainer"), zap.String("changefeedID", string(m.id)), zap.String("operator", op.String())}
	if !oc.allowed(op.ID()) {
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
	oc.push(op, out)
	return true
}

// push is pushOperatorWithAdmission (operator_controller.go:510): the
// operator enters the controller and the running queue due at once, Start
// runs, then the affected-node check. Its first message goes out at the
// next poll.
func (oc *OperatorController) push(op dispatcherOperator, out *core.Effects) {
	m := oc.m
	oc.pushSeq++
	e := &opEntry{op: op, phase: op.Phase(), notifyAt: m.now, seq: oc.pushSeq, queued: true}
	oc.ops[op.ID()] = e
	m.opSeq++
	if s := m.spans.GetTaskByID(op.ID()); s != nil {
		s.opSeq = m.opSeq
	}
	op.Start()
	oc.checkAffectedNodes(op)
	e.phase = op.Phase()
	m.lg.Event(out, op.event(spec.DispatcherOpStarted), logging.Role("maintainer"), zap.String("operator", op.String()))
}

func (oc *OperatorController) sortedIDs() []core.DispatcherID { return core.SortedKeys(oc.ops) }

// send is scheduleOperator: the operator's message, unless its
// sendThrottler holds it (a phase change resets the throttle: move).
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

// queue lists the running queue in pop order (NotifyAt, then push order).
func (oc *OperatorController) queue() []*opEntry {
	var q []*opEntry
	for _, e := range oc.ops {
		if e.queued {
			q = append(q, e)
		}
	}
	slices.SortFunc(q, func(a, b *opEntry) int {
		if a.notifyAt != b.notifyAt {
			if a.notifyAt < b.notifyAt {
				return -1
			}
			return 1
		}
		if a.seq < b.seq {
			return -1
		}
		return 1
	})
	return q
}

// poll is Execute over pollQueueingOperator (operator_controller.go:151,
// 368-427), every operatorPollMs: pop by NotifyAt; a frozen operator
// (quiescing) leaves the queue; a finished one is finalised; the first one
// not yet due ends the poll; a due one is scheduled and due again 500 ms
// later.
func (oc *OperatorController) poll(now int64, out *core.Effects) {
	if now-oc.lastPoll < operatorPollMs {
		return
	}
	oc.lastPoll = now
	oc.m.finishReleasedMerges()
	for _, e := range oc.queue() {
		if !e.queued || oc.ops[e.op.ID()] != e {
			continue // finalised by an earlier entry's PostFinish
		}
		if !oc.allowed(e.op.ID()) {
			e.queued = false
			continue
		}
		if e.removed {
			e.queued = false
			continue
		}
		if e.op.IsFinished() {
			e.queued = false
			oc.finalizeOperator(e, out)
			continue
		}
		if now < e.notifyAt {
			return
		}
		e.notifyAt = now + operatorNotifyMs
		oc.send(e, now, out)
	}
}

// ExecuteOperators runs one poll of the operator controller now, as a
// TiCDC unit test calls Controller.Execute: finished operators are
// finalised, due ones scheduled.
func (m *Maintainer) ExecuteOperators(now int64, out *core.Effects) {
	m.now = now
	m.ops.lastPoll = now - operatorPollMs
	m.ops.poll(now, out)
}

// finishedPending reports whether an operator is finished but not yet
// finalised (between a status's Check and the next poll).
func (oc *OperatorController) finishedPending() bool {
	for _, e := range oc.ops {
		if e.op.IsFinished() && !e.removed {
			return true
		}
	}
	return false
}

// finalizeOperator (operator_controller.go:429): once per entry, PostFinish
// (which may add operators: the split's postFinish), then the entry leaves
// the controller if it is still the span's.
func (oc *OperatorController) finalizeOperator(e *opEntry, out *core.Effects) {
	if e.removed {
		return
	}
	e.removed, e.queued = true, false
	oc.out = out
	e.op.PostFinish()
	oc.out = nil
	if oc.ops[e.op.ID()] == e {
		delete(oc.ops, e.op.ID())
	}
	oc.m.lg.Event(out, e.op.event(spec.DispatcherOpFinished), logging.Role("maintainer"),
		zap.String("operatorID", string(e.op.ID())), zap.String("operator", e.op.String()))
}

// UpdateOperatorStatus hands a status to its operator's Check and reports
// whether there was one (operator_controller.go:265-279). While the
// maintainer is removing the controller is quiesced: every operator except
// the table trigger's is frozen and sees no status (it keeps holding its
// span). Nothing is finalised or sent here: that is the next poll's.
func (oc *OperatorController) UpdateOperatorStatus(from core.NodeID, st *core.TableSpanStatus, out *core.Effects) bool {
	e := oc.ops[st.ID]
	if e == nil {
		return false
	}
	if !oc.allowed(st.ID) {
		return true
	}
	e.op.Check(from, st)
	return true
}

// allowed: not quiesced, or the table trigger (the only operator that
// keeps running while the maintainer is removing).
func (oc *OperatorController) allowed(id core.DispatcherID) bool {
	return !oc.m.removing || id == oc.m.ddlSpanID
}

// checkAffectedNodes is HEAD's pushOperator check: an operator that names a
// node the maintainer no longer sees alive gets OnNodeRemove for it after
// it starts, as it would have had the node left after it was added.
func (oc *OperatorController) checkAffectedNodes(op dispatcherOperator) {
	alive := oc.m.mgr.aliveNodes()
	for _, n := range op.AffectedNodes() {
		if !slices.Contains(alive, n) {
			op.OnNodeRemove(n)
		}
	}
}

// OnNodeRemoved: every operator gets OnNodeRemove (operator_controller.go
// OnNodeRemoved); a finished one is finalised by the next poll.
func (oc *OperatorController) OnNodeRemoved(n core.NodeID, out *core.Effects) {
	for _, id := range oc.sortedIDs() {
		if e := oc.ops[id]; e != nil {
			e.op.OnNodeRemove(n)
		}
	}
}

// RemoveTasksByTableIDs removes every span of the tables (a DDL dropped
// them), as operator_controller.go:216-226 and removeReplicaSet (467-492):
// every span placed on a node gets a remove operator, replacing an existing
// operator, which is told OnTaskRemoved and finalised (PostFinish included);
// then RemoveByTableIDs untracks every span of the tables at once, placed or
// not. The remove operators have no postFinish: their spans are gone.
func (oc *OperatorController) RemoveTasksByTableIDs(tables []int64, out *core.Effects) {
	m := oc.m
	for _, s := range m.spans.GetRemoveTasksByTableIDs(tables...) {
		oc.removeReplicaSet(&RemoveDispatcherOperator{m: m, span: s, node: s.nodeID, opType: core.OpTypeRemove}, out)
	}
	m.spans.RemoveByTableIDs(tables...)
}

// RemoveTasksBySchemaID removes every span of the schema (a DROP DATABASE),
// as RemoveTasksByTableIDs does a table's (operator_controller.go:191-204
// at b813e76f9).
func (oc *OperatorController) RemoveTasksBySchemaID(schemaID int64, out *core.Effects) {
	m := oc.m
	for _, s := range m.spans.GetRemoveTasksBySchemaID(schemaID) {
		oc.removeReplicaSet(&RemoveDispatcherOperator{m: m, span: s, node: s.nodeID, opType: core.OpTypeRemove}, out)
	}
	m.spans.RemoveBySchemaID(schemaID)
}

// removeReplicaSet replaces the span's operator, if any, with op.
func (oc *OperatorController) removeReplicaSet(op *RemoveDispatcherOperator, out *core.Effects) {
	m := oc.m
	if !oc.allowed(op.ID()) {
		m.lg.Info("operator_controller.go", 472, "skip remove operator while controller is quiescing", logging.Role("maintainer"),
			zap.String("changefeedID", string(m.id)), zap.String("operator", op.String()))
		return
	}
	if e := oc.ops[op.ID()]; e != nil {
		m.lg.Info("operator_controller.go", 483, "replica set is removed, replace the old one", logging.Role("maintainer"),
			zap.String("changefeedID", string(m.id)), zap.String("replicaSet", string(op.ID())), zap.String("operator", e.op.String()))
		e.op.OnTaskRemoved()
		oc.finalizeOperator(e, out)
	}
	oc.push(op, out)
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
	case core.ComponentStopped:
		o.m.lg.Warn("operator_add.go", 98, "dispatcher report unexpected stopped status, ignore", zap.String("changefeed", string(o.m.id)),
			zap.String("replicaSet", string(o.span.ID)))
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

// --- SplitDispatcherOperator ---

// SplitDispatcherOperator removes the origin dispatcher, then replaces the
// span with its parts. Without target nodes (the API's split_table) the
// parts are absent and the basic scheduler adds them; with target nodes
// (the split scheduler) aligned with the parts they are bound to them and
// postFinish adds each to its target; with target nodes not aligned with
// the parts they are absent and postFinish is skipped (#4078).
type SplitDispatcherOperator struct {
	m       *Maintainer
	span    *SpanReplication
	origin  core.NodeID
	parts   []spec.Span
	targets []core.NodeID
	// noPostFinish: the split has no postFinish callback (HEAD's nil, which
	// most of its split tests pass; only SplitSpan sets it): PostFinish
	// adds no operator for the parts and logs no skip.
	noPostFinish bool
	finished     bool
	checkpoint   uint64
	absent       bool
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
	case o.noPostFinish:
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
