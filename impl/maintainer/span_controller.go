package maintainer

import (
	"math"
	"sort"
	"strconv"

	"go.uber.org/zap"

	"cdcspec/impl/core"
	"cdcspec/spec"
)

// ReplicaState is a span's scheduling state.
type ReplicaState uint8

const (
	SpanAbsent ReplicaState = iota
	SpanScheduling
	SpanReplicating
)

func (s ReplicaState) String() string {
	switch s {
	case SpanScheduling:
		return "scheduling"
	case SpanReplicating:
		return "replicating"
	}
	return "absent"
}

// SpanReplication is maintainer/replica/replication_span.go: one span
// instance, identified by its DispatcherID.
type SpanReplication struct {
	ID   core.DispatcherID
	Span spec.Span
	// schemaID is the schema (database) of the span's table, taken from the
	// table's schema info when the span is created and changed only by
	// SpanController.UpdateSchemaID (replication_span.go schemaID at
	// b813e76f9).
	schemaID int64
	nodeID   core.NodeID
	state    ReplicaState
	// checkpointTs only accepts values that are not lower (UpdateStatus).
	checkpointTs uint64
	status       core.ComponentState
	// opSeq is the sequence number of the latest operator on this span; its
	// Create and Remove requests carry it (core.ScheduleDispatcherRequest.OpSeq).
	opSeq uint64
	// blockState is the last block status the barrier took from the span's
	// dispatcher (UpdateBlockState); a WAITING or WRITING one sets the
	// start ts of the span's next Create (createMessage).
	blockState *core.BlockStatus
}

// GetSchemaID is the schema of the span's table.
func (s *SpanReplication) GetSchemaID() int64 { return s.schemaID }

// NodeID is the span's node ("" when absent).
func (s *SpanReplication) NodeID() core.NodeID { return s.nodeID }

// State is absent, scheduling or replicating.
func (s *SpanReplication) State() ReplicaState { return s.state }

// CheckpointTs is the span's last reported checkpoint.
func (s *SpanReplication) CheckpointTs() uint64 { return s.checkpointTs }

// SpanController is maintainer/span/span_controller.go: the spans by ID,
// by table (tableTasks) and by schema (schemaTasks). The maintainer's table
// trigger is not one of them (ddlSpanID).
type SpanController struct {
	m        *Maintainer
	spans    map[core.DispatcherID]*SpanReplication
	byTable  map[int64]map[core.DispatcherID]*SpanReplication
	bySchema map[int64]map[core.DispatcherID]*SpanReplication
	// ghosts: spans removed from the controller but put back into the
	// scheduler's absent set by a late MarkSpanAbsent
	// (merge-occupy-finishes-early, operator_merge.go); their checkpoints
	// still bound the maintainer's. pendingAbsent: the fallback's
	// MarkSpanAbsent of a released merge source, which lands after the
	// merge's removal of the source.
	ghosts        map[core.DispatcherID]*SpanReplication
	pendingAbsent map[core.DispatcherID]bool
}

func (sc *SpanController) addGhost(s *SpanReplication) {
	sc.m.lg.Info("replication_group.go", 1, "scheduler: marking replica absent", zap.String("changefeedID", string(sc.m.id)),
		zap.String("replica", string(s.ID)), zap.String("node", string(s.nodeID)))
	s.nodeID, s.state = "", SpanAbsent
	sc.ghosts[s.ID] = s
}

func newSpanController(m *Maintainer) *SpanController {
	return &SpanController{m: m, spans: map[core.DispatcherID]*SpanReplication{}, byTable: map[int64]map[core.DispatcherID]*SpanReplication{},
		bySchema: map[int64]map[core.DispatcherID]*SpanReplication{},
		ghosts:   map[core.DispatcherID]*SpanReplication{}, pendingAbsent: map[core.DispatcherID]bool{}}
}

// GetTaskByID returns a span or nil.
func (sc *SpanController) GetTaskByID(id core.DispatcherID) *SpanReplication { return sc.spans[id] }

// IsTableExists reports whether any span of the table is tracked.
func (sc *SpanController) IsTableExists(t int64) bool { return len(sc.byTable[t]) > 0 }

// add indexes s by ID, table and schema (addToSchemaAndTableMap,
// span_controller.go:621-640 at b813e76f9).
func (sc *SpanController) add(s *SpanReplication) {
	sc.spans[s.ID] = s
	indexSpan(sc.byTable, s.Span.Table, s)
	indexSpan(sc.bySchema, s.schemaID, s)
}

// indexSpan puts s into idx[k].
func indexSpan(idx map[int64]map[core.DispatcherID]*SpanReplication, k int64, s *SpanReplication) {
	m := idx[k]
	if m == nil {
		m = map[core.DispatcherID]*SpanReplication{}
		idx[k] = m
	}
	m[s.ID] = s
}

