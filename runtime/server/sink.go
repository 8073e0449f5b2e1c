package server

import (
	"context"
	"strconv"
	"sync"
	"time"

	"cdcspec/impl/core"
	"cdcspec/runtime/kafkasink"
	"cdcspec/spec"
)

// SinkConfig configures the Kafka sinks of a capture.
type SinkConfig struct {
	Brokers      []string
	Partitions   int32
	Retries      int
	ReadTimeout  time.Duration
	WriteTimeout time.Duration
	DialTimeout  time.Duration
}

// chunkMs is the ts window of one WriteRange call.
const chunkMs = 250

// sinks is the capture's core.Sink side: one kafkasink.Sink per sink
// instance ID (one per dispatcher manager), created on its first write.
// Each instance has a writer goroutine that turns a SinkWrite into the
// upstream's rows of (FromTs, ToTs] and writes them with WriteRange; the
// result goes back to the capture loop only when every row is acknowledged
// (OnFlushed), or as a wrapped error when the producer failed.
type sinks struct {
	cfg    SinkConfig
	up     *Upstream
	node   core.NodeID
	result func(core.SinkResult)
	now    func() int64

	mu   sync.Mutex
	byID map[uint64]*sinkInst
}

type sinkInst struct {
	m  *sinks
	id uint64
	cf core.ChangefeedID

	mu      sync.Mutex
	queue   []core.SinkWrite
	wake    chan struct{}
	pending map[string]core.SinkWrite // dispatcher -> write awaiting flush
	failed  *core.RunningError
	closed  bool
	sink    *kafkasink.Sink
	ctx     context.Context
	cancel  context.CancelFunc
}

func newSinks(cfg SinkConfig, up *Upstream, node core.NodeID, result func(core.SinkResult)) *sinks {
	return &sinks{cfg: cfg, up: up, node: node, result: result, byID: map[uint64]*sinkInst{},
		now: func() int64 { return time.Now().UnixMilli() }}
}

