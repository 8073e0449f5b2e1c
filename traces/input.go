package traces

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"container/heap"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"cdcspec/spec"
)

// Input is one log stream: a capture's log file, or stdin.
type Input struct {
	Name string
	Open func() (io.ReadCloser, error)
}

// ExpandInputs turns command-line arguments into inputs: files, directories
// (every regular file below, sorted), globs, and "-" for stdin. Gzip files
// are recognised by their magic bytes. An argument that names nothing is an
// error naming it.
func ExpandInputs(args []string, stdin io.Reader) ([]Input, error) {
	var out []Input
	for _, a := range args {
		if a == "-" {
			r := stdin
			out = append(out, Input{Name: "<stdin>", Open: func() (io.ReadCloser, error) { return io.NopCloser(r), nil }})
			continue
		}
		var paths []string
		if strings.ContainsAny(a, "*?[") {
			ms, err := filepath.Glob(a)
			if err != nil {
				return nil, fmt.Errorf("%s: bad pattern: %v", a, err)
			}
			if len(ms) == 0 {
				return nil, fmt.Errorf("%s: no file matches", a)
			}
			paths = ms
		} else {
			paths = []string{a}
		}
		for _, p := range paths {
			st, err := os.Stat(p)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", p, unwrapPathErr(err))
			}
			if !st.IsDir() {
				out = append(out, fileInput(p))
				continue
			}
			var files []string
			err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if d.IsDir() {
					if path != p && strings.HasPrefix(d.Name(), ".") {
						return filepath.SkipDir
					}
					return nil
				}
				if d.Type().IsRegular() && !strings.HasPrefix(d.Name(), ".") {
					files = append(files, path)
				}
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("%s: %v", p, unwrapPathErr(err))
			}
			if len(files) == 0 {
				return nil, fmt.Errorf("%s: directory has no files", p)
			}
			sort.Strings(files)
			for _, f := range files {
				out = append(out, fileInput(f))
			}
		}
	}
	return out, nil
}

func unwrapPathErr(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}

func fileInput(path string) Input {
	return Input{Name: path, Open: func() (io.ReadCloser, error) { return os.Open(path) }}
}

// openDecompressed wraps r in a gzip reader if it starts with gzip's magic
// bytes.
func openDecompressed(rc io.ReadCloser) (io.Reader, func() error, error) {
	br := bufio.NewReaderSize(rc, 64<<10)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			rc.Close()
			return nil, nil, fmt.Errorf("gzip: %v", err)
		}
		return zr, func() error { zr.Close(); return rc.Close() }, nil
	}
	return br, rc.Close, nil
}

const (
	batchSize = 256
	// reorderMax and reorderWindow bound the per-input reorder buffer that
	// sorts records written slightly out of order (excerpts pasted newest
	// first, several goroutines logging at once).
	reorderMax    = 512
	reorderWindow = 60_000 // ms
)

// source parses one input in its own goroutine and sends its items, in
// time order (within the reorder bound), in batches.
type source struct {
	idx   int
	name  string
	in    Input
	ch    chan []Item
	stats ParseStats
	err   error
	self  string // the capture's own node ID, once a line names it
	done  chan struct{}
}

type itemHeap []Item

