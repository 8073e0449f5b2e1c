// Package kafkasink is the Kafka sink of the real runtime and its embedded
// broker.
//
// # Sink
//
// A Sink writes the row changes of one changefeed to one topic (default
// "cdcspec-<changefeed>", created with Config.Partitions partitions if
// missing) through github.com/IBM/sarama's AsyncProducer: acks=all, the hash
// partitioner on the message key "<schema>.<table>\x00<pk>" (every change of
// a key goes to one partition, so per-key order holds), at most one request
// in flight per broker, TiCDC's retry and timeout defaults. Messages are
// canal-json with TiCDC's `_tidb` extension; FORMAT.md documents them and
// DecodeMessage reads them back.
//
// Acknowledgements are per dispatcher and in order: Config.OnAck receives a
// row only after Kafka acknowledged it and every row its dispatcher wrote
// before it. Progress and CheckpointTs turn that into "flushed up to ts":
// with rows pending, a dispatcher may report at most (first pending commit
// ts - 1), so a checkpoint never passes unacknowledged data. A row whose
// produce failed is never acknowledged, so it pins the checkpoint below it
// until the sink is replaced (TiCDC restarts the changefeed from its
// checkpoint; rows above it are written again, as duplicates at worst).
//
// Producer errors are wrapped as TiCDC wraps them:
//
//	[CDC:ErrKafkaAsyncSendMessage]kafka async send message failed: kafka: Failed to produce message to topic <t>: read tcp <a>-><b>: i/o timeout
//
// (*SendError; errors.Is(err, ErrKafkaAsyncSendMessage)). The first error
// fails the sink: OnError is called once, Failed() closes, Write returns it.
//
// # Embedded broker
//
// StartKfake runs github.com/twmb/franz-go/pkg/kfake on 127.0.0.1 (or a fixed
// --kafka-listen address, so kcat can read the topics). TimeoutProduce(d)
// swallows produce requests (a kfake control function that never answers),
// so sarama's read deadline expires and the producer reports a real
// `i/o timeout` after (Retries+1)*ReadTimeout + Retries*RetryBackoff; Heal
// ends it. Swallowed requests are not written. ResetProduce(d) closes the
// connection of each produce request instead (EOF at once), and
// FailProduce(topic, kerr, count) answers with a Kafka error code (kfake's
// Fault API).
//
// # Range writes (impl's SinkWrite)
//
// WriteRange(ctx, dispatcher, toTs, rows) writes a dispatcher's rows with
// commit ts up to toTs and calls Config.OnFlushed(Flushed{dispatcher, toTs})
// once they and all earlier rows of the dispatcher are acknowledged: the
// SinkResult{ToTs} of a SinkWrite. A range with a failed row is never
// reported flushed; OnError reports the wrapped error instead.
//
// Throughput (BenchmarkSinkThroughput, 2 cores, loopback, 1 broker, 4
// partitions, ~40-byte values): about 190k rows/s from Write to in-order ack.
package kafkasink
