package maintainer

import (
	"sort"

	"go.uber.org/zap"

	"cdcspec/impl/core"
	"cdcspec/impl/logging"
	"cdcspec/spec"
)

// onHeartbeatRequest handles a DM heartbeat: watermark (Seq rule) first,
// then the error and the statuses, as maintainer.go onHeartbeatRequest at
// b813e76f9 (#2864: a calculation that sees an operator finished also sees
// the watermark of the heartbeat that finished it). Ignored before
// bootstrap (errors included: a blind spot of TiCDC's error path, D.S4).
// The catalogue entry operator-done-before-watermark restores the order
// before #2864: the statuses first, the watermark after the next
// checkpoint calculation (which ran on its own goroutine in TiCDC).
func (m *Maintainer) onHeartbeatRequest(from core.NodeID, req *core.HeartBeatRequest, out *core.Effects) {
	if !m.initialized || m.removed {
		return
	}
	m.applyPendingWatermark(from)
	statusesFirst := m.opts.Bugs.Has(spec.BugOperatorDoneBeforeWatermark) && len(req.Statuses) > 0
	if req.Watermark != nil {
		if statusesFirst {
			m.pendingWatermark[from] = *req.Watermark
		} else {
			m.applyWatermark(from, *req.Watermark)
		}
	}
	if req.Err != nil {
		m.lg.Event(out, spec.Event{Kind: spec.DispatcherErrorReported, Changefeed: string(m.id), Node: string(m.self),
			Origin: string(from), Err: req.Err.Message})
		m.runningErrors[from] = *req.Err
		m.statusChanged = true
	}
	for i := range req.Statuses {
		m.handleStatus(from, &req.Statuses[i], out)
	}
}

// applyWatermark is the Seq rule of checkpointTsByCapture (#2945): a newer
// seq wins even with a lower checkpoint; the same seq only with a higher
// one. The catalogue entry watermark-seq-rejects-lower-checkpoint restores
// the rule before #2945 (a lower checkpoint is rejected whatever the seq).
func (m *Maintainer) applyWatermark(from core.NodeID, w core.Watermark) {
	old, ok := m.checkpointTsByCapture[from]
	accept := !ok || w.Seq > old.Seq || (w.Seq == old.Seq && w.CheckpointTs > old.CheckpointTs)
	if m.opts.Bugs.Has(spec.BugWatermarkSeqRejectsLowerCheckpoint) {
		accept = !ok || (w.Seq >= old.Seq && w.CheckpointTs >= old.CheckpointTs)
	}
	if accept {
		m.checkpointTsByCapture[from] = w
	}
}

// applyPendingWatermark applies a statuses-first heartbeat's watermark
// (operator-done-before-watermark only). It waits while an operator that a
// status finished is not yet finalised: the simulation takes the
// interleaving where the operator controller's poll finalises it and a
// checkpoint calculation runs before the watermark lands (three
// goroutines in TiCDC).
func (m *Maintainer) applyPendingWatermark(from core.NodeID) {
	if m.ops.finishedPending() {
		return
	}
	if w, ok := m.pendingWatermark[from]; ok {
		delete(m.pendingWatermark, from)
		m.applyWatermark(from, w)
	}
}

