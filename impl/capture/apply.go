package capture

import "cdcspec/impl/core"

// IO is the outside world a runtime gives Apply: the metadata store, the
// transport, the sink and ownership. The simulation implements it on
// virtual time and in-memory stores; runtime/server on etcd, TCP and Kafka.
type IO interface {
	// Txn applies one metadata txn atomically and returns its outcome.
	Txn(t core.MetaTxn) core.MetaResult
	// Send hands an envelope to the transport: fire-and-forget.
	Send(env core.Envelope)
	// SinkWrite starts a write; its outcome comes back later through
	// Capture.OnSinkResult.
	SinkWrite(w core.SinkWrite)
	// SinkCancel cuts the named dispatcher's write in flight, if any: it
	// comes back through Capture.OnSinkResult with ToTs = FromTs
	// (core.Effects, step 3).
	SinkCancel(c core.SinkCancel)
	// CoordinatorExited: the capture's coordinator has stopped itself; the
	// runtime gives up ownership.
	CoordinatorExited()
}

// Apply executes out, a handler's Effects on this capture, in the order
// core.Effects documents, and reports whether every txn applied:
//
//  1. Persist, in order, stopping at the first failed txn;
//  2. Send, unless a txn failed (a message may announce what the txn
//     should have made durable);
//  3. SinkWrites, then SinkCancels;
//  4. every txn's result back to the capture (OnMetaResult), whose effects
//     are applied the same way, one result at a time;
//  5. if the coordinator has exited, IO.CoordinatorExited.
//
// Events were logged when the handler appended them; Apply does not
// forward them.
func (c *Capture) Apply(out *core.Effects, io IO) bool {
	ok := true
	var results []core.MetaResult
	for _, t := range out.Persist {
		r := io.Txn(t)
		results = append(results, r)
		if !r.OK {
			ok = false
			break
		}
	}
	if ok {
		for _, env := range out.Send {
			io.Send(env)
		}
	}
	for _, w := range out.SinkWrites {
		io.SinkWrite(w)
	}
	for _, sc := range out.SinkCancels {
		io.SinkCancel(sc)
	}
	for _, r := range results {
		var o core.Effects
		c.OnMetaResult(r, &o)
		c.Apply(&o, io)
	}
	if c.Coordinator != nil && c.Coordinator.Exited() {
		io.CoordinatorExited()
	}
	return ok
}
