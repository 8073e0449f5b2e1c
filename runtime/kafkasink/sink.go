package kafkasink

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/IBM/sarama"
)

// ErrKafkaAsyncSendMessage is the sentinel matched by errors.Is for every
// producer error the sink reports (TiCDC's RFC code
// CDC:ErrKafkaAsyncSendMessage, a retryable error).
var ErrKafkaAsyncSendMessage = errors.New("[CDC:ErrKafkaAsyncSendMessage]kafka async send message failed")

// ErrorCode is the RFC code of a SendError, for impl's RunningError.Code.
const ErrorCode = "CDC:ErrKafkaAsyncSendMessage"

// ErrSinkClosed is returned by Write after Close.
var ErrSinkClosed = errors.New("kafkasink: sink is closed")

// SendError is a producer error wrapped as TiCDC wraps it:
//
//	[CDC:ErrKafkaAsyncSendMessage]kafka async send message failed: <sarama error>
//
// where <sarama error> is the *sarama.ProducerError's text, e.g.
// "kafka: Failed to produce message to topic t: read tcp a->b: i/o timeout".
// errors.Is(err, ErrKafkaAsyncSendMessage) holds, and errors.As reaches the
// *sarama.ProducerError and its cause (a *net.OpError for a timeout).
type SendError struct {
	Err error // the *sarama.ProducerError
}

func (e *SendError) Error() string {
	return ErrKafkaAsyncSendMessage.Error() + ": " + e.Err.Error()
}

// RFCCode returns ErrorCode.
func (e *SendError) RFCCode() string { return ErrorCode }

// Unwrap returns both the sentinel and the sarama error.
func (e *SendError) Unwrap() []error { return []error{ErrKafkaAsyncSendMessage, e.Err} }

// Config configures a Sink. Zero values take the defaults noted per field
// (TiCDC's sarama defaults where TiCDC has one).
type Config struct {
	Brokers    []string // required, host:port
	Changefeed string   // the changefeed this sink belongs to (one sink per changefeed)
	Topic      string   // default TopicName(Changefeed)

	// Partitions and ReplicationFactor are used when the sink creates the
	// topic (it does when the topic is missing; an existing topic is used
	// as is). Defaults 3 (TiCDC's partition-num default) and 1.
	Partitions        int32
	ReplicationFactor int16

	ClientID string // default "cdcspec"

	// Retries is sarama's Producer.Retry.Max: 0 means the default 3, a
	// negative value means no retry. RetryBackoff defaults to 100ms.
	Retries      int
	RetryBackoff time.Duration

	// Network timeouts, default 10s each (TiCDC's defaults). A produce
	// request that gets no answer fails after (Retries+1)*ReadTimeout +
	// Retries*RetryBackoff with a `read tcp ...: i/o timeout`.
	DialTimeout  time.Duration
	ReadTimeout  time.Duration
	WriteTimeout time.Duration

	// Idempotent turns on the idempotent producer (needs Retries >= 1).
	// Off by default, as in TiCDC; per-partition order is kept either way
	// because at most one request per broker is in flight.
	Idempotent bool

	// OnAck, when set, receives acknowledgements in order per dispatcher:
	// a batch holds consecutive rows of ONE dispatcher, and across calls a
	// dispatcher's acks arrive in Write order. A row is acknowledged only
	// after Kafka acknowledged it AND every earlier row of its dispatcher.
	// It runs on a sink goroutine (or inside a Write call), never
	// concurrently with another OnAck/OnFlushed call and with no sink lock
	// held: it must not block for long and must not call Write (Write may
	// wait for the delivery goroutine).
	OnAck func(acks []Ack)

	// OnFlushed, when set, is called for each WriteRange once every row of
	// that range and every earlier row of its dispatcher is acknowledged:
	// the dispatcher's data up to Flushed.Ts is in Kafka. Calls are in
	// order per dispatcher, interleaved with OnAck in acknowledgement order.
	// Same goroutine rules as OnAck, except that the callbacks run with no
	// sink lock held, so they may call Progress, CheckpointTs and Stats.
	OnFlushed func(f Flushed)

	// OnError, when set, is called once, with the first *SendError. The
	// sink is failed from then on (TiCDC closes the sink and the changefeed
	// restarts); Write returns the error.
	OnError func(err error)
}

