package maintainer

import (
	"slices"
	"sort"

	"go.uber.org/zap"

	"cdcspec/impl/core"
	"cdcspec/impl/logging"
	"cdcspec/impl/maintainer/rangechecker"
	"cdcspec/spec"
)

// The blocking DDL barrier (reference A.7; maintainer/barrier.go,
// barrier_event.go and range_checker at b813e76f9), the same rules as the
// model's (model/barrier.go).
//
// A block event is keyed by (commitTs, isSyncPoint). Its range checker
// (rangechecker.RangeChecker, barrier_event.go:150-164, 218-246) is built
// for the tables that must report: a normal DDL's blocked tables (0 is the
// table trigger) when the event is created; for DB and All from the span
// controller's tables when the trigger reports. Every report taken adds
// the reporter's key range (the trigger's is table 0's); the checker is
// covered when the reports cover each table's key range (a span checker)
// or, while no table is split, when each table reported (a count
// checker). Only reports from replicating spans and the current trigger
// count: before each coverage check the reports of dispatchers that
// vanished or stopped replicating are dropped and the checker rebuilt
// from the others (the double check, barrier_event.go:424-500). Once
// covered, a writer is selected: the trigger for DB/All and whenever the
// trigger reported, else the last reporter; the checker is Reset, to count
// the DONEs (barrier_event.go:284-288). Write is re-sent to the writer
// until it reports DONE; then the DDL's table changes are scheduled (drop:
// remove the table's spans; truncate: also add the new table at commitTs)
// and Pass is re-sent
// to every influenced dispatcher that has not reported DONE, the writer
// included (#3970; writer-not-passed-after-move skips it), until all did;
// the event is then deleted. Reports of dispatchers that vanished or
// stopped replicating are dropped and the coverage re-checked. A
// bootstrap restores the events from the block states in the responses
// (WAITING, WRITING, DONE); an event nobody completes is advanced once a
// related span's checkpoint passed it (checkBlockedDispatchers). DDLs that
// change tables are scheduled in commit-ts order (the pending schedule
// queue); a DB/All Pass is re-sent only after 1 s without statuses.
//
// Where it differs from HEAD: a span's status from a node other than the
// span's is dropped (HEAD does not look at the sender); stale reports are
// dropped before every coverage check (HEAD: only once the checker is
// covered; the verdict is the same, dropping can only uncover); HEAD
// chooses the checker kind once per changefeed (enable-table-across-nodes,
// barrier.go:58 via maintainer_controller_bootstrap.go:397), impl also
// checks key ranges once any table is split, since impl's split_table does
// not require that flag (HEAD's API does, api/v2/changefeed.go:1344); an
// event advanced by checkBlockedDispatchers counts the DONEs afresh (HEAD
// keeps the WAITING reports, barrier_event.go:579-600); a Pass lists the
// dispatchers that have not reported DONE (HEAD's DB/All Pass is one
// influence-typed status per node); a DB-influence event that names no
// schema (impl's dispatchers name none) covers every table.
//
// One BlockStatusRequest gets one HeartBeatResponse to its sender: an ACK
// for every status the barrier took (a WAITING or DONE of the trigger or of
// a replicating span; a DONE only while its event exists), then the
// actions for the sender's dispatchers; actions for dispatchers on other
// nodes go in a response of their own (HandleStatus, barrier.go:82-191 at
// b813e76f9). The writer's DONE does not send Pass: it makes the event due
// at the next Resend (lastResendTime = now - 20 s, barrier.go:409-412).
// A dispatcher still re-sends its WAITING after the ACK (impl's dispatcher
// cancels a resend only for a NONE status; HEAD's cancels it on the ACK).
//
// Where it differs from the model: a WAITING after selection
// un-reports its dispatcher (a moved incarnation owes a DONE of its own,
// which the model gets from clearing non-replicating reports only); a
// DB/All range checker forgets tables whose spans are all gone (an earlier
// drop; the model commits one blocking DDL per configuration).

// barrierResendMs is the period of Barrier.Resend.
const barrierResendMs = 1000

type eventKey struct {
	commitTs    uint64
	isSyncPoint bool
}

