package traces

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkScan measures the scanner alone (parse every record, look up the
// catalogue, convert the catalogued ones) on a 64 MB generated log held in
// memory.
func BenchmarkScan(b *testing.B) {
	var buf bytes.Buffer
	if _, err := GenerateLog(&buf, 64<<20, 1); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	var items []Item
	for i := 0; i < b.N; i++ {
		sc := NewScanner(bytes.NewReader(data))
		for r := sc.Next(); r != nil; r = sc.Next() {
			if e := lookup(r); e != nil {
				items = toItems(r, e, "bench", 0, items[:0])
			}
		}
	}
}

// BenchmarkRun measures the whole check (read a file, parse, merge, run
// every monitor) on a 64 MB generated log file. scripts/bench-trace.sh runs
// the same pipeline on 1 GB next to grep.
func BenchmarkRun(b *testing.B) {
	benchRun(b, 64<<20, []GenOptions{{Seed: 1}}, func(rep *Report) string {
		if rep.Violations() != 0 {
			return fmt.Sprintf("generated healthy log has violations: %+v", rep.Findings[0])
		}
		return ""
	})
}

// BenchmarkRunConcatenated is BenchmarkRun on four captures' 32 MB logs
// (about two minutes each, more than the reorder window) from the same
// start, concatenated into one input (`cat *.log | cdcspec
// trace -`): the time jumps back at every file boundary.
func BenchmarkRunConcatenated(b *testing.B) {
	parts := []GenOptions{{Seed: 1}, {Seed: 2}, {Seed: 3}, {Seed: 4}}
	benchRun(b, 32<<20, parts, func(rep *Report) string {
		if rep.Stats.Jumps != int64(len(parts)-1) {
			return fmt.Sprintf("%d jumps back in time, want %d (one per file boundary)", rep.Stats.Jumps, len(parts)-1)
		}
		return ""
	})
}

// BenchmarkRunStorm is BenchmarkRun on a log where each of 1,000
// changefeeds is in an error storm (STORM=1 scripts/bench-trace.sh).
func BenchmarkRunStorm(b *testing.B) {
	benchRun(b, 64<<20, []GenOptions{{Seed: 1, Storm: true, Changefeeds: 1000}}, func(rep *Report) string {
		if len(rep.Findings) == 0 {
			return "an error storm gave no finding"
		}
		return ""
	})
}

// benchRun writes one generated log of size bytes per part, concatenated
// into one file, and runs the whole check on it b.N times; check says what
// is wrong with a report ("" when nothing is).
func benchRun(b *testing.B, size int64, parts []GenOptions, check func(*Report) string) {
	path := filepath.Join(b.TempDir(), "bench.log")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	for _, o := range parts {
		if _, err := GenerateLogOptions(f, size, o); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep, err := Run([]Input{fileInput(path)}, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if msg := check(rep); msg != "" {
			b.Fatal(msg)
		}
	}
}

// BenchmarkScanOnly measures the scanner without the catalogue.
func BenchmarkScanOnly(b *testing.B) {
	var buf bytes.Buffer
	if _, err := GenerateLog(&buf, 64<<20, 1); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sc := NewScanner(bytes.NewReader(data))
		for r := sc.Next(); r != nil; r = sc.Next() {
		}
	}
}

// BenchmarkParseChunks measures what the parse workers do (scan, look up
// the catalogue, convert what a monitor reads) over 1 MB chunks of a 64 MB
// generated log held in memory, on one core.
func BenchmarkParseChunks(b *testing.B) {
	var buf bytes.Buffer
	if _, err := GenerateLog(&buf, 64<<20, 1); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	var chunks [][]byte
	for len(data) > 0 {
		n := len(data)
		if n > chunkSize {
			n = splitPoint(data[:chunkSize])
		}
		chunks = append(chunks, data[:n])
		data = data[n:]
	}
	b.SetBytes(int64(buf.Len()))
	b.ResetTimer()
	c := &chunk{}
	pc := new(parseCache)
	for i := 0; i < b.N; i++ {
		for _, d := range chunks {
			c.data = d
			parseChunk(c, "bench", 0, pc)
			clear(c.items)
			c.unknown.reset()
		}
	}
}

// BenchmarkStream measures the streaming checker's two stages in one
// process, without a transport: a 64 MB generated log's lines through
// LineParser, each item through its JSON wire form, into StreamChecker.
// It reports lines/s.
func BenchmarkStream(b *testing.B) {
	var buf bytes.Buffer
	if _, err := GenerateLog(&buf, 64<<20, 1); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	lines := bytes.Split(data, []byte("\n"))
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, sc := NewLineParser("bench"), NewStreamChecker(Options{})
		var items []Item
		for _, l := range lines {
			items = p.Parse(l, items[:0])
			for k := range items {
				w := items[k].Wire()
				j, err := json.Marshal(&w)
				if err != nil {
					b.Fatal(err)
				}
				var back WireItem
				if err := json.Unmarshal(j, &back); err != nil {
					b.Fatal(err)
				}
				sc.Add(back.Item())
			}
		}
		sc.Finish()
	}
	b.ReportMetric(float64(len(lines))*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
