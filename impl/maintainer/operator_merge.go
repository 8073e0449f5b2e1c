package maintainer

import (
	"fmt"

	"go.uber.org/zap"

	"cdcspec/impl/core"
	"cdcspec/spec"
)

// --- OccupyDispatcherOperator (maintainer/operator/operator_occupy.go) ---

// OccupyDispatcherOperator holds a merge source: it sends nothing and only
// keeps other operators off the span; if the span's node leaves it marks the
// span absent. The merge finishes it (SetFinished).
type OccupyDispatcherOperator struct {
	m        *Maintainer
	span     *SpanReplication
	node     core.NodeID
	finished bool
	removed  bool
}

func (o *OccupyDispatcherOperator) ID() core.DispatcherID                    { return o.span.ID }
func (o *OccupyDispatcherOperator) Start()                                   {}
func (o *OccupyDispatcherOperator) Schedule() (core.NodeID, core.Message)    { return "", nil }
func (o *OccupyDispatcherOperator) Check(core.NodeID, *core.TableSpanStatus) {}
func (o *OccupyDispatcherOperator) AffectedNodes() []core.NodeID             { return []core.NodeID{o.node} }
func (o *OccupyDispatcherOperator) OnNodeRemove(n core.NodeID) {
	if n == o.node && !o.finished {
		if o.m.spans.GetTaskByID(o.span.ID) == o.span {
			o.m.spans.MarkSpanAbsent(o.span)
		}
		o.finished = true
	}
}
func (o *OccupyDispatcherOperator) OnTaskRemoved()       { o.finished, o.removed = true, true }
func (o *OccupyDispatcherOperator) IsFinished() bool     { return o.finished }
func (o *OccupyDispatcherOperator) BlockTsForward() bool { return false }
func (o *OccupyDispatcherOperator) Phase() int           { return 0 }
func (o *OccupyDispatcherOperator) PostFinish() {
	o.m.lg.Info("operator_occupy.go", 96, "occupy dispatcher operator finished", zap.String("changefeed", string(o.m.id)),
		zap.Bool("removed", o.removed), zap.String("replicaSet", string(o.span.ID)))
}
func (o *OccupyDispatcherOperator) String() string {
	return fmt.Sprintf("occupy dispatcher operator: %s", o.span.ID)
}
func (o *OccupyDispatcherOperator) event(k spec.Kind) spec.Event {
	return spec.Event{Kind: k, Changefeed: string(o.m.id), Op: spec.OpMerge, Dispatcher: string(o.span.ID), Span: o.span.Span, Node: string(o.node)}
}

// --- MergeDispatcherOperator (maintainer/operator/operator_merge.go) ---

// MergeDispatcherOperator merges adjacent replicating spans of one table on
// one node: the merged span is added scheduling on the origin (checkpoint =
// the sources' minimum), Start marks the sources scheduling, Schedule sends
// MergeDispatcherRequest, Check(origin, Working) of the merged dispatcher
// finishes it; PostFinish removes the sources, marks the merged span
// replicating and finishes the occupy operators last (#4543). The origin's
// removal aborts it: the sources go absent, the merged span is removed.
type MergeDispatcherOperator struct {
	m        *Maintainer
	merged   *SpanReplication
	sources  []*SpanReplication
	occupies []*OccupyDispatcherOperator
	origin   core.NodeID
	finished bool
	aborted  bool
	// abortedByDDL: OnTaskRemoved aborted it (a DROP/TRUNCATE removes the
	// table); the sources keep their node so that the remove operators
	// RemoveTasksByTableIDs gives them still find it.
	abortedByDDL bool
	// released: merge-occupy-finishes-early only: PostFinish finished the
	// occupy operators and left the sources' removal to the next poll.
	released bool
}

