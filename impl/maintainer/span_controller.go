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
	ID     core.DispatcherID
	Span   spec.Span
	nodeID core.NodeID
	state  ReplicaState
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

// NodeID is the span's node ("" when absent).
func (s *SpanReplication) NodeID() core.NodeID { return s.nodeID }

// State is absent, scheduling or replicating.
func (s *SpanReplication) State() ReplicaState { return s.state }

// CheckpointTs is the span's last reported checkpoint.
func (s *SpanReplication) CheckpointTs() uint64 { return s.checkpointTs }

// SpanController is maintainer/span/span_controller.go.
type SpanController struct {
	m       *Maintainer
	spans   map[core.DispatcherID]*SpanReplication
	byTable map[int64]map[core.DispatcherID]*SpanReplication
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
		ghosts: map[core.DispatcherID]*SpanReplication{}, pendingAbsent: map[core.DispatcherID]bool{}}
}

// GetTaskByID returns a span or nil.
func (sc *SpanController) GetTaskByID(id core.DispatcherID) *SpanReplication { return sc.spans[id] }

// IsTableExists reports whether any span of the table is tracked.
func (sc *SpanController) IsTableExists(t int64) bool { return len(sc.byTable[t]) > 0 }

func (sc *SpanController) add(s *SpanReplication) {
	sc.spans[s.ID] = s
	m := sc.byTable[s.Span.Table]
	if m == nil {
		m = map[core.DispatcherID]*SpanReplication{}
		sc.byTable[s.Span.Table] = m
	}
	m[s.ID] = s
}

// AddNewSpan adds an absent span with a fresh DispatcherID.
func (sc *SpanController) AddNewSpan(span spec.Span, checkpoint uint64) *SpanReplication {
	s := &SpanReplication{ID: sc.m.newDispatcherID(), Span: span, checkpointTs: checkpoint, state: SpanAbsent}
	sc.add(s)
	sc.m.lg.Info("replication_span.go", 69, "new span replication created", zap.String("changefeedID", string(sc.m.id)),
		zap.String("id", string(s.ID)), zap.Int64("tableID", span.Table), zap.Uint64("checkpointTs", checkpoint),
		zap.String("start", span.Start), zap.String("end", span.End))
	return s
}

// AddNewTable adds an absent whole-table span unless the table is tracked
// ("table already add, ignore"); with EnableTableAcrossNodes, its two
// halves instead.
func (sc *SpanController) AddNewTable(t int64, startTs uint64) bool {
	if sc.IsTableExists(t) {
		sc.m.lg.Warn("span_controller.go", 185, "table already add, ignore", zap.String("changefeed", string(sc.m.id)), zap.Int64("table", t))
		return false
	}
	if mid, ok := midKey("", ""); ok && sc.m.opts.EnableTableAcrossNodes && t != 0 {
		sc.AddNewSpan(spec.Span{Table: t, End: mid}, startTs)
		sc.AddNewSpan(spec.Span{Table: t, Start: mid}, startTs)
		return true
	}
	sc.AddNewSpan(spec.WholeTable(t), startTs)
	return true
}

// AddWorkingSpan adds a span reported working by a dispatcher (bootstrap).
func (sc *SpanController) AddWorkingSpan(id core.DispatcherID, span spec.Span, node core.NodeID, checkpoint uint64, st core.ComponentState) *SpanReplication {
	s := &SpanReplication{ID: id, Span: span, nodeID: node, checkpointTs: checkpoint, state: SpanReplicating, status: st}
	sc.add(s)
	sc.m.lg.Info("replication_span.go", 94, "new working span replication created", zap.String("changefeedID", string(sc.m.id)),
		zap.String("dispatcherID", string(id)), zap.String("nodeID", string(node)), zap.Int64("tableID", span.Table),
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
	if m := sc.byTable[s.Span.Table]; m != nil {
		delete(m, s.ID)
		if len(m) == 0 {
			delete(sc.byTable, s.Span.Table)
		}
	}
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

// ReplaceReplicaSet (split): the old span out, new spans in with
// checkpoint min(old checkpoint, final). With as many target nodes as new
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
		news = append(news, sc.AddNewSpan(p, cp))
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

// fillHoles adds absent spans for the parts of table t no span covers.
func (sc *SpanController) fillHoles(t int64, checkpoint uint64) {
	cur := ""
	open := true // cur is a start key still to be covered
	for _, s := range sc.tableSpans(t) {
		if !open {
			break
		}
		if s.Span.Start > cur {
			sc.AddNewSpan(spec.Span{Table: t, Start: cur, End: s.Span.Start}, checkpoint)
		}
		if s.Span.End == "" {
			open = false
		} else if s.Span.End > cur {
			cur = s.Span.End
		}
	}
	if open {
		sc.AddNewSpan(spec.Span{Table: t, Start: cur, End: ""}, checkpoint)
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
