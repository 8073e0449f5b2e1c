package traces

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func fileInputs(t *testing.T, paths ...string) ([]Input, []byte) {
	t.Helper()
	var ins []Input
	var cat bytes.Buffer
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		cat.Write(b)
		if len(b) > 0 && b[len(b)-1] != '\n' {
			cat.WriteByte('\n')
		}
		ins = append(ins, fileInput(p))
	}
	return ins, cat.Bytes()
}

// findingKeys are what must agree between `cdcspec trace *.log` and
// `cat *.log | cdcspec trace -` (the evidence names other files and lines).
func findingKeys(rep *Report) []string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, fmt.Sprintf("%s %s %s count=%d", f.Property, f.Severity, f.Changefeed, f.Count))
	}
	sort.Strings(out)
	return out
}

// TestConcatenatedEqualsFiles: the captures' logs given as files (merged by
// time) and concatenated into one stream (time jumps back at every file
// boundary: checked in file order from there) give the same findings when
// every capture logs its own changefeeds; rotated files of one capture in
// order give the same stream either way.
func TestConcatenatedEqualsFiles(t *testing.T) {
	sets := [][]string{
		{"testdata/healthy/capture-1.log", "testdata/healthy/capture-2.log"},
		{"testdata/healthy/capture-2.log", "testdata/healthy/capture-1.log"},
		{"testdata/planted_error_resends.log", "testdata/planted_operator_stuck.log", "testdata/planted_duplicate_dispatcher.log", "testdata/seed000_5709.log"},
		{"testdata/seed000_5709.log", "testdata/seed004_9595.log", "testdata/planted_bootstrap_failed.log"},
	}
	for _, set := range sets {
		t.Run(strings.Join(set, "+"), func(t *testing.T) {
			ins, cat := fileInputs(t, set...)
			files, err := Run(ins, Options{})
			require.NoError(t, err)
			stream, err := Run([]Input{{Name: "<stdin>", Open: func() (io.ReadCloser, error) {
				return io.NopCloser(bytes.NewReader(cat)), nil
			}}}, Options{})
			require.NoError(t, err)
			assert.Equal(t, findingKeys(files), findingKeys(stream))
			assert.Equal(t, files.Stats.Records, stream.Stats.Records)
			assert.Equal(t, files.Coverage.Events, stream.Coverage.Events)
		})
	}
}

// TestReorderWindow: records a little out of order are sorted; a jump back
// beyond the window releases the buffer and continues in file order
// (counted in Jumps); the order within each segment is by time.
func TestReorderWindow(t *testing.T) {
	var b strings.Builder
	line := func(sec int, cf string) {
		b.WriteString(headLine(sec*1000, "ERROR", "maintainer.go:785", "dispatcher report an error", "[changefeedID=default/"+cf+"] [sourceNode=n1] [error=x]"))
	}
	// segment 1: 100..110 s, two records swapped
	line(100, "a")
	line(105, "b")
	line(103, "c")
	line(110, "d")
	// segment 2 (a concatenated file): back to 10 s, beyond the 60 s window
	line(10, "e")
	line(12, "f")
	line(11, "g")
	ins := []Input{{Name: "x", Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(b.String())), nil }}}
	var got []string
	srcs, err := mergeInputs(ins, func(it *Item) { got = append(got, strings.TrimPrefix(it.Event.Changefeed, "default/")) })
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "c", "b", "d", "e", "g", "f"}, got)
	assert.EqualValues(t, 1, srcs[0].stats.Jumps)
}

// TestReorderMatchesSort drives the reorder buffer with random pushes and
// pops, in order, shuffled, reversed and with ties, against a reference
// that keeps the buffered keys sorted: every pop is the earliest (time,
// seq) buffered.
func TestReorderMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < 80; round++ {
		var ro reorder
		var ref []roKey
		var seq int64
		base := int64(1000)
		mode := round % 4
		for step := 0; step < 2000; step++ {
			if len(ref) > 0 && rng.IntN(3) == 0 {
				want := ref[0]
				ref = ref[1:]
				if ro.len() != len(ref)+1 || ro.minTime() != want.time {
					t.Fatalf("round %d step %d: len %d min %d, want %d %d", round, step, ro.len(), ro.minTime(), len(ref)+1, want.time)
				}
				if got := ro.pop(); got != want {
					t.Fatalf("round %d step %d: popped %+v, want %+v", round, step, got, want)
				}
				continue
			}
			var tm int64
			switch mode {
			case 0: // in order, with ties
				base += int64(rng.IntN(2))
				tm = base
			case 1: // mostly in order, some late
				base += int64(rng.IntN(3))
				tm = base - int64(rng.IntN(5))*int64(rng.IntN(2))
			case 2: // reversed
				base -= int64(rng.IntN(3))
				tm = base
			default: // shuffled in a small range
				tm = base + int64(rng.IntN(20))
			}
			k := roKey{time: tm, seq: seq, idx: int32(step), slot: int32(step % 3)}
			seq++
			ro.push(k)
			i := sort.Search(len(ref), func(i int) bool { return k.less(ref[i]) })
			ref = slices.Insert(ref, i, k)
		}
	}
}

