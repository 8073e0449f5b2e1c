package kafkasink

import (
	"context"
	"fmt"
	"sync/atomic"
	"syscall"
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
	cpu0 := cpuTime()
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
	cpu := cpuTime() - cpu0
	b.StopTimer()
	b.ReportMetric(float64(b.N)/el.Seconds(), "rows/s")
	// CPU per row (user+sys of the whole process: sink, sarama and the
	// in-process kfake broker) does not depend on what else the machine
	// runs; 2 cores / this = the throughput ceiling on an idle box.
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/1000, "cpu-µs/row")
}

// cpuTime is the process's user+sys CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var disp, tables = func() (d, t [8]string) {
	for i := range d {
		d[i] = fmt.Sprintf("dispatcher-%d", i)
		t[i] = fmt.Sprintf("t%d", i)
	}
	return
}()

// BenchmarkTimeoutRecovery measures, per iteration, how long a produce
// timeout takes to surface as the wrapped error (ReadTimeout 1s, Retries 1,
// backoff 100ms: expected ~2.1s) and how long a replacement sink takes,
// after Heal, from Start to the first in-order ack.
//
//	go test -run XXX -bench TimeoutRecovery -benchtime 2x ./runtime/kafkasink/
func BenchmarkTimeoutRecovery(b *testing.B) {
	k := startKfake(b)
	var detect, recover time.Duration
	for i := 0; i < b.N; i++ {
		errCh := make(chan error, 1)
		s, err := Start(context.Background(), Config{Brokers: k.Addrs(), Changefeed: "recovery", Partitions: 4,
			Retries: 1, ReadTimeout: time.Second, OnError: func(err error) { errCh <- err }})
		if err != nil {
			b.Fatal(err)
		}
		k.TimeoutProduce(0)
		start := time.Now()
		if err := s.Write(context.Background(), Row{Dispatcher: "d", Table: "t", Key: "k", CommitTs: uint64(2*i + 1)}); err != nil {
			b.Fatal(err)
		}
		<-errCh
		detect += time.Since(start)
		k.Heal()
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		s.CloseContext(ctx)
		cancel()

		start = time.Now()
		acked := make(chan struct{}, 1)
		s2, err := Start(context.Background(), Config{Brokers: k.Addrs(), Changefeed: "recovery", Partitions: 4,
			OnAck: func([]Ack) { acked <- struct{}{} }})
		if err != nil {
			b.Fatal(err)
		}
		if err := s2.Write(context.Background(), Row{Dispatcher: "d", Table: "t", Key: "k", CommitTs: uint64(2*i + 2)}); err != nil {
			b.Fatal(err)
		}
		<-acked
		recover += time.Since(start)
		s2.Close()
	}
	b.ReportMetric(float64(detect.Milliseconds())/float64(b.N), "detect-ms")
	b.ReportMetric(float64(recover.Milliseconds())/float64(b.N), "recover-ms")
}
