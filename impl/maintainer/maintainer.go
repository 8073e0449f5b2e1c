package maintainer

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
	bootstrapResendMs  = 500
	closeResendMs      = 100
	checkpointCalcMs   = 100
	basicSchedulerMs   = 500
	invalidCheckpoint  = math.MaxUint64
	removalOnlyStartTs = 1
)

type bootstrapNode struct {
	answered bool
	resp     *core.MaintainerBootstrapResponse
	lastSent int64
}

// Maintainer is maintainer/maintainer.go: one changefeed's scheduler on
// one node.
type Maintainer struct {
	id    core.ChangefeedID
	self  core.NodeID
	epoch uint64
	// opSeq numbers this maintainer's dispatcher operators (OpSeq).
	opSeq uint64
	// mergeReleased: merges whose PostFinish released the occupy operators
	// but has not removed the sources yet (merge-occupy-finishes-early).
	mergeReleased []*MergeDispatcherOperator
	mgr           *Manager
	lg            *logging.Logger
	opts          *core.Options
	now           int64

	state core.ComponentState // Working | Stopped
	// initialized = BootstrapDone. A removal-only maintainer never sets it.
	initialized bool
	removalOnly bool
	isNew       bool
	// removing: a Remove was accepted; operators quiesce and self-healing
	// stops (#4828). cascadeRemoving: close every DM first.
	removing          bool
	cascadeRemoving   bool
	changefeedRemoved bool
	// removed: closed; the manager deletes it on its next tick.
	removed bool
	// A non-cascade remove (a move) closes the maintainer only once its
	// table trigger reported non-working: triggerRemoveSentAt is when the
	// trigger's Remove was last sent (0: never), triggerStopped that the
	// trigger reported Stopped or Removed.
	triggerRemoveSentAt int64
	triggerStopped      bool

	startCheckpoint uint64
	bootstrapper    map[core.NodeID]*bootstrapNode
	bsIDs           []core.NodeID // sorted cache of bootstrapper's keys
	// checkpointTsByCapture: node -> watermark with Seq (A.8 acceptance rule).
	checkpointTsByCapture map[core.NodeID]core.Watermark
	// pendingWatermark: heartbeats whose statuses were applied before their
	// watermark (catalogue entry operator-done-before-watermark).
	pendingWatermark map[core.NodeID]core.Watermark
	// runningErrors is drained by every GetMaintainerStatus.
	runningErrors map[core.NodeID]core.RunningError
	ddlSpanID     core.DispatcherID

	spans   *SpanController
	ops     *OperatorController
	barrier *Barrier

	// committedCheckpointTs only increases (#4548) and is what is reported.
	committedCheckpointTs uint64
	// watermark is the raw result of the last calculation.
	watermark uint64

	statusChanged  bool
	lastStatusSent int64

	closed        map[core.NodeID]bool
	lastCloseSend int64
	lastCalc      int64
	lastSchedule  int64
}

func newMaintainer(mgr *Manager, id core.ChangefeedID, checkpoint uint64, isNew bool, epoch uint64) *Maintainer {
	m := &Maintainer{id: id, self: mgr.self, epoch: epoch, mgr: mgr, lg: mgr.lg, opts: mgr.opts, now: mgr.now,
		state: core.ComponentWorking, isNew: isNew, startCheckpoint: checkpoint, committedCheckpointTs: checkpoint,
		watermark: checkpoint, bootstrapper: map[core.NodeID]*bootstrapNode{}, checkpointTsByCapture: map[core.NodeID]core.Watermark{},
		pendingWatermark: map[core.NodeID]core.Watermark{},
		runningErrors:    map[core.NodeID]core.RunningError{}, closed: map[core.NodeID]bool{}, statusChanged: true}
	m.spans = newSpanController(m)
	m.ops = newOperatorController(m)
	m.barrier = newBarrier(m)
	m.ddlSpanID = m.newDispatcherID()
	return m
}