// unindexSpan takes s out of idx[k], dropping an emptied entry.
func unindexSpan(idx map[int64]map[core.DispatcherID]*SpanReplication, k int64, s *SpanReplication) {
	if m := idx[k]; m != nil {
		delete(m, s.ID)
		if len(m) == 0 {
			delete(idx, k)
		}
	}
}

// tableSchemaID is the schema of table t in the maintainer's schema info.
func (sc *SpanController) tableSchemaID(t int64) int64 { return core.TableSchemaID(sc.m.mgr.up, t) }

// AddNewSpan adds an absent span of schema schemaID with a fresh
// DispatcherID (NewSpanReplication, replication_span.go:55-79 at b813e76f9).
func (sc *SpanController) AddNewSpan(schemaID int64, span spec.Span, checkpoint uint64) *SpanReplication {
	s := &SpanReplication{ID: sc.m.newDispatcherID(), Span: span, schemaID: schemaID, checkpointTs: checkpoint, state: SpanAbsent}
	sc.add(s)
	sc.m.lg.Info("replication_span.go", 69, "new span replication created", zap.String("changefeedID", string(sc.m.id)),
		zap.String("id", string(s.ID)), zap.Int64("schemaID", schemaID), zap.Int64("tableID", span.Table), zap.Uint64("checkpointTs", checkpoint),
		zap.String("start", span.Start), zap.String("end", span.End))
	return s
}

// AddNewTable adds an absent whole-table span of table t of schema
// schemaID unless the table is tracked ("table already add, ignore"); with
// EnableTableAcrossNodes, its two halves instead (span_controller.go:182-
// 209 at b813e76f9).
func (sc *SpanController) AddNewTable(schemaID, t int64, startTs uint64) bool {
	if sc.IsTableExists(t) {
		sc.m.lg.Warn("span_controller.go", 185, "table already add, ignore", zap.String("changefeed", string(sc.m.id)),
			zap.Int64("schema", schemaID), zap.Int64("table", t))
		return false
	}
	if mid, ok := midKey("", ""); ok && sc.m.opts.EnableTableAcrossNodes && t != 0 {
		sc.AddNewSpan(schemaID, spec.Span{Table: t, End: mid}, startTs)
		sc.AddNewSpan(schemaID, spec.Span{Table: t, Start: mid}, startTs)
		return true
	}
	sc.AddNewSpan(schemaID, spec.WholeTable(t), startTs)
	return true
}

// AddWorkingSpan adds a span reported working by a dispatcher (bootstrap).
// HEAD takes its schema from the dispatcher's report (spanInfo.SchemaID,
// maintainer_controller_bootstrap.go:432 at b813e76f9); impl's reports
// carry none, so the maintainer's schema info gives it.
func (sc *SpanController) AddWorkingSpan(id core.DispatcherID, span spec.Span, node core.NodeID, checkpoint uint64, st core.ComponentState) *SpanReplication {
	return sc.addWorkingSpan(sc.tableSchemaID(span.Table), id, span, node, checkpoint, st)
}

// addWorkingSpan is AddReplicatingSpan of a NewWorkingSpanReplication of
// schema schemaID (replication_span.go:81-106 at b813e76f9).
func (sc *SpanController) addWorkingSpan(schemaID int64, id core.DispatcherID, span spec.Span, node core.NodeID, checkpoint uint64, st core.ComponentState) *SpanReplication {
	s := &SpanReplication{ID: id, Span: span, schemaID: schemaID, nodeID: node, checkpointTs: checkpoint, state: SpanReplicating, status: st}
	sc.add(s)
	sc.m.lg.Info("replication_span.go", 94, "new working span replication created", zap.String("changefeedID", string(sc.m.id)),
		zap.String("dispatcherID", string(id)), zap.String("nodeID", string(node)), zap.Int64("schemaID", schemaID), zap.Int64("tableID", span.Table),
		zap.Uint64("checkpointTs", checkpoint), zap.String("start", span.Start), zap.String("end", span.End))
	return s
}

// BindSpanToNode marks the span scheduling on n.
func (sc *SpanController) BindSpanToNode(s *SpanReplication, n core.NodeID) {
	sc.m.lg.Debug("replication_group.go", 1, "scheduler: bind replica to node", zap.String("changefeedID", string(sc.m.id)),
		zap.String("replica", string(s.ID)), zap.String("oldNode", string(s.nodeID)), zap.String("node", string(n)))
	s.nodeID = n
	s.state = SpanScheduling
}

// MarkSpanReplicating marks the span replicating.
func (sc *SpanController) MarkSpanReplicating(s *SpanReplication) {
	sc.m.lg.Debug("replication_group.go", 1, "scheduler: marking replica replicating", zap.String("changefeedID", string(sc.m.id)),
		zap.String("replica", string(s.ID)), zap.String("node", string(s.nodeID)))
	s.state = SpanReplicating
}

