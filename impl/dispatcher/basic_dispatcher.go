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
// in flight, everything up to the puller's resolved ts goes to the sink.
func (d *Dispatcher) advance(now int64, out *core.Effects) {
	if d.state == core.ComponentRemoving || d.inflight {
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
	if d.dm.firstErr != nil || resolved <= d.sentTs || (d.lastWrite != 0 && now-d.lastWrite < flushIntervalMs) {
		return
	}
	d.lastWrite = now
	if d.isTrigger {
		for _, ddl := range d.dm.o.up.DDLsBetween(d.sentTs, resolved) {
			d.pendingDDLs = append(d.pendingDDLs, pendingDDL{ts: ddl.CommitTs, table: ddl.Table})
			d.dm.o.lg.Info("basic_dispatcher.go", 827, "pending event get the action", zap.String("dispatcher", string(d.id)),
				zap.Uint64("pendingEventCommitTs", ddl.CommitTs), zap.Int64("table", ddl.Table))
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
		d.dm.o.lg.Event(out, spec.Event{Kind: spec.DataFlushed, Changefeed: string(d.dm.cf), Node: string(d.dm.o.self), Span: d.span,
			Checkpoint: r.ToTs})
	}
}

func (d *Dispatcher) onACK(blockTs uint64) {
	kept := d.pendingDDLs[:0]
	for _, p := range d.pendingDDLs {
		if p.ts != blockTs {
			kept = append(kept, p)
		} else {
			d.dm.o.lg.Info("basic_dispatcher.go", 1216, "cancel resend task", zap.String("dispatcherID", string(d.id)),
				zap.Uint64("identifier", blockTs))
		}
	}
	d.pendingDDLs = kept
}

var _ = logging.CF