// BarrierEvent is maintainer/barrier_event.go.
type BarrierEvent struct {
	key       eventKey
	influence string
	blocked   []int64 // a normal event's blocked tables (0: the trigger)
	dropped   []int64
	added     []int64
	query     string
	// schemaID: the schema a DB event blocks (0: every table);
	// dropSchemaID: the schema a DROP DATABASE removes (0: none);
	// schemaChanges: the tables moved to another schema.
	schemaID      int64
	dropSchemaID  int64
	schemaChanges []core.SchemaIDChange

	// rangeChecker: the coverage of the reports; nil until built (DB/All:
	// when the trigger's report is taken). rangeTables are the tables it
	// was built for, in order (impl reads them where HEAD reads
	// blockedDispatchers or the span controller's schema); spanChecker:
	// its kind is the key-range one (else the table count).
	rangeChecker rangechecker.RangeChecker
	rangeTables  []int64
	spanChecker  bool
	// reportedDispatchers: WAITING before selection, DONE after; each
	// one's key range is in rangeChecker.
	reportedDispatchers map[core.DispatcherID]bool
	// doneTables: tables of rangeTables marked done in rangeChecker
	// (markTableDone: a blocked table with no span left, or a DB/All table
	// dropped after the checker was built). They stay done across a Reset
	// or a rebuild (HEAD loses the mark there and sendPassAction sets it
	// again on the next resend; impl's sendPass skips done tables).
	doneTables                    map[int64]bool
	selected                      bool
	writerDispatcher              core.DispatcherID
	writerDispatcherAdvanced      bool
	tableTriggerDispatcherRelated bool
	lastResend                    int64
	lastWarningLog                int64
	// passActionSent: Resend sent Pass at least once since the selection;
	// lastStatusReceived: when the last status was taken after the
	// selection (the fan-out quiet interval, barrier_event.go:36-40).
	passActionSent     bool
	lastStatusReceived int64
	// scheduledAtSelection: new-table-scheduled-at-selection scheduled the
	// table changes when the writer was selected; the DONE does not again.
	scheduledAtSelection bool
}

func (e *BarrierEvent) allInfluence() bool { return e.influence != spec.InfluenceNormal }

// Barrier is maintainer/barrier.go.
type Barrier struct {
	m             *Maintainer
	blockedEvents map[eventKey]*BarrierEvent
	// reply collects the actions of the BlockStatusRequest being handled
	// (nil outside one): they go out with its ACKs (onBlockStatusRequest).
	reply map[core.NodeID][]core.DispatcherAction
	// ignored collects the request's statuses of spans not replicating yet.
	ignored []core.BlockStatus
	// pending is pendingScheduleEventMap: the events that change tables
	// whose Write was issued (or whose non-blocking status came) and that
	// are not scheduled yet, by key.
	pending map[eventKey]*BarrierEvent
	// triggerCheckpointTs is the table trigger's checkpoint as its status
	// carries it (the DDL span's status).
	triggerCheckpointTs uint64
}

func newBarrier(m *Maintainer) *Barrier {
	return &Barrier{m: m, blockedEvents: map[eventKey]*BarrierEvent{}, pending: map[eventKey]*BarrierEvent{}}
}

func (b *Barrier) sortedKeys() []eventKey {
	ks := make([]eventKey, 0, len(b.blockedEvents))
	for k := range b.blockedEvents {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if ks[i].commitTs != ks[j].commitTs {
			return ks[i].commitTs < ks[j].commitTs
		}
		return !ks[i].isSyncPoint && ks[j].isSyncPoint
	})
	return ks
}

// admits is HandleStatus's filter (barrier.go:91-120): the trigger's
// statuses, and those of a replicating span on the sending node (HEAD does
// not check the sender; impl drops a span's status from another node). A
// status of a span that is not replicating yet is answered with an
// IgnoredBlockStatus (the collected reply's ignored list), so that the
// dispatcher keeps it and retries (HEAD: a fast retry; impl's dispatcher
// re-sends on its usual period).
func (b *Barrier) admits(from core.NodeID, bs *core.BlockStatus) bool {
	m := b.m
	if bs.ID == m.ddlSpanID {
		return true
	}
	s := m.spans.GetTaskByID(bs.ID)
	if s == nil || s.nodeID != from {
		m.lg.Info("barrier.go", 94, "Get block status from unexisted dispatcher, ignore it", logging.CF(m.id),
			zap.String("dispatcher", string(bs.ID)), zap.Uint64("blockTs", bs.BlockTs), zap.String("stage", bs.Stage.String()))
		return false
	}
	if s.state != SpanReplicating {
		m.lg.Info("barrier.go", 102, "Get block status from unreplicating dispatcher, ignore it", logging.CF(m.id),
			zap.String("dispatcher", string(bs.ID)), zap.Uint64("blockTs", bs.BlockTs), zap.String("stage", bs.Stage.String()))
		if b.reply != nil {
			b.ignored = append(b.ignored, core.BlockStatus{ID: bs.ID, BlockTs: bs.BlockTs, IsSyncPoint: bs.IsSyncPoint})
		}
		return false
	}
	return true
}

// HandleStatus handles one WAITING or DONE block status from node from and
// reports whether it is ACKed (handleOneStatus's needACK with an event).
func (b *Barrier) HandleStatus(from core.NodeID, bs *core.BlockStatus, out *core.Effects) bool {
	m := b.m
	if !b.admits(from, bs) {
		return false
	}
	table := int64(0)
	if bs.ID != m.ddlSpanID {
		s := m.spans.GetTaskByID(bs.ID)
		table = s.Span.Table
		if bs.BlockTs-1 > s.checkpointTs {
			s.checkpointTs = bs.BlockTs - 1
		}
		st := *bs
		s.blockState = &st
	}
	if bs.Stage == core.StageDone {
		return b.handleEventDone(bs, out)
	}
	return b.handleBlockState(bs, table, out)
}