// MarkSpanScheduling marks the span scheduling on its node
// (span_controller.go:406 at b813e76f9).
func (sc *SpanController) MarkSpanScheduling(s *SpanReplication) {
	sc.m.lg.Debug("replication_group.go", 1, "scheduler: marking replica scheduling", zap.String("changefeedID", string(sc.m.id)),
		zap.String("replica", string(s.ID)), zap.String("node", string(s.nodeID)))
	s.state = SpanScheduling
}

// UpdateStatus stores a dispatcher's status on its span unless its
// checkpoint is lower than the stored one: such a status is dropped whole,
// its state included (replication_span.go:183-185 at b813e76f9). It
// reports whether the status was stored.
func (sc *SpanController) UpdateStatus(s *SpanReplication, st *core.TableSpanStatus) bool {
	if st.CheckpointTs < s.checkpointTs {
		return false
	}
	s.checkpointTs = st.CheckpointTs
	s.status = st.State
	return true
}

// MarkSpanAbsent clears the node.
func (sc *SpanController) MarkSpanAbsent(s *SpanReplication) {
	sc.m.lg.Info("replication_group.go", 1, "scheduler: marking replica absent", zap.String("changefeedID", string(sc.m.id)),
		zap.String("replica", string(s.ID)), zap.String("node", string(s.nodeID)))
	s.nodeID = ""
	s.state = SpanAbsent
}

// RemoveSpan deletes a span.
func (sc *SpanController) RemoveSpan(s *SpanReplication) {
	sc.m.lg.Debug("replication_group.go", 1, "scheduler: remove replica", zap.String("changefeedID", string(sc.m.id)),
		zap.String("replicaID", string(s.ID)))
	delete(sc.spans, s.ID)
	unindexSpan(sc.byTable, s.Span.Table, s)
	unindexSpan(sc.bySchema, s.schemaID, s)
}

// RemoveByTableIDs untracks every span of the tables, placed or not
// (span_controller.go:569 at b813e76f9).
func (sc *SpanController) RemoveByTableIDs(tables ...int64) {
	for _, t := range tables {
		for _, s := range sc.tableSpans(t) {
			sc.RemoveSpan(s)
		}
	}
}

// GetTasksByTableID returns a table's spans ordered by start key.
func (sc *SpanController) GetTasksByTableID(t int64) []*SpanReplication { return sc.tableSpans(t) }

// GetTasksBySchemaID returns the schema's spans, sorted by ID
// (span_controller.go:266-280 at b813e76f9).
func (sc *SpanController) GetTasksBySchemaID(schemaID int64) []*SpanReplication {
	m := sc.bySchema[schemaID]
	out := make([]*SpanReplication, 0, len(m))
	for _, id := range core.SortedKeys(m) {
		out = append(out, m[id])
	}
	return out
}

// GetTaskSizeBySchemaID is the number of the schema's spans
// (span_controller.go:294-304 at b813e76f9).
func (sc *SpanController) GetTaskSizeBySchemaID(schemaID int64) int {
	return len(sc.bySchema[schemaID])
}

// UpdateSchemaID moves every span of the table to schema newSchemaID, as a
// RENAME TABLE across databases does (span_controller.go:324-352 at
// b813e76f9).
func (sc *SpanController) UpdateSchemaID(tableID, newSchemaID int64) {
	for _, s := range sc.tableSpans(tableID) {
		unindexSpan(sc.bySchema, s.schemaID, s)
		s.schemaID = newSchemaID
		indexSpan(sc.bySchema, newSchemaID, s)
	}
}

