package traces

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"
	"time"
)

func TestFindSlow(t *testing.T) {
	if os.Getenv("FINDSLOW") == "" {
		t.Skip()
	}
	files, _ := filepath.Glob(os.Getenv("GOCACHE_FUZZ") + "/*")
	rng := rand.New(rand.NewPCG(1, 2))
	var seeds [][]byte
	for _, f := range files {
		b, _ := os.ReadFile(f)
		seeds = append(seeds, b)
	}
	for i := 0; i < 20000; i++ {
		d := append([]byte(nil), seeds[rng.IntN(len(seeds))]...)
		for k := rng.IntN(8); k > 0; k-- {
			switch rng.IntN(3) {
			case 0:
				if len(d) > 0 {
					d[rng.IntN(len(d))] = byte(rng.IntN(256))
				}
			case 1:
				d = append(d, d[:rng.IntN(len(d)+1)]...)
			case 2:
				d = append(d, "\n[\"\\"[rng.IntN(4)])
			}
		}
		start := time.Now()
		sc := newScannerSize(iotest.OneByteReader(bytes.NewReader(d)), 64)
		var items []Item
		for r := sc.Next(); r != nil; r = sc.Next() {
			for j := 0; j < r.NumFields(); j++ {
				r.FieldAt(j)
			}
			if e := lookup(r); e != nil {
				items = toItems(r, e, "f", 0, items[:0])
			}
		}
		if el := time.Since(start); el > 50*time.Millisecond {
			os.WriteFile("/tmp/slow.bin", d, 0o644)
			t.Fatalf("slow: %v on %d bytes", el, len(d))
		}
	}
}