func (b *Barrier) newEvent(bs *core.BlockStatus, out *core.Effects) *BarrierEvent {
	m := b.m
	k := eventKey{bs.BlockTs, bs.IsSyncPoint}
	ev := &BarrierEvent{key: k, influence: bs.Influence, blocked: bs.BlockTables, dropped: bs.NeedDropped, added: bs.NeedAdded,
		schemaID: bs.SchemaID, dropSchemaID: bs.DropSchemaID, schemaChanges: bs.UpdatedSchemas,
		reportedDispatchers: map[core.DispatcherID]bool{}, doneTables: map[int64]bool{}, lastWarningLog: m.now}
	if !ev.allInfluence() {
		b.newRangeCheck(ev, ev.blocked)
	}
	b.blockedEvents[k] = ev
	m.lg.Event(out, spec.Event{Kind: spec.BlockEventCreated, Changefeed: string(m.id), Node: string(m.self), Dispatcher: string(bs.ID),
		Checkpoint: bs.BlockTs, SyncPoint: bs.IsSyncPoint, Influence: bs.Influence})
	return ev
}

// markDispatcherEventDone records a report and adds its key range to the
// range checker; the trigger's report builds a DB/All range checker from
// the span controller's tables, with the reports so far
// (barrier_event.go:386-422).
func (b *Barrier) markDispatcherEventDone(ev *BarrierEvent, id core.DispatcherID) {
	if ev.selected {
		ev.lastStatusReceived = b.m.now
	}
	ev.reportedDispatchers[id] = true
	switch {
	case ev.rangeChecker != nil:
		b.addDispatcherToRangeChecker(ev, id)
	case id == b.m.ddlSpanID:
		b.newRangeCheck(ev, b.allTables(ev))
		b.addDispatchersToRangeChecker(ev)
	}
}

// allTables is every table of the span controller, and the trigger
// (createRangeCheckerForTypeAll); for a DB event that names its schema,
// the tables of that schema's spans, and the trigger
// (createRangeCheckerForTypeDB, barrier_event.go:232-246 at b813e76f9).
// impl's dispatchers name no schema: their DB events cover every table.
func (b *Barrier) allTables(ev *BarrierEvent) []int64 {
	out := []int64{0}
	if ev.influence == spec.InfluenceDB && ev.schemaID != 0 {
		for _, s := range b.m.spans.GetTasksBySchemaID(ev.schemaID) {
			if !slices.Contains(out, s.Span.Table) {
				out = append(out, s.Span.Table)
			}
		}
		return out
	}
	for t := range b.m.spans.byTable {
		out = append(out, t)
	}
	return out
}

// dynamicSplitEnabled chooses the checker kind: key ranges when tables may
// be split (enable-table-across-nodes, HEAD's only condition) or one is.
func (b *Barrier) dynamicSplitEnabled() bool {
	if b.m.opts.EnableTableAcrossNodes {
		return true
	}
	for _, s := range b.m.spans.spans {
		if s.Span.Start != "" || s.Span.End != "" {
			return true
		}
	}
	return false
}

// newRangeCheck builds ev's range checker for tables (newRangeCheck,
// createRangeCheckerForTypeDB/All), with the done tables marked again.
func (b *Barrier) newRangeCheck(ev *BarrierEvent, tables []int64) {
	ev.rangeTables = sortedUnique(tables)
	ev.spanChecker = b.dynamicSplitEnabled()
	if ev.spanChecker {
		ev.rangeChecker = rangechecker.NewTableSpanRangeChecker(ev.rangeTables)
	} else {
		ev.rangeChecker = rangechecker.NewTableCountChecker(ev.rangeTables)
	}
	done := ev.doneTables
	ev.doneTables = map[int64]bool{}
	for _, t := range ev.rangeTables {
		if done[t] {
			ev.markTableDone(t)
		}
	}
}

// rebuildRangeChecker is the double check's rebuild (barrier_event.go:
// 474-493): a new checker for the event's tables (DB/All: the span
// controller's now) with the remaining reports added.
func (b *Barrier) rebuildRangeChecker(ev *BarrierEvent) {
	tables := ev.rangeTables
	if ev.allInfluence() {
		tables = b.allTables(ev)
	}
	b.newRangeCheck(ev, tables)
	b.addDispatchersToRangeChecker(ev)
}

// resetRangeChecker is the selection's Reset (barrier_event.go:287): the
// reports start afresh, the done tables stay done.
func (ev *BarrierEvent) resetRangeChecker() {
	clear(ev.reportedDispatchers)
	ev.rangeChecker.Reset()
	for _, t := range sortedTables(ev.doneTables) {
		ev.markTableDone(t)
	}
}

