package dispatcher

import (
	"math"
	"sort"

	"go.uber.org/zap"

	"cdcspec/impl/core"
	"cdcspec/impl/logging"
	"cdcspec/spec"
)

// Periods of section B.1 (virtual ms).
const (
	heartbeatMs        = 200
	completeStatusMs   = 10_000
	errorResendMs      = 5_000
	blockStatusResend  = 5_000
	maxCheckpointTsVal = math.MaxUint64
)

// DispatcherManager is dispatchermanager.DispatcherManager for one
// changefeed on one node.
type DispatcherManager struct {
	o  *Orchestrator
	cf core.ChangefeedID
	// meta: the owner. Every control request except bootstrap must match
	// (maintainerID, epoch) exactly.
	maintainerID core.NodeID
	epoch        uint64
	startTs      uint64

	dispatchers map[core.DispatcherID]*Dispatcher
	// seq grows on every dispatcher-set change; the watermark carries it.
	seq uint64
	// currentOperatorMap journals at most one ScheduleDispatcherRequest per
	// DispatcherID (#3691), with its sender: a Create until the dispatcher
	// exists, a Remove until it is cleaned.
	currentOperatorMap map[core.DispatcherID]journalEntry
	// mergeOperatorMap journals the in-flight merges by merged dispatcher
	// (#3769; dispatcher_manager_merge.go).
	mergeOperatorMap map[core.DispatcherID]mergeEntry
	// opFence holds, per dispatcher ID, the highest OpSeq obeyed from the
	// current owner generation; cleared when the owner changes.
	//
	// Active only under a delivery stronger than TiCDC's message center
	// (spec.DeliveryPerTypeStreams or DeliveryReordering: stale copies, or a
	// Create overtaking a later Remove). A move keeps the DispatcherID and
	// the epoch, so a stale Create of an earlier operator that lands on the
	// move's origin after the move's Remove passes every TiCDC fence and
	// starts a second dispatcher of the span (found by proptest with stale
	// message copies); the fence drops a request of an older operator than
	// one already obeyed for the same ID. The message center cannot make
	// that delivery: the Create and the later Remove both leave the same
	// maintainer node on its one command stream to the DM's node
	// (pkg/messaging remoteMessageTarget.sendCommand, FIFO; no transport
	// duplicates, no re-send after a reconnect) and are handled in order on
	// the changefeed's path of the heartbeat collector's dynamic stream
	// (HeartBeatCollector.RecvMessages -> schedulerDispatcherRequestDynamicStream,
	// FIFO per path) at b813e76f9. The fence is part of generation fencing:
	// the no-epoch-fencing bug switches it off too.
	opFence        map[core.DispatcherID]uint64
	pendingCreates []core.DispatcherID
	triggerID      core.DispatcherID

	sinkID uint64
	// firstErr is the first dispatcher/sink error; re-sent every 5 s until
	// the DM closes; later errors are never reported.
	firstErr    *core.RunningError
	lastErrSent int64

	closing, closed bool
	writePathClosed bool

	pendingStatuses []core.TableSpanStatus
	lastHeartbeat   int64
	ids             []core.DispatcherID
	idsSeq          uint64
	lastComplete    int64
}

// journalEntry is a journaled request and the maintainer that sent it
// (SchedulerDispatcherRequest.From).
type journalEntry struct {
	from core.NodeID
	req  core.ScheduleDispatcherRequest
}

func newDispatcherManager(o *Orchestrator, cf core.ChangefeedID, maintainer core.NodeID, epoch, startTs uint64, out *core.Effects) *DispatcherManager {
	dm := &DispatcherManager{o: o, cf: cf, maintainerID: maintainer, epoch: epoch, startTs: startTs,
		dispatchers: map[core.DispatcherID]*Dispatcher{}, currentOperatorMap: map[core.DispatcherID]journalEntry{},
		mergeOperatorMap: map[core.DispatcherID]mergeEntry{},
		opFence:          map[core.DispatcherID]uint64{},
		sinkID:           o.rnd.Uint64() >> 1, lastComplete: o.now}
	o.lg.Info("dispatcher_manager.go", 414, "dispatcher manager initialized", logging.CF(cf), zap.String("maintainerID", string(maintainer)),
		zap.Uint64("startTs", startTs), zap.Uint64("maintainerEpoch", epoch))
	return dm
}

