// Package dispatcher is TiCDC's dispatcher side
// (downstreamadapter/): the per-node dispatcher orchestrator, one
// dispatcher manager (DM) per changefeed with the owner epoch fence and the
// operator journal (currentOperatorMap), and the dispatchers with their
// heartbeat (watermark + seq) and first-error report re-sent every 5 s.
// Event handlers only: no goroutine, no clock; sink writes are Effects.
package dispatcher

import (
	"sort"

	"go.uber.org/zap"

	"cdcspec/impl/core"
	"cdcspec/impl/logging"
	"cdcspec/spec"
)

// Orchestrator is dispatcherorchestrator: bootstrap, post-bootstrap and
// close requests for every changefeed on one node.
type Orchestrator struct {
	self core.NodeID
	opts *core.Options
	lg   *logging.Logger
	rnd  core.Rand
	up   core.Upstream
	now  int64

	dms map[core.ChangefeedID]*DispatcherManager
	// closedMaintainerEpochs: after a close, a bootstrap with epoch <= the
	// closed epoch is dropped (tombstone).
	closedMaintainerEpochs map[core.ChangefeedID]uint64
	// lastSeq: under a delivery stronger than TiCDC's message center
	// (spec.DeliveryPerTypeStreams or DeliveryReordering) a recreated DM
	// continues its predecessor's watermark Seq, so a delayed heartbeat of
	// the closed one can never outrank it (found by the soak test with long
	// delays: the maintainer accepts a higher Seq only, and a stale high
	// Seq froze the checkpoint). Under the message center a new DM starts
	// its Seq afresh, as HEAD's newDispatcherMap: an old DM's heartbeat
	// would have to overtake the close, the stop, a new Add and every DM's
	// new bootstrap response, yet all of a node's heartbeats leave through
	// one FIFO queue (heartBeatReqQueue, HeartBeatCollector) onto the node
	// pair's command stream and reach the maintainer's one event queue
	// behind what was sent before them (pkg/messaging at b813e76f9).
	lastSeq map[core.ChangefeedID]uint64

	// Failpoints (tests/integration_tests/maintainer_failover_when_operator):
	// BlockCreateDispatcher keeps journaled Creates pending;
	// NotReadyToCloseDispatcher keeps removing dispatchers alive.
	BlockCreateDispatcher     bool
	NotReadyToCloseDispatcher bool
	ids                       []core.ChangefeedID

	// fenced: LocalFence ran; bootstrap and close requests are dropped from
	// then on (RecvMaintainerRequest, processMessage).
	fenced bool

	// pending and queue are HEAD's pendingMessageQueue in front of the
	// orchestrator's worker (dispatcherorchestrator/helper.go, shard.go at
	// b813e76f9): at most one queued bootstrap or close request per
	// (changefeed, message type), popped in the order the keys were first
	// queued; a popped key can be queued again at once. Invariant: the
	// queue is empty whenever workerHeld is false, so a request is handled
	// on arrival unless the worker is held.
	pending map[pendingMessageKey]pendingMessage
	queue   []pendingMessageKey
	// workerHeld stands for HEAD's shard worker still busy with an earlier
	// request (HoldWorker): requests arriving meanwhile queue and coalesce.
	workerHeld bool
}

// pendingMessageKey is HEAD's pendingMessageKey: the changefeed and the
// message type (getPendingMessageKey).
type pendingMessageKey struct {
	changefeed core.ChangefeedID
	msgType    string
}

type pendingMessage struct {
	from core.NodeID
	msg  core.Message
}

// NewOrchestrator returns a node's orchestrator.
func NewOrchestrator(self core.NodeID, opts *core.Options, rnd core.Rand, up core.Upstream, lg *logging.Logger) *Orchestrator {
	return &Orchestrator{self: self, opts: opts, lg: lg, rnd: rnd, up: up, dms: map[core.ChangefeedID]*DispatcherManager{},
		closedMaintainerEpochs: map[core.ChangefeedID]uint64{}, lastSeq: map[core.ChangefeedID]uint64{}}
}

