package traces

import (
	"bytes"
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
func BenchmarkRun(b *testing.B) { benchRun(b, GenOptions{Seed: 1}) }

// BenchmarkRunConcatenated is BenchmarkRun on four captures' 32 MB logs
// (about two minutes each, more than the reorder window) from the same
// start, concatenated into one input (`cat *.log | cdcspec
// trace -`): the time jumps back at every file boundary.
func BenchmarkRunConcatenated(b *testing.B) {
	path := filepath.Join(b.TempDir(), "concat.log")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	for seed := uint64(1); seed <= 4; seed++ {
		if _, err := GenerateLogOptions(f, 32<<20, GenOptions{Seed: seed}); err != nil {
			b.Fatal(err)
		}
	}
	f.Close()
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep, err := Run([]Input{fileInput(path)}, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Stats.Jumps != 3 {
			b.Fatalf("%d jumps back in time, want 3 (one per file boundary)", rep.Stats.Jumps)
		}
	}
}

// BenchmarkRunStorm is BenchmarkRun on a log where each of 1,000
// changefeeds is in an error storm (STORM=1 scripts/bench-trace.sh).
func BenchmarkRunStorm(b *testing.B) {
	benchRun(b, GenOptions{Seed: 1, Storm: true, Changefeeds: 1000})
}

func benchRun(b *testing.B, o GenOptions) {
	path := filepath.Join(b.TempDir(), "bench.log")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := GenerateLogOptions(f, 64<<20, o); err != nil {
		b.Fatal(err)
	}
	f.Close()
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep, err := Run([]Input{fileInput(path)}, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if !o.Storm && rep.Violations() != 0 {
			b.Fatalf("generated healthy log has violations: %+v", rep.Findings[0])
		}
		if o.Storm && len(rep.Findings) == 0 {
			b.Fatal("an error storm gave no finding")
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
	for i := 0; i < b.N; i++ {
		for _, d := range chunks {
			c.data = d
			parseChunk(c, "bench", 0)
			clear(c.items)
			c.unknown.reset()
		}
	}
}