// Ack acknowledges one row as durably in Kafka.
type Ack struct {
	Dispatcher string
	Seq        uint64 // 1-based write sequence number within the dispatcher
	CommitTs   uint64
	Partition  int32
	Offset     int64
}

// Flushed reports that a WriteRange is durable: every row of Dispatcher
// with commit ts <= Ts that was written through this sink is acknowledged.
type Flushed struct {
	Dispatcher string
	Ts         uint64
}

// notice is one queued callback, delivered in queue order.
type notice struct {
	acks    []Ack
	flushed *Flushed
}

// Progress is a dispatcher's view of the sink.
type Progress struct {
	Written uint64 // rows accepted by Write
	Acked   uint64 // rows acknowledged in order (Seq 1..Acked are acked)
	// LastWrittenTs is the commit ts of the last row written.
	LastWrittenTs uint64
	// FlushedTs: every row of this dispatcher with commit ts <= FlushedTs
	// is acknowledged. When rows are pending it is the first pending row's
	// commit ts - 1; when none is, LastWrittenTs.
	FlushedTs uint64
	// Pending is Written - Acked: rows sent (or being sent) and not yet
	// acknowledged in order, including failed ones (never acknowledged).
	Pending uint64
}

// Stats are sink-wide counters.
type Stats struct {
	Written  uint64 // rows accepted by Write
	Acked    uint64 // rows Kafka acknowledged (in any order)
	Failed   uint64 // rows whose produce failed
	Released uint64 // rows released to OnAck in per-dispatcher order
}

// Sink writes rows of one changefeed to one Kafka topic through sarama's
// AsyncProducer. It is safe for concurrent use; rows of one dispatcher
// should be written from one goroutine (the order of Write calls defines
// the dispatcher's sequence).
type Sink struct {
	cfg      Config
	topic    string
	producer sarama.AsyncProducer

	mu          sync.Mutex
	dispatchers map[string]*dispatcherState
	firstErr    error
	outq        []notice // callbacks not yet delivered, in order
	delivering  bool     // some goroutine is draining outq

	written, acked, failedN, released atomic.Uint64

	failed    chan struct{} // closed on the first producer error
	closing   chan struct{} // closed when Close starts
	closeMu   sync.RWMutex  // Write holds R while sending; Close takes W
	closeOnce sync.Once
	drained   sync.WaitGroup
	drainDone chan struct{} // closed when both delivery goroutines ended
	// ddlProd is WriteDDL's synchronous producer (started on first use,
	// closed by Close).
	ddlMu     sync.Mutex
	ddlProd   sarama.SyncProducer
	ddlClosed bool
	now       func() time.Time
}

// entry is one row in flight. Guarded by Sink.mu.
type entry struct {
	d         *dispatcherState
	seq       uint64
	ts        uint64
	acked     bool
	failed    bool
	partition int32
	offset    int64
}

// dispatcherState keeps a dispatcher's unacknowledged rows in write order.
// Invariant: queue[i].seq == acked+1+i; queue[0] is never acked (it is
// popped as soon as it is).
type dispatcherState struct {
	id      string
	nextSeq uint64
	lastTs  uint64
	acked   uint64
	queue   []*entry
	marks   []mark // WriteRange marks not yet flushed, ascending seq
	removed bool
}

// mark: once acked >= seq, the range up to ts is flushed.
type mark struct {
	seq uint64
	ts  uint64
}