// addDispatchersToRangeChecker adds every report's key range
// (barrier_event.go:372-384).
func (b *Barrier) addDispatchersToRangeChecker(ev *BarrierEvent) {
	for _, id := range core.SortedKeys(ev.reportedDispatchers) {
		b.addDispatcherToRangeChecker(ev, id)
	}
}

// addDispatcherToRangeChecker adds dispatcher id's key range: the
// trigger's is table 0's whole range (common.DDLSpan), a span's its own;
// a dispatcher the span controller no longer has adds nothing.
func (b *Barrier) addDispatcherToRangeChecker(ev *BarrierEvent, id core.DispatcherID) {
	span := spec.WholeTable(0)
	if id != b.m.ddlSpanID {
		s := b.m.spans.GetTaskByID(id)
		if s == nil {
			return
		}
		span = s.Span
	}
	start, end := rangechecker.SpanKeys(span)
	ev.rangeChecker.AddSubRange(span.Table, start, end)
}

// markTableDone covers table t in ev's range checker for good
// (barrier_event.go:364-366).
func (ev *BarrierEvent) markTableDone(t int64) {
	ev.doneTables[t] = true
	ev.rangeChecker.AddSubRange(t, nil, nil)
}

// handleBlockState takes a WAITING (or WRITING) status and reports whether
// it is ACKed: the trigger's report of a DB/All event is neither taken nor
// ACKed while a DDL that changes tables waits for its scheduling, so that
// the range checker it builds sees the new tables (barrier.go:458-482);
// the trigger re-sends it.
func (b *Barrier) handleBlockState(bs *core.BlockStatus, table int64, out *core.Effects) bool {
	m := b.m
	ev := b.blockedEvents[eventKey{bs.BlockTs, bs.IsSyncPoint}]
	if ev == nil {
		ev = b.newEvent(bs, out)
	}
	if bs.ID == m.ddlSpanID {
		ev.tableTriggerDispatcherRelated = true
	}
	if ev.selected {
		// Already selected: the action is re-sent by Resend. A WAITING
		// dispatcher has not passed (a new incarnation after a move): it
		// is owed Pass even if its earlier incarnation reported DONE, so
		// its DONE leaves the checker.
		if ev.reportedDispatchers[bs.ID] {
			delete(ev.reportedDispatchers, bs.ID)
			b.newRangeCheck(ev, ev.rangeTables)
			b.addDispatchersToRangeChecker(ev)
		}
		b.checkEventFinish(ev, out)
		return true
	}
	if bs.ID == m.ddlSpanID && ev.allInfluence() && len(b.pending) > 0 {
		m.lg.Debug("barrier.go", 474, "discard db/all block event from ddl dispatcher due to pending schedule events, wait next resend",
			logging.CF(m.id), zap.Uint64("commitTs", bs.BlockTs), zap.Bool("isSyncPoint", bs.IsSyncPoint), zap.Int("pendingScheduleEvents", len(b.pending)))
		return false
	}
	b.markDispatcherEventDone(ev, bs.ID)
	if !b.allDispatcherReported(ev) {
		return true
	}
	writer := bs.ID
	if ev.allInfluence() || ev.tableTriggerDispatcherRelated {
		writer = m.ddlSpanID
	}
	ev.selected, ev.writerDispatcher, ev.passActionSent = true, writer, false
	ev.resetRangeChecker()
	m.lg.Event(out, spec.Event{Kind: spec.BlockWriterSelected, Changefeed: string(m.id), Node: string(m.self), Dispatcher: string(writer),
		Checkpoint: ev.key.commitTs, Influence: ev.influence})
	if ev.needSchedule() && m.opts.Bugs.Has(spec.BugNewTableScheduledAtSelection) {
		// #3443 (fixed by #3445): the table changes are scheduled at the
		// selection (onAllDispatcherReportedBlockEvent before the fix), so
		// a truncated or created table's new dispatcher may flush rows
		// above the DDL before the writer wrote it.
		b.scheduleBlockEvent(ev, out)
		ev.scheduledAtSelection = true
	}
	b.sendWrite(ev, out)
	ev.lastResend = m.now
	if ev.needSchedule() && !ev.scheduledAtSelection {
		b.addPending(ev)
	}
	return true
}