func (o *Orchestrator) sortedIDs() []core.ChangefeedID {
	if len(o.ids) == len(o.dms) {
		same := true
		for _, id := range o.ids {
			if o.dms[id] == nil {
				same = false
				break
			}
		}
		if same {
			return append([]core.ChangefeedID(nil), o.ids...)
		}
	}
	ids := make([]core.ChangefeedID, 0, len(o.dms))
	for id := range o.dms {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	o.ids = ids
	return append([]core.ChangefeedID(nil), ids...)
}

// Get returns a changefeed's DM or nil.
func (o *Orchestrator) Get(id core.ChangefeedID) *DispatcherManager { return o.dms[id] }

// OnMessage handles the orchestrator topic and the heartbeat-collector
// topic (schedule requests and heartbeat responses for a DM).
func (o *Orchestrator) OnMessage(now int64, from core.NodeID, msg core.Message, out *core.Effects) {
	o.now = now
	switch m := msg.(type) {
	case *core.MaintainerBootstrapRequest:
		if !o.dropWhenFenced(msg) {
			o.tryEnqueue(pendingMessageKey{m.Changefeed, msg.TypeName()}, pendingMessage{from, msg})
			o.drain(out)
		}
	case *core.MaintainerCloseRequest:
		if !o.dropWhenFenced(msg) {
			o.tryEnqueue(pendingMessageKey{m.Changefeed, msg.TypeName()}, pendingMessage{from, msg})
			o.drain(out)
		}
	case *core.ScheduleDispatcherRequest:
		if dm := o.dms[m.Changefeed]; dm != nil {
			dm.SchedulerDispatcherRequestHandler(from, m, out)
		}
	case *core.HeartBeatResponse:
		if dm := o.dms[m.Changefeed]; dm != nil {
			dm.handleHeartBeatResponse(from, m, out)
		}
	case *core.MergeDispatcherRequest:
		if dm := o.dms[m.Changefeed]; dm != nil {
			dm.MergeDispatcherRequestHandler(from, m, out)
		}
	}
}

// tryEnqueue is pendingMessageQueue.TryEnqueue: a request whose key is
// already queued replaces the queued one only if it carries a higher
// maintainer epoch, or if both are close requests and it upgrades
// removed=false to removed=true without a lower epoch
// (ShouldReplacePendingMessage); otherwise it is dropped.
func (o *Orchestrator) tryEnqueue(key pendingMessageKey, pm pendingMessage) bool {
	if o.pending == nil {
		o.pending = map[pendingMessageKey]pendingMessage{}
	}
	old, ok := o.pending[key]
	if !ok {
		o.pending[key] = pm
		o.queue = append(o.queue, key)
		return true
	}
	if ShouldReplacePendingMessage(old.msg, pm.msg) {
		o.pending[key] = pm
		return true
	}
	return false
}

// ShouldReplacePendingMessage is shouldReplacePendingMessage
// (dispatcherorchestrator/helper.go at b813e76f9): a request of a newer
// maintainer epoch replaces the queued one of its key; a removed close
// replaces a plain close of an epoch not newer. impl/sim's receiving queue
// of the orchestrator applies the same rule.
func ShouldReplacePendingMessage(oldMsg, newMsg core.Message) bool {
	oldEpoch, newEpoch := pendingMessageMaintainerEpoch(oldMsg), pendingMessageMaintainerEpoch(newMsg)
	if newEpoch > oldEpoch {
		return true
	}
	oldReq, ok1 := oldMsg.(*core.MaintainerCloseRequest)
	newReq, ok2 := newMsg.(*core.MaintainerCloseRequest)
	return ok1 && ok2 && !oldReq.Removed && newReq.Removed && newReq.Epoch >= oldReq.Epoch
}

func pendingMessageMaintainerEpoch(msg core.Message) uint64 {
	switch m := msg.(type) {
	case *core.MaintainerBootstrapRequest:
		return m.Epoch
	case *core.MaintainerCloseRequest:
		return m.Epoch
	}
	return 0
}

// popAndProcess pops the oldest queued request and handles it
// (pendingMessageQueue.Pop, processMessage); it reports false on an empty
// queue.
func (o *Orchestrator) popAndProcess(out *core.Effects) bool {
	if len(o.queue) == 0 {
		return false
	}
	key := o.queue[0]
	o.queue = o.queue[1:]
	pm := o.pending[key]
	delete(o.pending, key)
	if o.fenced {
		o.lg.Info("dispatcher_orchestrator.go", 156, "dispatcher orchestrator is fenced, drop pending message", zap.String("type", pm.msg.TypeName()))
		return true
	}
	switch m := pm.msg.(type) {
	case *core.MaintainerBootstrapRequest:
		o.handleBootstrapRequest(pm.from, m, out)
	case *core.MaintainerCloseRequest:
		o.handleCloseRequest(pm.from, m, out)
	}
	return true
}

// drain handles every queued request unless the worker is held.
func (o *Orchestrator) drain(out *core.Effects) {
	for !o.workerHeld && o.popAndProcess(out) {
	}
}

// HoldWorker keeps the worker busy: bootstrap and close requests queue
// (and coalesce) until StepWorker or ReleaseWorker. A test hook for HEAD's
// shard worker that has not yet returned to Pop.
func (o *Orchestrator) HoldWorker() { o.workerHeld = true }

// StepWorker lets the held worker pop and handle one queued request.
func (o *Orchestrator) StepWorker(now int64, out *core.Effects) {
	o.now = now
	o.popAndProcess(out)
}

// ReleaseWorker lets the worker handle every queued request, and each
// later one on arrival.
func (o *Orchestrator) ReleaseWorker(now int64, out *core.Effects) {
	o.now = now
	o.workerHeld = false
	o.drain(out)
}

// dropWhenFenced: after the local fence the orchestrator topic takes no
// message (RecvMaintainerRequest at b813e76f9).
func (o *Orchestrator) dropWhenFenced(msg core.Message) bool {
	if o.fenced {
		o.lg.Debug("dispatcher_orchestrator.go", 103, "dispatcher orchestrator already closed, drop message", zap.String("message", msg.TypeName()))
	}
	return o.fenced
}

func (o *Orchestrator) handleBootstrapRequest(from core.NodeID, req *core.MaintainerBootstrapRequest, out *core.Effects) {
	fenced := !o.opts.Bugs.Has(spec.BugNoEpochFencing)
	if closed, ok := o.closedMaintainerEpochs[req.Changefeed]; ok && fenced && req.Epoch <= closed {
		o.lg.Warn("dispatcher_orchestrator.go", 203, "drop stale maintainer bootstrap request after close", zap.String("changefeed", string(req.Changefeed)),
			zap.String("from", string(from)), zap.Uint64("requestMaintainerEpoch", req.Epoch), zap.Uint64("closedMaintainerEpoch", closed))
		return
	}
	dm := o.dms[req.Changefeed]
	if dm != nil && dm.closing {
		// A closing DM answers no bootstrap; the maintainer re-sends and,
		// once the close is done, the tombstone decides. On the maintainer's
		// node this is HEAD's behaviour: closing stops the write path first
		// (DispatcherManager.stopWritePath), creating the trigger then fails
		// with the write-path-closed error and handleBootstrapTriggerError
		// answers nothing (dispatcher_orchestrator.go at b813e76f9), so no
		// trigger is created during the close. On another node HEAD still
		// answers with the closing DM's dispatchers and hands the DM to the
		// newer epoch; impl does not, and lets the closing DM finish and
		// remove itself first (OnTick).
		o.lg.Info("dispatcher_orchestrator.go", 203, "drop maintainer bootstrap request, dispatcher manager is closing",
			zap.String("changefeed", string(req.Changefeed)), zap.String("from", string(from)), zap.Uint64("requestMaintainerEpoch", req.Epoch))
		return
	}
	reused := dm != nil
	if dm == nil {
		dm = newDispatcherManager(o, req.Changefeed, from, req.Epoch, req.StartTs, out)
		if !o.opts.Delivery.TiCDC() {
			dm.seq = o.lastSeq[req.Changefeed] + 1
		}
		o.dms[req.Changefeed] = dm
	}
	if !dm.canUpdateMaintainer(from, req.Epoch) {
		o.lg.Warn("dispatcher_orchestrator.go", 271, "drop stale maintainer bootstrap request", zap.String("changefeed", string(req.Changefeed)),
			zap.String("from", string(from)), zap.Uint64("requestMaintainerEpoch", req.Epoch), zap.Uint64("currentMaintainerEpoch", dm.epoch),
			zap.String("currentMaintainer", string(dm.maintainerID)))
		return
	}
	// A reused DM's table trigger is validated before the owner changes;
	// a mismatch is answered with the error and the DM keeps its owner
	// (handleBootstrapRequest, handleDispatcherError at b813e76f9).
	if reused {
		if err := dm.validateTrigger(req.TriggerID); err != nil {
			e := *err
			e.Node = from
			out.SendTo(o.self, from, &core.MaintainerBootstrapResponse{Changefeed: req.Changefeed, Epoch: req.Epoch, Err: &e})
			return
		}
	}
	dm.TryUpdateMaintainer(from, req.Epoch)
	resp := &core.MaintainerBootstrapResponse{Changefeed: req.Changefeed, Epoch: req.Epoch}
	if req.TriggerID != "" {
		if !dm.ensureTrigger(req.TriggerID, req.StartTs, out) {
			return
		}
		// The trigger's startTs, not its current checkpoint, as HEAD's
		// createBootstrapResponse(startTs = trigger.GetStartTs()) at
		// b813e76f9: a re-sent request (the first response lost) must not
		// report a trigger that already ran ahead, or the maintainer would
		// start tables past rows nobody flushed.
		if t := dm.dispatchers[dm.triggerID]; t != nil {
			resp.CheckpointTs = t.startTs
		}
	}
	for _, id := range dm.sortedIDs() {
		d := dm.dispatchers[id]
		bs := core.BootstrapTableSpan{ID: d.id, Span: d.span, State: d.reportState(), CheckpointTs: d.checkpointTs}
		if d.blockPending != nil {
			st := d.blockStatus(core.StageWaiting, d.blockPending)
			bs.BlockState = &st
		}
		resp.Spans = append(resp.Spans, bs)
	}
	resp.Operators = dm.retrieveOperatorsForBootstrapResponse()
	resp.MergeOperators = dm.mergeOperatorsForBootstrapResponse()
	out.SendTo(o.self, from, resp)
}

func (o *Orchestrator) handleCloseRequest(from core.NodeID, req *core.MaintainerCloseRequest, out *core.Effects) {
	dm := o.dms[req.Changefeed]
	if dm == nil {
		o.recordClosedMaintainerEpoch(req.Changefeed, req.Epoch, req.Removed)
		out.SendTo(o.self, from, &core.MaintainerCloseResponse{Changefeed: req.Changefeed, Success: true, Epoch: req.Epoch})
		return
	}
	if !o.opts.Bugs.Has(spec.BugNoEpochFencing) && (from != dm.maintainerID || req.Epoch != dm.epoch) && req.Epoch < dm.epoch {
		o.lg.Warn("dispatcher_orchestrator.go", 685, "drop stale maintainer close request", zap.String("changefeed", string(req.Changefeed)),
			zap.String("from", string(from)), zap.Uint64("requestMaintainerEpoch", req.Epoch), zap.Uint64("currentMaintainerEpoch", dm.epoch))
		out.SendTo(o.self, from, &core.MaintainerCloseResponse{Changefeed: req.Changefeed, Success: true, Epoch: req.Epoch})
		return
	}
	if req.Epoch > dm.epoch {
		// A newer generation closes the DM (e.g. a removal-only maintainer
		// of a later stop): it takes ownership first.
		dm.setOwner(from, req.Epoch)
	}
	success := dm.TryClose(out)
	o.lg.Info("dispatcher_orchestrator.go", 698, "try close dispatcher manager", zap.String("changefeed", string(req.Changefeed)),
		zap.Bool("success", success))
	if success {
		o.recordClosedMaintainerEpoch(req.Changefeed, dm.epoch, req.Removed)
		o.lastSeq[req.Changefeed] = dm.seq
		delete(o.dms, req.Changefeed)
	}
	out.SendTo(o.self, from, &core.MaintainerCloseResponse{Changefeed: req.Changefeed, Success: success, Epoch: req.Epoch})
}

// recordClosedMaintainerEpoch keeps the tombstone of a closed maintainer
// generation: the highest closed epoch. Epoch 0 carries no order and is
// kept only for a removed changefeed, so a compatibility-mode resume can
// still bootstrap. Follows dispatcher_orchestrator.go
// recordClosedMaintainerEpochLocked at b813e76f9.
func (o *Orchestrator) recordClosedMaintainerEpoch(id core.ChangefeedID, epoch uint64, removed bool) {
	if epoch == 0 && !removed {
		return
	}
	if closed, ok := o.closedMaintainerEpochs[id]; ok && closed >= epoch {
		return
	}
	o.closedMaintainerEpochs[id] = epoch
}

// OnTick advances every DM.
func (o *Orchestrator) OnTick(now int64, out *core.Effects) {
	o.now = now
	for _, id := range o.sortedIDs() {
		dm := o.dms[id]
		dm.OnTick(now, out)
		// The close is asynchronous: once every dispatcher is gone the DM
		// removes itself, even if no close request is re-sent (its
		// maintainer may be gone).
		if dm.closing && dm.TryClose(out) {
			o.closedMaintainerEpochs[id] = dm.epoch
			o.lastSeq[id] = dm.seq
			delete(o.dms, id)
		}
	}
}

// OnSinkResult delivers a sink write's outcome to its DM.
func (o *Orchestrator) OnSinkResult(now int64, r core.SinkResult, out *core.Effects) {
	o.now = now
	if dm := o.dms[r.Changefeed]; dm != nil && dm.sinkID == r.Sink {
		dm.onSinkResult(r, out)
	}
}

// LocalFence closes every DM's write path (session lost) and stops taking
// maintainer requests (DispatcherOrchestrator.LocalFence at b813e76f9).
func (o *Orchestrator) LocalFence() {
	if !o.fenced {
		o.fenced = true
		o.lg.Warn("dispatcher_orchestrator.go", 710, "dispatcher orchestrator local fence triggered")
	}
	for _, dm := range o.dms {
		dm.LocalFence()
	}
}

// DispatcherInfo is one dispatcher's abstract state.
type DispatcherInfo struct {
	Changefeed core.ChangefeedID
	ID         core.DispatcherID
	Span       spec.Span
	State      string
	Checkpoint uint64
	Trigger    bool
	// PendingDDLs: add-table DDLs the trigger reported NONE and awaits ACK for.
	PendingDDLs []uint64
}

// Dispatchers lists every dispatcher on the node.
func (o *Orchestrator) Dispatchers() []DispatcherInfo {
	var out []DispatcherInfo
	for _, id := range o.sortedIDs() {
		dm := o.dms[id]
		for _, did := range dm.sortedIDs() {
			d := dm.dispatchers[did]
			di := DispatcherInfo{Changefeed: id, ID: did, Span: d.span, State: d.state.String(), Checkpoint: d.checkpointTs, Trigger: d.isTrigger}
			for _, p := range d.pendingDDLs {
				di.PendingDDLs = append(di.PendingDDLs, p.ts)
			}
			out = append(out, di)
		}
	}
	return out
}

// DMInfo is one DM's owner and journal.
type DMInfo struct {
	Changefeed   core.ChangefeedID
	MaintainerID core.NodeID
	Epoch        uint64
	Journal      int
	// MergeJournal counts the journaled merges (mergeOperatorMap).
	MergeJournal int
	Err          string
}

// Managers lists the node's DMs.
func (o *Orchestrator) Managers() []DMInfo {
	var out []DMInfo
	for _, id := range o.sortedIDs() {
		dm := o.dms[id]
		info := DMInfo{Changefeed: id, MaintainerID: dm.maintainerID, Epoch: dm.epoch, Journal: len(dm.currentOperatorMap),
			MergeJournal: len(dm.mergeOperatorMap)}
		if dm.firstErr != nil {
			info.Err = dm.firstErr.Message
		}
		out = append(out, info)
	}
	return out
}

var _ = logging.CF
