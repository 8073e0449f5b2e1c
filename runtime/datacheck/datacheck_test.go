package datacheck

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cdcspec/runtime/kafkasink"

	"github.com/twmb/franz-go/pkg/kgo"
)

func row(table, key string, ts uint64, value string) kafkasink.Row {
	return kafkasink.Row{Table: table, Key: key, CommitTs: ts, Value: value}
}

func enc(r kafkasink.Row) []byte { return kafkasink.EncodeRow(nil, &r, 0) }

// records lays rows out in one partition per table, in the given order.
func records(rows ...kafkasink.Row) []Record {
	var out []Record
	next := map[string]int64{}
	for _, r := range rows {
		p := int32(r.Table[len(r.Table)-1] - '0')
		out = append(out, Record{Partition: p, Offset: next[r.Table], Value: enc(r)})
		next[r.Table]++
	}
	return out
}

func TestAnalyze(t *testing.T) {
	a1, a2, a3, a4 := row("t1", "a", 10, "1"), row("t1", "a", 20, "2"), row("t1", "a", 30, "3"), row("t1", "a", 40, "4")
	b1 := row("t2", "b", 15, "x")
	src := Rows{a1, a2, a3, a4, b1}
	type want struct{ produced, delivered, lost, ooo, dup, extra, malformed, split, beyond int }
	for _, tc := range []struct {
		name       string
		checkpoint uint64
		recs       []Record
		want       want
		ok         bool
		example    string
	}{
		{"clean", 40, records(a1, b1, a2, a3, a4), want{5, 5, 0, 0, 0, 0, 0, 0, 0}, true, ""},
		{"above checkpoint may be missing", 20, records(a1, a2, b1), want{3, 3, 0, 0, 0, 0, 0, 0, 0}, true, ""},
		{"above checkpoint delivered", 20, records(a1, a2, a3, b1), want{3, 4, 0, 0, 0, 0, 0, 0, 1}, true, ""},
		{"loss below checkpoint", 40, records(a1, a3, a4, b1), want{5, 4, 1, 0, 0, 0, 0, 0, 0}, false, `lost: test.t1 key "a" commit ts 20`},
		{"replay after restart is duplicates", 40, records(a1, a2, a3, a2, a3, a4, b1), want{5, 7, 0, 0, 2, 0, 0, 0, 0}, true, "duplicate"},
		{"reorder", 40, records(a1, a3, a2, a4, b1), want{5, 5, 0, 1, 0, 0, 0, 0, 0}, false, `out_of_order: test.t1 key "a" commit ts 20 at partition 1 offset 2`},
		{"failed change replayed after a later one", 40, records(a1, a3, a2, a3, a4, b1), want{5, 6, 0, 0, 1, 0, 0, 0, 0}, true, ""},
		{"stale replay after the newest change", 40, records(a1, a2, a3, a4, b1, a3), want{5, 6, 0, 1, 1, 0, 0, 0, 0}, false, "last delivered after the last delivery of commit ts 40"},
		{"extra row", 40, records(a1, a2, a3, a4, b1, row("t1", "zzz", 5, "?")), want{5, 6, 0, 0, 0, 1, 0, 0, 0}, false, "was never produced"},
		{"changed value", 40, records(a1, a2, row("t1", "a", 30, "other"), a4, b1), want{5, 5, 1, 0, 0, 1, 0, 0, 0}, false, `delivered INSERT "other"`},
		{"malformed", 40, append(records(a1, a2, a3, a4, b1), Record{Partition: 1, Offset: 9, Value: []byte("{not json")}), want{5, 6, 0, 0, 0, 0, 1, 0, 0}, false, "malformed"},
		{"split key", 40, append(records(a1, a2, a3, b1), Record{Partition: 2, Offset: 7, Value: enc(a4)}), want{5, 5, 0, 0, 0, 0, 0, 1, 0}, false, "split_key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Analyze(src, tc.checkpoint, tc.recs)
			if err != nil {
				t.Fatal(err)
			}
			got := want{rep.Produced, rep.Delivered, rep.Lost, rep.OutOfOrder, rep.Duplicates, rep.Extra, rep.Malformed, rep.SplitKeys, rep.BeyondCheckpoint}
			if tc.name == "failed change replayed after a later one" && rep.FirstDeliveryRegressions != 1 {
				t.Fatalf("first_delivery_regressions = %d, want 1", rep.FirstDeliveryRegressions)
			}
			if tc.name == "clean" && rep.FirstDeliveryRegressions != 0 {
				t.Fatalf("first_delivery_regressions = %d on a clean topic", rep.FirstDeliveryRegressions)
			}
			if got != tc.want {
				t.Fatalf("got %+v\nwant %+v\n%s", got, tc.want, rep.String())
			}
			if rep.OK() != tc.ok {
				t.Fatalf("OK() = %v, want %v: %s", rep.OK(), tc.ok, rep.String())
			}
			var all []string
			for _, e := range rep.Examples {
				all = append(all, e.String())
			}
			if tc.example != "" && !strings.Contains(strings.Join(all, "\n"), tc.example) {
				t.Fatalf("examples %q lack %q", all, tc.example)
			}
		})
	}
}