// allDispatcherReported is the range checker's IsFullyCovered with its
// double check (barrier_event.go:424-500): reports of dispatchers that
// vanished or stopped replicating are dropped and the checker rebuilt
// from the others first; a table-count checker is rebuilt as a key-range
// one once a table is split.
func (b *Barrier) allDispatcherReported(ev *BarrierEvent) bool {
	m := b.m
	if ev.rangeChecker == nil {
		return false
	}
	recheck := !ev.spanChecker && b.dynamicSplitEnabled()
	for _, id := range core.SortedKeys(ev.reportedDispatchers) {
		if id == m.ddlSpanID {
			continue
		}
		if s := m.spans.GetTaskByID(id); s == nil || s.state != SpanReplicating {
			line, msg := 451, "unexisted dispatcher, remove it from barrier event"
			if s != nil {
				line, msg = 463, "unreplicating dispatcher, remove it from barrier event"
			}
			m.lg.Info("barrier_event.go", line, msg, logging.CF(m.id), zap.String("dispatcher", string(id)), zap.Uint64("commitTs", ev.key.commitTs))
			delete(ev.reportedDispatchers, id)
			recheck = true
		}
	}
	if recheck {
		b.rebuildRangeChecker(ev)
	}
	if ev.allInfluence() {
		// A table whose spans are all gone was dropped by an earlier DDL
		// after the checker was built; it owes this event nothing.
		for _, t := range ev.rangeTables {
			if t != 0 && !ev.doneTables[t] && len(m.spans.byTable[t]) == 0 {
				ev.markTableDone(t)
			}
		}
	}
	return ev.rangeChecker.IsFullyCovered()
}

func (b *Barrier) action(ev *BarrierEvent, id core.DispatcherID, node core.NodeID, a core.BlockAction, acts map[core.NodeID][]core.DispatcherAction) {
	acts[node] = append(acts[node], core.DispatcherAction{ID: id, Action: a, CommitTs: ev.key.commitTs, IsSyncPoint: ev.key.isSyncPoint})
}

func (b *Barrier) flush(acts map[core.NodeID][]core.DispatcherAction, out *core.Effects) {
	m := b.m
	if b.reply != nil {
		for n, a := range acts {
			b.reply[n] = append(b.reply[n], a...)
		}
		return
	}
	for _, n := range core.SortedKeys(acts) {
		out.SendTo(m.self, n, &core.HeartBeatResponse{Changefeed: m.id, Actions: acts[n], Epoch: m.epoch})
	}
}

// sendWrite sends Write to the writer. A writer that is not found (its
// span vanished) is replaced by the first blocked table's span.
func (b *Barrier) sendWrite(ev *BarrierEvent, out *core.Effects) {
	m := b.m
	acts := map[core.NodeID][]core.DispatcherAction{}
	if ev.writerDispatcher == m.ddlSpanID {
		b.action(ev, m.ddlSpanID, m.self, core.ActionWrite, acts)
	} else if s := m.spans.GetTaskByID(ev.writerDispatcher); s != nil && s.nodeID != "" {
		b.action(ev, s.ID, s.nodeID, core.ActionWrite, acts)
	} else {
		m.lg.Warn("barrier_event.go", 724, "writer dispatcher not found", logging.CF(m.id), zap.String("dispatcher", string(ev.writerDispatcher)),
			zap.Uint64("commitTs", ev.key.commitTs))
		for _, t := range ev.rangeTables {
			if ss := m.spans.tableSpans(t); t != 0 && len(ss) > 0 {
				ev.writerDispatcher = ss[0].ID
				break
			}
		}
		return
	}
	b.flush(acts, out)
}

// sendPass sends Pass to every influenced dispatcher that has not reported
// DONE; a blocked table with no span is done (markTableDone).
func (b *Barrier) sendPass(ev *BarrierEvent, out *core.Effects) {
	m := b.m
	skipWriter := m.opts.Bugs.Has(spec.BugWriterNotPassedAfterMove)
	acts := map[core.NodeID][]core.DispatcherAction{}
	for _, t := range ev.rangeTables {
		if ev.doneTables[t] {
			continue
		}
		if t == 0 {
			if !ev.reportedDispatchers[m.ddlSpanID] && !(skipWriter && ev.writerDispatcher == m.ddlSpanID) {
				b.action(ev, m.ddlSpanID, m.self, core.ActionPass, acts)
			}
			continue
		}
		spans := m.spans.tableSpans(t)
		if len(spans) == 0 {
			ev.markTableDone(t)
			continue
		}
		for _, s := range spans {
			if ev.reportedDispatchers[s.ID] || s.nodeID == "" || (skipWriter && s.ID == ev.writerDispatcher) {
				continue
			}
			b.action(ev, s.ID, s.nodeID, core.ActionPass, acts)
		}
	}
	b.flush(acts, out)
}

// handleEventDone: the writer's DONE schedules the DDL's table changes and
// makes Pass due at the next Resend (barrier.go:409-412); every DONE is
// recorded and the event finishes once all reported. A DONE whose event
// is gone is not ACKed (HandleStatus: the event is nil).
func (b *Barrier) handleEventDone(bs *core.BlockStatus, out *core.Effects) bool {
	m := b.m
	ev := b.blockedEvents[eventKey{bs.BlockTs, bs.IsSyncPoint}]
	if ev == nil {
		m.lg.Debug("barrier.go", 374, "No block event found, ignore the event done message", logging.CF(m.id),
			zap.String("dispatcher", string(bs.ID)), zap.Uint64("blockTs", bs.BlockTs))
		return false
	}
	if ev.selected && ev.writerDispatcher == bs.ID && !ev.writerDispatcherAdvanced {
		if !b.tryScheduleEvent(ev, out) {
			// An earlier DDL that changes tables is not scheduled yet: the
			// DONE is not taken; the Write's resend brings it again.
			return true
		}
	}
	b.markDispatcherEventDone(ev, bs.ID)
	b.checkEventFinish(ev, out)
	return true
}

