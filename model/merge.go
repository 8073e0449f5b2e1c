package model

import (
	"cdcspec/spec"
)

// The merge operator (maintainer/operator/operator_merge.go), its occupy
// operators (operator_occupy.go), the dispatcher manager's merge and its
// journal (dispatchermanager/dispatcher_manager_merge.go, task.go doMerge),
// and the restore of a merge in flight at a maintainer's bootstrap
// (restoreCurrentMergeOperators, #3769).
//
// The model merges the two halves of one table (split.go's parts) when both
// replicate on one node. AddMergeOperator: an occupy operator on each source
// span (it sends nothing; it only keeps other schedulers off the span and
// marks it absent if its node leaves), then the merge operator: the merged
// span is added scheduling on the origin with checkpoint min(sources); Start
// marks the sources scheduling; Schedule sends a MergeDispatcherRequest to
// the origin. Check(origin, Working) of the merged dispatcher finishes it;
// PostFinish removes the sources, marks the merged span replicating, and
// only then finishes the occupy operators (#4543). OnNodeRemove(origin)
// aborts it: the sources go absent and the merged span is removed.
//
// In the model the span controller holds the operators as SpanRep.Op: the
// merged span carries mopMerge (OpPh = mergeRunning or mergeReleased), each
// source mopOccupy.
//
// The dispatcher manager's merge is one step (an abstraction, SPEC.md): it
// journals the request (mergeOperatorMap), creates the merged dispatcher,
// closes the sources (TryClose, they write nothing after it) and starts the
// merged dispatcher Initializing at the sources' minimum checkpoint
// (doMerge); the sources stay in the dispatcher map, closed (dMergeClosed),
// until their removal finishes and each reports Stopped once: the late
// Stopped of #4542. TiCDC's Preparing and MergeReady phases of the merged
// dispatcher (not counted in the watermark, abortable) are folded into the
// step: the model's merged dispatcher exists only once the merge committed.
// The journal entry goes when no source is left and the merged dispatcher
// is Working (cleanupFinishedMergeOperators, on the heartbeat).

// Merge operator phases (SpanRep.OpPh of a mopMerge span).
const (
	mergeRunning = 0
	// mergeReleased: merge-occupy-finishes-early only: Check finished the
	// merge and its PostFinish has finished the occupy operators but not yet
	// removed the sources (AMergePostFinish does).
	mergeReleased = 1
)

// mergeSources returns the occupied source spans of a merge of table t.
func (mt *Maint) mergeSources(t uint8) (l, r *SpanRep) {
	l, r = mt.spanByKey(spanKey(t, partLeft)), mt.spanByKey(spanKey(t, partRight))
	if l != nil && l.Op != mopOccupy {
		l = nil
	}
	if r != nil && r.Op != mopOccupy {
		r = nil
	}
	return l, r
}

// mergeOf returns the merge operator's span of table t, or nil.
func (mt *Maint) mergeOf(t uint8) *SpanRep {
	if sp := mt.spanByKey(spanKey(t, partWhole)); sp != nil && sp.Op == mopMerge {
		return sp
	}
	return nil
}

// occupyReleased: the occupy operators of a merge of table t are finished
// while its sources are still in the span controller (the window of #4542).
func (mt *Maint) occupyReleased(t uint8) bool {
	m := mt.mergeOf(t)
	return m != nil && m.OpPh == mergeReleased
}

// appendMergeActions lists the merges the maintainer on slot may start
// (the merge scheduler picks adjacent replicating spans of a table on one
// node, checkMergeOperator) and, with merge-occupy-finishes-early, the
// PostFinish steps of finished merges.
func appendMergeActions(cfg *Config, s *State, slot uint8, buf []Action) []Action {
	mt := &s.Maint[slot]
	for t := uint8(1); t <= MaxTables; t++ {
		if m := mt.mergeOf(t); m != nil && m.OpPh == mergeReleased {
			buf = append(buf, Action{Kind: AMergePostFinish, Node: slot, Arg: t})
		}
		if int(s.Merges) >= cfg.Merges {
			continue
		}
		l, r := mt.spanByKey(spanKey(t, partLeft)), mt.spanByKey(spanKey(t, partRight))
		if l == nil || r == nil || l.State != replReplicating || r.State != replReplicating ||
			l.Op != mopNone || r.Op != mopNone || l.Node != r.Node || mt.spanByKey(spanKey(t, partWhole)) != nil {
			continue
		}
		buf = append(buf, Action{Kind: AMerge, Node: slot, Arg: t})
	}
	return buf
}

