package kafkasink

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkSinkThroughput measures rows/s from Write to the in-order ack,
// through sarama to an embedded kfake broker over loopback TCP (4
// partitions, 8 dispatchers, ~40-byte values, default producer settings).
//
//	go test -run XXX -bench SinkThroughput -benchtime 200000x ./runtime/kafkasink/
func BenchmarkSinkThroughput(b *testing.B) {
	k := startKfake(b)
	var released atomic.Int64
	s, err := Start(context.Background(), Config{
		Brokers: k.Addrs(), Changefeed: "bench", Partitions: 4,
		OnAck: func(a []Ack) { released.Add(int64(len(a))) },
	})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const dispatchers = 8
	rows := make([]Row, 0, 1024)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; {
		rows = rows[:0]
		for j := 0; j < cap(rows) && i < b.N; j, i = j+1, i+1 {
			d := i % dispatchers
			rows = append(rows, Row{
				Dispatcher: disp[d], Table: tables[d], Key: fmt.Sprint(i % 1000),
				CommitTs: uint64(1000 + i/dispatchers), Value: "value-0123456789-0123456789-0123456789",
			})
		}
		if err := s.Write(context.Background(), rows...); err != nil {
			b.Fatal(err)
		}
	}
	for released.Load() < int64(b.N) {
		if err := s.Err(); err != nil {
			b.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	el := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/el.Seconds(), "rows/s")
}

var disp, tables = func() (d, t [8]string) {
	for i := range d {
		d[i] = fmt.Sprintf("dispatcher-%d", i)
		t[i] = fmt.Sprintf("t%d", i)
	}
	return
}()