// Submit queues a write; it never blocks.
func (m *sinks) Submit(w core.SinkWrite) {
	m.mu.Lock()
	s := m.byID[w.Sink]
	if s == nil {
		s = &sinkInst{m: m, id: w.Sink, cf: w.Changefeed, wake: make(chan struct{}, 1), pending: map[string]core.SinkWrite{}}
		s.ctx, s.cancel = context.WithCancel(context.Background())
		m.byID[w.Sink] = s
		go s.run()
	}
	m.mu.Unlock()
	s.mu.Lock()
	if s.failed != nil || s.closed {
		err := s.failed
		s.mu.Unlock()
		if err != nil {
			m.result(core.SinkResult{Changefeed: w.Changefeed, Sink: w.Sink, Dispatcher: w.Dispatcher, ToTs: w.ToTs, Err: err})
		}
		return
	}
	s.queue = append(s.queue, w)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Retain closes every sink instance not in live (its dispatcher manager
// is gone).
func (m *sinks) Retain(live map[uint64]bool) {
	m.mu.Lock()
	var drop []*sinkInst
	for id, s := range m.byID {
		if !live[id] {
			drop = append(drop, s)
			delete(m.byID, id)
		}
	}
	m.mu.Unlock()
	for _, s := range drop {
		s.close()
	}
}

// CloseAll closes every sink (process exit).
func (m *sinks) CloseAll() {
	m.Retain(nil)
}

// firstRow is the ts after which span may have row changes: the later of
// the upstream's genesis and the table's CREATE TABLE; ToTs (nothing to
// write) when the span's table does not exist or the upstream writes no
// rows.
func (m *sinks) firstRow(span spec.Span, toTs uint64) uint64 {
	cfg := m.up.Config()
	createTs, ok := m.up.TableCreateTs(span.Table)
	if span.Table == 0 || !ok || cfg.RowsPerSec <= 0 {
		return toTs
	}
	return max(createTs, uint64(max(cfg.GenesisMs, 0)))
}

func (s *sinkInst) close() {
	s.mu.Lock()
	s.closed = true
	sk := s.sink
	s.mu.Unlock()
	s.cancel()
	if sk != nil {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_ = sk.CloseContext(ctx)
		}()
	}
}

func (s *sinkInst) fail(err error) {
	s.mu.Lock()
	if s.failed != nil || s.closed {
		s.mu.Unlock()
		return
	}
	re := &core.RunningError{Time: s.m.now(), Node: s.m.node, Code: "CDC:ErrKafkaAsyncSendMessage", Message: err.Error()}
	s.failed = re
	var out []core.SinkWrite
	for _, w := range s.pending {
		out = append(out, w)
	}
	out = append(out, s.queue...)
	s.pending = map[string]core.SinkWrite{}
	s.queue = nil
	sk := s.sink
	s.mu.Unlock()
	report := func() {
		for _, w := range out {
			s.m.result(core.SinkResult{Changefeed: w.Changefeed, Sink: w.Sink, Dispatcher: w.Dispatcher, ToTs: w.ToTs, Err: re})
		}
	}
	if sk == nil {
		report()
		return
	}
	// The failed writes are reported only once the producer has drained:
	// until then sarama may still retry messages of this sink, and one landing
	// after a replacement dispatcher wrote newer changes of the same key would
	// break per-key order (found by runtime/cluster's integration test). A
	// dispatcher stays removable-but-inflight until its write's result comes
	// back, so its Stopped (and the span's next Create) waits for the drain.
	// (Called from the producer's error callback: close on another goroutine.)
	go func() {
		_ = sk.Close()
		report()
	}()
}

func (s *sinkInst) start() bool {
	cfg := kafkasink.Config{
		Brokers: s.m.cfg.Brokers, Changefeed: string(s.cf), Partitions: s.m.cfg.Partitions,
		ClientID: "cdcspec-" + string(s.m.node) + "-" + strconv.FormatUint(s.id, 16),
		Retries:  s.m.cfg.Retries, ReadTimeout: s.m.cfg.ReadTimeout, WriteTimeout: s.m.cfg.WriteTimeout, DialTimeout: s.m.cfg.DialTimeout,
		OnFlushed: func(f kafkasink.Flushed) {
			s.mu.Lock()
			w, ok := s.pending[f.Dispatcher]
			if ok && TSO(w.ToTs) == f.Ts {
				delete(s.pending, f.Dispatcher)
			} else {
				ok = false
			}
			s.mu.Unlock()
			if ok {
				s.m.result(core.SinkResult{Changefeed: w.Changefeed, Sink: w.Sink, Dispatcher: w.Dispatcher, ToTs: w.ToTs})
			}
		},
		OnError: func(err error) { s.fail(err) },
	}
	ctx, cancel := context.WithTimeout(s.ctx, 15*time.Second)
	defer cancel()
	sk, err := kafkasink.Start(ctx, cfg)
	if err != nil {
		if s.ctx.Err() == nil {
			s.fail(err)
		}
		return false
	}
	s.mu.Lock()
	s.sink = sk
	closed := s.closed
	s.mu.Unlock()
	if closed {
		go func() { _ = sk.Close() }()
		return false
	}
	return true
}

func (s *sinkInst) run() {
	started := false
	var rows []kafkasink.Row
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.wake:
		}
		for {
			s.mu.Lock()
			if len(s.queue) == 0 || s.failed != nil || s.closed {
				s.mu.Unlock()
				break
			}
			w := s.queue[0]
			s.queue = s.queue[1:]
			s.pending[string(w.Dispatcher)] = w
			s.mu.Unlock()
			if !started {
				if !s.start() {
					return
				}
				started = true
			}
			// A lagging dispatcher's range can span minutes: write it in
			// windows of chunkMs so memory stays bounded (WriteRange blocks
			// under back pressure). Only the last window's flush (ToTs)
			// completes the SinkWrite. Time before the span's first
			// possible row is skipped, not walked: a changefeed started
			// long before the upstream's first row (--start-ts) would
			// otherwise spin through billions of empty windows, and its
			// dispatcher manager could not close until they were done.
			for lo := max(w.FromTs, s.m.firstRow(w.Span, w.ToTs)); lo < w.ToTs; {
				if s.ctx.Err() != nil {
					return // closed: the instance's results no longer matter
				}
				hi := min(lo+chunkMs, w.ToTs)
				rows = rows[:0]
				s.m.up.Rows(w.Span, lo, hi, string(w.Dispatcher), func(r kafkasink.Row) {
					r.Changefeed = string(w.Changefeed)
					rows = append(rows, r)
				})
				if err := s.sink.WriteRange(s.ctx, string(w.Dispatcher), TSO(hi), rows); err != nil {
					if s.ctx.Err() != nil {
						return
					}
					s.fail(err)
					return
				}
				lo = hi
			}
			if w.ToTs <= max(w.FromTs, s.m.firstRow(w.Span, w.ToTs)) {
				if err := s.sink.WriteRange(s.ctx, string(w.Dispatcher), TSO(w.ToTs), nil); err != nil && s.ctx.Err() == nil {
					s.fail(err)
					return
				}
			}
		}
	}
}