func (o *MergeDispatcherOperator) ID() core.DispatcherID { return o.merged.ID }
func (o *MergeDispatcherOperator) Start() {
	for _, s := range o.sources {
		s.state = SpanScheduling
	}
}
func (o *MergeDispatcherOperator) Phase() int { return 0 }
func (o *MergeDispatcherOperator) Schedule() (core.NodeID, core.Message) {
	if o.finished {
		return "", nil
	}
	req := &core.MergeDispatcherRequest{Changefeed: o.m.id, MergedID: o.merged.ID, Epoch: o.m.epoch}
	for _, s := range o.sources {
		req.DispatcherIDs = append(req.DispatcherIDs, s.ID)
	}
	return o.origin, req
}
func (o *MergeDispatcherOperator) Check(from core.NodeID, st *core.TableSpanStatus) {
	if o.finished || from != o.origin || st.State != core.ComponentWorking {
		return
	}
	o.m.lg.Info("operator_merge.go", 213, "new merged replica set created", zap.Uint64("checkpointTs", st.CheckpointTs),
		zap.String("dispatcherID", string(o.merged.ID)))
	if st.CheckpointTs > o.merged.checkpointTs {
		o.merged.checkpointTs = st.CheckpointTs
	}
	o.finished = true
}
func (o *MergeDispatcherOperator) AffectedNodes() []core.NodeID { return []core.NodeID{o.origin} }

// OnNodeRemove aborts the merge when its origin leaves, also once a Working
// status finished it but the poll has not finalised it yet
// (operator_merge.go OnNodeRemove at b813e76f9).
func (o *MergeDispatcherOperator) OnNodeRemove(n core.NodeID) {
	if n == o.origin {
		o.finished, o.aborted = true, true
	}
}
func (o *MergeDispatcherOperator) OnTaskRemoved() {
	o.m.lg.Info("operator_merge.go", 242, "task removed", zap.String("replicaSet", string(o.merged.ID)))
	o.finished, o.aborted, o.abortedByDDL = true, true, true
}
func (o *MergeDispatcherOperator) IsFinished() bool     { return o.finished }
func (o *MergeDispatcherOperator) BlockTsForward() bool { return false }
func (o *MergeDispatcherOperator) PostFinish() {
	if o.m.opts.Bugs.Has(spec.BugMergeOccupyFinishesEarly) && !o.aborted {
		// Before #4543 PostFinish finished the occupy operators first; the
		// sources stay in the span controller until the operator
		// controller's next poll removes them (TiCDC's window between the
		// two, on other goroutines, is the simulation's poll interval).
		o.finishOccupies()
		o.released = true
		o.m.mergeReleased = append(o.m.mergeReleased, o)
		return
	}
	defer o.finishOccupies()
	if o.aborted {
		// Aborted by its node's removal, the sources go absent to be
		// scheduled again; aborted by a DDL, they are marked replicating
		// and keep their node: MarkSpanAbsent would clear it, and a source
		// whose remove operator RemoveTasksByTableIDs creates after this
		// would find no node and its dispatcher would leak
		// (operator_merge.go:248-270 at b813e76f9).
		for _, s := range o.sources {
			if o.m.spans.GetTaskByID(s.ID) != s {
				continue
			}
			if o.abortedByDDL {
				o.m.spans.MarkSpanReplicating(s)
			} else {
				o.m.spans.MarkSpanAbsent(s)
			}
		}
		o.m.spans.RemoveSpan(o.merged)
		o.m.lg.Info("operator_merge.go", 270, "merge dispatcher operator finished due to removed", zap.String("id", string(o.merged.ID)))
		return
	}
	o.removeSources()
}

