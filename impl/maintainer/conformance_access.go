package maintainer

import (
	"fmt"

	"cdcspec/impl/core"
	"cdcspec/spec"
)

// Accessors for impl/conformance, which replays TiCDC's unit tests of
// maintainer/span (span_controller_test.go, checkpoint_ts_tracker_test.go)
// against one SpanController. Nothing else uses them.

// NewSpanControllerForConformance builds the span controller of a maintainer
// of id on mgr's node that is not registered with mgr, as TiCDC's
// span.NewController(changefeedID, ddlSpan, ...) does for its tests
// (maintainer/span/span_controller.go at b813e76f9). It returns the
// controller and the maintainer's table trigger, which in impl is the
// maintainer's own (ddlSpanID), not a task of the controller.
func NewSpanControllerForConformance(mgr *Manager, id core.ChangefeedID, checkpoint uint64) (*SpanController, core.DispatcherID) {
	m := newMaintainer(mgr, id, checkpoint, false, 0)
	return m.spans, m.ddlSpanID
}

// ChangefeedID is the changefeed the controller schedules.
func (sc *SpanController) ChangefeedID() core.ChangefeedID { return sc.m.id }

// EnableTableAcrossNodes reports whether AddNewTable splits a table
// (the scheduler config's EnableTableAcrossNodes).
func (sc *SpanController) EnableTableAcrossNodes() bool { return sc.m.opts.EnableTableAcrossNodes }

// AddSchedulingReplicaSet adds a span of schema schemaID with a fresh
// DispatcherID, scheduling on node (span_controller.go:380 at b813e76f9).
func (sc *SpanController) AddSchedulingReplicaSet(schemaID int64, span spec.Span, checkpoint uint64, node core.NodeID) *SpanReplication {
	s := sc.AddNewSpan(schemaID, span, checkpoint)
	sc.BindSpanToNode(s, node)
	return s
}

// Tasks returns every span, sorted by ID.
func (sc *SpanController) Tasks() []*SpanReplication {
	out := make([]*SpanReplication, 0, len(sc.spans))
	for _, id := range sc.sortedIDs() {
		out = append(out, sc.spans[id])
	}
	return out
}

// NewTestEnvironmentForConformance is HEAD's setupTestEnvironment
// (maintainer/operator/operator_move_test.go:32-78 at b813e76f9) on mgr's
// node: a maintainer of id at epoch, registered with mgr, whose table
// trigger is on mgr's node at checkpoint 1 and whose span controller holds
// no task. It is bootstrapped without a bootstrap exchange: every node mgr
// sees alive counts as answered and no table of the upstream is added, as
// HEAD's tests build the span and operator controllers by hand. The
// maintainer keeps running when its own node leaves mgr's alive set (its
// controllers see the node removed), which is the state HEAD's operator
// tests put the controllers in when node-a, the trigger's node, leaves;
// impl/sim and runtime never build it (their maintainers bootstrap through
// NewMaintainer).
func NewTestEnvironmentForConformance(mgr *Manager, id core.ChangefeedID, epoch uint64) *Maintainer {
	m := newMaintainer(mgr, id, 1, false, epoch)
	m.initialized = true
	for _, n := range mgr.aliveNodes() {
		m.bootstrapper[n] = &bootstrapNode{answered: true}
	}
	mgr.maintainers[id] = m
	return m
}

// AddReplicaSetForConformance adds a hand-made span id of schema schemaID
// to the span controller, as HEAD's operator tests do: with node, working
// there at checkpoint (replica.NewWorkingSpanReplication, AddReplicatingSpan);
// without, absent at checkpoint (replica.NewSpanReplication,
// AddAbsentReplicaSet; newAddTestReplicaSet, operator_add_test.go:26-46).
func (m *Maintainer) AddReplicaSetForConformance(schemaID int64, id core.DispatcherID, span spec.Span, checkpoint uint64, node core.NodeID) error {
	if m.spans.GetTaskByID(id) != nil || id == m.ddlSpanID {
		return fmt.Errorf("span %s already exists", id)
	}
	if node != "" {
		m.spans.addWorkingSpan(schemaID, id, span, node, checkpoint, core.ComponentWorking)
		return nil
	}
	m.spans.add(&SpanReplication{ID: id, Span: span, schemaID: schemaID, checkpointTs: checkpoint, state: SpanAbsent})
	return nil
}

// RemoveReplicaSetForConformance untracks span id
// (span.Controller.RemoveReplicatingSpan, span_controller.go:430), as
// TestAddOperator_TaskRemovedDoesNotReintroduceSpan does before it cancels
// the span's operator.
func (m *Maintainer) RemoveReplicaSetForConformance(id core.DispatcherID) error {
	s := m.spans.GetTaskByID(id)
	if s == nil {
		return fmt.Errorf("no span %s", id)
	}
	m.spans.RemoveSpan(s)
	return nil
}

