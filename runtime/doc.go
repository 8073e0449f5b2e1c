// Package runtime holds the real-IO building blocks that run cdcspec's
// control plane (impl/) outside the deterministic simulator:
//
//   - runtime/kafkasink: a Kafka sink on sarama's AsyncProducer with
//     per-dispatcher in-order acknowledgements (so a checkpoint never passes
//     unacknowledged data), TiCDC's error wrapping, a canal-json-like message
//     format (FORMAT.md), and an embedded kfake broker with fault controls
//     (a real `i/o timeout` on produce).
//   - runtime/datacheck: an independent franz-go consumer that proves, from
//     the outside, that no row change at or below the final checkpoint was
//     lost, that per-key order holds, and that nothing extra was written.
//   - runtime/etcdmeta: embedded etcd on loopback plus a client wrapper with
//     TiCDC's key layout, compare-and-swap, capture sessions on leases (with
//     deliberate expiry), owner election and prefix watches.
//
// runtime/transport (TCP between captures) and runtime/codec (message
// encoding) complete the set.
//
// Each package is standalone with its own small interface; the lead adapts
// them to impl's transport, metadata-store and sink interfaces.
package runtime