// removeSources is PostFinish's success path.
func (o *MergeDispatcherOperator) removeSources() {
	for _, s := range o.sources {
		if o.m.spans.GetTaskByID(s.ID) == s {
			o.m.spans.RemoveSpan(s)
		}
		if o.m.spans.pendingAbsent[s.ID] {
			// merge-occupy-finishes-early: the fallback's MarkSpanAbsent
			// lands after the removal and puts the span back into the
			// scheduler's absent set: a ghost.
			delete(o.m.spans.pendingAbsent, s.ID)
			o.m.spans.addGhost(s)
		}
	}
	if o.m.spans.GetTaskByID(o.merged.ID) == o.merged {
		o.m.spans.MarkSpanReplicating(o.merged)
	}
	o.m.lg.Info("operator_merge.go", 279, "merge dispatcher operator finished", zap.String("id", string(o.merged.ID)))
}

func (o *MergeDispatcherOperator) finishOccupies() {
	for _, oc := range o.occupies {
		oc.finished = true
	}
}
func (o *MergeDispatcherOperator) String() string {
	return fmt.Sprintf("merge dispatcher operator new dispatcherID: %s, mergedSpanInfo: %s", o.merged.ID, o.merged.Span)
}
func (o *MergeDispatcherOperator) event(k spec.Kind) spec.Event {
	return spec.Event{Kind: k, Changefeed: string(o.m.id), Op: spec.OpMerge, Dispatcher: string(o.merged.ID), Span: o.merged.Span, Node: string(o.origin)}
}

// MergeTable merges the replicating spans of table t that lie next to each
// other on one node (the merge scheduler's pick, checkMergeOperator): the
// first run of two or more such spans. It reports how many merges started.
func (m *Maintainer) MergeTable(t int64, out *core.Effects) int {
	if !m.initialized || m.removing {
		return 0
	}
	spans := m.spans.tableSpans(t)
	for i := 0; i < len(spans); {
		j := i + 1
		for j < len(spans) && mergeable(m, spans[j-1], spans[j]) {
			j++
		}
		if j-i >= 2 && m.addMergeOperator(spans[i:j], out) {
			return 1
		}
		i = j
	}
	return 0
}

func mergeable(m *Maintainer, a, b *SpanReplication) bool {
	ok := func(s *SpanReplication) bool { return s.state == SpanReplicating && m.ops.GetOperator(s.ID) == nil }
	return ok(a) && ok(b) && a.nodeID == b.nodeID && a.Span.End == b.Span.Start && a.Span.End != ""
}

// addMergeOperator is AddMergeOperator: occupy operators on every source
// (rolled back if one fails), then the merge operator on a new merged span.
func (m *Maintainer) addMergeOperator(srcs []*SpanReplication, out *core.Effects) bool {
	var occ []*OccupyDispatcherOperator
	for _, s := range srcs {
		o := &OccupyDispatcherOperator{m: m, span: s, node: s.nodeID}
		if !m.ops.AddOperator(o, out) {
			for _, done := range occ {
				done.finished = true
			}
			return false
		}
		occ = append(occ, o)
	}
	cp := srcs[0].checkpointTs
	for _, s := range srcs[1:] {
		cp = min(cp, s.checkpointTs)
	}
	// The merged span takes the first source's schema (operator_merge.go:
	// 151 at b813e76f9).
	merged := m.spans.AddNewSpan(srcs[0].schemaID, spec.Span{Table: srcs[0].Span.Table, Start: srcs[0].Span.Start, End: srcs[len(srcs)-1].Span.End}, max(cp, 1))
	m.spans.BindSpanToNode(merged, srcs[0].nodeID)
	op := &MergeDispatcherOperator{m: m, merged: merged, sources: srcs, occupies: occ, origin: srcs[0].nodeID}
	if !m.ops.AddOperator(op, out) {
		for _, done := range occ {
			done.finished = true
		}
		m.spans.RemoveSpan(merged)
		return false
	}
	return true
}

