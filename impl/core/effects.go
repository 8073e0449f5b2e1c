package core

import "cdcspec/spec"

// Effects is what a handler asks the runtime to do. Handlers append to the
// *Effects the runtime passes in (no allocation per call); the runtime
// executes them after the handler returns, in this order:
//
//  1. Persist: every MetaTxn, in order, each atomically. Persist comes
//     BEFORE any Send of the same batch: a message may announce state (an
//     epoch, a checkpoint, a state change) that must be durable first. If a
//     txn fails (CAS conflict, store error) the runtime reports it with
//     OnMetaResult and DROPS the Sends of this batch; it still applies the
//     txns before the failed one and none after it.
//  2. Send: every Envelope, in order. Sends are fire-and-forget (pkg/messaging
//     semantics): they may be lost, duplicated, delayed and reordered; every
//     component re-sends what it needs.
//  3. SinkWrites: in order, after Send. A write's outcome comes back later
//     as OnSinkResult; a dispatcher never counts data as flushed before that.
//     SinkCancels, after SinkWrites: the dispatcher named is being closed
//     with its dispatcher manager while a write of it is in flight (TiCDC
//     closes the manager's sink; a single dispatcher's remove waits for
//     its write instead and asks for no cut). The runtime cuts that
//     write, anywhere in it; a cut write comes back as OnSinkResult with
//     ToTs = FromTs (nothing newly flushed), so the dispatcher reports
//     Stopped with the checkpoint it had, and rows the cut write already
//     produced are at-least-once duplicates for whoever replicates the
//     span next. A cancel may repeat and may arrive after the write
//     finished: it then names nothing.
//  4. Events were already logged by the component (in TiCDC's format) when it
//     appended them; the runtime forwards them to observers (spec monitors),
//     in order, after 1-3 succeeded.
//
// Timers: components have no timers of their own; the runtime calls OnTick
// at least every TickInterval and each component keeps its own deadlines
// (re-send periods of section B.1). WakeAt asks for an earlier tick.
type Effects struct {
	Persist     []MetaTxn
	Send        []Envelope
	SinkWrites  []SinkWrite
	SinkCancels []SinkCancel
	Events      []spec.Event
	// WakeAt, when non-zero, is the earliest virtual time (ms) at which the
	// component wants OnTick again.
	WakeAt int64
}

// Reset empties the effects, keeping capacity.
func (e *Effects) Reset() {
	e.Persist = e.Persist[:0]
	e.Send = e.Send[:0]
	e.SinkWrites = e.SinkWrites[:0]
	e.SinkCancels = e.SinkCancels[:0]
	e.Events = e.Events[:0]
	e.WakeAt = 0
}

// SendTo appends a message.
func (e *Effects) SendTo(from, to NodeID, m Message) {
	e.Send = append(e.Send, Envelope{From: from, To: to, Msg: m})
}

// Wake lowers WakeAt to t.
func (e *Effects) Wake(t int64) {
	if e.WakeAt == 0 || t < e.WakeAt {
		e.WakeAt = t
	}
}

// TickInterval is the longest gap between two OnTick calls a runtime may
// leave (virtual ms). Every period in section B.1 is a multiple of it.
const TickInterval = 100

// MetaOpKind is an etcd operation.
type MetaOpKind uint8

const (
	MetaPut MetaOpKind = iota + 1
	MetaDelete
)

// MetaOp is one key operation inside a txn. ExpectModRev is a compare on
// the key's mod revision: -1 means no compare, 0 means "key must not exist".
type MetaOp struct {
	Kind         MetaOpKind
	Key          string
	Value        []byte
	ExpectModRev int64
}

// MetaTxn is an etcd txn: all compares hold, then all ops apply; else none.
// Token identifies the txn in OnMetaResult.
type MetaTxn struct {
	Token uint64
	Ops   []MetaOp
}

// MetaResult is the outcome of a MetaTxn. Revs are the keys' new mod
// revisions (0 for a delete) in op order.
type MetaResult struct {
	Token uint64
	OK    bool   // all compares held and the txn applied
	Err   string // store error (unavailable); OK is false
	Revs  []int64
}

// SinkWrite asks the changefeed's downstream to write every row change of
// Span with FromTs < commitTs <= ToTs, through the sink instance Sink (one
// per dispatcher manager; a Kafka producer). DDL marks a table trigger's DDL
// write.
type SinkWrite struct {
	Changefeed ChangefeedID
	Node       NodeID
	Sink       uint64
	Dispatcher DispatcherID
	Span       spec.Span
	FromTs     uint64
	ToTs       uint64
}

// SinkCancel asks the runtime to cut the write in flight of a dispatcher
// that is being removed (Effects, step 3).
type SinkCancel struct {
	Sink       uint64
	Dispatcher DispatcherID
}

// SinkResult is the sink's answer to one SinkWrite.
type SinkResult struct {
	Changefeed ChangefeedID
	Sink       uint64
	Dispatcher DispatcherID
	ToTs       uint64
	Err        *RunningError
}