func (h itemHeap) Len() int { return len(h) }
func (h itemHeap) Less(i, j int) bool {
	if h[i].Event.Time != h[j].Event.Time {
		return h[i].Event.Time < h[j].Event.Time
	}
	return h[i].seq < h[j].seq
}
func (h itemHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *itemHeap) Push(x any)   { *h = append(*h, x.(Item)) }
func (h *itemHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// ownNodeKinds are the events whose Node is the capture that logged them;
// when TiCDC does not log it, the capture's own ID (if learned) fills it.
var ownNodeKinds = map[spec.Kind]bool{
	spec.MaintainerCreated: true, spec.MaintainerBootstrapped: true, spec.MaintainerBootstrapFailed: true,
	spec.MaintainerClosed: true, spec.DispatcherErrorReported: true, spec.MaintainerRejectedAdd: true,
	spec.DispatcherCreated: true, spec.DispatcherWorking: true, spec.DispatcherRemoved: true,
	spec.DispatcherManagerClosed: true, spec.SinkError: true, spec.CaptureSuicide: true,
}

// panicEntry stands for any PANIC or FATAL record of a maintainer file.
var panicEntry = entry{sym: SymPanic, keys: m("Changefeed", cfKeys, "Err", "error,panic")}

func (s *source) run() {
	defer close(s.ch)
	defer close(s.done)
	rc, err := s.in.Open()
	if err != nil {
		s.err = err
		return
	}
	r, closeFn, err := openDecompressed(rc)
	if err != nil {
		s.err = err
		return
	}
	defer closeFn()
	sc := NewScanner(r)
	var (
		h       itemHeap
		batch   []Item
		tmp     []Item
		seq     int64
		maxTime int64
	)
	release := func(it Item) {
		if it.Event.Node == "" && s.self != "" && ownNodeKinds[it.Event.Kind] {
			it.Event.Node = s.self
		}
		batch = append(batch, it)
		if len(batch) >= batchSize {
			s.ch <- batch
			batch = make([]Item, 0, batchSize)
		}
	}
	for rec := sc.Next(); rec != nil; rec = sc.Next() {
		e := lookup(rec)
		if e == nil || e.sym == SymContext {
			if rec.Level >= LevelFatal && bytes.HasPrefix(rec.File, []byte("maintainer")) {
				e = &panicEntry
			} else if e == nil {
				continue
			}
		}
		if e.msg == "changefeed bootstrap initial nodes" && s.self == "" {
			s.self = rec.FieldString("selfNodeID")
		}
		tmp = toItems(rec, e, s.name, s.idx, tmp[:0])
		for _, it := range tmp {
			it.seq = seq
			seq++
			if it.Event.Time > maxTime {
				maxTime = it.Event.Time
			}
			heap.Push(&h, it)
		}
		for h.Len() > reorderMax || (h.Len() > 0 && h[0].Event.Time < maxTime-reorderWindow) {
			release(heap.Pop(&h).(Item))
		}
	}
	for h.Len() > 0 {
		release(heap.Pop(&h).(Item))
	}
	if len(batch) > 0 {
		s.ch <- batch
	}
	s.stats = sc.Stats
	if sc.Err() != nil {
		s.err = sc.Err()
	}
}

// merger merges the sources' item streams by time (ties: input order, then
// the order within the input).
type merger struct {
	heads []*mergeHead
}

type mergeHead struct {
	src   *source
	batch []Item
	i     int
}

func (m *merger) Len() int { return len(m.heads) }
func (m *merger) Less(i, j int) bool {
	a, b := &m.heads[i].batch[m.heads[i].i], &m.heads[j].batch[m.heads[j].i]
	if a.Event.Time != b.Event.Time {
		return a.Event.Time < b.Event.Time
	}
	if a.file != b.file {
		return a.file < b.file
	}
	return a.seq < b.seq
}
func (m *merger) Swap(i, j int) { m.heads[i], m.heads[j] = m.heads[j], m.heads[i] }
func (m *merger) Push(x any)    { m.heads = append(m.heads, x.(*mergeHead)) }
func (m *merger) Pop() any {
	old := m.heads
	x := old[len(old)-1]
	m.heads = old[:len(old)-1]
	return x
}

// mergeInputs parses every input concurrently and calls fn for each item in
// merged time order. It returns the per-input parse statistics and the
// first input error (naming the input).
func mergeInputs(inputs []Input, fn func(it *Item)) ([]*source, error) {
	srcs := make([]*source, len(inputs))
	for i, in := range inputs {
		srcs[i] = &source{idx: i, name: in.Name, in: in, ch: make(chan []Item, 4), done: make(chan struct{})}
		go srcs[i].run()
	}
	m := &merger{}
	for _, s := range srcs {
		if b, ok := <-s.ch; ok {
			m.heads = append(m.heads, &mergeHead{src: s, batch: b})
		}
	}
	heap.Init(m)
	for m.Len() > 0 {
		h := m.heads[0]
		fn(&h.batch[h.i])
		h.i++
		if h.i == len(h.batch) {
			b, ok := <-h.src.ch
			if !ok {
				heap.Pop(m)
				continue
			}
			h.batch, h.i = b, 0
		}
		heap.Fix(m, 0)
	}
	var firstErr error
	for _, s := range srcs {
		<-s.done
		if s.err != nil && firstErr == nil {
			firstErr = fmt.Errorf("%s: %v", s.name, unwrapPathErr(s.err))
		}
	}
	return srcs, firstErr
}