// handleStatus is Controller.handleStatus (maintainer_controller.go): (1)
// the operator first; (2) unknown working dispatcher -> remove it; (3) node
// check; (4) update the span, and the #3691 fallback for a terminal status
// without operator.
func (m *Maintainer) handleStatus(from core.NodeID, st *core.TableSpanStatus, out *core.Effects) {
	if st.ID == m.ddlSpanID {
		// The DDL span's status is stored as any span's (UpdateStatus,
		// replication_span.go:183-185): one whose checkpoint is lower than
		// the stored one is dropped, state included, so it cannot make the
		// trigger non-working for tryCloseChangefeed.
		if st.CheckpointTs < m.barrier.triggerCheckpointTs {
			return
		}
		m.barrier.triggerCheckpointTs = st.CheckpointTs
		// Only a move's remove waits for the trigger (onRemoveMaintainer).
		if m.removing && !m.cascadeRemoving && (st.State == core.ComponentStopped || st.State == core.ComponentRemoved) {
			m.triggerStopped = true
		}
		return
	}
	hadOp := m.ops.UpdateOperatorStatus(from, st, out)
	span := m.spans.GetTaskByID(st.ID)
	if span == nil {
		if st.State == core.ComponentWorking && !hadOp && !m.removing {
			m.lg.Event(out, spec.Event{Kind: spec.SpanNotFound, Changefeed: string(m.id), Node: string(from), Dispatcher: string(st.ID)},
				zap.String("status", st.State.String()))
			out.SendTo(m.self, from, &core.ScheduleDispatcherRequest{Changefeed: m.id, Action: core.ScheduleRemove, OpType: core.OpTypeRemove,
				Epoch: m.epoch, Config: core.DispatcherConfig{ID: st.ID}})
		}
		return
	}
	if span.nodeID != from {
		m.lg.Warn("maintainer_controller.go", 255, "nodeID not match", zap.String("changefeed", string(m.id)),
			zap.String("from", string(from)), zap.String("node", string(span.nodeID)))
		if st.State == core.ComponentWorking && !hadOp && m.ops.GetOperator(st.ID) == nil && !m.removing && !m.opts.Delivery.TiCDC() {
			// Active only under a delivery stronger than TiCDC's message
			// center (spec.DeliveryPerTypeStreams or DeliveryReordering).
			// There a delayed Create of the current generation can land after
			// the span moved (a move keeps the DispatcherID) and start a
			// second dispatcher of the span on the old node (found by the soak
			// test with long delays); it is removed here. HEAD only skips its
			// statuses (Controller.HandleStatus, "nodeID not match"), and its
			// message center cannot make that delivery: the Create and the
			// move's later Remove leave the maintainer's node on one command
			// stream (pkg/messaging remoteMessageTarget.sendCommand, FIFO, no
			// duplicates) and are handled in order on the changefeed's path
			// of the heartbeat collector's dynamic stream, at b813e76f9.
			m.lg.Warn("maintainer_controller.go", 255, "working dispatcher on an unexpected node, remove it",
				zap.String("changefeed", m.id.Name()), zap.String("from", string(from)), zap.String("node", string(span.nodeID)),
				zap.String("dispatcherID", string(st.ID)))
			out.SendTo(m.self, from, &core.ScheduleDispatcherRequest{Changefeed: m.id, Action: core.ScheduleRemove, OpType: core.OpTypeRemove,
				Epoch: m.epoch, Config: core.DispatcherConfig{ID: st.ID, Span: span.Span}})
		}
		return
	}
	// UpdateStatus (replication_span.go:183-185): a status whose checkpoint
	// is lower than the stored one is dropped whole, its state included;
	// the fallback below still reads the status as reported.
	m.spans.UpdateStatus(span, st)
	if (st.State == core.ComponentStopped || st.State == core.ComponentRemoved) && !hadOp && m.ops.GetOperator(st.ID) == nil &&
		!m.removing && !m.opts.Bugs.Has(spec.BugInflightOperatorsLostOnFailover) {
		m.lg.Warn("maintainer_controller.go", 295, "dispatcher becomes non-working without operator, mark span absent for rescheduling",
			zap.String("changefeed", m.id.Name()), zap.String("from", string(from)), zap.String("dispatcherID", string(st.ID)),
			zap.String("status", st.State.String()))
		if m.releasedSource(span) {
			// merge-occupy-finishes-early: the simulation takes the
			// interleaving where this MarkSpanAbsent lands after the merge's
			// PostFinish removed the span (operator_merge.go).
			m.spans.pendingAbsent[span.ID] = true
			return
		}
		m.spans.MarkSpanAbsent(span)
	}
}

// --- barrier ---