// Start connects to the brokers, creates the topic when it is missing, and
// starts the producer. ctx bounds the setup only.
func Start(ctx context.Context, cfg Config) (*Sink, error) {
	if len(cfg.Brokers) == 0 {
		return nil, errors.New("kafkasink: Config.Brokers is empty")
	}
	if cfg.Topic == "" {
		if cfg.Changefeed == "" {
			return nil, errors.New("kafkasink: Config needs a Topic or a Changefeed")
		}
		cfg.Topic = TopicName(cfg.Changefeed)
	}
	if cfg.Partitions == 0 {
		cfg.Partitions = 3
	}
	if cfg.Partitions < 0 {
		return nil, fmt.Errorf("kafkasink: Config.Partitions is %d, want > 0", cfg.Partitions)
	}
	if cfg.ReplicationFactor == 0 {
		cfg.ReplicationFactor = 1
	}
	sc, err := saramaConfig(&cfg)
	if err != nil {
		return nil, err
	}
	// Topic setup is not under fault test: give it generous timeouts, so a
	// short producer ReadTimeout on a loaded machine cannot break Start.
	acfg := cfg
	acfg.DialTimeout, acfg.ReadTimeout, acfg.WriteTimeout = 10*time.Second, 10*time.Second, 10*time.Second
	asc, err := saramaConfig(&acfg)
	if err != nil {
		return nil, err
	}
	if err := ensureTopic(ctx, cfg, asc); err != nil {
		return nil, err
	}
	p, err := sarama.NewAsyncProducer(cfg.Brokers, sc)
	if err != nil {
		return nil, fmt.Errorf("kafkasink: start producer for brokers %v: %w", cfg.Brokers, err)
	}
	s := &Sink{
		cfg:         cfg,
		topic:       cfg.Topic,
		producer:    p,
		dispatchers: make(map[string]*dispatcherState),
		failed:      make(chan struct{}),
		closing:     make(chan struct{}),
		now:         time.Now,
	}
	s.drained.Add(2)
	go s.deliverSuccesses()
	go s.deliverErrors()
	return s, nil
}

