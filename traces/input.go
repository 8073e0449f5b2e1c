package traces

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"cdcspec/spec"
)

// Input is one log stream: a capture's log file, or stdin.
type Input struct {
	Name string
	Open func() (io.ReadCloser, error)
	// InDir: the input was found in a directory given as an argument, not
	// named itself (a capture's log directory also holds other files).
	InDir bool
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
			files = logFiles(files)
			sort.Strings(files)
			for _, f := range files {
				in := fileInput(f)
				in.InDir = true
				out = append(out, in)
			}
		}
	}
	return out, nil
}

// logFiles keeps the files of a directory that look like logs ("cdc.log",
// "cdc-2026-01-08T06-12-39.log.gz", "ticdc_stderr.log"), or all of them if
// none does.
func logFiles(files []string) []string {
	var out []string
	for _, f := range files {
		base := filepath.Base(f)
		if strings.Contains(base, ".log") || strings.HasSuffix(base, ".gz") {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return files
	}
	return out
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
	// the magic bytes read ahead, not a buffered reader's peek: an input
	// waiting for the merge (see mergeInputs) keeps no buffer
	var magic [2]byte
	n, err := io.ReadFull(rc, magic[:])
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		rc.Close()
		return nil, nil, err
	}
	r := io.MultiReader(bytes.NewReader(magic[:n]), rc)
	if n == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(r)
		if err != nil {
			rc.Close()
			return nil, nil, fmt.Errorf("gzip: %v", err)
		}
		return zr, func() error { zr.Close(); return rc.Close() }, nil
	}
	return r, rc.Close, nil
}

// source parses one input in its own goroutines (a reader, parse
// workers, and run putting the chunks back in input order) and sends its
// parsed chunks, in input order, to the merge (see orderer).
type source struct {
	idx  int
	name string
	in   Input
	ch   chan *chunk
	// free returns the chunks whose items are all checked, for reuse (a
	// chunk's items are pointer-rich: allocating them anew kept the GC
	// busy).
	free    chan *chunk
	stats   ParseStats
	unknown unknownMessages
	err     error
	// chunkSize is the bytes per parse chunk (0: chunkSize).
	chunkSize int
	done      chan struct{}
	// first gets the time of the input's first item (noItems if it has
	// none) once it is parsed; the input is then parsed no further until
	// the merge closes activated (see mergeInputs). tokens are the chunks
	// the reader may read ahead of this goroutine's ordering.
	first     chan int64
	activated chan struct{}
	tokens    chan struct{}
}

// noItems is source.first's value for an input with no item.
const noItems = math.MaxInt64

// readAhead is how many chunks an activated input's reader may read ahead
// of its parsed chunks being put in order (those being parsed and those
// waiting for it).
const readAhead = 2*parseWorkers + 2

func newSource(idx int, in Input, chunkSize int) *source {
	return &source{idx: idx, name: in.Name, in: in, chunkSize: chunkSize,
		ch: make(chan *chunk, 2), free: make(chan *chunk, readAhead+maxHeld+4), done: make(chan struct{}),
		first: make(chan int64, 1), activated: make(chan struct{}), tokens: make(chan struct{}, readAhead)}
}

// ownNodeKinds are the events whose Node is the capture that logged them;
// when TiCDC does not log it, the capture's own ID (if learned) fills it.
var ownNodeKinds = map[spec.Kind]bool{
	spec.MaintainerCreated: true, spec.MaintainerBootstrapped: true, spec.MaintainerBootstrapFailed: true,
	spec.MaintainerClosed: true, spec.DispatcherErrorReported: true, spec.MaintainerRejectedAdd: true,
	spec.DispatcherCreated: true, spec.DispatcherWorking: true, spec.DispatcherRemoved: true,
	spec.DispatcherManagerClosed: true, spec.SinkError: true, spec.CaptureSuicide: true,
}

// isOwnNode is ownNodeKinds as a table indexed by kind (read for every
// item on the serial path).
var isOwnNode = kindTable(ownNodeKinds)

// kindTable turns a set of kinds into a table indexed by kind: no map
// lookup per item.
func kindTable(set map[spec.Kind]bool) (t [256]bool) {
	for k, v := range set {
		t[k] = v
	}
	return t
}

// panicEntry stands for any PANIC or FATAL record of a maintainer file.
var panicEntry = entry{sym: SymPanic, keys: m("Changefeed", cfKeys, "Err", "error,panic")}

