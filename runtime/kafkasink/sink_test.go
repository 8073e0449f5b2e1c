package kafkasink

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func startKfake(t testing.TB) *Kfake {
	t.Helper()
	k, err := StartKfake(KfakeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k
}

// ackLog collects acks and checks the in-order contract as they arrive.
type ackLog struct {
	mu      sync.Mutex
	byDisp  map[string][]Ack
	total   int
	badNote string
	cond    *sync.Cond
	sink    *Sink // when set, its error is reported by wait
}

func newAckLog() *ackLog {
	l := &ackLog{byDisp: map[string][]Ack{}}
	l.cond = sync.NewCond(&l.mu)
	return l
}

func (l *ackLog) onAck(acks []Ack) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, a := range acks {
		if a.Dispatcher != acks[0].Dispatcher && l.badNote == "" {
			l.badNote = fmt.Sprintf("batch mixes dispatchers %q and %q", acks[0].Dispatcher, a.Dispatcher)
		}
		prev := l.byDisp[a.Dispatcher]
		want := uint64(len(prev)) + 1
		if a.Seq != want && l.badNote == "" {
			l.badNote = fmt.Sprintf("dispatcher %q: ack seq %d, want %d (out of order)", a.Dispatcher, a.Seq, want)
		}
		l.byDisp[a.Dispatcher] = append(prev, a)
		l.total++
	}
	l.cond.Broadcast()
}

func (l *ackLog) wait(t *testing.T, n int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.total < n {
		if time.Now().After(deadline) {
			var serr error
			if l.sink != nil {
				serr = l.sink.Err()
			}
			t.Fatalf("got %d acks, want %d within %v (sink error: %v)", l.total, n, d, serr)
		}
		l.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		l.mu.Lock()
	}
	if l.badNote != "" {
		t.Fatal(l.badNote)
	}
}

func genRows(cf string, dispatchers, perDispatcher int, baseTs uint64) []Row {
	var rows []Row
	for i := 0; i < perDispatcher; i++ {
		for d := 0; d < dispatchers; d++ {
			rows = append(rows, Row{
				Changefeed: cf,
				Dispatcher: fmt.Sprintf("d%d", d),
				Table:      fmt.Sprintf("t%d", d),
				Key:        fmt.Sprintf("k%d", i%37),
				CommitTs:   baseTs + uint64(i),
				Op:         Op(i % 3),
				Value:      fmt.Sprintf("v%d \"quoted\" <%d>", i, d),
				OldValue:   "old",
			})
		}
	}
	return rows
}

// consumeAll reads every record of topic from the start until it has n.
func consumeAll(t *testing.T, brokers []string, topic string, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for len(recs) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d records of %s, want %d: %v", len(recs), topic, n, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		recs = append(recs, fs.Records()...)
	}
	return recs
}

func TestRoundTripThroughKfake(t *testing.T) {
	for _, brokers := range []int{1, 3} {
		t.Run(fmt.Sprintf("brokers=%d", brokers), func(t *testing.T) { testRoundTrip(t, brokers) })
	}
}