func saramaConfig(cfg *Config) (*sarama.Config, error) {
	sc := sarama.NewConfig()
	sc.ClientID = cfg.ClientID
	if sc.ClientID == "" {
		sc.ClientID = "cdcspec"
	}
	sc.Version = sarama.V2_8_0_0
	sc.Producer.RequiredAcks = sarama.WaitForAll
	sc.Producer.Partitioner = sarama.NewHashPartitioner
	sc.Producer.Return.Successes = true
	sc.Producer.Return.Errors = true
	switch {
	case cfg.Retries == 0:
		sc.Producer.Retry.Max = 3
	case cfg.Retries < 0:
		sc.Producer.Retry.Max = 0
	default:
		sc.Producer.Retry.Max = cfg.Retries
	}
	sc.Producer.Retry.Backoff = orDefault(cfg.RetryBackoff, 100*time.Millisecond)
	sc.Net.DialTimeout = orDefault(cfg.DialTimeout, 10*time.Second)
	sc.Net.ReadTimeout = orDefault(cfg.ReadTimeout, 10*time.Second)
	sc.Net.WriteTimeout = orDefault(cfg.WriteTimeout, 10*time.Second)
	sc.Net.MaxOpenRequests = 1
	sc.Producer.Idempotent = cfg.Idempotent
	sc.Producer.MaxMessageBytes = 1 << 20
	sc.ChannelBufferSize = 4096
	sc.Metadata.Retry.Max = 3
	sc.Metadata.Retry.Backoff = 100 * time.Millisecond
	sc.Admin.Timeout = orDefault(cfg.ReadTimeout, 10*time.Second)
	if err := sc.Validate(); err != nil {
		return nil, fmt.Errorf("kafkasink: invalid producer config: %w", err)
	}
	return sc, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// ensureTopic creates cfg.Topic with cfg.Partitions partitions unless it
// exists. An existing topic keeps its partition count.
func ensureTopic(ctx context.Context, cfg Config, sc *sarama.Config) error {
	type result struct{ err error }
	done := make(chan result, 1)
	go func() {
		admin, err := sarama.NewClusterAdmin(cfg.Brokers, sc)
		if err != nil {
			done <- result{fmt.Errorf("kafkasink: connect to brokers %v: %w", cfg.Brokers, err)}
			return
		}
		defer admin.Close()
		err = admin.CreateTopic(cfg.Topic, &sarama.TopicDetail{
			NumPartitions:     cfg.Partitions,
			ReplicationFactor: cfg.ReplicationFactor,
		}, false)
		if err != nil && !errors.Is(err, sarama.ErrTopicAlreadyExists) {
			var te *sarama.TopicError
			if !(errors.As(err, &te) && te.Err == sarama.ErrTopicAlreadyExists) {
				done <- result{fmt.Errorf("kafkasink: create topic %q: %w", cfg.Topic, err)}
				return
			}
		}
		done <- result{}
	}()
	select {
	case r := <-done:
		return r.err
	case <-ctx.Done():
		return fmt.Errorf("kafkasink: create topic %q: %w", cfg.Topic, ctx.Err())
	}
}

// Topic returns the topic the sink writes to.
func (s *Sink) Topic() string { return s.topic }

// Write encodes rows and hands them to the producer, in order. It blocks
// while the producer's input is full (back pressure) and returns early
// with ctx's error, with the sink's first producer error once the sink has
// failed, or with ErrSinkClosed. Rows accepted before an error stay
// tracked; a row that was not handed over is never acknowledged, so a
// dispatcher's FlushedTs cannot pass it.
func (s *Sink) Write(ctx context.Context, rows ...Row) error {
	s.closeMu.RLock()
	defer s.closeMu.RUnlock()
	var buf []byte
	for i := range rows {
		r := &rows[i]
		if err := s.validate(r, i); err != nil {
			return err
		}
		select {
		case <-s.closing:
			return ErrSinkClosed
		default:
		}
		e, err := s.track(r)
		if err != nil {
			return err
		}
		buf = EncodeRow(buf[:0], r, s.now().UnixMilli())
		value := make([]byte, len(buf))
		copy(value, buf)
		msg := &sarama.ProducerMessage{
			Topic:    s.topic,
			Key:      sarama.ByteEncoder(MessageKey(r.SchemaOrDefault(), r.Table, r.Key)),
			Value:    sarama.ByteEncoder(value),
			Metadata: e,
		}
		select {
		case s.producer.Input() <- msg:
		case <-ctx.Done():
			return ctx.Err()
		case <-s.failed:
			return s.Err()
		case <-s.closing:
			return ErrSinkClosed
		}
	}
	return nil
}

// WriteRange writes the rows of one dispatcher with commit ts in
// (previous range's ts, toTs] (impl's SinkWrite) and arranges for
// OnFlushed(Flushed{dispatcher, toTs}) once they and everything the
// dispatcher wrote before are acknowledged. An empty range flushes as soon
// as the dispatcher's earlier rows are. Rows must have Dispatcher equal to
// dispatcher (or empty: it is filled in) and commit ts <= toTs. After
// WriteRange the dispatcher's commit ts floor is toTs. On an error the
// range is never reported flushed.
func (s *Sink) WriteRange(ctx context.Context, dispatcher string, toTs uint64, rows []Row) error {
	for i := range rows {
		r := &rows[i]
		if r.Dispatcher == "" {
			r.Dispatcher = dispatcher
		}
		if r.Dispatcher != dispatcher {
			return fmt.Errorf("kafkasink: WriteRange for dispatcher %q got row %d of dispatcher %q", dispatcher, i, r.Dispatcher)
		}
		if r.CommitTs > toTs {
			return fmt.Errorf("kafkasink: WriteRange for dispatcher %q up to ts %d got row %d (table %q, key %q) at commit ts %d", dispatcher, toTs, i, r.Table, r.Key, r.CommitTs)
		}
	}
	if err := s.Write(ctx, rows...); err != nil {
		return err
	}
	s.mu.Lock()
	if s.firstErr != nil {
		err := s.firstErr
		s.mu.Unlock()
		return err
	}
	d := s.dispatchers[dispatcher]
	if d == nil {
		d = &dispatcherState{id: dispatcher}
		s.dispatchers[dispatcher] = d
	}
	if toTs < d.lastTs {
		s.mu.Unlock()
		return fmt.Errorf("kafkasink: WriteRange for dispatcher %q up to ts %d after it wrote commit ts %d", dispatcher, toTs, d.lastTs)
	}
	d.lastTs = toTs
	d.marks = append(d.marks, mark{seq: d.nextSeq, ts: toTs})
	s.popMarksLocked(d)
	s.deliverLocked()
	return nil
}

func (s *Sink) validate(r *Row, i int) error {
	switch {
	case r.Changefeed != "" && s.cfg.Changefeed != "" && r.Changefeed != s.cfg.Changefeed:
		return fmt.Errorf("kafkasink: row %d belongs to changefeed %q, sink is for %q", i, r.Changefeed, s.cfg.Changefeed)
	case r.Table == "":
		return fmt.Errorf("kafkasink: row %d (dispatcher %q, commit ts %d) has no table", i, r.Dispatcher, r.CommitTs)
	case r.Key == "":
		return fmt.Errorf("kafkasink: row %d (table %q, commit ts %d) has no primary key", i, r.Table, r.CommitTs)
	case r.CommitTs == 0:
		return fmt.Errorf("kafkasink: row %d (table %q, key %q) has commit ts 0", i, r.Table, r.Key)
	case r.Op > OpDelete:
		return fmt.Errorf("kafkasink: row %d (table %q, key %q) has unknown op %d", i, r.Table, r.Key, r.Op)
	case !utf8.ValidString(r.Schema) || !utf8.ValidString(r.Table) || !utf8.ValidString(r.Key) ||
		!utf8.ValidString(r.Value) || !utf8.ValidString(r.OldValue):
		return fmt.Errorf("kafkasink: row %d (table %q, key %q, commit ts %d) has a field that is not valid UTF-8 (JSON cannot carry it)", i, r.Table, r.Key, r.CommitTs)
	}
	return nil
}

// track registers r as the next entry of its dispatcher.
func (s *Sink) track(r *Row) (*entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.firstErr != nil {
		return nil, s.firstErr
	}
	d := s.dispatchers[r.Dispatcher]
	if d == nil {
		d = &dispatcherState{id: r.Dispatcher}
		s.dispatchers[r.Dispatcher] = d
	}
	if r.CommitTs < d.lastTs {
		return nil, fmt.Errorf("kafkasink: dispatcher %q wrote commit ts %d after %d (table %q, key %q): commit ts must not decrease within a dispatcher",
			r.Dispatcher, r.CommitTs, d.lastTs, r.Table, r.Key)
	}
	d.nextSeq++
	d.lastTs = r.CommitTs
	e := &entry{d: d, seq: d.nextSeq, ts: r.CommitTs}
	d.queue = append(d.queue, e)
	s.written.Add(1)
	return e, nil
}

func (s *Sink) deliverSuccesses() {
	defer s.drained.Done()
	for msg := range s.producer.Successes() {
		e, ok := msg.Metadata.(*entry)
		if !ok {
			continue
		}
		s.acked.Add(1)
		s.markAcked(e, msg.Partition, msg.Offset)
	}
}

// markAcked records Kafka's ack of e, pops the dispatcher's in-order
// prefix of acknowledged entries and queues the acks and any flushed marks.
func (s *Sink) markAcked(e *entry, partition int32, offset int64) {
	s.mu.Lock()
	e.acked, e.partition, e.offset = true, partition, offset
	d := e.d
	if d.removed {
		s.mu.Unlock()
		return
	}
	n := 0
	for n < len(d.queue) && d.queue[n].acked {
		n++
	}
	if n == 0 {
		s.mu.Unlock()
		return
	}
	acks := make([]Ack, n)
	for i, q := range d.queue[:n] {
		acks[i] = Ack{Dispatcher: d.id, Seq: q.seq, CommitTs: q.ts, Partition: q.partition, Offset: q.offset}
	}
	d.acked += uint64(n)
	clear(d.queue[:n])
	d.queue = d.queue[n:]
	if len(d.queue) == 0 {
		d.queue = nil // let the backing array go
	}
	s.released.Add(uint64(n))
	s.outq = append(s.outq, notice{acks: acks})
	s.popMarksLocked(d)
	s.deliverLocked()
}

// popMarksLocked queues the dispatcher's marks that are now flushed.
func (s *Sink) popMarksLocked(d *dispatcherState) {
	k := 0
	for k < len(d.marks) && d.marks[k].seq <= d.acked {
		s.outq = append(s.outq, notice{flushed: &Flushed{Dispatcher: d.id, Ts: d.marks[k].ts}})
		k++
	}
	d.marks = d.marks[k:]
}

// deliverLocked is called with s.mu held and returns with it released. It
// delivers queued notices in order unless another goroutine is already
// doing so (that one will pick these up), and never holds s.mu while
// running a callback.
func (s *Sink) deliverLocked() {
	if s.delivering {
		s.mu.Unlock()
		return
	}
	s.delivering = true
	for len(s.outq) > 0 {
		batch := s.outq
		s.outq = nil
		s.mu.Unlock()
		for _, nt := range batch {
			if nt.acks != nil && s.cfg.OnAck != nil {
				s.cfg.OnAck(nt.acks)
			}
			if nt.flushed != nil && s.cfg.OnFlushed != nil {
				s.cfg.OnFlushed(*nt.flushed)
			}
		}
		s.mu.Lock()
	}
	s.delivering = false
	s.mu.Unlock()
}

func (s *Sink) deliverErrors() {
	defer s.drained.Done()
	for pe := range s.producer.Errors() {
		s.failedN.Add(1)
		err := &SendError{Err: pe}
		first := false
		s.mu.Lock()
		if e, ok := pe.Msg.Metadata.(*entry); ok {
			e.failed = true // stays at or behind the queue head forever
		}
		if s.firstErr == nil {
			s.firstErr = err
			first = true
			close(s.failed)
		}
		s.mu.Unlock()
		if first && s.cfg.OnError != nil {
			s.cfg.OnError(err)
		}
	}
}

// Err returns the first producer error (a *SendError), or nil.
func (s *Sink) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.firstErr
}