const (
	// chunkSize is how much of an input one parse worker takes at a time,
	// with one input; with several, each takes chunkBudget/(inputs x
	// chunksInFlight) (at least minChunkSize), so the chunks in flight (up
	// to about chunksInFlight per input: parsing, queued, recycled, plus
	// the maxHeld the ordering holds) stay bounded whatever the number of
	// inputs (a directory of rotated logs). A quarter MB: a chunk's items
	// (a third of a busy log's records, each a spec.Event) stay in the
	// caches between the worker that fills them and the checking goroutine
	// that orders and checks them (1 MB chunks took no less CPU, and about
	// 25 MB more RSS at GOGC 200).
	chunkSize      = 256 << 10
	minChunkSize   = 64 << 10
	chunkBudget    = 12 << 20
	chunksInFlight = 10
	// parseWorkers parse chunks of one input in parallel.
	parseWorkers = 2
)

// chunk is a piece of an input that starts and ends at record boundaries
// (as far as the splitter can tell).
type chunk struct {
	data    []byte
	items   []Item
	stats   ParseStats
	unknown unknownMessages
	done    chan struct{}
}

// unknownMessages counts the records of messages the catalogue does not
// know, by message, for at most maxUnknownDistinct distinct messages (the
// rest are counted in other). Messages are cut to maxUnknownLen bytes.
type unknownMessages struct {
	m     map[string]*int64
	other int64
}

const (
	maxUnknownDistinct = 4096
	maxUnknownLen      = 160
)

func (u *unknownMessages) add(msg []byte, n int64) { *u.counter(msg) += n }

// counter returns the counter that msg's records add to: its own (made,
// at 0, if msg is new), or other once maxUnknownDistinct messages are
// counted. The map only grows until reset, so the counter stays msg's
// until then.
func (u *unknownMessages) counter(msg []byte) *int64 {
	if len(msg) > maxUnknownLen {
		msg = msg[:maxUnknownLen]
	}
	if p, ok := u.m[string(msg)]; ok {
		return p
	}
	if u.m == nil {
		u.m = map[string]*int64{}
	}
	if len(u.m) >= maxUnknownDistinct {
		return &u.other
	}
	v := new(int64)
	u.m[string(msg)] = v
	return v
}

func (u *unknownMessages) merge(o *unknownMessages) {
	for k, v := range o.m {
		u.add([]byte(k), *v)
	}
	u.other += o.other
}

func (u *unknownMessages) reset() {
	clear(u.m)
	u.other = 0
}

// splitPoint returns the length of the prefix of b to parse now: up to the
// start of the last line that begins a record, so that a wrapped record is
// never cut; failing that, up to the last newline.
func splitPoint(b []byte) int {
	lastNL := bytes.LastIndexByte(b, '\n')
	if lastNL < 0 {
		return 0
	}
	end := lastNL // b[end] is '\n'; the candidate next line starts at end+1
	for tries := 0; tries < 4096 && end > 0; tries++ {
		prev := bytes.LastIndexByte(b[:end], '\n')
		line := b[prev+1 : end]
		if _, k, _ := classify(line); k == lineHeader && prev >= 0 {
			return prev + 1
		}
		if prev < 0 {
			break
		}
		end = prev
	}
	return lastNL + 1
}

// parseCache is a parse worker's: the identifiers it interns and the
// headers it has seen.
type parseCache struct {
	names   names
	headers headerCache
}

// parseCaches are the parse workers' caches, shared by the inputs (a
// worker takes one for a chunk): an input waiting for the merge keeps
// none, and a cache warmed on one input serves the next.
var parseCaches = sync.Pool{New: func() any { return new(parseCache) }}

// dataBufs are the chunks' data buffers, shared by the inputs.
var dataBufs sync.Pool

// getDataBuf returns an empty buffer, recycled if one is spare.
func getDataBuf(size int) []byte {
	if p, ok := dataBufs.Get().(*[]byte); ok {
		return (*p)[:0]
	}
	return make([]byte, 0, size)
}

// putDataBuf recycles b, whose data nothing reads any more.
func putDataBuf(b []byte) {
	b = b[:0]
	dataBufs.Put(&b)
}