// MarkReplicaSetAbsentForConformance marks span id absent on no node
// (span.Controller.MarkSpanAbsent, span_controller.go:398), as
// TestRemoveOperator_SnapshotNodeIDAfterMarkAbsent does while a remove
// operator holds the span; impl's own code never does that to a span with
// an operator.
func (m *Maintainer) MarkReplicaSetAbsentForConformance(id core.DispatcherID) error {
	s := m.spans.GetTaskByID(id)
	if s == nil {
		return fmt.Errorf("no span %s", id)
	}
	m.spans.MarkSpanAbsent(s)
	return nil
}

// StartOperatorForConformance builds the operator kind (add, move, remove
// or occupy) on span id as HEAD's operator tests build it by hand, and adds
// it to the operator controller (AddOperator: Start, then the affected-node
// check); its first message goes out at the next poll:
//   - add: NewAddDispatcherOperator(sc, rs, dest, O_Add, epoch);
//   - move: NewMoveDispatcherOperator(sc, rs, rs's node, dest, epoch);
//   - remove: newRemoveDispatcherOperator(sc, rs, O_Remove, epoch), from rs's node;
//   - occupy: NewOccupyDispatcherOperator(sc, rs).
//
// It reports AddOperator's answer.
func (m *Maintainer) StartOperatorForConformance(kind string, id core.DispatcherID, dest core.NodeID, out *core.Effects) (bool, error) {
	s := m.spans.GetTaskByID(id)
	if s == nil {
		return false, fmt.Errorf("no span %s", id)
	}
	var op dispatcherOperator
	switch kind {
	case "add":
		op = &AddDispatcherOperator{m: m, span: s, dest: dest, opType: core.OpTypeAdd}
	case "move":
		op = &MoveDispatcherOperator{m: m, span: s, origin: s.nodeID, dest: dest}
	case "remove":
		op = &RemoveDispatcherOperator{m: m, span: s, node: s.nodeID, opType: core.OpTypeRemove}
	case "occupy":
		op = &OccupyDispatcherOperator{m: m, span: s, node: s.nodeID}
	default:
		return false, fmt.Errorf("operator %q: want add, move, remove or occupy", kind)
	}
	if (kind == "add" || kind == "move") && dest == "" {
		return false, fmt.Errorf("operator %s needs a destination node", kind)
	}
	return m.ops.AddOperator(op, out), nil
}

// CancelOperatorForConformance is the operator controller's cancelOperator
// (operator_controller.go:456-464 at b813e76f9): the span's operator is
// told OnTaskRemoved and finalised at once, PostFinish included. It
// reports whether the span had an operator.
func (m *Maintainer) CancelOperatorForConformance(id core.DispatcherID, out *core.Effects) bool {
	e := m.ops.ops[id]
	if e == nil {
		return false
	}
	e.op.OnTaskRemoved()
	m.ops.finalizeOperator(e, out)
	return true
}

// TriggerID is the maintainer's table trigger (its DDL span's dispatcher).
func (m *Maintainer) TriggerID() core.DispatcherID { return m.ddlSpanID }

// AddReplicatingSpan adds a replicating span of schema schemaID for a
// Working dispatcher id on node (AddReplicatingSpan of a
// NewWorkingSpanReplication, span_controller.go:386-395 at b813e76f9).
func (sc *SpanController) AddReplicatingSpan(schemaID int64, id core.DispatcherID, span spec.Span, node core.NodeID, checkpoint uint64) *SpanReplication {
	return sc.addWorkingSpan(schemaID, id, span, node, checkpoint, core.ComponentWorking)
}

// TaskSize is the number of spans (HEAD's also counts its table trigger,
// which impl keeps apart).
func (sc *SpanController) TaskSize() int { return len(sc.spans) }

// SizeByState is the number of spans in state st (GetAbsentSize,
// GetSchedulingSize, GetReplicatingSize of HEAD's ReplicationDB).
func (sc *SpanController) SizeByState(st ReplicaState) int {
	n := 0
	for _, s := range sc.spans {
		if s.state == st {
			n++
		}
	}
	return n
}

// GetTaskSizePerNode is the number of spans placed on each node that has
// any (HEAD's ReplicationDB.GetTaskSizePerNode).
func (sc *SpanController) GetTaskSizePerNode() map[core.NodeID]int {
	out := map[core.NodeID]int{}
	for _, s := range sc.spans {
		if s.nodeID != "" {
			out[s.nodeID]++
		}
	}
	return out
}