// onBlockStatusRequest is the barrier's HandleStatus (barrier.go:82-191
// at b813e76f9): the table trigger's NONE status for an add-table DDL
// schedules the new tables at once (absent spans with startTs =
// commitTs); WAITING and DONE statuses go to the barrier. The sender gets
// one HeartBeatResponse, even an empty one: the statuses of spans not
// replicating yet (IgnoredBlockStatus), an ACK for every status taken,
// then the actions for its dispatchers; another node's actions go in a
// response of their own. Ignored before bootstrap (the dispatchers
// re-send) and while removing.
func (m *Maintainer) onBlockStatusRequest(from core.NodeID, req *core.BlockStatusRequest, out *core.Effects) {
	m.lg.Debug("barrier.go", 82, "handle block status", logging.CF(m.id), zap.String("from", string(from)),
		zap.Int("statusCount", len(req.Statuses)), zap.Bool("bootstrapped", m.initialized), zap.Bool("removing", m.removing))
	if !m.initialized || m.removing || m.removed {
		return
	}
	var acks []core.BlockStatus
	m.barrier.reply = map[core.NodeID][]core.DispatcherAction{}
	for i := range req.Statuses {
		bs := &req.Statuses[i]
		ack := core.BlockStatus{ID: bs.ID, BlockTs: bs.BlockTs, Stage: bs.Stage, IsSyncPoint: bs.IsSyncPoint}
		if bs.Stage == core.StageWaiting || bs.Stage == core.StageWriting || bs.Stage == core.StageDone {
			if m.barrier.HandleStatus(from, bs, out) {
				acks = append(acks, ack)
			}
			continue
		}
		if bs.Stage != core.StageNone || !m.barrier.admits(from, bs) {
			continue
		}
		// A non-blocking DDL: drop, then add (scheduleBlockEvent,
		// barrier_event.go:310-345), in commit-ts order with the blocking
		// DDLs that change tables (the pending queue, barrier.go:515-541):
		// while an earlier one waits, the status is neither taken nor
		// ACKed, and its dispatcher re-sends it. impl's dispatchers send
		// one only from the trigger, for CREATE TABLE.
		if !m.barrier.scheduleNonBlocking(bs, out) {
			continue
		}
		acks = append(acks, ack)
	}
	acts, ignored := m.barrier.reply, m.barrier.ignored
	m.barrier.reply, m.barrier.ignored = nil, nil
	if len(ignored)+len(acks)+len(acts[from]) == 0 {
		m.lg.Warn("barrier.go", 164, "no dispatcher status to send", zap.String("from", string(from)), zap.String("changefeed", string(m.id)))
	}
	out.SendTo(m.self, from, &core.HeartBeatResponse{Changefeed: m.id, Ignored: ignored, ACKs: acks, Actions: acts[from], Epoch: m.epoch})
	for _, n := range core.SortedKeys(acts) {
		if n != from && len(acts[n]) > 0 {
			out.SendTo(m.self, n, &core.HeartBeatResponse{Changefeed: m.id, Actions: acts[n], Epoch: m.epoch})
		}
	}
}

// barrierResend re-sends the barrier's actions (the NONE path needs
// nothing: the trigger re-sends its status until the ACK arrives).
func (m *Maintainer) barrierResend(out *core.Effects) { m.barrier.Resend(out) }

// --- API-driven scheduling (move/split table) ---

// MoveTable moves every span of table t to dest.
func (m *Maintainer) MoveTable(t int64, dest core.NodeID, out *core.Effects) int {
	if !m.initialized || m.removing {
		return 0
	}
	if b, ok := m.bootstrapper[dest]; !ok || !b.answered {
		return 0
	}
	n := 0
	for _, s := range m.spans.tableSpans(t) {
		if s.state != SpanReplicating || s.nodeID == dest || m.ops.GetOperator(s.ID) != nil {
			continue
		}
		if m.ops.AddOperator(&MoveDispatcherOperator{m: m, span: s, origin: s.nodeID, dest: dest}, out) {
			n++
		}
	}
	return n
}

// SplitTable splits every replicating span of table t in two, as the split
// scheduler does (balance_splits.go): with target nodes, the span's own node
// first (the split checkers keep a part on it), then the other bootstrapped
// nodes in order, one per span it asks the splitter for. The splitter
// returns two spans, so the targets are aligned with the result when two
// nodes run, and not aligned otherwise (#4077). The first part goes to the
// first target, as the model's split keeps the left half on the origin
// (model/split.go), which the per-step conformance relies on.
func (m *Maintainer) SplitTable(t int64, out *core.Effects) int {
	if !m.initialized || m.removing {
		return 0
	}
	n := 0
	for _, s := range m.spans.tableSpans(t) {
		if s.state != SpanReplicating || m.ops.GetOperator(s.ID) != nil {
			continue
		}
		var targets []core.NodeID
		if b := m.bootstrapper[s.nodeID]; b != nil && b.answered {
			targets = append(targets, s.nodeID)
		}
		for _, id := range m.sortedBootstrapper() {
			if id != s.nodeID && m.bootstrapper[id].answered {
				targets = append(targets, id)
			}
		}
		mid, ok := midKey(s.Span.Start, s.Span.End)
		if !ok {
			continue
		}
		parts := []spec.Span{{Table: t, Start: s.Span.Start, End: mid}, {Table: t, Start: mid, End: s.Span.End}}
		if m.ops.AddOperator(&SplitDispatcherOperator{m: m, span: s, origin: s.nodeID, parts: parts, targets: targets}, out) {
			n++
		}
	}
	return n
}

