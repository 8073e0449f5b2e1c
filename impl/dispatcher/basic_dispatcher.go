package dispatcher

import (
	"go.uber.org/zap"

	"cdcspec/impl/core"
	"cdcspec/impl/logging"
	"cdcspec/spec"
)

// flushIntervalMs batches sink writes (the sink's flush interval).
const flushIntervalMs = 200

type pendingDDL struct {
	ts       uint64
	table    int64
	lastSent int64
}

// Dispatcher is basic_dispatcher.go: one table span (or the table
// trigger, table 0).
type Dispatcher struct {
	dm      *DispatcherManager
	id      core.DispatcherID
	span    spec.Span
	startTs uint64
	// state: Initializing -> Working -> Removing -> (Stopped, deleted).
	state core.ComponentState
	// checkpointTs: every row with commitTs <= checkpointTs is flushed.
	checkpointTs uint64
	// sentTs: rows with commitTs <= sentTs were handed to the sink.
	sentTs   uint64
	inflight bool
	// lastWrite: writes are batched, at most one per flushIntervalMs.
	lastWrite int64

	isTrigger bool
	// pendingDDLs: add-table DDLs written and reported NONE, awaiting ACK.
	pendingDDLs []pendingDDL

	// blockPending is the block event the dispatcher waits at, having
	// flushed every row below it and reported WAITING (nil: not blocked);
	// lastBlockSent is when WAITING was last sent (re-sent every
	// blockStatusResend until an action arrives).
	blockPending  *core.BlockEvent
	lastBlockSent int64
	// passedTs is the commitTs of the last block event the dispatcher wrote
	// or passed; the ones at or below it (or at or below startTs) do not
	// block it.
	passedTs uint64
	// holding: the trigger holds a DB/All event's WAITING until its
	// add-table DDLs were ACKed (logged once).
	holding uint64
	// mergeInto: a merge source waiting for its merge to commit
	// (WaitingMerge): it stops advancing. mergeClosed: closed by the merge.
	mergeInto   core.DispatcherID
	mergeClosed bool
}

func newDispatcher(dm *DispatcherManager, id core.DispatcherID, span spec.Span, startTs uint64) *Dispatcher {
	return &Dispatcher{dm: dm, id: id, span: span, startTs: startTs, state: core.ComponentInitializing, checkpointTs: startTs, sentTs: startTs}
}

// reportState is the component status carried by heartbeats.
func (d *Dispatcher) reportState() core.ComponentState {
	if d.state == core.ComponentRemoving {
		return core.ComponentWorking
	}
	return d.state
}

// reportedCheckpoint caps the trigger below an add-table DDL until the
// maintainer ACKs it (addTableCheckpointBlocker, #5402), unless the bug
// trigger-passes-add-table-ddl switches the blocker off.
func (d *Dispatcher) reportedCheckpoint() uint64 {
	cp := d.checkpointTs
	if d.isTrigger && !d.dm.o.opts.Bugs.Has(spec.BugTriggerPassesAddTableDDL) {
		for _, p := range d.pendingDDLs {
			if p.ts-1 < cp {
				cp = p.ts - 1
			}
		}
	}
	return cp
}

