package maintainer

import (
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