// finishReleasedMerges runs the deferred part of the released merges'
// PostFinish (merge-occupy-finishes-early) at the start of a poll, once an
// earlier poll removed their finished occupy operators. In TiCDC the window
// lasts between two goroutines' steps; the simulation takes the
// interleaving where the sources' terminal statuses land in it: the
// removal waits until every source reported Stopped (or went absent with
// its node).
func (m *Maintainer) finishReleasedMerges() {
	var keep []*MergeDispatcherOperator
	for _, o := range m.mergeReleased {
		gone := true
		for _, oc := range o.occupies {
			gone = gone && m.ops.GetOperator(oc.ID()) != dispatcherOperator(oc)
		}
		for _, s := range o.sources {
			gone = gone && (s.status == core.ComponentStopped || s.status == core.ComponentRemoved || s.state == SpanAbsent || m.spans.pendingAbsent[s.ID])
		}
		if !gone {
			keep = append(keep, o)
			continue
		}
		o.removeSources()
	}
	m.mergeReleased = keep
}

// releasedSource reports whether s is a source of a merge whose occupy
// operators are released while the sources are still tracked.
func (m *Maintainer) releasedSource(s *SpanReplication) bool {
	for _, o := range m.mergeReleased {
		for _, src := range o.sources {
			if src == s {
				return true
			}
		}
	}
	return false
}

// restoreMerge is restoreCurrentMergeOperators for one journaled merge of
// node n: a merge whose merged dispatcher is Working, or whose sources are
// not all left, is finished ("merge already finished during bootstrap",
// "continue merge from existing merged dispatcher after source loss"): the
// merged span replicates and the sources are dropped; one whose merged
// dispatcher is still Initializing with every source present is restored
// with occupy operators ("restore merge operator"). A merge whose merged
// dispatcher is not in the snapshot is stale: its sources are adopted as
// usual. The dispatchers it takes care of are marked in taken.
func (m *Maintainer) restoreMerge(n core.NodeID, req *core.MergeDispatcherRequest, byID map[core.DispatcherID]workingSpan,
	inSnapshot map[int64]bool, taken map[core.DispatcherID]bool, out *core.Effects) {
	mw, ok := byID[req.MergedID]
	if !ok || mw.node != n || taken[req.MergedID] || !inSnapshot[mw.ts.Span.Table] || m.spans.overlapping(mw.ts.Span, "") != nil {
		return
	}
	var srcs []workingSpan
	for _, id := range req.DispatcherIDs {
		if w, ok := byID[id]; ok && w.node == n && !taken[id] {
			srcs = append(srcs, w)
		}
	}
	taken[req.MergedID] = true
	for _, w := range srcs {
		taken[w.ts.ID] = true
	}
	if mw.ts.State == core.ComponentWorking || len(srcs) < len(req.DispatcherIDs) {
		m.spans.AddWorkingSpan(mw.ts.ID, mw.ts.Span, n, mw.ts.CheckpointTs, mw.ts.State)
		m.lg.Info("maintainer_controller_bootstrap.go", 1471, "merge already finished during bootstrap", zap.String("nodeID", string(n)),
			zap.String("changefeed", string(m.id)), zap.String("dispatcher", string(req.MergedID)))
		return
	}
	var spans []*SpanReplication
	var occ []*OccupyDispatcherOperator
	for _, w := range srcs {
		s := m.spans.AddWorkingSpan(w.ts.ID, w.ts.Span, n, w.ts.CheckpointTs, w.ts.State)
		o := &OccupyDispatcherOperator{m: m, span: s, node: n}
		m.ops.AddOperator(o, out)
		spans, occ = append(spans, s), append(occ, o)
	}
	merged := m.spans.AddWorkingSpan(mw.ts.ID, mw.ts.Span, n, mw.ts.CheckpointTs, mw.ts.State)
	m.spans.BindSpanToNode(merged, n)
	m.ops.AddOperator(&MergeDispatcherOperator{m: m, merged: merged, sources: spans, occupies: occ, origin: n}, out)
	m.lg.Info("operator_controller.go", 676, "restore merge operator", zap.String("changefeedID", string(m.id)),
		zap.String("dispatcher", string(req.MergedID)))
}