// advance: the first event makes the dispatcher Working; then, with no write
// in flight, everything up to the puller's resolved ts goes to the sink,
// but never past a block event that blocks it: there it stops below the
// event's commitTs and, once every row below it is flushed, blocks
// (tryBlock).
func (d *Dispatcher) advance(now int64, out *core.Effects) {
	if d.state == core.ComponentRemoving || d.inflight || d.blockPending != nil || d.mergeInto != "" {
		return
	}
	resolved := d.dm.o.up.ResolvedTs(d.span, d.startTs)
	if d.state == core.ComponentInitializing {
		if resolved == 0 {
			return
		}
		d.state = core.ComponentWorking
		if !d.isTrigger {
			d.dm.o.lg.Event(out, spec.Event{Kind: spec.DispatcherWorking, Changefeed: string(d.dm.cf), Node: string(d.dm.o.self),
				Dispatcher: string(d.id), Span: d.span}, zap.Uint64("checkpointTs", d.checkpointTs))
			d.dm.pendingStatuses = append(d.dm.pendingStatuses, core.TableSpanStatus{ID: d.id, State: core.ComponentWorking, CheckpointTs: d.checkpointTs})
		}
	}
	if d.dm.firstErr != nil {
		return
	}
	ev := d.nextBlockEvent(resolved)
	if ev != nil {
		resolved = ev.CommitTs - 1
		if d.sentTs >= resolved {
			d.tryBlock(ev, now, out)
			return
		}
	}
	if resolved <= d.sentTs || (d.lastWrite != 0 && now-d.lastWrite < flushIntervalMs) {
		return
	}
	d.lastWrite = now
	if d.isTrigger {
		for _, ddl := range d.dm.o.up.DDLsBetween(d.sentTs, resolved) {
			d.pendingDDLs = append(d.pendingDDLs, pendingDDL{ts: ddl.CommitTs, table: ddl.Table})
			d.dm.o.lg.Info("basic_dispatcher.go", 699, "dispatcher receive ddl event", zap.String("dispatcher", string(d.id)),
				zap.Int64("table", ddl.Table), zap.Uint64("commitTs", ddl.CommitTs))
		}
	}
	d.inflight = true
	out.SinkWrites = append(out.SinkWrites, core.SinkWrite{Changefeed: d.dm.cf, Node: d.dm.o.self, Sink: d.dm.sinkID, Dispatcher: d.id,
		Span: d.span, FromTs: d.sentTs, ToTs: resolved})
	d.sentTs = resolved
}

func (d *Dispatcher) onSinkResult(r core.SinkResult, out *core.Effects) {
	if !d.inflight {
		return
	}
	d.inflight = false
	if r.Err != nil {
		d.sentTs = d.checkpointTs
		d.dm.onError(*r.Err, out)
		return
	}
	if r.ToTs > d.checkpointTs {
		d.checkpointTs = r.ToTs
	}
	if !d.isTrigger {
		d.dm.o.lg.Event(out, spec.Event{Kind: spec.DataFlushed, Changefeed: string(d.dm.cf), Node: string(d.dm.o.self), Dispatcher: string(d.id),
			Span: d.span, Checkpoint: r.ToTs})
	}
}

// nextBlockEvent is the first block event at or below resolved that
// blocks this dispatcher and that it has neither passed nor started above.
func (d *Dispatcher) nextBlockEvent(resolved uint64) *core.BlockEvent {
	src, ok := d.dm.o.up.(core.BlockEventSource)
	if !ok {
		return nil
	}
	from := max(d.startTs, d.passedTs)
	for _, e := range src.BlockEventsBetween(from, resolved) {
		if e.Blocks(d.span.Table) {
			return &e
		}
	}
	return nil
}

// tryBlock: every row below the event is flushed; report WAITING and wait
// for the barrier's action (DealWithBlockEvent). The table trigger first
// waits for the ACK of every add-table DDL it reported, for a DB or All
// event (holdBlockEvent, #3802), unless db-ddl-before-table-ddls-acked.
func (d *Dispatcher) tryBlock(ev *core.BlockEvent, now int64, out *core.Effects) {
	if d.isTrigger && ev.Influence != spec.InfluenceNormal && len(d.pendingDDLs) > 0 && !d.dm.o.opts.Bugs.Has(spec.BugDBDDLBeforeTableDDLsAcked) {
		if d.holding != ev.CommitTs {
			d.holding = ev.CommitTs
			d.dm.o.lg.Info("basic_dispatcher.go", 1256, "dispatcher hold block event", logging.CF(d.dm.cf), zap.String("dispatcher", string(d.id)),
				zap.Uint64("commitTs", ev.CommitTs), zap.Int("pendingACKCount", len(d.pendingDDLs)))
		}
		return
	}
	d.blockPending = ev
	d.lastBlockSent = 0
	d.reportBlock(core.StageWaiting, ev, out)
}

// reportBlock logs a block status (the DM sends WAITING from its resend
// loop, DONE at once).
func (d *Dispatcher) reportBlock(stage core.BlockStage, ev *core.BlockEvent, out *core.Effects) {
	e := spec.Event{Kind: spec.BlockStatusReported, Changefeed: string(d.dm.cf), Node: string(d.dm.o.self), Dispatcher: string(d.id),
		Span: d.span, Checkpoint: ev.CommitTs, State: stage.String(), Influence: ev.Influence, SyncPoint: ev.IsSyncPoint,
		Dropped: ev.NeedDropped, Added: ev.NeedAdded}
	if ev.Influence == spec.InfluenceNormal {
		e.Tables = ev.BlockTables
	}
	d.dm.o.lg.Event(out, e)
	if stage == core.StageDone && d.dm.maintainerID != "" {
		out.SendTo(d.dm.o.self, d.dm.maintainerID, &core.BlockStatusRequest{Changefeed: d.dm.cf, Statuses: []core.BlockStatus{d.blockStatus(core.StageDone, ev)}})
	}
}