// needSchedule: the event changes tables or their schemas
// (barrier_event.go:205-216 at b813e76f9).
func (e *BarrierEvent) needSchedule() bool {
	return len(e.dropped) > 0 || e.dropSchemaID != 0 || len(e.added) > 0 || len(e.schemaChanges) > 0
}

// addPending is pendingScheduleEventMap.add (barrier_helper.go): an event
// key is queued once; the first event object stays.
func (b *Barrier) addPending(ev *BarrierEvent) {
	if _, ok := b.pending[ev.key]; !ok {
		b.pending[ev.key] = ev
	}
}

// popIfHead is pendingScheduleEventMap.popIfHead: ev's key leaves the queue
// only if it is the smallest; candidate is the head's event (nil: empty).
func (b *Barrier) popIfHead(ev *BarrierEvent) (ready bool, candidate *BarrierEvent) {
	if len(b.pending) == 0 {
		return false, nil
	}
	head := ev.key
	first := true
	for k := range b.pending {
		if first || eventKeyLess(k, head) {
			head, first = k, false
		}
	}
	candidate = b.pending[head]
	if head != ev.key {
		return false, candidate
	}
	delete(b.pending, head)
	return true, candidate
}

func eventKeyLess(a, c eventKey) bool {
	if a.commitTs != c.commitTs {
		return a.commitTs < c.commitTs
	}
	return !a.isSyncPoint && c.isSyncPoint
}

// tryScheduleEvent (barrier.go:546-583) schedules the event's table changes
// once it is the head of the pending queue: DDLs that change tables are
// scheduled in commit-ts order, whatever order their DONEs arrive in. Then
// the writer counts as advanced and Pass is due at the next resend.
func (b *Barrier) tryScheduleEvent(ev *BarrierEvent, out *core.Effects) bool {
	m := b.m
	if ev.needSchedule() && !ev.scheduledAtSelection {
		m.lg.Info("barrier.go", 550, "event trySchedule", logging.CF(m.id), zap.String("writerDispatcher", string(ev.writerDispatcher)),
			zap.Uint64("EventCommitTs", ev.key.commitTs))
		ready, candidate := b.popIfHead(ev)
		if !ready {
			if candidate == nil {
				m.lg.Info("barrier.go", 559, "no candidate here, skip", logging.CF(m.id), zap.Uint64("EventCommitTs", ev.key.commitTs))
			} else {
				m.lg.Info("barrier.go", 566, "event waits for a smaller commitTs before scheduling", logging.CF(m.id),
					zap.Uint64("EventCommitTs", ev.key.commitTs), zap.Uint64("blockingEventCommitTs", candidate.key.commitTs))
			}
			return false
		}
		b.scheduleBlockEvent(ev, out)
	}
	ev.writerDispatcherAdvanced = true
	ev.lastResend = m.now - passResendDueMs
	return true
}

// passResendDueMs backdates an event's last resend once its writer is
// done, so that the next Resend sends Pass (HEAD: now - 20 s).
const passResendDueMs = 20_000

// scheduleBlockEvent removes the dropped tables' spans (or the dropped
// schema's), adds the new tables' at commitTs, and moves the renamed
// tables to their new schemas (barrier_event.go:310-362 at b813e76f9).
// A new table's schema is the maintainer's schema info's (HEAD's status
// carries it with the table; both come from the same DDL).
func (b *Barrier) scheduleBlockEvent(ev *BarrierEvent, out *core.Effects) {
	m := b.m
	if ev.dropSchemaID != 0 {
		m.ops.RemoveTasksBySchemaID(ev.dropSchemaID, out)
		m.lg.Info("barrier_event.go", 317, "remove table", logging.CF(m.id), zap.Uint64("commitTs", ev.key.commitTs), zap.Int64("schema", ev.dropSchemaID))
	} else if len(ev.dropped) > 0 {
		m.ops.RemoveTasksByTableIDs(ev.dropped, out)
		m.lg.Info("barrier_event.go", 324, "remove table", logging.CF(m.id), zap.Uint64("commitTs", ev.key.commitTs), zap.Int64s("table", ev.dropped))
	}
	for _, t := range ev.added {
		if m.spans.AddNewTable(m.spans.tableSchemaID(t), t, ev.key.commitTs) {
			m.lg.Info("barrier_event.go", 339, "add new table", logging.CF(m.id), zap.Uint64("commitTs", ev.key.commitTs), zap.Int64("table", t))
		}
	}
	for _, c := range ev.schemaChanges {
		m.lg.Info("barrier_event.go", 353, "update schemaID for table", logging.CF(m.id), zap.Uint64("commitTs", ev.key.commitTs),
			zap.Int64("oldSchema", c.OldSchemaID), zap.Int64("newSchema", c.NewSchemaID), zap.Int64("table", c.TableID))
		m.spans.UpdateSchemaID(c.TableID, c.NewSchemaID)
	}
}

