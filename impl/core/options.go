package core

import "cdcspec/spec"

// Legacy switches older behaviour that is not a catalogued bug but that a
// seed scenario needs (the seed ran on a version without that fix).
type Legacy struct {
	// RawWatermarkCheckpoint: before #4548 the maintainer reported its raw
	// watermark (which can go down) and did not clamp a Create's startTs to
	// the committed checkpoint. Seed #5709 needs a regressed report.
	RawWatermarkCheckpoint bool
}

// Options configure every component of a node.
type Options struct {
	// Bugs are the catalogue entries switched on (spec.Bugs); each is read
	// at the decision point its entry's Where names.
	Bugs   spec.BugSet
	Legacy Legacy
	// Delivery is the message-delivery assumption the run makes ("" is
	// TiCDC's message center, spec.DeliveryMessageCenter). A few guards
	// against deliveries TiCDC's message center never makes (stale copies,
	// a message overtaking an earlier one of the same command stream and
	// receiving queue) are active only under a stronger one, so that under
	// the message center every component behaves as HEAD; each names the
	// delivery it needs (the runtime leaves it at "", the simulation sets
	// its Config.Delivery).
	Delivery spec.Delivery
	// EnableTableAcrossNodes is the scheduler's enable-table-across-nodes:
	// AddNewTable splits every new table in two at its middle key (the
	// region-count splitter returning two spans; span_controller.go
	// AddNewTable at b813e76f9), so its halves may land on different nodes
	// and be merged later. The model's Config.Merges starts its table so.
	EnableTableAcrossNodes bool
	// ErrorStuckDurationMs is changefeed-error-stuck-duration (default 30 min).
	ErrorStuckDurationMs int64
	// WriteBlockEvent, when set, writes the block event a dispatcher was
	// told to write (the barrier's Write action) to the downstream and
	// returns once it is durable (TiCDC's sink WriteBlockEvent, synchronous
	// in the dispatcher). The dispatcher has flushed every row below the
	// event and writes none above it before this returns. nil: the write is
	// instantaneous (the simulation). An error fails the changefeed as a
	// sink error does; the dispatcher stays blocked and reports no DONE.
	WriteBlockEvent func(BlockEventWrite) *RunningError
}

// BlockEventWrite is one call of Options.WriteBlockEvent.
type BlockEventWrite struct {
	Changefeed ChangefeedID
	Sink       uint64 // the dispatcher manager's sink instance
	Dispatcher DispatcherID
	Span       spec.Span
	Event      BlockEvent
}

// WithDefaults fills zero fields.
func (o Options) WithDefaults() Options {
	if o.ErrorStuckDurationMs == 0 {
		o.ErrorStuckDurationMs = 30 * 60 * 1000
	}
	return o
}