// Failed is closed when the first producer error arrives.
func (s *Sink) Failed() <-chan struct{} { return s.failed }

// Progress returns the dispatcher's progress; ok is false for a dispatcher
// that never wrote (or was removed).
func (s *Sink) Progress(dispatcher string) (p Progress, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dispatchers[dispatcher]
	if d == nil {
		return Progress{}, false
	}
	p = Progress{Written: d.nextSeq, Acked: d.acked, LastWrittenTs: d.lastTs, Pending: d.nextSeq - d.acked}
	if len(d.queue) > 0 {
		p.FlushedTs = d.queue[0].ts - 1
	} else {
		p.FlushedTs = d.lastTs
	}
	return p, true
}

// CheckpointTs is the checkpoint a dispatcher may report given its resolved
// ts (every row with commit ts <= resolvedTs has been written): resolvedTs
// when nothing is pending, else min(resolvedTs, first pending commit ts - 1).
// A failed row stays pending, so the checkpoint never passes it.
func (s *Sink) CheckpointTs(dispatcher string, resolvedTs uint64) uint64 {
	p, ok := s.Progress(dispatcher)
	if !ok || p.Pending == 0 {
		return resolvedTs
	}
	return min(resolvedTs, p.FlushedTs)
}

// RemoveDispatcher forgets a dispatcher (it was closed); acks of its
// in-flight rows are dropped.
func (s *Sink) RemoveDispatcher(dispatcher string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.dispatchers[dispatcher]; d != nil {
		d.removed = true
		delete(s.dispatchers, dispatcher)
	}
}