// NewMaintainer creates a maintainer that bootstraps (EventInit is pushed
// by the manager).
func NewMaintainer(mgr *Manager, id core.ChangefeedID, checkpoint uint64, isNew bool, epoch uint64, out *core.Effects) *Maintainer {
	m := newMaintainer(mgr, id, checkpoint, isNew, epoch)
	m.lg.Event(out, spec.Event{Kind: spec.MaintainerCreated, Changefeed: string(id), Node: string(m.self), Epoch: epoch, Checkpoint: checkpoint},
		zap.String("ddlDispatcherID", string(m.ddlSpanID)), zap.Bool("newChangefeed", isNew))
	return m
}

// NewMaintainerForRemove creates the removal-only maintainer: checkpoint 1,
// Working, never bootstrapped, cascade removing.
func NewMaintainerForRemove(mgr *Manager, id core.ChangefeedID, epoch uint64, removed bool, out *core.Effects) *Maintainer {
	m := newMaintainer(mgr, id, removalOnlyStartTs, false, epoch)
	m.removalOnly = true
	m.lg.Event(out, spec.Event{Kind: spec.MaintainerCreated, Changefeed: string(id), Node: string(m.self), Epoch: epoch,
		Checkpoint: removalOnlyStartTs, RemovalOnly: true})
	return m
}

func (m *Maintainer) newDispatcherID() core.DispatcherID {
	lo, hi := m.mgr.rnd.Uint64()>>1, m.mgr.rnd.Uint64()>>1
	return core.DispatcherID(itoa(lo) + itoa(hi))
}

// GetMaintainerStatus builds the status and drains runningErrors.
func (m *Maintainer) GetMaintainerStatus() core.MaintainerStatus {
	s := core.MaintainerStatus{Changefeed: m.id, State: m.state, CheckpointTs: m.reportedCheckpoint(), BootstrapDone: m.initialized, Epoch: m.epoch,
		CascadeClosed: m.removed && m.cascadeRemoving}
	if len(m.runningErrors) > 0 {
		nodes := make([]string, 0, len(m.runningErrors))
		for n := range m.runningErrors {
			nodes = append(nodes, string(n))
		}
		sort.Strings(nodes)
		for _, n := range nodes {
			s.Err = append(s.Err, m.runningErrors[core.NodeID(n)])
		}
		m.runningErrors = map[core.NodeID]core.RunningError{}
	}
	return s
}

// reportedCheckpoint is the committed checkpoint (#4548), or the raw
// watermark with Legacy.RawWatermarkCheckpoint.
func (m *Maintainer) reportedCheckpoint() uint64 {
	if m.opts.Legacy.RawWatermarkCheckpoint {
		return m.watermark
	}
	return m.committedCheckpointTs
}

// --- EventInit: bootstrap ---

func (m *Maintainer) initialize(out *core.Effects) {
	for _, n := range m.mgr.aliveNodes() {
		m.bootstrapper[n] = &bootstrapNode{}
	}
	m.lg.Info("maintainer.go", 461, "changefeed bootstrap initial nodes", zap.String("selfNodeID", string(m.self)),
		logging.CF(m.id), zap.Int("nodeCount", len(m.bootstrapper)))
	m.sendBootstrapRequests(out)
}