// TestEvacuationKeepsOrder: with a single chunk held per input, every
// chunk change copies the buffered items out (orderer.evacuate); the
// report is the same as when chunks are held, on a sorted multi-chunk
// log, on concatenated ones (jumps) and on records written out of order.
func TestEvacuationKeepsOrder(t *testing.T) {
	var sorted, concat, shuffled bytes.Buffer
	_, err := GenerateLog(&sorted, 6*chunkSize, 11)
	require.NoError(t, err)
	for seed := uint64(1); seed <= 3; seed++ {
		_, err := GenerateLog(&concat, 2*chunkSize, seed)
		require.NoError(t, err)
	}
	// swap neighbouring records: each pair out of order by its gap
	lines := strings.SplitAfter(sorted.String(), "\n")
	for i := 0; i+1 < len(lines); i += 2 {
		lines[i], lines[i+1] = lines[i+1], lines[i]
	}
	shuffled.WriteString(strings.Join(lines, ""))
	for name, data := range map[string][]byte{"sorted": sorted.Bytes(), "concatenated": concat.Bytes(), "shuffled": shuffled.Bytes()} {
		t.Run(name, func(t *testing.T) {
			run := func(held int) *Report {
				defer func(m int) { maxHeld = m }(maxHeld)
				maxHeld = held
				rep, err := Run([]Input{{Name: name, Open: func() (io.ReadCloser, error) {
					return io.NopCloser(bytes.NewReader(data)), nil
				}}, {Name: "seed", Open: func() (io.ReadCloser, error) { return os.Open("testdata/seed000_5709.log") }}}, Options{Timeline: true})
				require.NoError(t, err)
				rep.Seconds = 0
				return rep
			}
			held, evacuated := run(8), run(1)
			require.NotEmpty(t, held.Timeline)
			assert.Equal(t, held, evacuated)
		})
	}
}

// TestLazyMergeKeepsOrder: activating inputs only as the merge reaches
// their first item's time (less the reorder window) gives the order that
// activating every input at once gives: on rotated pieces of one log (one
// split mid-way through a second), captures' logs over the same hour,
// concatenations with jumps, records out of order, and an input with no
// item.
func TestLazyMergeKeepsOrder(t *testing.T) {
	gen := func(size int64, seed uint64) []byte {
		var b bytes.Buffer
		_, err := GenerateLog(&b, size, seed)
		require.NoError(t, err)
		return b.Bytes()
	}
	whole := gen(3*chunkSize, 21)
	var pieces [][]byte
	for rest := whole; len(rest) > 0; {
		n := min(len(rest), len(whole)/7)
		if i := bytes.IndexByte(rest[n:], '\n'); i >= 0 && n < len(rest) {
			n += i + 1
		} else {
			n = len(rest)
		}
		pieces = append(pieces, rest[:n])
		rest = rest[n:]
	}
	lines := strings.SplitAfter(string(gen(chunkSize, 22)), "\n")
	for i := 0; i+1 < len(lines); i += 3 {
		lines[i], lines[i+1] = lines[i+1], lines[i]
	}
	shuffled := []byte(strings.Join(lines, ""))
	noItems := []byte("[2026/07/22 16:30:15.000 +00:00] [INFO] [x.go:1] [\"not catalogued\"]\n")
	// B starts 30 s into A, its second record 5 s before its first: the
	// merge must take B up before reaching B's first item
	resend := func(sec int, id string) string {
		return headLine(sec*1000, "INFO", "helper.go:379", "resend task periodic resend", "[dispatcherID="+id+"] [executeCount=10]")
	}
	var a, b strings.Builder
	for sec := 0; sec < 60; sec++ {
		a.WriteString(resend(sec, "1.1"))
	}
	b.WriteString(resend(30, "2.2") + resend(25, "2.2") + resend(40, "2.2"))
	// rotated pieces of a long log: 7 files of 500 s each (headLine stays
	// within one hour)
	var long [][]byte
	for f := 0; f < 7; f++ {
		var p strings.Builder
		for sec := f * 500; sec < (f+1)*500; sec += 5 {
			p.WriteString(resend(sec, "3.3"))
		}
		long = append(long, []byte(p.String()))
	}
	sets := map[string][][]byte{
		"late-start":   {[]byte(a.String()), []byte(b.String())},
		"rotated-long": reversed(long),
		"rotated":      pieces,
		"rotated-rev":  reversed(pieces),
		"captures":     {gen(chunkSize, 1), gen(chunkSize, 2), gen(chunkSize, 3)},
		"concatenated": {append(gen(chunkSize/2, 4), gen(chunkSize/2, 5)...), gen(chunkSize, 6), noItems},
		"shuffled":     {shuffled, pieces[2], pieces[0], noItems},
	}
	for name, set := range sets {
		t.Run(name, func(t *testing.T) {
			var ins []Input
			for i, data := range set {
				ins = append(ins, Input{Name: fmt.Sprintf("%s-%d.log", name, i), Open: func() (io.ReadCloser, error) {
					return io.NopCloser(bytes.NewReader(data)), nil
				}})
			}
			order := func(eager bool) []string {
				defer func(e bool) { eagerMerge = e }(eagerMerge)
				eagerMerge = eager
				var out []string
				_, err := mergeInputs(ins, func(it *Item) {
					out = append(out, fmt.Sprintf("%d %d %d %s", it.Event.Time, it.file, it.Event.Source.Line, it.Event.Node))
				})
				require.NoError(t, err)
				return out
			}
			eager, lazy := order(true), order(false)
			require.NotEmpty(t, eager)
			require.Equal(t, eager, lazy)
			if name == "rotated-long" {
				// one piece after the other: at most two at once
				require.LessOrEqual(t, mostActive.Load(), int64(2))
			}
		})
	}
}

func reversed[T any](s []T) []T {
	r := slices.Clone(s)
	slices.Reverse(r)
	return r
}