func (d *Dispatcher) blockStatus(stage core.BlockStage, ev *core.BlockEvent) core.BlockStatus {
	return core.BlockStatus{ID: d.id, BlockTs: ev.CommitTs, Stage: stage, IsSyncPoint: ev.IsSyncPoint, Influence: ev.Influence,
		BlockTables: ev.BlockTables, NeedDropped: ev.NeedDropped, NeedAdded: ev.NeedAdded}
}

// onAction handles the barrier's Write or Pass. For the event it waits at:
// Write writes the DDL to the sink (every row below it is flushed), then
// either way it reports DONE and resumes. An action for an event it
// already passed (or started above) is answered with DONE again
// (offerDoneBlockStatus); one for an event it has not reached is ignored.
func (d *Dispatcher) onAction(now int64, a core.DispatcherAction, out *core.Effects) {
	ev := d.blockPending
	if ev == nil || ev.CommitTs != a.CommitTs || ev.IsSyncPoint != a.IsSyncPoint {
		if a.CommitTs <= d.passedTs || a.CommitTs <= d.startTs {
			done := core.BlockEvent{CommitTs: a.CommitTs, IsSyncPoint: a.IsSyncPoint, Influence: spec.InfluenceNormal}
			if src, ok := d.dm.o.up.(core.BlockEventSource); ok {
				for _, e := range src.BlockEventsBetween(a.CommitTs-1, a.CommitTs) {
					if e.IsSyncPoint == a.IsSyncPoint {
						done = e
					}
				}
			}
			d.reportBlock(core.StageDone, &done, out)
		}
		return
	}
	d.dm.o.lg.Event(out, spec.Event{Kind: spec.BlockActionReceived, Changefeed: string(d.dm.cf), Node: string(d.dm.o.self), Dispatcher: string(d.id),
		Checkpoint: a.CommitTs, State: a.Action.String(), SyncPoint: a.IsSyncPoint})
	if a.Action == core.ActionWrite {
		if write := d.dm.o.opts.WriteBlockEvent; write != nil {
			if err := write(core.BlockEventWrite{Changefeed: d.dm.cf, Sink: d.dm.sinkID, Dispatcher: d.id, Span: d.span, Event: *ev}); err != nil {
				d.dm.onError(*err, out)
				return
			}
		}
		d.dm.o.lg.Event(out, spec.Event{Kind: spec.DDLWritten, Changefeed: string(d.dm.cf), Node: string(d.dm.o.self), Dispatcher: string(d.id),
			Span: d.span, Checkpoint: a.CommitTs, SyncPoint: a.IsSyncPoint, Reason: ev.Query})
	}
	d.blockPending = nil
	d.passedTs = ev.CommitTs
	// The DDL (or the skipped event) counts as the batch's write: rows
	// after it go to the sink with the next batch. Until then the
	// dispatcher's checkpoint stays below the event.
	d.lastWrite = now
	d.reportBlock(core.StageDone, ev, out)
}

func (d *Dispatcher) onACK(blockTs uint64) {
	kept := d.pendingDDLs[:0]
	for _, p := range d.pendingDDLs {
		if p.ts != blockTs {
			kept = append(kept, p)
		} else {
			d.dm.o.lg.Info("basic_dispatcher.go", 1216, "cancel resend task", zap.String("dispatcherID", string(d.id)),
				zap.Any("identifier", blockEventIdentifier{CommitTs: blockTs}))
		}
	}
	d.pendingDDLs = kept
}

var _ = logging.CF

// blockEventIdentifier is logged as TiCDC logs its BlockEventIdentifier
// (zap.Any of the struct: {"CommitTs":…,"IsSyncPoint":…}).
type blockEventIdentifier struct {
	CommitTs    uint64
	IsSyncPoint bool
}