// parseChunk scans one chunk; items carry chunk-local line numbers. pc is
// the calling worker's.
func parseChunk(c *chunk, name string, idx int, pc *parseCache) {
	sc := newBytesScanner(c.data)
	sc.names, sc.hc = &pc.names, &pc.headers
	pc.headers.chunk++ // the counters of c.unknown that headers hold are stale
	c.items = c.items[:0]
	for rec := sc.Next(); rec != nil; rec = sc.Next() {
		e := lookup(rec)
		if e == nil {
			// the header cache's slot keeps the message's counter for
			// the rest of the chunk
			if sl := rec.slot; sl == nil {
				c.unknown.add(rec.Msg, 1)
			} else if sl.chunk == pc.headers.chunk {
				*sl.unknown++
			} else {
				sl.unknown, sl.chunk = c.unknown.counter(rec.Msg), pc.headers.chunk
				*sl.unknown++
			}
		} else {
			sc.Stats.Recognised++
		}
		c.items = recordItems(rec, e, name, idx, c.items, &sc.Stats)
	}
	c.stats = sc.Stats
}

// recordItems appends the items of one record rec, whose catalogue entry
// is e (nil: not catalogued), read from input name (index idx): a benign
// line no monitor reads is only counted (st.Context); a PANIC or FATAL of
// a maintainer file is a panic whatever its message. The file and the
// stream modes convert records here, and nowhere else.
func recordItems(rec *Record, e *entry, name string, idx int, out []Item, st *ParseStats) []Item {
	if e == nil || e.sym == SymContext {
		if rec.Level >= LevelFatal && bytes.HasPrefix(rec.File, []byte("maintainer")) {
			e = &panicEntry
		} else if e == nil {
			return out
		} else if !e.read && impossibleTs(rec, e.none) == "" {
			// a benign line no monitor reads: counted, not converted
			st.Context++
			return out
		}
	}
	n := len(out)
	out = toItems(rec, e, name, idx, out)
	if e.msg == "changefeed bootstrap initial nodes" {
		for i := n; i < len(out); i++ {
			out[i].self = rec.FieldString("selfNodeID")
		}
	}
	if !rec.HasTime {
		for i := n; i < len(out); i++ {
			out[i].noTime = true
			out[i].Event.Source.Untimed = true
		}
	}
	return out
}

// run reads the input in chunks (chunkReader), parses them on parseWorkers
// workers (parseWorker) and hands them on in input order (deliver); it
// sends the first item's time on s.first, noItems if there is none.
func (s *source) run() {
	defer close(s.ch)
	defer close(s.done)
	firstSent := false
	defer func() {
		if !firstSent {
			s.first <- noItems
		}
	}()
	rc, err := s.in.Open()
	if err != nil {
		s.err = err
		return
	}
	dr, closeFn, err := openDecompressed(rc)
	if err != nil {
		s.err = err
		return
	}
	defer closeFn()
	cr := &chunkReader{s: s, r: newFullWidthReader(dr), size: s.chunkSize}
	if cr.size == 0 {
		cr.size = chunkSize
	}

	// reader -> workers (any order) and -> this goroutine (input order)
	work := make(chan *chunk, parseWorkers)
	ordered := make(chan *chunk, 2*parseWorkers)
	s.tokens <- struct{}{} // the first chunk
	go cr.read(work, ordered)
	for w := 0; w < parseWorkers; w++ {
		go s.parseWorker(work)
	}
	firstSent = s.deliver(ordered)
	// ordered is closed: the reader is done with its fields
	s.stats.Bytes += cr.skipped
	s.stats.FullWidth = cr.r.Lines
	s.stats.Bytes += cr.r.Removed
	if cr.err != nil {
		s.err = cr.err
	}
}

// chunkReader cuts one input into chunks at line ends, on its own
// goroutine; a chunk is read only with a token from s.tokens. Its fields
// other than s, r and size are the reader goroutine's until it closes
// ordered.
type chunkReader struct {
	s    *source
	r    *fullWidthReader
	size int // bytes per chunk

	carry    []byte // the start of a line cut by the last chunk's end
	eof      bool
	skipRest bool  // discarding the rest of a line cut at maxBuf
	skipped  int64 // bytes of cut lines that were never parsed
	err      error // the read error, io.EOF aside
}

