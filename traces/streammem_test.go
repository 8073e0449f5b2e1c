package traces

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

// streamSizes is the feed sizes BenchmarkStreamMemory runs, as
// `-args -stream-sizes 64M,256M,1G`; the default is small so that
// `-bench .` stays cheap.
var streamSizes = flag.String("stream-sizes", "16M", "comma-separated feed sizes for BenchmarkStreamMemory (K, M or G suffix)")

// streamMsg is the events topic's message as the Kafka consumer decodes it
// (traces/kafkastream's wireEvent): the source and the item's wire form.
type streamMsg struct {
	Source string   `json:"source"`
	Item   WireItem `json:"item"`
}

// BenchmarkStreamMemory measures stage two's memory as the feed grows (issue
// 30: memory per partition is bounded). Four captures' generated logs of a
// quarter of the size each are made on the fly (never held whole), their
// lines taken in turn, each parsed by its source's LineParser, each item
// through the consumer's JSON message form (marshal, unmarshal, Item) into
// one StreamChecker: the whole feed on one partition, the worst case for a
// partition. Interleaved takes the sources' lines in turn; quiet holds the
// last source back until the others end, so that no item is ever below
// every source's watermark and the pending heap fills to its cap
// (maxStreamPending): the worst case for a partition's memory. It samples runtime.MemStats.HeapInuse every 50,000 lines and
// reports the peak, the held items' peak, and lines/s. Peak heap flat across
// sizes is what bounded means. No Kafka: the transport holds no checker state.
func BenchmarkStreamMemory(b *testing.B) {
	for _, s := range strings.Split(*streamSizes, ",") {
		size, err := ParseSize(strings.TrimSpace(s))
		if err != nil {
			b.Fatalf("-stream-sizes: %v", err)
		}
		for _, quiet := range []bool{false, true} {
			name := strings.TrimSpace(s) + "/interleaved"
			if quiet {
				name = strings.TrimSpace(s) + "/quiet"
			}
			b.Run(name, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					streamMemoryRun(b, size, quiet)
				}
			})
		}
	}
}

func streamMemoryRun(b *testing.B, size int64, quiet bool) {
	const sources = 4
	scans := make([]*bufio.Scanner, sources)
	parsers := make([]*LineParser, sources)
	names := make([]string, sources)
	for k := range sources {
		r, w := io.Pipe()
		go func(seed uint64) {
			_, err := GenerateLog(w, size/sources, seed)
			w.CloseWithError(err)
		}(uint64(k + 1))
		defer r.Close()
		scans[k] = bufio.NewScanner(r)
		scans[k].Buffer(make([]byte, 1<<16), 1<<24)
		names[k] = fmt.Sprintf("capture-%d.log", k+1)
		parsers[k] = NewLineParser(names[k])
	}
	sc := NewStreamChecker(Options{})
	for _, n := range names {
		sc.Source(n)
	}
	var (
		ms            runtime.MemStats
		peak          uint64
		peakPending   int
		lines, events int64
		items         []Item
	)
	sample := func() {
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	b.ResetTimer()
	live := sources
	for live > 0 {
		others := live
		live = 0
		for k := range sources {
			if quiet && k == sources-1 && others > 1 {
				live++ // held back until the other sources end
				continue
			}
			if !scans[k].Scan() {
				continue
			}
			live++
			lines++
			items = parsers[k].Parse(scans[k].Bytes(), items[:0])
			for j := range items {
				j, err := json.Marshal(&streamMsg{Source: names[k], Item: items[j].Wire()})
				if err != nil {
					b.Fatal(err)
				}
				var m streamMsg
				if err := json.Unmarshal(j, &m); err != nil {
					b.Fatal(err)
				}
				sc.Add(m.Item.Item())
				events++
			}
			peakPending = max(peakPending, sc.pending.Len())
			if lines%50000 == 0 {
				sample()
			}
		}
	}
	for k := range sources {
		if err := scans[k].Err(); err != nil {
			b.Fatal(err)
		}
	}
	sample()
	sc.Finish()
	b.StopTimer()
	b.ReportMetric(float64(lines), "lines")
	b.ReportMetric(float64(events), "events")
	b.ReportMetric(float64(lines)/b.Elapsed().Seconds(), "lines/s")
	b.ReportMetric(float64(peakPending), "peak-held")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
}