// Stats returns sink-wide counters.
func (s *Sink) Stats() Stats {
	return Stats{Written: s.written.Load(), Acked: s.acked.Load(), Failed: s.failedN.Load(), Released: s.released.Load()}
}

// Close stops accepting writes, lets the producer finish or fail its
// in-flight messages (this can take up to the retry budget when the broker
// does not answer), and waits until every ack and error was delivered.
// It returns the first producer error, if any. Close is idempotent.
func (s *Sink) Close() error { return s.CloseContext(context.Background()) }

// CloseContext is Close that stops waiting when ctx ends (returning
// ctx's error); the producer then finishes draining in the background and
// no callback runs after the drain. A restarting changefeed uses it so a
// hung broker (every in-flight request waiting for its read timeout) does
// not delay the restart.
func (s *Sink) CloseContext(ctx context.Context) error {
	s.closeOnce.Do(func() {
		close(s.closing)
		s.closeDDLProducer()
		s.closeMu.Lock() // waits for Writes to leave; new ones see closing
		s.producer.AsyncClose()
		s.closeMu.Unlock()
		s.drainDone = make(chan struct{})
		go func() {
			s.drained.Wait()
			close(s.drainDone)
		}()
	})
	select {
	case <-s.drainDone:
		return s.Err()
	case <-ctx.Done():
		return fmt.Errorf("kafkasink: close of topic %q still draining: %w", s.topic, ctx.Err())
	}
}