// read sends each chunk to ordered (input order) and to work (a worker
// parses it), and closes both at the input's end.
func (cr *chunkReader) read(work, ordered chan<- *chunk) {
	defer close(work)
	defer close(ordered)
	token := false // a token for the next chunk is held
	for !cr.eof {
		if !token {
			<-cr.s.tokens
			token = true
		}
		buf := cr.fill()
		cut := len(buf)
		if !cr.eof {
			cut = splitPoint(buf)
			if cut == 0 {
				if len(buf) < maxBuf {
					cr.carry = append(cr.carry[:0], buf...)
					putDataBuf(buf)
					continue
				}
				// a huge line: parse its first maxBuf bytes, skip the rest
				cut = len(buf)
				cr.skipRest = true
			}
		}
		cr.carry = append(cr.carry[:0], buf[cut:]...)
		var c *chunk
		select {
		case c = <-cr.s.free:
		default:
			c = &chunk{}
		}
		c.data, c.done = buf[:cut], make(chan struct{})
		token = false
		ordered <- c
		work <- c
	}
}

// fill returns a buffer with the carried bytes and what follows them in
// the input: at least a chunk's worth beyond a carried, still unsplit, huge
// record, but never more than maxBuf in all (reads are bounded by need, so
// where a huge line is cut does not depend on which recycled buffer was
// used). The rest of a line cut at maxBuf is dropped as it is read.
func (cr *chunkReader) fill() []byte {
	csize := cr.size
	buf := getDataBuf(csize + csize/4)
	buf = append(buf[:0], cr.carry...)
	need := min(max(csize, len(cr.carry)+csize/4), maxBuf)
	if cap(buf) < need {
		buf = slices.Grow(buf, need-len(buf))
	}
	for len(buf) < need && !cr.eof {
		newStart := len(buf)
		n, err := cr.r.Read(buf[len(buf):need])
		buf = buf[:len(buf)+n]
		if cr.skipRest {
			if i := bytes.IndexByte(buf[newStart:], '\n'); i >= 0 {
				cr.skipped += int64(i + 1)
				buf = append(buf[:newStart], buf[newStart+i+1:]...)
				cr.skipRest = false
			} else {
				cr.skipped += int64(len(buf) - newStart)
				buf = buf[:newStart]
			}
		}
		if err != nil {
			cr.eof = true
			if err != io.EOF {
				cr.err = err
			}
		}
	}
	return buf
}

// parseWorker parses the chunks it takes from work, in any order, and
// closes each one's done.
func (s *source) parseWorker(work <-chan *chunk) {
	for c := range work {
		pc := parseCaches.Get().(*parseCache)
		parseChunk(c, s.name, s.idx, pc)
		parseCaches.Put(pc)
		close(c.done)
	}
}

// deliver takes the chunks in input order as they are parsed: it makes
// their line numbers input-wide, gives an untimed item the time before it,
// adds their statistics, and sends on s.ch a chunk with items (recycling
// one without). It sends the first item's time on s.first and says whether
// it did; then it waits for the merge to activate the input before reading
// ahead.
func (s *source) deliver(ordered <-chan *chunk) (firstSent bool) {
	var lastTime, lineBase int64
	active := false
	for c := range ordered {
		<-c.done
		for i := range c.items {
			it := &c.items[i]
			it.Event.Source.Line += int(lineBase)
			if it.noTime {
				it.Event.Time = lastTime
			} else {
				lastTime = it.Event.Time
			}
		}
		st := c.stats
		for _, l := range st.UnparsedAt {
			if len(s.stats.UnparsedAt) < maxUnparsedAt {
				s.stats.UnparsedAt = append(s.stats.UnparsedAt, l+int(lineBase))
			}
		}
		s.stats.Add(st)
		s.unknown.merge(&c.unknown)
		c.unknown.reset()
		lineBase += st.Lines
		putDataBuf(c.data)
		c.data = nil
		// the items go on in the chunk: not cleared, the next parse
		// overwrites every item it appends, and the strings the stale
		// items hold are bounded by the chunks in flight
		if len(c.items) == 0 {
			select {
			case s.free <- c:
			default:
			}
		} else {
			if !firstSent {
				s.first <- c.items[0].Event.Time
				firstSent = true
			}
			s.ch <- c
		}
		if firstSent && !active {
			// the first item is known: wait for the merge to need the
			// input, then read ahead
			<-s.activated
			active = true
			for range readAhead - 1 {
				s.tokens <- struct{}{}
			}
		}
		s.tokens <- struct{}{}
	}
	return firstSent
}
