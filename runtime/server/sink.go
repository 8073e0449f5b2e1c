package server

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"cdcspec/impl/core"
	"cdcspec/runtime/datacheck"
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
	// cut: dispatchers whose write in flight is to be cut (SinkCancel);
	// cleared when the write ends, cut or flushed.
	cut map[string]bool
	// active is the dispatcher whose write run is cutting into windows
	// ("" between writes).
	active string
	sink   *kafkasink.Sink
	// startMu serializes starting sink (the writer goroutine and a block
	// event write may both need it first).
	startMu sync.Mutex
	ctx     context.Context
	cancel  context.CancelFunc
}

func newSinks(cfg SinkConfig, up *Upstream, node core.NodeID, result func(core.SinkResult)) *sinks {
	return &sinks{cfg: cfg, up: up, node: node, result: result, byID: map[uint64]*sinkInst{},
		now: func() int64 { return time.Now().UnixMilli() }}
}

// instance returns the sink instance id, created (with its writer
// goroutine) on first use.
func (m *sinks) instance(id uint64, cf core.ChangefeedID) *sinkInst {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.byID[id]
	if s == nil {
		s = &sinkInst{m: m, id: id, cf: cf, wake: make(chan struct{}, 1), pending: map[string]core.SinkWrite{},
			cut: map[string]bool{}}
		s.ctx, s.cancel = context.WithCancel(context.Background())
		m.byID[id] = s
		go s.run()
	}
	return s
}

// ddlWriteTimeout bounds one block event write: the capture's loop waits
// for it, as TiCDC's dispatcher waits for WriteBlockEvent.
const ddlWriteTimeout = 5 * time.Second

// WriteBlockEvent implements core.Options.WriteBlockEvent: the DDL goes to
// every partition of the topic through the dispatcher manager's sink
// (kafkasink.Sink.WriteDDL) and the call returns once Kafka acknowledged
// every copy. A syncpoint writes nothing: TiCDC's Kafka sink does not take
// syncpoint events (syncpoints are a MySQL-sink feature), so for it the
// barrier only aligns the dispatchers.
func (m *sinks) WriteBlockEvent(w core.BlockEventWrite) *core.RunningError {
	if w.Event.IsSyncPoint {
		return nil
	}
	s := m.instance(w.Sink, w.Changefeed)
	s.mu.Lock()
	failed, closed := s.failed, s.closed
	s.mu.Unlock()
	if failed != nil {
		return failed
	}
	if closed || !s.ensureStarted() {
		return s.errorOf(kafkasink.ErrSinkClosed)
	}
	s.mu.Lock()
	sk := s.sink
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(s.ctx, ddlWriteTimeout)
	defer cancel()
	err := sk.WriteDDL(ctx, kafkasink.DDL{Changefeed: string(w.Changefeed), Dispatcher: string(w.Dispatcher),
		Table: ddlTable(w.Event), Type: ddlType(w.Event), Query: w.Event.Query, CommitTs: spec.TSO(w.Event.CommitTs)})
	if err != nil {
		return s.errorOf(err)
	}
	return nil
}

func (s *sinkInst) errorOf(err error) *core.RunningError {
	return &core.RunningError{Time: s.m.now(), Node: s.m.node, Code: "CDC:ErrKafkaAsyncSendMessage", Message: err.Error()}
}

// ddlTable is the canal-json "table" of a block event's message: the first
// blocked table ("" for a database-level DDL).
func ddlTable(ev core.BlockEvent) string {
	for _, t := range ev.BlockTables {
		if t != 0 {
			return TableName(t)
		}
	}
	return ""
}

// ddlType is canal-json's event type of a block event's message.
func ddlType(ev core.BlockEvent) string {
	switch {
	case len(ev.NeedDropped) > 0 && len(ev.NeedAdded) > 0:
		return "TRUNCATE"
	case len(ev.NeedDropped) > 0:
		return "ERASE"
	case strings.HasPrefix(ev.Query, "rename"):
		return "RENAME"
	case strings.HasPrefix(ev.Query, "alter"):
		return "ALTER"
	}
	return "QUERY"
}

// BlockDDLs is the datacheck history of up's blocking DDLs (syncpoints,
// which the Kafka sink does not write, left out).
func BlockDDLs(up *Upstream) []datacheck.BlockDDL {
	var out []datacheck.BlockDDL
	for _, ev := range up.BlockEvents() {
		if ev.IsSyncPoint {
			continue
		}
		d := datacheck.BlockDDL{CommitTs: spec.TSO(ev.CommitTs), Query: ev.Query}
		if ev.Influence == spec.InfluenceNormal {
			d.Tables = []string{}
			for _, t := range ev.BlockTables {
				if t != 0 {
					d.Tables = append(d.Tables, TableName(t))
				}
			}
		}
		out = append(out, d)
	}
	return out
}