func (m *Maintainer) sortedBootstrapper() []core.NodeID {
	if len(m.bsIDs) == len(m.bootstrapper) {
		same := true
		for _, n := range m.bsIDs {
			if m.bootstrapper[n] == nil {
				same = false
				break
			}
		}
		if same {
			return m.bsIDs
		}
	}
	out := make([]core.NodeID, 0, len(m.bootstrapper))
	for n := range m.bootstrapper {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	m.bsIDs = out
	return out
}

func (m *Maintainer) sendBootstrapRequests(out *core.Effects) {
	for _, n := range m.sortedBootstrapper() {
		b := m.bootstrapper[n]
		if b.answered || (b.lastSent != 0 && m.now-b.lastSent < bootstrapResendMs) {
			continue
		}
		b.lastSent = m.now
		req := &core.MaintainerBootstrapRequest{Changefeed: m.id, StartTs: m.startCheckpoint, Epoch: m.epoch}
		if n == m.self {
			req.TriggerID = m.ddlSpanID
			req.IsNew = m.isNew
		}
		m.lg.Debug("maintainer.go", 1323, "maintainer new bootstrap message to dispatcher orchestrator", logging.CF(m.id),
			zap.String("nodeID", string(n)), zap.Uint64("startTs", m.startCheckpoint))
		out.SendTo(m.self, n, req)
	}
}

// onBootstrapResponse collects responses; FinishBootstrap when all are in.
func (m *Maintainer) onBootstrapResponse(from core.NodeID, resp *core.MaintainerBootstrapResponse, out *core.Effects) {
	if resp.Epoch != m.epoch && resp.Epoch != 0 {
		m.lg.Warn("maintainer.go", 1095, "drop stale maintainer response", logging.CF(m.id), zap.String("responseType", "bootstrap"),
			zap.String("from", string(from)), zap.Uint64("responseMaintainerEpoch", resp.Epoch), zap.Uint64("currentMaintainerEpoch", m.epoch))
		return
	}
	b := m.bootstrapper[from]
	if b == nil || b.answered || m.removing || m.removalOnly {
		return
	}
	if resp.Err != nil {
		m.lg.Event(out, spec.Event{Kind: spec.MaintainerBootstrapFailed, Changefeed: string(m.id), Node: string(m.self), Err: resp.Err.Message})
		return
	}
	m.lg.Info("maintainer.go", 1026, "maintainer received bootstrap response", logging.CF(m.id), zap.String("sourceNodeID", string(from)))
	b.answered, b.resp = true, resp
	if m.initialized {
		// A node that joined after bootstrap: its DM is fresh.
		return
	}
	for _, bn := range m.bootstrapper {
		if !bn.answered {
			return
		}
	}
	m.FinishBootstrap(out)
}

// --- remove ---

func (m *Maintainer) onRemoveMaintainer(req *core.RemoveMaintainerRequest, out *core.Effects) {
	// isMaintainerEpochRequestAllowed (maintainer.go at b813e76f9): a
	// maintainer with an epoch obeys only its own epoch (not the unfenced 0);
	// one without (compatibility mode) obeys any.
	if m.epoch != 0 && req.Epoch != m.epoch {
		m.lg.Warn("maintainer.go", 543, "drop stale remove maintainer request", logging.CF(m.id),
			zap.Uint64("requestMaintainerEpoch", req.Epoch), zap.Uint64("currentMaintainerEpoch", m.epoch))
		return
	}
	if !req.Cascade && !m.initialized && !m.removalOnly {
		m.lg.Info("maintainer.go", 570, "ignore non-cascade remove request before bootstrap", logging.CF(m.id),
			zap.Uint64("requestMaintainerEpoch", req.Epoch))
		return
	}
	if m.removed {
		return
	}
	if req.Removed {
		m.changefeedRemoved = true
	}
	if req.Cascade {
		if !m.cascadeRemoving {
			m.removing, m.cascadeRemoving = true, true
			m.lg.Info("maintainer.go", 1249, "send maintainer close request to all dispatcher managers", logging.CF(m.id),
				zap.Uint64("checkpointTs", m.committedCheckpointTs), zap.Int("nodeCount", len(m.mgr.aliveNodes())))
			m.sendCloseRequests(out)
		}
		return
	}
	// Non-cascade (move): remove only the table trigger, and report Stopped
	// once the trigger is no longer working; the dispatchers stay for the
	// next maintainer. The coordinator re-sends the remove until then, and
	// each one checks again (tryCloseChangefeed: RemoveTasksByTableIDs of the
	// DDL span, closed = !ddlSpan.IsWorking(), maintainer.go at b813e76f9),
	// so the next maintainer's bootstrap never meets the old trigger. The
	// trigger's Remove is re-sent at the operators' pace.
	m.removing = true
	if m.removalOnly || m.triggerStopped {
		m.closeMaintainer(out)
		return
	}
	m.statusChanged = true
	if m.triggerRemoveSentAt == 0 || m.now-m.triggerRemoveSentAt >= minSendMessageInterval {
		m.triggerRemoveSentAt = m.now
		out.SendTo(m.self, m.self, &core.ScheduleDispatcherRequest{Changefeed: m.id, Action: core.ScheduleRemove, OpType: core.OpTypeRemove,
			Config: core.DispatcherConfig{ID: m.ddlSpanID, Span: spec.WholeTable(0)}, Epoch: m.epoch})
	}
}

func (m *Maintainer) sendCloseRequests(out *core.Effects) {
	m.lastCloseSend = m.now
	for _, n := range m.mgr.aliveNodes() {
		if !m.closed[n] {
			out.SendTo(m.self, n, &core.MaintainerCloseRequest{Changefeed: m.id, Removed: m.changefeedRemoved, Epoch: m.epoch})
		}
	}
}

func (m *Maintainer) onCloseResponse(from core.NodeID, resp *core.MaintainerCloseResponse, out *core.Effects) {
	if resp.Epoch != m.epoch && resp.Epoch != 0 {
		m.lg.Warn("maintainer.go", 1095, "drop stale maintainer response", logging.CF(m.id), zap.String("responseType", "close"),
			zap.String("from", string(from)), zap.Uint64("responseMaintainerEpoch", resp.Epoch), zap.Uint64("currentMaintainerEpoch", m.epoch))
		return
	}
	if !m.cascadeRemoving || !resp.Success {
		return
	}
	m.closed[from] = true
	m.maybeClosed(out)
}

func (m *Maintainer) maybeClosed(out *core.Effects) {
	if m.removed || !m.cascadeRemoving {
		return
	}
	for _, n := range m.mgr.aliveNodes() {
		if !m.closed[n] {
			return
		}
	}
	m.closeMaintainer(out)
}

func (m *Maintainer) closeMaintainer(out *core.Effects) {
	m.removed = true
	m.state = core.ComponentStopped
	m.statusChanged = true
	m.lg.Event(out, spec.Event{Kind: spec.MaintainerClosed, Changefeed: string(m.id), Node: string(m.self), Epoch: m.epoch,
		Checkpoint: m.committedCheckpointTs, Removed: m.changefeedRemoved})
}

// --- tick ---

// OnTick runs re-sends, the checkpoint calculation, the operator controller
// and the basic scheduler.
//
// The checkpoint calculation is HEAD's calCheckpointTs goroutine
// (maintainer/maintainer.go:264-267, 696-733 at b813e76f9): every 100 ms
// from the bootstrap until Close, so at HEAD it keeps running while the
// maintainer is removing and after it stopped, until the manager drops it
// (cleanupRemovedMaintainers, at the end of the manager's tick); quiesced
// operators keep bounding it. cdcspec stops it once the maintainer is
// removing; the catalogue entry checkpoint-advances-while-removing
// restores HEAD's rule, under which a move's origin can report a
// checkpoint past a CREATE TABLE it ignored while removing. The operator
// controller runs until Close; while removing only the table trigger's
// operators are allowed.
func (m *Maintainer) OnTick(now int64, out *core.Effects) {
	m.now = now
	running := !m.removed && !m.removing && m.initialized
	switch {
	case m.removed:
	case m.cascadeRemoving:
		if now-m.lastCloseSend >= closeResendMs {
			m.sendCloseRequests(out)
		}
		m.ops.poll(now, out)
	case m.removing:
		m.ops.poll(now, out)
	case !m.initialized:
		m.sendBootstrapRequests(out)
	default:
		// Nodes that joined after bootstrap get a bootstrap request too.
		m.sendBootstrapRequests(out)
		m.ops.poll(now, out)
	}
	// The calculation runs after the poll: of the goroutines' orders this
	// is the one where it sees operators the poll just finalised, and, with
	// operator-done-before-watermark, before their heartbeats' watermarks.
	calc := m.initialized && (running || m.opts.Bugs.Has(spec.BugCheckpointAdvancesWhileRemoving))
	if calc && now-m.lastCalc >= checkpointCalcMs {
		m.lastCalc = now
		m.calculateNewCheckpointTs()
	}
	if !running {
		return
	}
	for _, n := range core.SortedKeys(m.pendingWatermark) {
		m.applyPendingWatermark(n)
	}
	if now-m.lastSchedule >= basicSchedulerMs {
		m.lastSchedule = now
		m.basicSchedule(out)
	}
	m.barrierResend(out)
}

// calculateNewCheckpointTs is A.8: min over scheduling bounds and the
// watermarks of the own node and every node with tasks; a missing watermark
// skips the round; MaxUint64 is never committed (#4709).
func (m *Maintainer) calculateNewCheckpointTs() {
	minTs := uint64(invalidCheckpoint)
	for _, id := range m.ops.sortedIDs() {
		op := m.ops.ops[id].op
		if !op.BlockTsForward() {
			continue
		}
		if s := m.spans.GetTaskByID(id); s != nil && s.checkpointTs < minTs {
			minTs = s.checkpointTs
		}
	}
	minTs = m.spans.GetMinCheckpointTsForNonReplicatingSpans(minTs)
	withTasks := map[core.NodeID]bool{m.self: true}
	for _, s := range m.spans.spans {
		if s.nodeID != "" {
			withTasks[s.nodeID] = true
		}
	}
	for _, n := range m.sortedBootstrapper() {
		if !withTasks[n] {
			continue
		}
		wm, ok := m.checkpointTsByCapture[n]
		if !ok {
			m.lg.Debug("maintainer.go", 775, "checkpointTs can not be advanced, since missing capture heartbeat", logging.CF(m.id),
				zap.String("node", string(n)))
			return
		}
		if wm.CheckpointTs < minTs {
			minTs = wm.CheckpointTs
		}
	}
	if minTs == invalidCheckpoint {
		return
	}
	m.watermark = minTs
	if minTs > m.committedCheckpointTs {
		m.committedCheckpointTs = minTs
	}
}

// basicSchedule adds absent spans on the node with the fewest spans.
func (m *Maintainer) basicSchedule(out *core.Effects) {
	var nodes []core.NodeID
	for _, n := range m.sortedBootstrapper() {
		if m.bootstrapper[n].answered {
			nodes = append(nodes, n)
		}
	}
	if len(nodes) == 0 {
		return
	}
	count := map[core.NodeID]int{}
	for _, s := range m.spans.spans {
		if s.nodeID != "" && s.Span.Table != 0 {
			count[s.nodeID]++
		}
	}
	added := 0
	for _, id := range m.spans.sortedIDs() {
		s := m.spans.spans[id]
		if s.state != SpanAbsent || m.ops.GetOperator(id) != nil || id == m.ddlSpanID {
			continue
		}
		dest := nodes[0]
		for _, n := range nodes[1:] {
			if count[n] < count[dest] {
				dest = n
			}
		}
		count[dest]++
		m.ops.AddOperator(&AddDispatcherOperator{m: m, span: s, dest: dest, opType: core.OpTypeAdd}, out)
		if added++; added >= m.mgr.addTableBatchSize() {
			return
		}
	}
	// A ghost (merge-occupy-finishes-early) is in the absent set but not in
	// the span controller: the add fails ("span not found").
	for _, id := range core.SortedKeys(m.spans.ghosts) {
		m.ops.AddOperator(&AddDispatcherOperator{m: m, span: m.spans.ghosts[id], dest: nodes[0], opType: core.OpTypeAdd}, out)
	}
}

// createMessage builds a Create; startTs is clamped to the committed
// checkpoint (#4548) unless Legacy.RawWatermarkCheckpoint.
func (m *Maintainer) createMessage(s *SpanReplication, t core.OperatorType) *core.ScheduleDispatcherRequest {
	// NewAddDispatcherMessage (maintainer/replica/replication_span.go:263-
	// 345 at b813e76f9): the span's checkpoint; while its dispatcher waits
	// at (or writes) a DDL, blockTs-1 so that the DDL is replayed, skipping
	// the DML at blockTs; then at least the committed checkpoint, which also
	// ends a stale DDL barrier's replay. HEAD starts a dispatcher waiting at
	// a syncpoint at the syncpoint's ts; impl does not (it starts below it,
	// at the forwarded checkpoint blockTs-1, and waits at the syncpoint
	// again): a dispatcher started at the syncpoint's ts never blocks at it
	// and writes rows above it while it is unwritten, which impl/sim's
	// ddl-ordered-with-rows monitor reports (TestWriteBlockEventHook seed
	// 15 with HEAD's rule).
	start := s.checkpointTs
	skipDML, ddlBarrier := false, false
	if b := s.blockState; b != nil && !b.IsSyncPoint && (b.Stage == core.StageWaiting || b.Stage == core.StageWriting) && b.BlockTs > 0 {
		ddlBarrier = true
		start = max(start, b.BlockTs-1)
		skipDML = start+1 == b.BlockTs
	}
	if !m.opts.Legacy.RawWatermarkCheckpoint && start < m.committedCheckpointTs {
		start = m.committedCheckpointTs
		if ddlBarrier {
			skipDML = false
		}
	}
	return &core.ScheduleDispatcherRequest{Changefeed: m.id, Action: core.ScheduleCreate, OpType: t, Epoch: m.epoch, OpSeq: s.opSeq,
		Config: core.DispatcherConfig{ID: s.ID, Span: s.Span, StartTs: start, SkipDMLAsStartTs: skipDML}}
}

func (m *Maintainer) removeMessage(s *SpanReplication, t core.OperatorType) *core.ScheduleDispatcherRequest {
	return &core.ScheduleDispatcherRequest{Changefeed: m.id, Action: core.ScheduleRemove, OpType: t, Epoch: m.epoch, OpSeq: s.opSeq,
		Config: core.DispatcherConfig{ID: s.ID, Span: s.Span}}
}

// --- node changes ---

func (m *Maintainer) onNodesChanged(added, removed []core.NodeID, out *core.Effects) {
	if m.removed {
		return
	}
	if m.cascadeRemoving {
		// Node changes are ignored while removing, except that a node that is
		// gone needs no close.
		m.maybeClosed(out)
		return
	}
	if m.removing {
		return
	}
	m.lg.Info("maintainer.go", 621, "maintainer node changed", logging.CF(m.id), zap.Int("addedCount", len(added)),
		zap.Int("removedCount", len(removed)))
	for _, n := range added {
		if _, ok := m.bootstrapper[n]; !ok {
			m.bootstrapper[n] = &bootstrapNode{}
		}
	}
	for _, n := range removed {
		delete(m.bootstrapper, n)
		delete(m.checkpointTsByCapture, n)
		delete(m.pendingWatermark, n)
		if !m.initialized || m.removing {
			// A quiesced operator controller ignores node removals
			// (operator_controller.go OnNodeRemoved at b813e76f9).
			continue
		}
		for _, id := range m.spans.sortedIDs() {
			s := m.spans.spans[id]
			if s.nodeID == n && m.ops.GetOperator(id) == nil && id != m.ddlSpanID {
				m.spans.MarkSpanAbsent(s)
			}
		}
		m.ops.OnNodeRemoved(n, out)
	}
	if !m.initialized {
		m.sendBootstrapRequests(out)
		done := len(m.bootstrapper) > 0
		for _, b := range m.bootstrapper {
			done = done && b.answered
		}
		if done {
			m.FinishBootstrap(out)
		}
		return
	}
	m.sendBootstrapRequests(out)
}