// SplitSpan splits the replicating span id into parts with target nodes
// targets: the inputs HEAD's NewSplitDispatcherOperator takes from its
// caller, the split-balance scheduler or a unit test, which need not cover
// the span (TestSplitOperator_* split table 100's whole span into [a,m) and
// [m,z); maintainer/operator/operator_split.go:73-99 at b813e76f9). Without
// postFinish, PostFinish adds no operator for the parts (HEAD's nil
// callback: the parts stay scheduling on their targets, or absent); with
// it, each part in scheduling gets an add operator to its target, as the
// split-balance scheduler's callback does. Each part must lie inside the
// span, the parts in key order without overlap. It returns the number of
// operators added (0 or 1); a span that is not replicating, has an
// operator, or parts that break these rules add none.
func (m *Maintainer) SplitSpan(id core.DispatcherID, parts []spec.Span, targets []core.NodeID, postFinish bool, out *core.Effects) int {
	if !m.initialized || m.removing {
		return 0
	}
	s := m.spans.GetTaskByID(id)
	if s == nil || s.state != SpanReplicating || m.ops.GetOperator(id) != nil || len(parts) == 0 {
		return 0
	}
	prevEnd := s.Span.Start
	for i, p := range parts {
		inside := p.Table == s.Span.Table && p.Start >= prevEnd &&
			(s.Span.End == "" || (p.End != "" && p.End <= s.Span.End)) && (p.End == "" || p.Start < p.End)
		if !inside || (p.End == "" && i != len(parts)-1) {
			return 0
		}
		prevEnd = p.End
	}
	op := &SplitDispatcherOperator{m: m, span: s, origin: s.nodeID, parts: parts, targets: targets, noPostFinish: !postFinish}
	if !m.ops.AddOperator(op, out) {
		return 0
	}
	return 1
}

// RemoveTableSpan removes one span's dispatcher (the span stays tracked and
// becomes absent afterwards, so it is recreated: used to exercise removes).
func (m *Maintainer) removeSpan(s *SpanReplication, t core.OperatorType, postFinish func(), out *core.Effects) bool {
	return m.ops.AddOperator(&RemoveDispatcherOperator{m: m, span: s, node: s.nodeID, opType: t, postFinish: postFinish}, out)
}

// RemoveTableDispatchers removes the dispatchers of table t and lets the
// scheduler recreate them (remove + re-add, as after a failed DDL).
func (m *Maintainer) RemoveTableDispatchers(t int64, out *core.Effects) int {
	if !m.initialized || m.removing {
		return 0
	}
	n := 0
	for _, s := range m.spans.tableSpans(t) {
		s := s
		if s.state != SpanReplicating || m.ops.GetOperator(s.ID) != nil {
			continue
		}
		if m.removeSpan(s, core.OpTypeRemove, func() {
			if m.spans.GetTaskByID(s.ID) == s {
				m.spans.MarkSpanAbsent(s)
			}
		}, out) {
			n++
		}
	}
	return n
}

// --- observability ---

// SpanInfo is one span of the span controller.
type SpanInfo struct {
	ID         core.DispatcherID
	Span       spec.Span
	SchemaID   int64
	Node       core.NodeID
	State      string
	Checkpoint uint64
	Operator   string
	// OpFinished: the operator IsFinished (its Check or OnNodeRemove
	// finished it) and waits for the operator controller's next poll.
	OpFinished bool
	// Status is the state of the last stored TableSpanStatus (HEAD's
	// SpanReplication.status, which IsWorking reads).
	Status core.ComponentState
}

// Spans lists the span controller sorted by span (table, start).
func (m *Maintainer) Spans() []SpanInfo {
	var out []SpanInfo
	for _, id := range m.spans.sortedIDs() {
		s := m.spans.spans[id]
		si := SpanInfo{ID: s.ID, Span: s.Span, SchemaID: s.schemaID, Node: s.nodeID, State: s.state.String(), Checkpoint: s.checkpointTs, Status: s.status}
		if op := m.ops.GetOperator(id); op != nil {
			si.Operator, si.OpFinished = op.String(), op.IsFinished()
		}
		out = append(out, si)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Span, out[j].Span
		if a.Table != b.Table {
			return a.Table < b.Table
		}
		return a.Start < b.Start
	})
	return out
}
