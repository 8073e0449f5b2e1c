package kafkastream

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"cdcspec/runtime/kafkasink"
	"cdcspec/traces"
)

// BenchmarkKafkaEndToEnd: four captures' generated logs (4 MB each, seeds
// 1-4), one Kafka message per line, through stage one and one stage-two
// instance on kfake in-process (segments on disk, so the heap is the
// stages'), until stage two has committed every events partition. It
// reports raw lines/s end to end (the idle wait excluded), the events
// published, and the peak Go heap sampled every 50 ms.
func BenchmarkKafkaEndToEnd(b *testing.B) {
	const perCapture = 4 << 20
	var captureLines [4][][]byte
	total := 0
	for i := range captureLines {
		var buf bytes.Buffer
		if _, err := traces.GenerateLog(&buf, perCapture, uint64(i+1)); err != nil {
			b.Fatal(err)
		}
		s := bufio.NewScanner(&buf)
		s.Buffer(make([]byte, 1<<20), 1<<20)
		for s.Scan() {
			captureLines[i] = append(captureLines[i], append([]byte(nil), s.Bytes()...))
		}
		total += len(captureLines[i])
	}
	for n := 0; n < b.N; n++ {
		k, err := kafkasink.StartKfake(kafkasink.KfakeConfig{DefaultPartitions: 4, Topics: []string{"raw", "events", "findings"}, DataDir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		cfg := Config{Brokers: k.Addrs(), Raw: "raw", Events: "events", Findings: "findings", Group: fmt.Sprint("bench", n), Idle: time.Second}
		sc := sarama.NewConfig()
		sc.Producer.Return.Successes = true
		prod, err := sarama.NewSyncProducer(cfg.Brokers, sc)
		if err != nil {
			b.Fatal(err)
		}
		for i, ls := range captureLines {
			key := sarama.StringEncoder(fmt.Sprintf("capture-%d", i+1))
			for j := 0; j < len(ls); j += 1000 {
				var msgs []*sarama.ProducerMessage
				for _, l := range ls[j:min(j+1000, len(ls))] {
					msgs = append(msgs, &sarama.ProducerMessage{Topic: "raw", Key: key, Value: sarama.ByteEncoder(l)})
				}
				if err := prod.SendMessages(msgs); err != nil {
					b.Fatal(err)
				}
			}
		}
		prod.Close()
		runtime.GC()
		var peak uint64
		stop := make(chan struct{})
		var sampler sync.WaitGroup
		sampler.Add(1)
		go func() {
			defer sampler.Done()
			var ms runtime.MemStats
			for {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapAlloc)
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
		}()
		start := time.Now()
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for _, fn := range []func(context.Context, Config) error{RunParse, RunCheck} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := fn(ctx, cfg); err != nil && ctx.Err() == nil {
					b.Error(err)
				}
			}()
		}
		client, err := sarama.NewClient(cfg.Brokers, sarama.NewConfig())
		if err != nil {
			b.Fatal(err)
		}
		admin, err := sarama.NewClusterAdminFromClient(client)
		if err != nil {
			b.Fatal(err)
		}
		var events int64
		for {
			time.Sleep(200 * time.Millisecond)
			done, ev := committedAll(b, client, admin, cfg)
			if done {
				events = ev
				break
			}
		}
		elapsed := time.Since(start) - cfg.Idle
		cancel()
		wg.Wait()
		close(stop)
		sampler.Wait()
		admin.Close()
		k.Close()
		b.ReportMetric(float64(total)/elapsed.Seconds(), "lines/s")
		b.ReportMetric(float64(total), "lines")
		b.ReportMetric(float64(events), "events")
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	}
}

// committedAll reports whether stage two committed every partition of the
// events topic up to its end (and stage one every raw partition), and the
// events published.
func committedAll(b *testing.B, client sarama.Client, admin sarama.ClusterAdmin, cfg Config) (bool, int64) {
	if err := client.RefreshMetadata(); err != nil {
		b.Fatal(err)
	}
	var events int64
	for _, g := range []struct{ group, topic string }{{cfg.Group + "-parse", cfg.Raw}, {cfg.Group + "-check", cfg.Events}} {
		parts, err := client.Partitions(g.topic)
		if err != nil {
			b.Fatal(err)
		}
		offs, err := admin.ListConsumerGroupOffsets(g.group, map[string][]int32{g.topic: parts})
		if err != nil {
			return false, 0
		}
		for _, p := range parts {
			end, err := client.GetOffset(g.topic, p, sarama.OffsetNewest)
			if err != nil {
				b.Fatal(err)
			}
			if g.topic == cfg.Events {
				events += end
			}
			blk := offs.GetBlock(g.topic, p)
			if end > 0 && (blk == nil || blk.Offset < end) {
				return false, 0
			}
		}
	}
	return true, events
}
