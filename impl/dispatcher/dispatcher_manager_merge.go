package dispatcher

import (
	"sort"

	"go.uber.org/zap"

	"cdcspec/impl/core"
	"cdcspec/impl/logging"
	"cdcspec/spec"
)

// The dispatcher manager's merge (dispatchermanager/dispatcher_manager_merge.go,
// task.go doMerge at b813e76f9). A MergeDispatcherRequest that passes the
// owner fence is journaled (mergeOperatorMap, #3769) and its sources stop
// advancing (WaitingMerge); once no source has a write in flight the merge
// commits on the tick (doMerge): the sources are closed, the merged
// dispatcher starts Initializing at their minimum checkpoint, and the
// sources are removed, each reporting Stopped once when cleaned (the late
// Stopped of #4542). A source that vanished or started removing aborts the
// merge ("abort merge"): the others work again. The journal entry goes when
// no source is left and the merged dispatcher is Working or gone
// (cleanupFinishedMergeOperators). TiCDC creates the merged dispatcher
// Preparing before the close; here it exists only once the merge committed.

// mergeEntry is a journaled merge and its sender.
type mergeEntry struct {
	from core.NodeID
	req  core.MergeDispatcherRequest
}

// MergeDispatcherRequestHandler is MergeDispatcherRequestHandler.Handle.
func (dm *DispatcherManager) MergeDispatcherRequestHandler(from core.NodeID, req *core.MergeDispatcherRequest, out *core.Effects) {
	if dm.closing || len(req.DispatcherIDs) < 2 || req.MergedID == "" {
		return
	}
	if !dm.isMaintainerControlMessageAllowed(from, req.Epoch, "drop stale merge dispatcher request", req.MergedID) {
		return
	}
	if dm.dispatchers[req.MergedID] != nil {
		return // committed already: a re-sent request
	}
	if _, ok := dm.mergeOperatorMap[req.MergedID]; ok {
		return
	}
	var srcs []*Dispatcher
	for _, id := range req.DispatcherIDs {
		d := dm.dispatchers[id]
		if d == nil || d.state != core.ComponentWorking || d.mergeInto != "" {
			dm.o.lg.Warn("dispatcher_manager.go", 1017, "merge dispatcher request ignored, source dispatcher not ready", logging.CF(dm.cf),
				zap.String("dispatcherID", string(id)), zap.String("mergedDispatcher", string(req.MergedID)))
			return
		}
		srcs = append(srcs, d)
	}
	sort.Slice(srcs, func(i, j int) bool { return srcs[i].span.Start < srcs[j].span.Start })
	for i := 1; i < len(srcs); i++ {
		if srcs[i].span.Table != srcs[0].span.Table || srcs[i-1].span.End != srcs[i].span.Start {
			dm.o.lg.Warn("dispatcher_manager.go", 1017, "merge dispatcher request ignored, spans are not adjacent", logging.CF(dm.cf),
				zap.String("mergedDispatcher", string(req.MergedID)))
			return
		}
	}
	dm.mergeOperatorMap[req.MergedID] = mergeEntry{from: from, req: *req}
	for _, d := range srcs {
		d.mergeInto = req.MergedID
	}
	// Not TiCDC's "new dispatcher created(merge dispatcher)": the merged
	// dispatcher is created at the commit (doMerges), whose DispatcherCreated
	// event carries the merge flag.
	dm.o.lg.Debug("dispatcher_manager_merge.go", 37, "merge operator tracked", logging.CF(dm.cf),
		zap.String("dispatcherID", string(req.MergedID)), zap.Int("sources", len(srcs)))
}

// doMerges commits or aborts the pending merges (MergeCheckTask).
func (dm *DispatcherManager) doMerges(out *core.Effects) {
	for _, mid := range core.SortedKeys(dm.mergeOperatorMap) {
		e := dm.mergeOperatorMap[mid]
		if dm.dispatchers[mid] != nil {
			continue // committed
		}
		var srcs []*Dispatcher
		abort := false
		for _, id := range e.req.DispatcherIDs {
			d := dm.dispatchers[id]
			if d == nil || d.state == core.ComponentRemoving || d.mergeInto != mid {
				abort = true
				break
			}
			srcs = append(srcs, d)
		}
		if abort {
			dm.o.lg.Info("task.go", 194, "abort merge", logging.CF(dm.cf), zap.String("mergedDispatcher", string(mid)))
			for _, id := range e.req.DispatcherIDs {
				if d := dm.dispatchers[id]; d != nil && d.mergeInto == mid {
					d.mergeInto = ""
				}
			}
			delete(dm.mergeOperatorMap, mid)
			continue
		}
		busy := false
		for _, d := range srcs {
			busy = busy || d.inflight
		}
		if busy {
			continue // TryClose waits for the sink
		}
		sort.Slice(srcs, func(i, j int) bool { return srcs[i].span.Start < srcs[j].span.Start })
		startTs := srcs[0].checkpointTs
		for _, d := range srcs[1:] {
			startTs = min(startTs, d.checkpointTs)
		}
		span := spec.Span{Table: srcs[0].span.Table, Start: srcs[0].span.Start, End: srcs[len(srcs)-1].span.End}
		dm.o.lg.Info("task.go", 234, "do merge", logging.CF(dm.cf), zap.String("mergedDispatcher", string(mid)))
		md := newDispatcher(dm, mid, span, startTs)
		dm.dispatchers[mid] = md
		dm.seq++
		dm.o.lg.Event(out, spec.Event{Kind: spec.DispatcherCreated, Changefeed: string(dm.cf), Node: string(dm.o.self), Dispatcher: string(mid),
			Span: span, Checkpoint: startTs, Merge: true})
		dm.o.lg.Info("task.go", 304, "merge dispatcher commit", logging.CF(dm.cf), zap.String("dispatcherID", string(mid)),
			zap.Uint64("startTs", startTs))
		for _, d := range srcs {
			// Closed by the merge (TryClose): for the monitors the source is
			// gone now; its cleaning reports Stopped later, without a second
			// removal event (as the model, model/merge.go).
			d.state, d.mergeClosed = core.ComponentRemoving, true
			dm.o.lg.Event(out, spec.Event{Kind: spec.DispatcherRemoved, Changefeed: string(dm.cf), Node: string(dm.o.self), Dispatcher: string(d.id),
				Checkpoint: d.checkpointTs})
		}
	}
}

// cleanupFinishedMergeOperators drops the journal entries of merges with no
// source left and the merged dispatcher Working or gone.
func (dm *DispatcherManager) cleanupFinishedMergeOperators() {
	for _, mid := range core.SortedKeys(dm.mergeOperatorMap) {
		e := dm.mergeOperatorMap[mid]
		done := true
		for _, id := range e.req.DispatcherIDs {
			if dm.dispatchers[id] != nil {
				done = false
			}
		}
		if md := dm.dispatchers[mid]; md != nil && md.state != core.ComponentWorking {
			done = false
		}
		if done {
			dm.o.lg.Info("dispatcher_manager_merge.go", 66, "cleanup finished merge operator", logging.CF(dm.cf), zap.String("dispatcherID", string(mid)))
			delete(dm.mergeOperatorMap, mid)
		}
	}
}

// mergeOperatorsForBootstrapResponse is GetMergeOperators.
func (dm *DispatcherManager) mergeOperatorsForBootstrapResponse() []core.MergeDispatcherRequest {
	var out []core.MergeDispatcherRequest
	for _, mid := range core.SortedKeys(dm.mergeOperatorMap) {
		out = append(out, dm.mergeOperatorMap[mid].req)
	}
	return out
}