// maintMerge is AddMergeOperator on the halves of table t: occupy
// operators on both, the merged span scheduling on their node, Start and
// the first Schedule.
func maintMerge(cfg *Config, s *State, slot, t uint8, e *emitter) {
	mt := &s.Maint[slot]
	l, r := mt.spanByKey(spanKey(t, partLeft)), mt.spanByKey(spanKey(t, partRight))
	s.Merges++
	node := l.Node
	n := s.addSpan(mt, SpanRep{ID: s.allocID(), Table: t, Part: partWhole, State: replScheduling, Node: node,
		Ckpt: max(min(l.Ckpt, r.Ckpt), 1), Op: mopMerge, OpPh: mergeRunning})
	if n == nil {
		return
	}
	for _, src := range []*SpanRep{l, r} {
		src.Op, src.State = mopOccupy, replScheduling // occupy, then MergeDispatcherOperator.Start
	}
	if e != nil {
		e.add(spec.Event{Kind: spec.DispatcherOpStarted, Op: spec.OpMerge, Dispatcher: dispName(n.ID), Span: partSpan(t, partWhole), Node: NodeName(node)})
	}
	resendOp(cfg, s, slot, n)
}

// mergeRequest is the MergeDispatcherRequest of merge span sp.
func mergeRequest(s *State, slot uint8, sp *SpanRep) (Msg, bool) {
	mt := &s.Maint[slot]
	l, r := mt.mergeSources(sp.Table)
	if l == nil || r == nil {
		return Msg{}, false
	}
	return Msg{Kind: mMerge, Src: s.Ident(slot), Dst: sp.Node, Epoch: mt.Epoch, A: sp.ID, B: l.ID, C: r.ID, D: sp.Table}, true
}

// mergeCheck: the merged dispatcher reported Working on the origin ("new
// merged replica set created"): the merge is finished and PostFinish runs.
// With merge-occupy-finishes-early the occupy operators finish first and
// the sources' removal is a later step (AMergePostFinish).
func mergeCheck(cfg *Config, s *State, slot uint8, sp *SpanRep, ckpt uint8, e *emitter) {
	sp.Ckpt = max(sp.Ckpt, ckpt)
	if cfg.bug(spec.BugMergeOccupyFinishesEarly) {
		// Before #4543 PostFinish called setOccupyOperatorsFinished first:
		// the occupy operators are gone while the sources still are in
		// the span controller.
		sp.OpPh = mergeReleased
		return
	}
	mergePostFinish(s, slot, sp, e)
}

// mergePostFinish removes the sources and marks the merged span
// replicating; the occupy operators finish last (#4543). A source the
// fallback resurrected (merge-occupy-finishes-early) stays, a ghost. A
// merged span whose node left meanwhile goes absent.
func mergePostFinish(s *State, slot uint8, sp *SpanRep, e *emitter) {
	mt := &s.Maint[slot]
	for h := uint8(partLeft); h <= partRight; h++ {
		if src := mt.spanByKey(spanKey(sp.Table, h)); src != nil && src.Op == mopOccupy {
			*src = SpanRep{}
		}
	}
	opFinishedOp(e, spec.OpMerge, sp, sp.Node)
	if !s.member(sp.Node) {
		markAbsent(sp)
		return
	}
	sp.Op, sp.OpPh, sp.OpDest = mopNone, 0, 0
	sp.State = replReplicating
}

// mergeAbort: OnNodeRemove(origin): the sources go absent, the merged span
// is removed ("merge dispatcher operator finished due to removed").
func mergeAbort(s *State, slot uint8, sp *SpanRep, e *emitter) {
	mt := &s.Maint[slot]
	l, r := mt.mergeSources(sp.Table)
	for _, src := range []*SpanRep{l, r} {
		if src != nil {
			markAbsent(src)
		}
	}
	opFinishedOp(e, spec.OpMerge, sp, sp.Node)
	*sp = SpanRep{}
}

// occupyLateTerminal handles a source's terminal status that arrives while
// the occupy operators are released and the sources not yet removed
// (merge-occupy-finishes-early): the fallback saw no operator and the span
// still present, and marks it absent; the model keeps the interleaving
// where that MarkSpanAbsent lands after PostFinish removed the span, which
// puts it back into the scheduler's absent set although the span
// controller no longer has it: a ghost, which the scheduler never adds
// ("add operator failed, span not found") and whose checkpoint still
// bounds the maintainer's.
func occupyLateTerminal(sp *SpanRep, ckpt uint8) {
	sp.Ckpt = max(sp.Ckpt, ckpt)
	sp.State, sp.Node, sp.Op, sp.OpDest, sp.OpPh = replAbsent, none, mopGhost, 0, 0
}