func testRoundTrip(t *testing.T, brokers int) {
	k, err := StartKfake(KfakeConfig{Brokers: brokers})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if got := len(k.Addrs()); got != brokers {
		t.Fatalf("%d broker addresses, want %d", got, brokers)
	}
	acks := newAckLog()
	s, err := Start(context.Background(), Config{
		Brokers: k.Addrs(), Changefeed: "default/cf-1", Partitions: 4, OnAck: acks.onAck,
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.Topic() != "cdcspec-default_cf-1" {
		t.Fatalf("topic %q", s.Topic())
	}
	rows := genRows("default/cf-1", 3, 500, 1000)
	if err := s.Write(context.Background(), rows...); err != nil {
		t.Fatal(err)
	}
	acks.wait(t, len(rows), 10*time.Second)
	for d := 0; d < 3; d++ {
		p, ok := s.Progress(fmt.Sprintf("d%d", d))
		if !ok || p.Pending != 0 || p.Written != 500 || p.Acked != 500 || p.FlushedTs != 1499 {
			t.Fatalf("dispatcher d%d progress %+v ok=%v", d, p, ok)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	recs := consumeAll(t, k.Addrs(), s.Topic(), len(rows))
	if len(recs) != len(rows) {
		t.Fatalf("consumed %d, produced %d", len(recs), len(rows))
	}
	type pos struct {
		p int32
		o int64
	}
	ackAt := map[pos]Ack{}
	for _, as := range acks.byDisp {
		for _, a := range as {
			ackAt[pos{a.Partition, a.Offset}] = a
		}
	}
	want := map[string]Row{}
	for _, r := range rows {
		want[fmt.Sprintf("%s/%s/%d", r.Table, r.Key, r.CommitTs)] = r
	}
	keyPart := map[string]int32{}
	lastTs := map[string]uint64{}
	parts := map[int32]bool{}
	for _, rec := range recs {
		got, err := DecodeMessage(rec.Value)
		if err != nil {
			t.Fatalf("offset %d: %v", rec.Offset, err)
		}
		id := fmt.Sprintf("%s/%s/%d", got.Table, got.Key, got.CommitTs)
		w, ok := want[id]
		if !ok {
			t.Fatalf("consumed a row never produced: %+v", got)
		}
		w.Schema = DefaultSchema
		if got.Op != OpUpdate {
			w.OldValue = ""
		}
		if got != w {
			t.Fatalf("decoded %+v, produced %+v", got, w)
		}
		if string(rec.Key) != string(MessageKey(DefaultSchema, got.Table, got.Key)) {
			t.Fatalf("message key %q", rec.Key)
		}
		a, ok := ackAt[pos{rec.Partition, rec.Offset}]
		if !ok || a.CommitTs != got.CommitTs || a.Dispatcher != got.Dispatcher {
			t.Fatalf("record %d/%d (%s) has ack %+v ok=%v", rec.Partition, rec.Offset, id, a, ok)
		}
		k := got.Table + "/" + got.Key
		if p, seen := keyPart[k]; seen && p != rec.Partition {
			t.Fatalf("key %s in partitions %d and %d", k, p, rec.Partition)
		}
		keyPart[k] = rec.Partition
		if got.CommitTs < lastTs[k] {
			t.Fatalf("key %s: commit ts %d after %d", k, got.CommitTs, lastTs[k])
		}
		lastTs[k] = got.CommitTs
		parts[rec.Partition] = true
	}
	if len(parts) != 4 {
		t.Fatalf("records in %d partitions, want 4", len(parts))
	}
}

func TestTimeoutSurfacesAsWrappedIOTimeout(t *testing.T) {
	k := startKfake(t)
	acks := newAckLog()
	errCh := make(chan error, 4)
	s, err := Start(context.Background(), Config{
		Brokers: k.Addrs(), Changefeed: "cf", Partitions: 2, Retries: -1,
		ReadTimeout: 2 * time.Second, OnAck: acks.onAck,
		OnError: func(err error) { errCh <- err },
	})
	if err != nil {
		t.Fatal(err)
	}
	acks.sink = s
	defer s.Close()
	ctx := context.Background()
	before := genRows("cf", 1, 20, 100)
	if err := s.Write(ctx, before...); err != nil {
		t.Fatal(err)
	}
	acks.wait(t, 20, 5*time.Second)

	k.TimeoutProduce(0)
	start := time.Now()
	during := genRows("cf", 1, 20, 200)
	if err := s.Write(ctx, during...); err != nil {
		t.Fatal(err)
	}
	var got error
	select {
	case got = <-errCh:
	case <-time.After(10 * time.Second):
		t.Fatal("no producer error within 10s of a produce timeout")
	}
	took := time.Since(start)
	msg := got.Error()
	const prefix = "[CDC:ErrKafkaAsyncSendMessage]kafka async send message failed: kafka: Failed to produce message to topic cdcspec-cf: read tcp "
	if !strings.HasPrefix(msg, prefix) || !strings.HasSuffix(msg, ": i/o timeout") {
		t.Fatalf("error %q, want prefix %q and suffix \": i/o timeout\"", msg, prefix)
	}
	if !errors.Is(got, ErrKafkaAsyncSendMessage) || !errors.Is(got, os.ErrDeadlineExceeded) {
		t.Fatalf("errors.Is chain broken for %v", got)
	}
	var ne net.Error
	var pe *sarama.ProducerError
	if !errors.As(got, &ne) || !ne.Timeout() || !errors.As(got, &pe) {
		t.Fatalf("error %v is not a net timeout inside a *sarama.ProducerError", got)
	}
	if took < 1900*time.Millisecond {
		t.Fatalf("error after %v, before the 2s read timeout could expire", took)
	}
	if k.SwallowedProduces() == 0 {
		t.Fatal("no produce request was swallowed")
	}
	if !errors.Is(s.Err(), ErrKafkaAsyncSendMessage) {
		t.Fatalf("Err() = %v", s.Err())
	}
	select {
	case <-s.Failed():
	default:
		t.Fatal("Failed() not closed")
	}
	k.Heal()
	if err := s.Write(ctx, genRows("cf", 1, 1, 300)...); !errors.Is(err, ErrKafkaAsyncSendMessage) {
		t.Fatalf("Write on a failed sink returned %v", err)
	}
	if err := s.Close(); !errors.Is(err, ErrKafkaAsyncSendMessage) {
		t.Fatalf("Close returned %v", err)
	}

	// No failed row was ever acknowledged, and the checkpoint is held below
	// the first failed row.
	acks.mu.Lock()
	defer acks.mu.Unlock()
	if acks.badNote != "" {
		t.Fatal(acks.badNote)
	}
	for _, a := range acks.byDisp["d0"] {
		if a.CommitTs >= 200 {
			t.Fatalf("row with commit ts %d acknowledged though its produce timed out", a.CommitTs)
		}
	}
	st := s.Stats()
	if st.Failed == 0 || st.Released != 20 {
		t.Fatalf("stats %+v: want failures and exactly the 20 pre-fault rows released", st)
	}
	p, _ := s.Progress("d0")
	if p.FlushedTs != 199 || p.Pending != 20 {
		t.Fatalf("progress %+v, want FlushedTs 199 and 20 pending", p)
	}
	if cp := s.CheckpointTs("d0", 1000); cp != 199 {
		t.Fatalf("CheckpointTs = %d, want 199", cp)
	}
}

func TestTimeoutHealsWithinRetryBudget(t *testing.T) {
	k := startKfake(t)
	acks := newAckLog()
	var errs sync.Map
	s, err := Start(context.Background(), Config{
		Brokers: k.Addrs(), Changefeed: "cf", Partitions: 2, Retries: 5,
		RetryBackoff: 50 * time.Millisecond, ReadTimeout: 500 * time.Millisecond,
		OnAck: acks.onAck, OnError: func(err error) { errs.Store("e", err) },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	k.TimeoutProduce(600 * time.Millisecond)
	rows := genRows("cf", 2, 50, 10)
	if err := s.Write(context.Background(), rows...); err != nil {
		t.Fatal(err)
	}
	acks.wait(t, len(rows), 10*time.Second)
	if e, ok := errs.Load("e"); ok {
		t.Fatalf("error despite retries outlasting the fault: %v", e)
	}
	if k.SwallowedProduces() == 0 {
		t.Fatal("fault never fired")
	}
	if k.ProduceTimingOut() {
		t.Fatal("fault did not expire")
	}
}

// TestAcksHeldBehindFailedRow drives the in-order tracker directly: Kafka
// acks arrive out of order and one row fails; nothing behind the failed
// row may be released, and FlushedTs stops below it.
func TestAcksHeldBehindFailedRow(t *testing.T) {
	var got []Ack
	var flushed []Flushed
	s := &Sink{dispatchers: map[string]*dispatcherState{}, failed: make(chan struct{}),
		cfg: Config{OnAck: func(a []Ack) { got = append(got, a...) }, OnFlushed: func(f Flushed) { flushed = append(flushed, f) }}}
	var es []*entry
	for i, ts := range []uint64{10, 10, 11, 12, 13} {
		e, err := s.track(&Row{Dispatcher: "d", Table: "t", Key: fmt.Sprint(i), CommitTs: ts})
		if err != nil {
			t.Fatal(err)
		}
		es = append(es, e)
		if i == 1 { // a range mark after the two rows at ts 10
			s.mu.Lock()
			s.dispatchers["d"].marks = append(s.dispatchers["d"].marks, mark{seq: 2, ts: 10})
			s.mu.Unlock()
		}
	}
	if _, err := s.track(&Row{Dispatcher: "d", Table: "t", Key: "x", CommitTs: 9}); err == nil {
		t.Fatal("commit ts regression within a dispatcher accepted")
	}
	s.markAcked(es[1], 0, 1)
	if len(got) != 0 || len(flushed) != 0 {
		t.Fatalf("released %v %v before seq 1 was acked", got, flushed)
	}
	if cp := s.CheckpointTs("d", 100); cp != 9 {
		t.Fatalf("checkpoint %d, want 9", cp)
	}
	s.markAcked(es[0], 0, 0)
	if len(got) != 2 || got[0].Seq != 1 || got[1].Seq != 2 || got[1].Offset != 1 {
		t.Fatalf("released %+v, want seqs 1,2", got)
	}
	if len(flushed) != 1 || flushed[0] != (Flushed{"d", 10}) {
		t.Fatalf("flushed %+v, want d up to 10", flushed)
	}
	es[2].failed = true // row at ts 11 failed
	s.markAcked(es[3], 1, 0)
	s.markAcked(es[4], 1, 1)
	if len(got) != 2 {
		t.Fatalf("released %+v past a failed row", got[2:])
	}
	p, _ := s.Progress("d")
	if p.FlushedTs != 10 || p.Acked != 2 || p.Pending != 3 {
		t.Fatalf("progress %+v, want FlushedTs 10, Acked 2, Pending 3", p)
	}
	if cp := s.CheckpointTs("d", 100); cp != 10 {
		t.Fatalf("checkpoint %d, want 10", cp)
	}
	if cp := s.CheckpointTs("other", 100); cp != 100 {
		t.Fatalf("checkpoint of an idle dispatcher %d, want its resolved ts 100", cp)
	}
}

// TestWriteRangeFlushes maps impl's SinkWrite/SinkResult: ranges are
// reported flushed in order, an empty range right after its predecessors,
// and a range with a failed row never.
func TestWriteRangeFlushes(t *testing.T) {
	k := startKfake(t)
	var mu sync.Mutex
	var flushed []Flushed
	errCh := make(chan error, 1)
	s, err := Start(context.Background(), Config{
		Brokers: k.Addrs(), Changefeed: "cf", Partitions: 3, Retries: 1, RetryBackoff: 100 * time.Millisecond, ReadTimeout: time.Second,
		OnFlushed: func(f Flushed) {
			mu.Lock()
			flushed = append(flushed, f)
			mu.Unlock()
		},
		OnError: func(err error) { errCh <- err },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	mk := func(from, to uint64) []Row {
		var rows []Row
		for ts := from + 1; ts <= to; ts++ {
			rows = append(rows, Row{Table: "t", Key: fmt.Sprint(ts % 7), CommitTs: ts, Value: "v"})
		}
		return rows
	}
	for _, rg := range [][2]uint64{{0, 50}, {50, 50}, {50, 120}, {120, 130}} {
		if err := s.WriteRange(ctx, "d1", rg[1], mk(rg[0], rg[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.WriteRange(ctx, "d2", 5, nil); err != nil { // empty first range
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(flushed)
		mu.Unlock()
		if n == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("flushed %v, want 5 marks", flushed)
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	var d1 []uint64
	for _, f := range flushed {
		if f.Dispatcher == "d1" {
			d1 = append(d1, f.Ts)
		}
	}
	mu.Unlock()
	if fmt.Sprint(d1) != "[50 50 120 130]" {
		t.Fatalf("d1 flushed %v, want [50 50 120 130] in order", d1)
	}
	if p, _ := s.Progress("d1"); p.FlushedTs != 130 || p.Pending != 0 {
		t.Fatalf("progress %+v", p)
	}
	if err := s.WriteRange(ctx, "d1", 200, mk(100, 200)); err == nil {
		t.Fatal("range below the dispatcher's floor accepted")
	}
	if err := s.WriteRange(ctx, "d1", 140, []Row{{Dispatcher: "other", Table: "t", Key: "k", CommitTs: 135}}); err == nil {
		t.Fatal("row of another dispatcher accepted")
	}

	k.TimeoutProduce(0)
	if err := s.WriteRange(ctx, "d1", 150, mk(130, 150)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-errCh:
	case <-time.After(10 * time.Second):
		t.Fatal("no error")
	}
	k.Heal()
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(flushed) != 5 {
		t.Fatalf("a range with failed rows was reported flushed: %v", flushed[5:])
	}
}

func TestStartRejectsBadConfig(t *testing.T) {
	ctx := context.Background()
	for _, c := range []Config{{}, {Brokers: []string{"127.0.0.1:1"}}, {Brokers: []string{"127.0.0.1:1"}, Topic: "x", Partitions: -1}} {
		if _, err := Start(ctx, c); err == nil {
			t.Fatalf("Start(%+v) succeeded", c)
		}
	}
}

func TestWriteRejectsBadRows(t *testing.T) {
	k := startKfake(t)
	s, err := Start(context.Background(), Config{Brokers: k.Addrs(), Changefeed: "cf"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, r := range []Row{
		{Table: "", Key: "k", CommitTs: 1},
		{Table: "t", Key: "", CommitTs: 1},
		{Table: "t", Key: "k", CommitTs: 0},
		{Changefeed: "other", Table: "t", Key: "k", CommitTs: 1},
		{Table: "t", Key: "k", CommitTs: 1, Op: 7},
		{Table: "t", Key: "k", CommitTs: 1, Value: "bad \xff utf-8"},
	} {
		if err := s.Write(context.Background(), r); err == nil {
			t.Fatalf("Write(%+v) accepted", r)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(context.Background(), Row{Table: "t", Key: "k", CommitTs: 1}); !errors.Is(err, ErrSinkClosed) {
		t.Fatalf("Write after Close: %v", err)
	}
}

func TestKfakeFixedListenAddr(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	k, err := StartKfake(KfakeConfig{ListenAddr: addr, Brokers: 2, Topics: []string{"seeded"}})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if got := k.Addrs(); len(got) != 2 || got[0] != addr || !strings.HasPrefix(got[1], "127.0.0.1:") || got[1] == addr {
		t.Fatalf("Addrs() = %v, want [%s 127.0.0.1:<other>]", got, addr)
	}
	for _, bad := range []string{"nonsense", "0.0.0.0:9092", "127.0.0.1:x"} {
		if _, err := StartKfake(KfakeConfig{ListenAddr: bad}); err == nil {
			t.Fatalf("StartKfake(%q) succeeded", bad)
		}
	}
}

func TestResetAndFailProduceFaults(t *testing.T) {
	k := startKfake(t)
	for _, tc := range []struct {
		name   string
		inject func() func()
		want   string
	}{
		{"reset", func() func() { k.ResetProduce(0); return k.Heal }, ": EOF"},
		{"non-retriable error code", func() func() {
			h := k.FailProduce("", kerr.MessageTooLarge, -1)
			return func() { h.Remove() }
		}, "kafka server: Message was too large, server rejected it to avoid allocation error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errCh := make(chan error, 1)
			s, err := Start(context.Background(), Config{
				Brokers: k.Addrs(), Topic: "fault-" + strings.ReplaceAll(tc.name, " ", "-"), Partitions: 1, Retries: 1,
				RetryBackoff: 10 * time.Millisecond, OnError: func(err error) { errCh <- err },
			})
			if err != nil {
				t.Fatal(err)
			}
			heal := tc.inject()
			defer heal()
			if err := s.Write(context.Background(), genRows("", 1, 3, 1)...); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-errCh:
				if !strings.HasPrefix(err.Error(), ErrKafkaAsyncSendMessage.Error()+": kafka: Failed to produce message to topic ") ||
					!strings.HasSuffix(err.Error(), tc.want) {
					t.Fatalf("error %q, want suffix %q", err, tc.want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("no error")
			}
			heal()
			s.Close()
		})
	}
	if k.ResetProduces() == 0 {
		t.Fatal("reset fault never fired")
	}
}

// TestCloseContextDoesNotWaitForHungBroker: with produce requests hanging
// and a long read timeout, CloseContext returns at its deadline.
func TestCloseContextDoesNotWaitForHungBroker(t *testing.T) {
	k := startKfake(t)
	s, err := Start(context.Background(), Config{Brokers: k.Addrs(), Topic: "hung", Partitions: 1, Retries: -1,
		ReadTimeout: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	k.TimeoutProduce(0)
	if err := s.Write(context.Background(), genRows("", 1, 5, 1)...); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the produce request is in flight
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = s.CloseContext(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > time.Second {
		t.Fatalf("CloseContext = %v after %v, want a deadline error at ~200ms", err, time.Since(start))
	}
	k.Heal()
	if err := s.Close(); !errors.Is(err, ErrKafkaAsyncSendMessage) { // waits for the drain
		t.Fatalf("Close after drain = %v, want the timeout error", err)
	}
}