// sortedIDs returns the dispatcher IDs in order. The slice is cached until
// the dispatcher set changes (seq moves); callers must not keep it across
// a change.
func (dm *DispatcherManager) sortedIDs() []core.DispatcherID {
	if dm.idsSeq == dm.seq && dm.ids != nil && len(dm.ids) == len(dm.dispatchers) {
		return dm.ids
	}
	ids := dm.ids[:0]
	for id := range dm.dispatchers {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	dm.ids, dm.idsSeq = ids, dm.seq
	return ids
}

// TryUpdateMaintainer takes ownership for (from, epoch): an epoch at least
// the current one, and an equal non-zero epoch only from the same node; an
// unfenced epoch 0 only while the DM is itself in compatibility mode (epoch
// 0), from any node. Follows dispatchermanager/dispatcher_manager_info.go
// canUpdateMaintainerLocked at b813e76f9. Without epoch fencing
// (no-epoch-fencing, before #5436) any maintainer takes over.
func (dm *DispatcherManager) TryUpdateMaintainer(from core.NodeID, epoch uint64) bool {
	if !dm.canUpdateMaintainer(from, epoch) {
		return false
	}
	dm.setOwner(from, epoch)
	return true
}

// canUpdateMaintainer is TryUpdateMaintainer's check, without taking
// ownership (CanUpdateMaintainer).
func (dm *DispatcherManager) canUpdateMaintainer(from core.NodeID, epoch uint64) bool {
	if dm.o.opts.Bugs.Has(spec.BugNoEpochFencing) {
		return true
	}
	switch {
	case epoch == 0:
		return dm.epoch == 0
	case dm.epoch > epoch:
		return false
	case dm.epoch == epoch && dm.maintainerID != "" && dm.maintainerID != from:
		return false
	}
	return true
}

// isMaintainerRequestAllowed: the request is the current owner's, with its
// epoch (an unfenced epoch 0 only in compatibility mode). Follows
// dispatcher_manager_info.go IsMaintainerRequestAllowedBySnapshot at
// b813e76f9. Without epoch fencing everything is allowed.
func (dm *DispatcherManager) isMaintainerRequestAllowed(from core.NodeID, epoch uint64) bool {
	if dm.o.opts.Bugs.Has(spec.BugNoEpochFencing) {
		return true
	}
	if epoch == 0 {
		return dm.epoch == 0 && (dm.maintainerID == "" || dm.maintainerID == from)
	}
	return dm.epoch == epoch && dm.maintainerID == from
}

// setOwner records the owner generation; a new one starts a new op fence.
func (dm *DispatcherManager) setOwner(from core.NodeID, epoch uint64) {
	if from != dm.maintainerID || epoch != dm.epoch {
		clear(dm.opFence)
	}
	dm.maintainerID, dm.epoch = from, epoch
}

// isStaleOperator applies opFence to a schedule request (see opFence);
// never under TiCDC's message center.
func (dm *DispatcherManager) isStaleOperator(from core.NodeID, req *core.ScheduleDispatcherRequest) bool {
	if req.OpSeq == 0 || dm.o.opts.Bugs.Has(spec.BugNoEpochFencing) || dm.o.opts.Delivery.TiCDC() {
		return false
	}
	id := req.Config.ID
	if last, ok := dm.opFence[id]; ok && req.OpSeq < last {
		dm.o.lg.Warn("helper.go", 1, "drop stale schedule dispatcher request of an older operator", logging.CF(dm.cf),
			zap.String("from", string(from)), zap.String("dispatcherID", string(id)), zap.Uint64("operatorSeq", req.OpSeq),
			zap.Uint64("latestOperatorSeq", last))
		return true
	}
	dm.opFence[id] = req.OpSeq
	return false
}

// isMaintainerControlMessageAllowed is helper.go's fence.
func (dm *DispatcherManager) isMaintainerControlMessageAllowed(from core.NodeID, epoch uint64, what string, id core.DispatcherID) bool {
	if dm.isMaintainerRequestAllowed(from, epoch) {
		return true
	}
	dm.o.lg.Warn("helper.go", 1, what, logging.CF(dm.cf), zap.String("from", string(from)), zap.Uint64("requestMaintainerEpoch", epoch),
		zap.Uint64("currentMaintainerEpoch", dm.epoch), zap.String("currentMaintainer", string(dm.maintainerID)), zap.String("dispatcherID", string(id)))
	return false
}

// errTriggerMismatch is the code of a bootstrap that cannot own the DM's
// table trigger (ErrChangefeedInitTableTriggerDispatcherFailed).
const errTriggerMismatch = "CDC:ErrChangefeedInitTableTriggerDispatcherFailed"

// validateTrigger checks, before a reused DM changes owner, that the
// bootstrap's table trigger (id; "" when the maintainer runs on another
// node) can own it: a DM that still has a trigger of another ID, or any
// trigger for a request without one, belongs to a maintainer whose handover
// has not finished, and replacing the trigger in place could duplicate DDL
// ownership (#5436). Follows dispatcher_orchestrator.go
// bootstrapTableTrigger.validate at b813e76f9.
func (dm *DispatcherManager) validateTrigger(id core.DispatcherID) *core.RunningError {
	cur := dm.dispatchers[dm.triggerID]
	if cur == nil || cur.id == id {
		return nil
	}
	msg := "table trigger event dispatcher id mismatch during bootstrap"
	if id == "" {
		msg = "table trigger event dispatcher present during nil trigger bootstrap"
	}
	dm.o.lg.Error("dispatcher_orchestrator.go", 479, msg, logging.CF(dm.cf), zap.String("expectedDispatcherID", string(id)),
		zap.String("actualDispatcherID", string(cur.id)))
	return &core.RunningError{Code: errTriggerMismatch, Message: msg}
}

// ensureTrigger creates the table trigger on the maintainer's node when
// the DM has none (validateTrigger rejected any other one), at the
// request's startTs (NewTableTriggerEventDispatcher(id, req.StartTs)). It
// reports false when the DM's write path is closed (LocalFence): no trigger
// is created and the bootstrap gets no answer, as HEAD's
// handleBootstrapTriggerError does for the write-path-closed error
// (dispatcherorchestrator/dispatcher_orchestrator.go:303-316, 498-513 at
// b813e76f9).
func (dm *DispatcherManager) ensureTrigger(id core.DispatcherID, startTs uint64, out *core.Effects) bool {
	if dm.dispatchers[dm.triggerID] != nil {
		return true
	}
	if dm.writePathClosed {
		dm.o.lg.Info("dispatcher_orchestrator.go", 507, "dispatcher manager write path closed while creating table trigger dispatcher",
			logging.CF(dm.cf), zap.String("triggerName", "table trigger event dispatcher"))
		return false
	}
	start := startTs
	dm.triggerID = id
	d := newDispatcher(dm, id, spec.WholeTable(0), start)
	d.isTrigger = true
	dm.dispatchers[id] = d
	dm.seq++
	// HEAD's line (dispatcher_manager.go:478 at b813e76f9) has no nodeID:
	// a capture's own log needs none. The simulation writes one log for
	// all its captures and names the node on every dispatcher line (as on
	// "new dispatcher created" and "event dispatcher completely stopped"),
	// so the trigger is created and removed on the same node in the log.
	dm.o.lg.Info("dispatcher_manager.go", 478, "table trigger event dispatcher created", logging.CF(dm.cf),
		zap.String("nodeID", string(dm.o.self)), zap.String("dispatcherID", string(id)), zap.Uint64("startTs", start))
	return true
}

// retrieveOperatorsForBootstrapResponse returns the journal (sorted) as the
// current owner sees it: its own requests, and an older owner's Remove only
// while the dispatcher it closes is still there (reported in the same
// response); an older owner's Create is left out, the new maintainer
// decides afresh. Follows dispatcherorchestrator/dispatcher_orchestrator.go
// retrieveOperatorsForBootstrapResponse at b813e76f9.
func (dm *DispatcherManager) retrieveOperatorsForBootstrapResponse() []core.ScheduleDispatcherRequest {
	ids := make([]core.DispatcherID, 0, len(dm.currentOperatorMap))
	for id := range dm.currentOperatorMap {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	out := make([]core.ScheduleDispatcherRequest, 0, len(ids))
	for _, id := range ids {
		e := dm.currentOperatorMap[id]
		if !dm.isMaintainerRequestAllowed(e.from, e.req.Epoch) && (e.req.Action != core.ScheduleRemove || dm.dispatchers[id] == nil) {
			continue
		}
		out = append(out, e.req)
	}
	return out
}

// SchedulerDispatcherRequestHandler is helper.go: fence, journal, then
// create (next tick) or remove.
func (dm *DispatcherManager) SchedulerDispatcherRequestHandler(from core.NodeID, req *core.ScheduleDispatcherRequest, out *core.Effects) {
	if dm.closing {
		return
	}
	id := req.Config.ID
	if !dm.isMaintainerControlMessageAllowed(from, req.Epoch, "drop stale schedule dispatcher request", id) {
		return
	}
	if dm.isStaleOperator(from, req) {
		return
	}
	// A journaled request of an owner that is no longer current is
	// dropped; one of the current owner serializes Creates per dispatcher
	// (preCheckForSchedulerHandler at b813e76f9).
	if e, ok := dm.currentOperatorMap[id]; ok {
		if !dm.isMaintainerRequestAllowed(e.from, e.req.Epoch) {
			delete(dm.currentOperatorMap, id)
		} else if req.Action == core.ScheduleCreate {
			return
		}
	}
	switch req.Action {
	case core.ScheduleCreate:
		if dm.dispatchers[id] != nil {
			return
		}
		dm.currentOperatorMap[id] = journalEntry{from: from, req: *req}
		dm.pendingCreates = append(dm.pendingCreates, id)
	case core.ScheduleRemove:
		d := dm.dispatchers[id]
		if d == nil {
			// A missing dispatcher is reported Stopped at once.
			if e, ok := dm.currentOperatorMap[id]; ok && e.req.Action == core.ScheduleCreate {
				delete(dm.currentOperatorMap, id)
			}
			dm.pendingStatuses = append(dm.pendingStatuses, core.TableSpanStatus{ID: id, State: core.ComponentStopped})
			return
		}
		// The Remove is journaled even when the dispatcher is already
		// closing: it may carry a newer owner's request (handleScheduleRemove
		// at b813e76f9).
		dm.currentOperatorMap[id] = journalEntry{from: from, req: *req}
		if d.state == core.ComponentRemoving {
			dm.o.lg.Debug("dispatcher_manager_helper.go", 248, "dispatcher is already in removing state, skip repeated remove request",
				logging.CF(dm.cf), zap.String("dispatcherID", string(id)))
			return
		}
		d.state = core.ComponentRemoving
		dm.o.lg.Info("dispatcher_manager_helper.go", 273, "submitted async remove task", logging.CF(dm.cf), zap.String("dispatcherID", string(id)))
	}
}

func (dm *DispatcherManager) handleHeartBeatResponse(from core.NodeID, resp *core.HeartBeatResponse, out *core.Effects) {
	if !dm.isMaintainerControlMessageAllowed(from, resp.Epoch, "drop stale heartbeat response", "") {
		return
	}
	// An ACK cancels the re-send of a NONE status (a syncpoint is never
	// one); the ACK of a WAITING or DONE changes nothing here: the
	// dispatcher keeps re-sending its WAITING until an action arrives.
	for _, ack := range resp.ACKs {
		if d := dm.dispatchers[ack.ID]; d != nil && !ack.IsSyncPoint {
			d.onACK(ack.BlockTs)
		}
	}
	for _, a := range resp.Actions {
		if d := dm.dispatchers[a.ID]; d != nil && d.state != core.ComponentRemoving {
			d.onAction(dm.o.now, a, out)
		}
	}
}

// TryClose starts an async close; the first call answers false, later
// ones true once every dispatcher is gone.
func (dm *DispatcherManager) TryClose(out *core.Effects) bool {
	if !dm.closing {
		dm.closing = true
		dm.o.lg.Info("dispatcher_manager.go", 1065, "closing event dispatcher manager", logging.CF(dm.cf))
		for _, d := range dm.dispatchers {
			d.state = core.ComponentRemoving
		}
		return false
	}
	dm.cleanRemoved(out, true)
	if len(dm.dispatchers) > 0 {
		return false
	}
	if !dm.closed {
		dm.closed = true
		dm.o.lg.Event(out, spec.Event{Kind: spec.DispatcherManagerClosed, Changefeed: string(dm.cf), Node: string(dm.o.self)})
	}
	return true
}

// OnTick creates pending dispatchers, advances dispatchers, cleans removed
// ones, and sends the heartbeat / block statuses / error.
func (dm *DispatcherManager) OnTick(now int64, out *core.Effects) {
	// After the local fence no dispatcher is created; the Create stays
	// journaled (createDispatcherByInfo at b813e76f9 fails with the
	// write-path-closed error and keeps the operator).
	if !dm.closing && !dm.writePathClosed && !dm.o.BlockCreateDispatcher && len(dm.pendingCreates) > 0 {
		for _, id := range dm.pendingCreates {
			e, ok := dm.currentOperatorMap[id]
			req := e.req
			if !ok || req.Action != core.ScheduleCreate || dm.dispatchers[id] != nil {
				continue
			}
			if !dm.isMaintainerRequestAllowed(e.from, req.Epoch) && !dm.o.opts.Bugs.Has(spec.BugInflightOperatorsLostOnFailover) {
				// TiCDC creates a dispatcher in the same critical section
				// (SchedulerDispatcherRequestHandler.Handle under
				// MaintainerFenceMu) as the Create's fence check, so a Create
				// never runs under a later owner; here creation waits for the
				// tick, and a Create whose owner was replaced meanwhile is
				// dropped: the new owner was not told about it
				// (retrieveOperatorsForBootstrapResponse) and decides afresh.
				// Before #3691 (inflight-operators-lost-on-failover) there is
				// no journal to know the Create's owner by, and it runs.
				delete(dm.currentOperatorMap, id)
				continue
			}
			d := newDispatcher(dm, id, req.Config.Span, req.Config.StartTs)
			dm.dispatchers[id] = d
			dm.seq++
			dm.o.lg.Event(out, spec.Event{Kind: spec.DispatcherCreated, Changefeed: string(dm.cf), Node: string(dm.o.self), Dispatcher: string(id),
				Span: req.Config.Span, Checkpoint: req.Config.StartTs})
			delete(dm.currentOperatorMap, id)
		}
		dm.pendingCreates = dm.pendingCreates[:0]
	}
	if !dm.closing && !dm.writePathClosed && len(dm.mergeOperatorMap) > 0 {
		dm.doMerges(out)
	}
	if !dm.writePathClosed {
		for _, id := range dm.sortedIDs() {
			dm.dispatchers[id].advance(now, out)
		}
	}
	dm.cleanRemoved(out, false)
	if len(dm.mergeOperatorMap) > 0 {
		dm.cleanupFinishedMergeOperators()
	}
	dm.sendHeartbeat(now, out)
}

// cleanRemoved deletes removing dispatchers that have no write in flight:
// each is reported Stopped once with its final checkpoint (the cleanEventDispatcher path).
func (dm *DispatcherManager) cleanRemoved(out *core.Effects, closing bool) {
	if dm.o.NotReadyToCloseDispatcher {
		return
	}
	var removable []core.DispatcherID
	for _, id := range dm.sortedIDs() {
		d := dm.dispatchers[id]
		switch {
		case d.state == core.ComponentRemoving && !d.inflight:
			removable = append(removable, id)
		case d.state == core.ComponentRemoving && dm.closing && out != nil:
			// The manager is closing: TiCDC closes every dispatcher
			// without waiting (closeAllDispatchers calls TryClose once,
			// then Remove: dispatcher_manager_helper.go:319-320) and
			// then the sink (dispatcher_manager.go:1149), which cuts
			// the writes in flight; a lagging dispatcher's write can
			// cover minutes of rows. A single dispatcher's remove waits
			// for its write instead (TryClose answers false while its
			// table progress is not empty: basic_dispatcher.go:1352-1389,
			// retried by dispatcher_manager_helper.go:43).
			out.SinkCancels = append(out.SinkCancels, core.SinkCancel{Sink: dm.sinkID, Dispatcher: id})
		}
	}
	for _, id := range removable {
		d := dm.dispatchers[id]
		delete(dm.dispatchers, id)
		delete(dm.currentOperatorMap, id)
		dm.seq++
		if !closing {
			dm.pendingStatuses = append(dm.pendingStatuses, core.TableSpanStatus{ID: id, State: core.ComponentStopped, CheckpointTs: d.checkpointTs})
		}
		if id == dm.triggerID {
			dm.triggerID = ""
		}
		if !d.mergeClosed { // a merge source's removal was reported when the merge closed it
			dm.o.lg.Event(out, spec.Event{Kind: spec.DispatcherRemoved, Changefeed: string(dm.cf), Node: string(dm.o.self), Dispatcher: string(id),
				Checkpoint: d.checkpointTs})
		}
	}
}

func (dm *DispatcherManager) watermark() core.Watermark {
	w := core.Watermark{CheckpointTs: maxCheckpointTsVal, ResolvedTs: maxCheckpointTsVal, Seq: dm.seq}
	for _, d := range dm.dispatchers {
		if cp := d.reportedCheckpoint(); cp < w.CheckpointTs {
			w.CheckpointTs = cp
		}
		if d.sentTs < w.ResolvedTs {
			w.ResolvedTs = d.sentTs
		}
	}
	return w
}

func (dm *DispatcherManager) sendHeartbeat(now int64, out *core.Effects) {
	if dm.closing || dm.maintainerID == "" {
		return
	}
	due := now-dm.lastHeartbeat >= heartbeatMs
	errDue := dm.firstErr != nil && (dm.lastErrSent == 0 || now-dm.lastErrSent >= errorResendMs)
	if !due && len(dm.pendingStatuses) == 0 && !errDue {
		dm.sendBlockStatuses(now, out)
		return
	}
	req := &core.HeartBeatRequest{Changefeed: dm.cf}
	w := dm.watermark()
	req.Watermark = &w
	if now-dm.lastComplete >= completeStatusMs {
		dm.lastComplete = now
		req.Complete = true
		for _, id := range dm.sortedIDs() {
			d := dm.dispatchers[id]
			// The trigger's status carries its checkpoint to the barrier
			// (the DDL span's status).
			req.Statuses = append(req.Statuses, core.TableSpanStatus{ID: id, State: d.reportState(), CheckpointTs: d.reportedCheckpoint()})
		}
	}
	for _, st := range dm.pendingStatuses {
		// The heartbeat that reports a cleaned dispatcher Stopped folds its
		// final checkpoint into the node's watermark (getDispatcherStatus,
		// dispatcher_manager_helper.go:42-52 at b813e76f9); the next one no
		// longer has it. A missing dispatcher's Stopped carries none.
		if st.State == core.ComponentStopped && st.CheckpointTs != 0 && st.CheckpointTs < w.CheckpointTs {
			w.CheckpointTs = st.CheckpointTs // req.Watermark points at w
		}
	}
	req.Statuses = append(req.Statuses, dm.pendingStatuses...)
	dm.pendingStatuses = dm.pendingStatuses[:0]
	if errDue {
		e := *dm.firstErr
		req.Err = &e
		dm.lastErrSent = now
	}
	if due {
		dm.lastHeartbeat = now
	}
	out.SendTo(dm.o.self, dm.maintainerID, req)
	dm.sendBlockStatuses(now, out)
}

// sendBlockStatuses sends the trigger's NONE statuses and every blocked
// dispatcher's WAITING (each re-sent every blockStatusResend until ACKed
// or acted on); a DONE is sent at once (reportBlock).
func (dm *DispatcherManager) sendBlockStatuses(now int64, out *core.Effects) {
	var st []core.BlockStatus
	if t := dm.dispatchers[dm.triggerID]; t != nil {
		for i := range t.pendingDDLs {
			p := &t.pendingDDLs[i]
			if p.lastSent == 0 || now-p.lastSent >= blockStatusResend {
				p.lastSent = now
				st = append(st, core.BlockStatus{ID: t.id, BlockTs: p.ts, Stage: core.StageNone, NeedAdded: []int64{p.table}})
			}
		}
	}
	for _, id := range dm.sortedIDs() {
		d := dm.dispatchers[id]
		if d.blockPending != nil && d.state != core.ComponentRemoving && (d.lastBlockSent == 0 || now-d.lastBlockSent >= blockStatusResend) {
			d.lastBlockSent = now
			st = append(st, d.blockStatus(core.StageWaiting, d.blockPending))
		}
	}
	if len(st) > 0 {
		out.SendTo(dm.o.self, dm.maintainerID, &core.BlockStatusRequest{Changefeed: dm.cf, Statuses: st})
	}
}

// onError records a dispatcher/sink error; only the first is kept.
func (dm *DispatcherManager) onError(err core.RunningError, out *core.Effects) {
	dm.o.lg.Event(out, spec.Event{Kind: spec.SinkError, Changefeed: string(dm.cf), Node: string(dm.o.self), Err: err.Message})
	if dm.firstErr == nil {
		e := err
		dm.firstErr = &e
	}
}

func (dm *DispatcherManager) onSinkResult(r core.SinkResult, out *core.Effects) {
	d := dm.dispatchers[r.Dispatcher]
	if d == nil {
		return
	}
	d.onSinkResult(r, out)
}

// LocalFence closes the DM's write path at once, without waiting for its
// cleanup (DispatcherManager.LocalFence): no sink write and no dispatcher
// creation from here on; closing it still completes.
func (dm *DispatcherManager) LocalFence() { dm.writePathClosed = true }

// SinkID is the DM's sink instance.
func (dm *DispatcherManager) SinkID() uint64 { return dm.sinkID }