func (b *Barrier) checkEventFinish(ev *BarrierEvent, out *core.Effects) {
	m := b.m
	if !ev.selected || !b.allDispatcherReported(ev) {
		return
	}
	m.lg.Event(out, spec.Event{Kind: spec.BlockEventDone, Changefeed: string(m.id), Node: string(m.self), Checkpoint: ev.key.commitTs,
		SyncPoint: ev.key.isSyncPoint})
	delete(b.blockedEvents, ev.key)
}

// Resend runs on the maintainer's tick: an unselected event checks whether
// it already passed; Write is re-sent until the writer's DONE; then Pass.
func (b *Barrier) Resend(out *core.Effects) {
	m := b.m
	for _, k := range b.sortedKeys() {
		ev := b.blockedEvents[k]
		if ev == nil || m.now-ev.lastResend < barrierResendMs {
			continue
		}
		if ev.selected && ev.writerDispatcherAdvanced && ev.passActionSent && ev.allInfluence() && m.now-ev.lastStatusReceived < fanoutPassResendQuietMs {
			// A DB/All Pass fans out to every node: while statuses still
			// arrive, the next wave waits (barrier_event.go:763-771).
			b.checkEventFinish(ev, out)
			continue
		}
		ev.lastResend = m.now
		if m.now-ev.lastWarningLog > 10_000 {
			ev.lastWarningLog = m.now
			m.lg.Warn("barrier_event.go", 676, "barrier event is not resolved", zap.String("changefeed", m.id.Name()),
				zap.Uint64("commitTs", ev.key.commitTs), zap.Bool("isSyncPoint", ev.key.isSyncPoint), zap.Bool("selected", ev.selected),
				zap.Bool("writerDispatcherAdvanced", ev.writerDispatcherAdvanced), zap.String("coverage", ev.coverage()))
		}
		switch {
		case !ev.selected:
			b.checkBlockedDispatchers(ev)
		case !ev.writerDispatcherAdvanced:
			b.sendWrite(ev, out)
		default:
			ev.passActionSent = true
			b.sendPass(ev, out)
			b.checkEventFinish(ev, out)
		}
	}
}

// coverage is the range checker's Detail for the "not resolved" warning
// ("" before the checker is built; HEAD then logs no coverage field).
func (ev *BarrierEvent) coverage() string {
	if ev.rangeChecker == nil {
		return ""
	}
	return ev.rangeChecker.Detail()
}

// fanoutPassResendQuietMs is fanoutPassResendQuietInterval.
const fanoutPassResendQuietMs = 1000

// checkBlockedDispatchers: a related span whose checkpoint passed the
// event means the writer already wrote it; the event advances to Pass.
func (b *Barrier) checkBlockedDispatchers(ev *BarrierEvent) {
	m := b.m
	rel := ev.rangeTables
	if ev.rangeChecker == nil {
		rel = sortedUnique(b.allTables(ev))
	}
	passed := false
	if slices.Contains(rel, 0) && b.triggerCheckpointTs >= ev.key.commitTs {
		passed = true
	}
	for _, t := range rel {
		for _, s := range m.spans.tableSpans(t) {
			if t != 0 && s.checkpointTs >= ev.key.commitTs {
				passed = true
			}
		}
	}
	if !passed {
		return
	}
	m.lg.Info("barrier_event.go", 589, "one related dispatcher has forward checkpointTs, means the block event can be advanced", logging.CF(m.id),
		zap.Uint64("commitTs", ev.key.commitTs))
	ev.selected, ev.writerDispatcherAdvanced = true, true
	// HEAD keeps the WAITING reports and their coverage here; impl counts
	// the DONEs afresh, as after a selection.
	if ev.rangeChecker == nil {
		clear(ev.reportedDispatchers)
		b.newRangeCheck(ev, b.allTables(ev))
	} else {
		ev.resetRangeChecker()
	}
}