func TestAnalyzeRejectsBadInput(t *testing.T) {
	if _, err := Analyze(Rows{row("t1", "a", 1, "x"), row("t1", "a", 1, "y")}, 10, nil); err == nil || !strings.Contains(err.Error(), "produced twice") {
		t.Fatalf("conflicting produced rows: err = %v", err)
	}
	if _, err := Analyze(Rows{row("t1", "", 1, "x")}, 10, nil); err == nil {
		t.Fatal("row without key accepted")
	}
	if _, err := Analyze(Rows{row("t1", "a", 1, "x"), row("t1", "a", 1, "x")}, 10, nil); err != nil {
		t.Fatalf("identical repeated produced row rejected: %v", err)
	}
	a, err := NewAnalyzer(Rows{row("t1", "a", 1, "x")}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Add(Record{Partition: 0, Offset: 5, Value: enc(row("t1", "a", 1, "x"))}); err != nil {
		t.Fatal(err)
	}
	if err := a.Add(Record{Partition: 0, Offset: 5, Value: enc(row("t1", "a", 1, "x"))}); err == nil {
		t.Fatal("repeated offset accepted")
	}
	if rep := a.Finish(); !rep.OK() || rep.Delivered != 1 {
		t.Fatalf("report %s", rep.String())
	}
	if err := a.Add(Record{Partition: 1}); err == nil {
		t.Fatal("Add after Finish accepted")
	}
	if _, err := ReadTopic(context.Background(), Config{}); err == nil {
		t.Fatal("empty config accepted")
	}
}

func startKfake(t *testing.T) *kafkasink.Kfake {
	t.Helper()
	k, err := kafkasink.StartKfake(kafkasink.KfakeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k
}

// workload: 4 tables (one dispatcher each), 50 keys, commit ts from base.
func workload(n int, base uint64) []kafkasink.Row {
	var rows []kafkasink.Row
	for i := 0; i < n; i++ {
		d := i % 4
		rows = append(rows, kafkasink.Row{
			Changefeed: "cf", Dispatcher: fmt.Sprintf("d%d", d), Table: fmt.Sprintf("t%d", d),
			Key: fmt.Sprint(i % 50), CommitTs: base + uint64(i), Value: fmt.Sprint("v", i),
		})
	}
	return rows
}

func startSink(t *testing.T, k *kafkasink.Kfake, released *atomic.Int64, errs chan error) *kafkasink.Sink {
	t.Helper()
	s, err := kafkasink.Start(context.Background(), kafkasink.Config{
		Brokers: k.Addrs(), Changefeed: "cf", Partitions: 3, Retries: 1, RetryBackoff: 100 * time.Millisecond, ReadTimeout: 500 * time.Millisecond,
		OnAck:   func(a []kafkasink.Ack) { released.Add(int64(len(a))) },
		OnError: func(err error) { errs <- err },
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestCheckCleanRunThroughKfake(t *testing.T) {
	k := startKfake(t)
	var released atomic.Int64
	s := startSink(t, k, &released, make(chan error, 1))
	rows := workload(2000, 100)
	if err := s.Write(context.Background(), rows...); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "acks", func() bool { return released.Load() == int64(len(rows)) })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := Check(context.Background(), Config{Brokers: k.Addrs(), Topic: s.Topic()}, Rows(rows), 100+2000-1)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Produced != 2000 || rep.Delivered != 2000 || rep.Duplicates != 0 {
		t.Fatalf("%s %v", rep.String(), rep.Examples)
	}
}

// TestCheckMissingTopicIsEmpty: a changefeed that never wrote leaves no
// topic; the check reports every produced row lost instead of failing.
func TestCheckMissingTopicIsEmpty(t *testing.T) {
	k := startKfake(t)
	rows := workload(10, 1)
	rep, err := Check(context.Background(), Config{Brokers: k.Addrs(), Topic: "never-written"}, Rows(rows), 100)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Lost != 10 || rep.Delivered != 0 || rep.OK() {
		t.Fatalf("%s", rep.String())
	}
}

// TestCheckCatchesLossAfterKafkaTimeout runs the #5709-shaped story on real
// IO: a produce timeout fails the sink; the changefeed restarts from a
// checkpoint and rewrites what follows. Restarting from the sink's own
// CheckpointTs loses nothing (duplicates only); the planted bug restarts
// from the last WRITTEN ts (a checkpoint that passed unacked data) and the
// checker must report the rows lost in the timeout.
func TestCheckCatchesLossAfterKafkaTimeout(t *testing.T) {
	for _, buggy := range []bool{false, true} {
		t.Run(fmt.Sprintf("checkpointPassesUnacked=%v", buggy), func(t *testing.T) {
			k := startKfake(t)
			var released atomic.Int64
			errs := make(chan error, 1)
			s := startSink(t, k, &released, errs)
			rows := workload(400, 1000)
			ctx := context.Background()
			if err := s.Write(ctx, rows[:200]...); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "acks before the fault", func() bool { return released.Load() == 200 })
			k.TimeoutProduce(0)
			if err := s.Write(ctx, rows[200:300]...); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-errs:
				// With retries the first error may be the timeout or its
				// follow-up "broker not connected"; either fails the sink.
				if !errors.Is(err, kafkasink.ErrKafkaAsyncSendMessage) {
					t.Fatalf("unexpected sink error %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no sink error")
			}
			// Per-dispatcher restart points.
			restart := map[string]uint64{}
			for d := 0; d < 4; d++ {
				id := fmt.Sprintf("d%d", d)
				p, _ := s.Progress(id)
				if buggy {
					restart[id] = p.LastWrittenTs
				} else {
					restart[id] = s.CheckpointTs(id, p.LastWrittenTs)
				}
			}
			s.Close()
			k.Heal()

			var released2 atomic.Int64
			s2 := startSink(t, k, &released2, make(chan error, 1))
			var replay []kafkasink.Row
			for _, r := range rows {
				if r.CommitTs > restart[r.Dispatcher] {
					replay = append(replay, r)
				}
			}
			if err := s2.Write(ctx, replay...); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "acks after restart", func() bool { return released2.Load() == int64(len(replay)) })
			if err := s2.Close(); err != nil {
				t.Fatal(err)
			}
			final := rows[len(rows)-1].CommitTs
			rep, err := Check(ctx, Config{Brokers: k.Addrs(), Topic: s2.Topic()}, Rows(rows), final)
			if err != nil {
				t.Fatal(err)
			}
			t.Log(rep.String())
			if buggy {
				if rep.Lost != 100 || rep.OK() {
					t.Fatalf("planted loss not caught: %s", rep.String())
				}
				if !strings.Contains(rep.Examples[len(rep.Examples)-1].String(), "never delivered") {
					t.Fatalf("examples %v", rep.Examples)
				}
			} else if !rep.OK() || rep.Produced != 400 {
				t.Fatalf("correct restart reported %s %v", rep.String(), rep.Examples)
			}
		})
	}
}

// TestCheckCatchesPlantedReorder writes one key's changes to Kafka in the
// wrong commit-ts order (a reordering sink), with an independent producer.
func TestCheckCatchesPlantedReorder(t *testing.T) {
	k := startKfake(t)
	rows := workload(200, 1)
	out := append([]kafkasink.Row(nil), rows...)
	// Key "7" of t3 (rows 7 + 100 apart share key and table when i%50 and
	// i%4 agree): swap rows 7 and 107 (ts 8 and 108).
	out[7], out[107] = out[107], out[7]
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.Addrs()...), kgo.DefaultProduceTopic("planted"),
		kgo.AllowAutoTopicCreation(), kgo.MaxBufferedRecords(1000))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, r := range out {
		r := r
		rec := &kgo.Record{Key: kafkasink.MessageKey(r.SchemaOrDefault(), r.Table, r.Key), Value: enc(r)}
		if err := cl.ProduceSync(context.Background(), rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := Check(context.Background(), Config{Brokers: k.Addrs(), Topic: "planted"}, Rows(rows), 200)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OutOfOrder != 1 || rep.Lost != 0 || rep.OK() || rep.Delivered != 200 {
		t.Fatalf("planted reorder: %s %v", rep.String(), rep.Examples)
	}
	found := false
	for _, e := range rep.Examples {
		found = found || (e.Kind == "out_of_order" && e.CommitTs == 8 && e.Table == "t3" && e.Key == "7")
	}
	if !found {
		t.Fatalf("no out_of_order example for t3/7 at ts 8: %v", rep.Examples)
	}
}

// BenchmarkAnalyze: analysis speed per delivered row (decode + checks),
// without Kafka.
//
//	go test -run XXX -bench Analyze ./runtime/datacheck/
func BenchmarkAnalyze(b *testing.B) {
	const n = 100000
	rows := workload(n, 1)
	recs := make([]Record, n)
	for i, r := range rows {
		recs[i] = Record{Partition: int32(i % 4), Offset: int64(i / 4), Value: enc(r)}
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		rep, err := Analyze(Rows(rows), n, recs)
		if err != nil || rep.Produced != n {
			b.Fatal(err, rep.String())
		}
	}
	b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "rows/s")
}

// BenchmarkAnalyzerMemory: the heap the Analyzer keeps per produced row
// change (the figure the package doc states), over the synthetic
// upstream's shape: 4 tables of 1024 keys.
//
//	go test -run XXX -bench AnalyzerMemory -benchtime 1x ./runtime/datacheck/
func BenchmarkAnalyzerMemory(b *testing.B) {
	const n = 2_000_000
	src := sourceFunc(func(fn func(kafkasink.Row) error) error {
		for i := 0; i < n; i++ {
			t := "t" + strconv.Itoa(i%4)
			key := "k" + strconv.Itoa((i/4)%1024)
			if err := fn(kafkasink.Row{Table: t, Key: key, CommitTs: uint64(i/4096+1) << 18, Op: kafkasink.OpUpdate, Value: key}); err != nil {
				return err
			}
		}
		return nil
	})
	for i := 0; i < b.N; i++ {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		a, err := NewAnalyzer(src, ^uint64(0))
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "bytes/change")
		runtime.KeepAlive(a)
	}
}

type sourceFunc func(func(kafkasink.Row) error) error

func (f sourceFunc) ForEach(fn func(kafkasink.Row) error) error { return f(fn) }