// Submit queues a write; it never blocks.
func (m *sinks) Submit(w core.SinkWrite) {
	s := m.instance(w.Sink, w.Changefeed)
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

// cutNow ends w as cut when a SinkCancel named its dispatcher: the write
// is reported with ToTs = FromTs and its late flush ignored. done: the
// write's windows were all written (run no longer holds it active).
func (s *sinkInst) cutNow(w core.SinkWrite, done bool) bool {
	d := string(w.Dispatcher)
	s.mu.Lock()
	if done {
		s.active = ""
	}
	if !s.cut[d] {
		s.mu.Unlock()
		return false
	}
	delete(s.cut, d)
	_, awaiting := s.pending[d]
	delete(s.pending, d)
	s.active = ""
	s.mu.Unlock()
	if awaiting {
		s.m.result(core.SinkResult{Changefeed: w.Changefeed, Sink: w.Sink, Dispatcher: w.Dispatcher, ToTs: w.FromTs})
	}
	return true
}

// writing reports whether run is cutting d's write into windows; s.mu held.
func (s *sinkInst) writing(d string) bool { return s.active == d }

// Cancel marks the dispatcher's write in flight, queued or being written,
// to be cut at the next window (core.SinkCancel); a write already written
// and awaiting its flush is cut at once. A cut write is reported with
// ToTs = FromTs. Nothing in flight: nothing to cut.
func (m *sinks) Cancel(c core.SinkCancel) {
	m.mu.Lock()
	s := m.byID[c.Sink]
	m.mu.Unlock()
	if s == nil {
		return
	}
	d := string(c.Dispatcher)
	s.mu.Lock()
	w, awaiting := s.pending[d]
	queued := false
	for _, q := range s.queue {
		queued = queued || string(q.Dispatcher) == d
	}
	if !awaiting && !queued {
		s.mu.Unlock()
		return
	}
	s.cut[d] = true
	if awaiting && !s.writing(d) {
		// Every window was written; only the flush is awaited.
		delete(s.pending, d)
		delete(s.cut, d)
		s.mu.Unlock()
		m.result(core.SinkResult{Changefeed: w.Changefeed, Sink: w.Sink, Dispatcher: w.Dispatcher, ToTs: w.FromTs})
		return
	}
	s.mu.Unlock()
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

// ensureStarted starts the instance's kafkasink.Sink unless it runs;
// false: it could not start (the instance failed or closed).
func (s *sinkInst) ensureStarted() bool {
	s.startMu.Lock()
	defer s.startMu.Unlock()
	s.mu.Lock()
	started := s.sink != nil
	s.mu.Unlock()
	return started || s.start()
}

func (s *sinkInst) start() bool {
	cfg := kafkasink.Config{
		Brokers: s.m.cfg.Brokers, Changefeed: string(s.cf), Partitions: s.m.cfg.Partitions,
		ClientID: "cdcspec-" + string(s.m.node) + "-" + strconv.FormatUint(s.id, 16),
		Retries:  s.m.cfg.Retries, ReadTimeout: s.m.cfg.ReadTimeout, WriteTimeout: s.m.cfg.WriteTimeout, DialTimeout: s.m.cfg.DialTimeout,
		OnFlushed: func(f kafkasink.Flushed) {
			s.mu.Lock()
			w, ok := s.pending[f.Dispatcher]
			if ok && spec.TSO(w.ToTs) == f.Ts {
				delete(s.pending, f.Dispatcher)
				delete(s.cut, f.Dispatcher)
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
			d := string(w.Dispatcher)
			if s.cut[d] {
				delete(s.cut, d)
				s.mu.Unlock()
				s.m.result(core.SinkResult{Changefeed: w.Changefeed, Sink: w.Sink, Dispatcher: w.Dispatcher, ToTs: w.FromTs})
				continue
			}
			s.pending[d] = w
			s.active = d
			s.mu.Unlock()
			if !s.ensureStarted() {
				return
			}
			// A lagging dispatcher's range can span minutes: write it in
			// windows of chunkMs so memory stays bounded (WriteRange blocks
			// under back pressure). Only the last window's flush (ToTs)
			// completes the SinkWrite. Time before the span's first
			// possible row is skipped, not walked: a changefeed started
			// long before the upstream's first row (--start-ts) would
			// otherwise spin through billions of empty windows, and its
			// dispatcher manager could not close until they were done.
			cut := false
			for lo := max(w.FromTs, s.m.firstRow(w.Span, w.ToTs)); lo < w.ToTs; {
				if s.ctx.Err() != nil {
					return // closed: the instance's results no longer matter
				}
				if cut = s.cutNow(w, false); cut {
					break
				}
				hi := min(lo+chunkMs, w.ToTs)
				rows = rows[:0]
				s.m.up.Rows(w.Span, lo, hi, string(w.Dispatcher), func(r kafkasink.Row) {
					r.Changefeed = string(w.Changefeed)
					rows = append(rows, r)
				})
				if err := s.sink.WriteRange(s.ctx, string(w.Dispatcher), spec.TSO(hi), rows); err != nil {
					if s.ctx.Err() != nil {
						return
					}
					s.fail(err)
					return
				}
				lo = hi
			}
			if !cut && w.ToTs <= max(w.FromTs, s.m.firstRow(w.Span, w.ToTs)) {
				if err := s.sink.WriteRange(s.ctx, string(w.Dispatcher), spec.TSO(w.ToTs), nil); err != nil && s.ctx.Err() == nil {
					s.fail(err)
					return
				}
			}
			if !cut {
				s.cutNow(w, true) // a cancel that came during the last window
			}
		}
	}
}