// restore is handleBootstrapResponse (barrier.go:193-248): the block
// states of the responses rebuild the events. A WAITING one only reports
// (the dispatcher re-sends it); a WRITING one is the selected writer's, so
// the event is selected with it as the writer (the maintainer re-sends
// Write); a DONE one makes the event selected with its writer advanced
// (the maintainer re-sends Pass). impl's dispatchers report only WAITING.
func (b *Barrier) restore(resps map[core.NodeID]*core.MaintainerBootstrapResponse, out *core.Effects) {
	m := b.m
	var touched []*BarrierEvent
	for _, n := range core.SortedKeys(resps) {
		r := resps[n]
		if r == nil {
			continue
		}
		for _, ts := range r.Spans {
			bs := ts.BlockState
			if bs == nil || bs.Stage == core.StageNone {
				continue
			}
			if ts.ID != m.ddlSpanID {
				if s := m.spans.GetTaskByID(ts.ID); s == nil || s.nodeID != n {
					continue
				}
			}
			ev := b.blockedEvents[eventKey{bs.BlockTs, bs.IsSyncPoint}]
			if ev == nil {
				ev = b.newEvent(bs, out)
				touched = append(touched, ev)
			}
			switch bs.Stage {
			case core.StageWriting:
				ev.selected, ev.writerDispatcher = true, ts.ID
			case core.StageDone:
				ev.selected, ev.writerDispatcherAdvanced = true, true
			}
			b.markDispatcherEventDone(ev, ts.ID)
			m.lg.Info("barrier.go", 1, "restore block event from bootstrap response", logging.CF(m.id), zap.String("dispatcher", string(ts.ID)),
				zap.Uint64("blockTs", bs.BlockTs))
		}
	}
	for _, ev := range touched {
		if !b.allDispatcherReported(ev) {
			b.checkBlockedDispatchers(ev)
		}
	}
}

// sortedUnique is tables in order, each once.
func sortedUnique(tables []int64) []int64 {
	seen := make(map[int64]bool, len(tables))
	for _, t := range tables {
		seen[t] = true
	}
	return sortedTables(seen)
}

func sortedTables(m map[int64]bool) []int64 {
	out := make([]int64, 0, len(m))
	for t := range m {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// BlockEventInfo is a barrier event as tests see it (HEAD's unit tests
// read barrier.blockedEvents directly).
type BlockEventInfo struct {
	CommitTs    uint64
	IsSyncPoint bool
	Selected    bool
	Writer      core.DispatcherID
	// WriterAdvanced: the writer reported DONE (Pass phase).
	WriterAdvanced bool
	// Reported: the dispatchers that reported, WAITING before the selection
	// and DONE after it.
	Reported []core.DispatcherID
	// Range: the tables the range checker waits for (0: the trigger); nil
	// until it is built (a DB/All event's, when the trigger's report is
	// taken).
	Range []int64
	// Coverage is the range checker's Detail ("" until it is built).
	Coverage string
}

// BlockEvents lists the barrier's pending events in key order.
func (m *Maintainer) BlockEvents() []BlockEventInfo {
	var out []BlockEventInfo
	for _, k := range m.barrier.sortedKeys() {
		ev := m.barrier.blockedEvents[k]
		info := BlockEventInfo{CommitTs: k.commitTs, IsSyncPoint: k.isSyncPoint, Selected: ev.selected, Writer: ev.writerDispatcher,
			WriterAdvanced: ev.writerDispatcherAdvanced, Reported: core.SortedKeys(ev.reportedDispatchers)}
		if ev.rangeChecker != nil {
			info.Range = ev.rangeTables
			if ev.allInfluence() {
				// a DB/All table marked done left the event with its spans
				info.Range = nil
				for _, t := range ev.rangeTables {
					if !ev.doneTables[t] {
						info.Range = append(info.Range, t)
					}
				}
			}
			info.Coverage = ev.rangeChecker.Detail()
		}
		out = append(out, info)
	}
	return out
}

// PendingScheduleKeys lists the pending schedule queue's commit ts, in
// queue order.
func (m *Maintainer) PendingScheduleKeys() []uint64 {
	var out []uint64
	for _, k := range m.barrier.sortedKeysOf(m.barrier.pending) {
		out = append(out, k.commitTs)
	}
	return out
}

func (b *Barrier) sortedKeysOf(evs map[eventKey]*BarrierEvent) []eventKey {
	ks := make([]eventKey, 0, len(evs))
	for k := range evs {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return eventKeyLess(ks[i], ks[j]) })
	return ks
}

// scheduleNonBlocking schedules a non-blocking status's table changes
// through the pending queue and reports whether they were scheduled (the
// status is then ACKed).
func (b *Barrier) scheduleNonBlocking(bs *core.BlockStatus, out *core.Effects) bool {
	ev := &BarrierEvent{key: eventKey{bs.BlockTs, bs.IsSyncPoint}, influence: spec.InfluenceNormal, dropped: bs.NeedDropped, added: bs.NeedAdded,
		dropSchemaID: bs.DropSchemaID, schemaChanges: bs.UpdatedSchemas, writerDispatcher: bs.ID, reportedDispatchers: map[core.DispatcherID]bool{}, doneTables: map[int64]bool{}}
	if !ev.needSchedule() {
		return true
	}
	b.addPending(ev)
	return b.tryScheduleEvent(ev, out)
}