// dmHandleMerge is MergeDispatcherRequestHandler with doMerge folded in: it
// journals the request and commits the merge if both sources run on the
// node and the merged dispatcher does not exist yet.
func dmHandleMerge(cfg *Config, s *State, m Msg, e *emitter) {
	slot := slotOf(m.Dst)
	dm := &s.DMs[slot]
	if !dm.Exists {
		return
	}
	if cfg.has(FeatDMFence) && dmFenced(dm, m) {
		return // "drop stale merge dispatcher request"
	}
	if s.dispOn(m.A, slot) != nil {
		return // the merged dispatcher exists: a re-sent request
	}
	l, r := s.dispOn(m.B, slot), s.dispOn(m.C, slot)
	if l == nil || r == nil || l.St != dWorking || r.St != dWorking {
		return // a source is missing or closing: nothing to merge
	}
	journal(dm, Journal{ID: m.A, Table: m.D, Action: schedMerge})
	startTs := min(l.Ckpt, r.Ckpt)
	for _, src := range []*Disp{l, r} {
		src.St = dMergeClosed
		// The source's sink is closed (TryClose): for the monitors it is
		// gone now; its deletion from the map and its Stopped come later
		// (ADispClosed), without a second removal event.
		if e != nil {
			e.add(spec.Event{Kind: spec.DispatcherRemoved, Node: NodeName(m.Dst), Dispatcher: dispName(src.ID), Checkpoint: uint64(src.Ckpt)})
		}
	}
	nd := s.newDisp()
	if nd == nil {
		return
	}
	*nd = Disp{ID: m.A, Node: slot, Table: m.D, Part: partWhole, St: dInit, StartTs: startTs, Ckpt: startTs}
	if e != nil {
		e.add(spec.Event{Kind: spec.DispatcherCreated, Node: NodeName(m.Dst), Dispatcher: dispName(m.A), Span: partSpan(m.D, partWhole), Checkpoint: uint64(startTs), Merge: true})
	}
}

// cleanupFinishedMergeOperators drops the journal entries of merges whose
// sources are all gone and whose merged dispatcher is Working or gone.
func cleanupFinishedMergeOperators(s *State, slot uint8) {
	dm := &s.DMs[slot]
	for k := range dm.J {
		j := &dm.J[k]
		if j.ID == 0 || j.Action != schedMerge {
			continue
		}
		done := true
		for i := range s.Disp {
			if d := &s.Disp[i]; d.ID != 0 && d.Node == slot && d.Table == j.Table && d.Part != partWhole {
				done = false
			}
		}
		if md := s.dispOn(j.ID, slot); md != nil && md.St != dWorking {
			done = false
		}
		if done {
			*j = Journal{}
		}
	}
}

// restoreMerges is restoreCurrentMergeOperators (#3769) over node i's
// snapshot: a journaled merge whose merged dispatcher is Working, or whose
// sources are not both left, is finished ("merge already finished during
// bootstrap", "continue merge from existing merged dispatcher after source
// loss"): the merged span replicates and the sources are dropped; one whose
// merged dispatcher is still Initializing with both sources present is
// restored with occupy operators and resumes ("restore merge operator"). A
// journal entry without its merged dispatcher is stale: the sources are
// adopted as usual. It returns the dispatchers it took care of.
func restoreMerges(cfg *Config, s *State, slot, i, startTs uint8, taken []uint8) []uint8 {
	mt := &s.Maint[slot]
	snap := &mt.Boot[i]
	for _, j := range snap.J {
		if j.ID == 0 || j.Action != schedMerge || !tableInSnapshot(s, j.Table, startTs) || cfg.mut(MutMergeJournalRestore) {
			continue
		}
		var merged *SnapDisp
		var srcs []*SnapDisp
		for k := range snap.D {
			d := &snap.D[k]
			switch {
			case d.ID == j.ID:
				merged = d
			case d.ID != 0 && d.Table == j.Table && d.Part != partWhole:
				srcs = append(srcs, d)
			}
		}
		if merged == nil || mt.spanOverlapping(j.Table, partWhole) != nil {
			continue
		}
		taken = append(taken, merged.ID)
		for _, d := range srcs {
			taken = append(taken, d.ID)
		}
		node := s.Ident(i)
		if merged.Status == dWorking || len(srcs) < 2 {
			s.addSpan(mt, SpanRep{ID: merged.ID, Table: j.Table, Part: partWhole, State: replReplicating, Node: node, Ckpt: merged.Ckpt})
			continue
		}
		for _, d := range srcs {
			s.addSpan(mt, SpanRep{ID: d.ID, Table: d.Table, Part: d.Part, State: replScheduling, Node: node, Ckpt: d.Ckpt, Op: mopOccupy})
		}
		s.addSpan(mt, SpanRep{ID: merged.ID, Table: j.Table, Part: partWhole, State: replScheduling, Node: node, Ckpt: merged.Ckpt, Op: mopMerge})
	}
	return taken
}