// GetRemoveTasksByTableIDs returns the tables' spans placed on a node
// (IsScheduled), in the order the remove operators are made
// (span_controller.go:541-553 at b813e76f9).
func (sc *SpanController) GetRemoveTasksByTableIDs(tables ...int64) []*SpanReplication {
	var out []*SpanReplication
	for _, t := range tables {
		for _, s := range sc.tableSpans(t) {
			if s.nodeID != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// GetRemoveTasksBySchemaID returns the schema's spans placed on a node
// (span_controller.go:555-566 at b813e76f9).
func (sc *SpanController) GetRemoveTasksBySchemaID(schemaID int64) []*SpanReplication {
	var out []*SpanReplication
	for _, s := range sc.GetTasksBySchemaID(schemaID) {
		if s.nodeID != "" {
			out = append(out, s)
		}
	}
	return out
}

// RemoveBySchemaID untracks every span of the schema, placed or not
// (span_controller.go:580-588 at b813e76f9).
func (sc *SpanController) RemoveBySchemaID(schemaID int64) {
	for _, s := range sc.GetTasksBySchemaID(schemaID) {
		sc.RemoveSpan(s)
	}
}

// ReplaceReplicaSet (split): the old span out, new spans of its schema in
// with checkpoint min(old checkpoint, final). With as many target nodes as new
// spans, each is bound to its target (scheduling) and inScheduling is
// true; otherwise they are absent, for the basic scheduler.
func (sc *SpanController) ReplaceReplicaSet(old *SpanReplication, parts []spec.Span, checkpoint uint64, targets []core.NodeID) (news []*SpanReplication, inScheduling bool) {
	if sc.spans[old.ID] != old {
		return nil, false
	}
	cp := old.checkpointTs
	if checkpoint != 0 && checkpoint < cp {
		cp = checkpoint
	}
	sc.RemoveSpan(old)
	for _, p := range parts {
		news = append(news, sc.AddNewSpan(old.schemaID, p, cp))
	}
	inScheduling = len(targets) > 0 && len(targets) == len(news)
	if inScheduling {
		for i, n := range news {
			sc.BindSpanToNode(n, targets[i])
		}
	}
	return news, inScheduling
}

// sortedIDs returns every span ID, sorted (determinism).
func (sc *SpanController) sortedIDs() []core.DispatcherID { return core.SortedKeys(sc.spans) }

// tableSpans returns a table's spans ordered by start key.
func (sc *SpanController) tableSpans(t int64) []*SpanReplication {
	out := make([]*SpanReplication, 0, len(sc.byTable[t]))
	for _, s := range sc.byTable[t] {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Span.Start != out[j].Span.Start {
			return out[i].Span.Start < out[j].Span.Start
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// fillHoles adds absent spans for the parts of table t no span covers,
// of the table's schema in the schema info (maintainer_controller_bootstrap.go:
// 340 at b813e76f9).
func (sc *SpanController) fillHoles(t int64, checkpoint uint64) {
	schemaID := sc.tableSchemaID(t)
	cur := ""
	open := true // cur is a start key still to be covered
	for _, s := range sc.tableSpans(t) {
		if !open {
			break
		}
		if s.Span.Start > cur {
			sc.AddNewSpan(schemaID, spec.Span{Table: t, Start: cur, End: s.Span.Start}, checkpoint)
		}
		if s.Span.End == "" {
			open = false
		} else if s.Span.End > cur {
			cur = s.Span.End
		}
	}
	if open {
		sc.AddNewSpan(schemaID, spec.Span{Table: t, Start: cur, End: ""}, checkpoint)
	}
}

// coveredBy reports whether span overlaps any tracked span other than skip.
func (sc *SpanController) overlapping(span spec.Span, skip core.DispatcherID) *SpanReplication {
	for _, s := range sc.tableSpans(span.Table) {
		if s.ID != skip && s.Span.Overlaps(span) {
			return s
		}
	}
	return nil
}

// GetMinCheckpointTsForNonReplicatingSpans is bound lowered to the
// checkpoint of any span that is not replicating (span_controller.go:235
// at b813e76f9).
func (sc *SpanController) GetMinCheckpointTsForNonReplicatingSpans(bound uint64) uint64 {
	if v := sc.minNonReplicatingCheckpoint(); v < bound {
		return v
	}
	return bound
}

// minNonReplicatingCheckpoint is nonReplicatingCheckpointTs: the min over
// absent and scheduling spans.
func (sc *SpanController) minNonReplicatingCheckpoint() uint64 {
	min := uint64(math.MaxUint64)
	for _, s := range sc.spans {
		if s.state != SpanReplicating && s.checkpointTs < min {
			min = s.checkpointTs
		}
	}
	for _, s := range sc.ghosts {
		if s.checkpointTs < min {
			min = s.checkpointTs
		}
	}
	return min
}

// midKey returns a key strictly between start and end ("" end = +inf),
// as 8 base-26 digits, or false if none exists at that precision.
func midKey(start, end string) (string, bool) {
	const digits = 8
	toNum := func(s string, inf bool) float64 {
		if inf {
			return math.Pow(26, digits)
		}
		v := 0.0
		for i := 0; i < digits; i++ {
			d := 0.0
			if i < len(s) {
				d = float64(s[i] - 'a')
			}
			v = v*26 + d
		}
		return v
	}
	a, b := toNum(start, false), toNum(end, end == "")
	mid := math.Floor((a + b) / 2)
	if mid <= a || mid >= b {
		return "", false
	}
	buf := make([]byte, digits)
	for i := digits - 1; i >= 0; i-- {
		buf[i] = 'a' + byte(math.Mod(mid, 26))
		mid = math.Floor(mid / 26)
	}
	k := string(buf)
	if k <= start || (end != "" && k >= end) {
		return "", false
	}
	return k, true
}

func itoa(u uint64) string { return strconv.FormatUint(u, 10) }
