package traces

import (
	"bytes"
	"encoding/binary"
	"io"
)

// ParseStats counts what a Scanner read. Lines = Blank + Unparsed + the
// lines of every Record.
type ParseStats struct {
	Bytes     int64 // bytes read
	Lines     int64 // physical lines
	Records   int64 // log records parsed (a wrapped record counts once)
	Timed     int64 // records whose own timestamp parses (the others take the one before)
	Blank     int64 // empty lines
	Unparsed  int64 // lines that belong to no record: other programs, garbage
	Truncated int64 // records cut: huge lines, left open at the end, interrupted
	// The repairs of damaged input (logs pasted into an issue or a chat):
	// FullWidth counts the lines whose full-width punctuation was
	// normalised (see fullWidthReader), NoLevel the records with no level,
	// Wrapped the records joined from several lines. Records without a
	// timestamp are Records - Timed.
	FullWidth int64
	NoLevel   int64
	Wrapped   int64
	// Recognised counts the records whose message the catalogue knows.
	Recognised int64
	// Context counts the benign catalogued records that became no item
	// (see contextItems).
	Context int64
	// Jumps counts where the input's time went back by more than the
	// reorder window (the files of a concatenation): from there the input
	// is checked in file order.
	Jumps int64
	// UnparsedAt holds the line numbers of the first few unparsed lines.
	UnparsedAt []int
}

// Add accumulates o into s (UnparsedAt is not merged; see Source).
func (s *ParseStats) Add(o ParseStats) {
	s.Bytes += o.Bytes
	s.Lines += o.Lines
	s.Records += o.Records
	s.Timed += o.Timed
	s.Blank += o.Blank
	s.Unparsed += o.Unparsed
	s.Truncated += o.Truncated
	s.FullWidth += o.FullWidth
	s.NoLevel += o.NoLevel
	s.Wrapped += o.Wrapped
	s.Recognised += o.Recognised
	s.Jumps += o.Jumps
	s.Context += o.Context
}

const (
	maxUnparsedAt = 5
	initialBuf    = 1 << 20
	// maxBuf bounds the scanner's memory; a line longer than maxBuf-maxRecord
	// is cut (Truncated) and the rest of it skipped.
	maxBuf = 4 << 20
	// maxRecord bounds a wrapped record; further continuation lines end it.
	maxRecord = 1 << 20
	// maxRecordLines bounds how many physical lines one record may span.
	maxRecordLines = 512
	// prefixSearch is how far into a line a viewer prefix may reach.
	prefixSearch = 128
)

type lineKind uint8

const (
	lineOther     lineKind = iota
	lineBlank              // empty or whitespace
	lineHeader             // starts a record: "[2026/07/22 ...", "[INFO] [x.go:1]", "\"[x.go:1] ...\""
	lineContinued          // starts with '[' but is not a header: a wrapped field
	lineIndented           // starts with whitespace: continuation of an open value
)

// Scanner reads TiCDC log records from a stream. It never panics on any
// input; what it cannot parse it counts in Stats. Memory is bounded by
// maxBuf regardless of the input's length.
type Scanner struct {
	r    io.Reader
	fw   *fullWidthReader // r's normaliser (nil: none)
	buf  []byte
	pos  int // start of unread data
	end  int // end of valid data
	scan int // bytes before scan have no '\n' (from pos)
	eof  bool
	err  error
	skip bool // discarding the rest of a cut line

	lineNo int

	// The pending record: buf[pStart:pEnd], not yet returned because a
	// continuation line may follow.
	have    bool
	pStart  int
	pEnd    int
	pLine   int
	pLines  int
	pTrunc  bool
	pQuoted bool // an excerpt line that is itself a quoted string
	// pTime is the pending record's time when pTimeOK: its first line
	// starts with a time in the cached second.
	pTime   int64
	pTimeOK bool

	rec      Record
	names    *names       // interns the identifiers of items (see names)
	hc       *headerCache // the parse worker's (nil: none)
	tc       timeCache
	scratch  []byte
	qbuf     []byte
	lastTime int64

	Stats ParseStats
}

// NewScanner returns a Scanner reading r.
func NewScanner(r io.Reader) *Scanner { return newScannerSize(r, initialBuf) }

// newScannerSize starts with an n-byte buffer (tests use small ones to
// exercise growth and compaction).
func newScannerSize(r io.Reader, n int) *Scanner {
	fw := newFullWidthReader(r)
	return &Scanner{r: fw, fw: fw, buf: make([]byte, max(n, 16))}
}

// newBytesScanner scans b in place, without copying (one chunk of a
// file, cut at a record boundary).
func newBytesScanner(b []byte) *Scanner {
	s := &Scanner{buf: b, end: len(b), eof: true}
	s.Stats.Bytes = int64(len(b))
	return s
}

// timeCache remembers the last parsed "YYYY/MM/DD HH:MM:SS" prefix: in a log
// most records share it with the one before, so only the fraction is new.
// The prefix is kept as three (overlapping) little-endian words of bytes
// 0-7, 8-15 and 11-18, the zone (bytes 23-29) as one.
type timeCache struct {
	w0, w1, w2 uint64
	zone       uint64
	valid      bool
	secMs      int64 // Unix ms of prefix+zone with a zero fraction
}

// zoneWord is the word of b's bytes 23-29 (len(b) == 30).
func zoneWord(b []byte) uint64 { return binary.LittleEndian.Uint64(b[22:30]) >> 8 }

// cached parses b if it is "2026/07/22 16:30:15.758 +00:00" in the
// cached second and zone.
func (tc *timeCache) cached(b []byte) (int64, bool) {
	if !tc.valid || len(b) != 30 {
		return 0, false
	}
	if binary.LittleEndian.Uint64(b[0:8]) != tc.w0 || binary.LittleEndian.Uint64(b[8:16]) != tc.w1 ||
		binary.LittleEndian.Uint64(b[11:19]) != tc.w2 || zoneWord(b) != tc.zone ||
		b[19] != '.' || !isDigit(b[20]) || !isDigit(b[21]) || !isDigit(b[22]) {
		return 0, false
	}
	return tc.secMs + int64(b[20]-'0')*100 + int64(b[21]-'0')*10 + int64(b[22]-'0'), true
}

func (tc *timeCache) parse(b []byte) (int64, bool) {
	if ms, ok := tc.cached(b); ok {
		return ms, true
	}
	ms, ok := parseLogTime(b)
	if ok && len(b) == 30 && b[19] == '.' && isDigit(b[20]) && isDigit(b[21]) && isDigit(b[22]) {
		tc.w0, tc.w1, tc.w2 = binary.LittleEndian.Uint64(b[0:8]), binary.LittleEndian.Uint64(b[8:16]), binary.LittleEndian.Uint64(b[11:19])
		tc.zone = zoneWord(b)
		tc.secMs = ms - (int64(b[20]-'0')*100 + int64(b[21]-'0')*10 + int64(b[22]-'0'))
		tc.valid = true
	}
	return ms, ok
}

// Err returns the first read error other than io.EOF.
func (s *Scanner) Err() error { return s.err }

// readLine returns the next physical line (without '\n' and '\r') as offsets
// into buf, and whether it was cut because it did not fit.
func (s *Scanner) readLine() (start, end int, cut, ok bool) {
	for {
		if i := bytes.IndexByte(s.buf[s.scan:s.end], '\n'); i >= 0 {
			nl := s.scan + i
			if s.skip {
				s.skip = false
				s.pos, s.scan = nl+1, nl+1
				continue
			}
			start, end = s.pos, nl
			s.pos, s.scan = nl+1, nl+1
			s.lineNo++
			s.Stats.Lines++
			if end > start && s.buf[end-1] == '\r' {
				end--
			}
			return start, end, false, true
		}
		s.scan = s.end
		if s.eof {
			if s.skip {
				s.pos, s.scan = s.end, s.end
				s.skip = false
			}
			if s.pos < s.end {
				start, end = s.pos, s.end
				s.pos, s.scan = s.end, s.end
				s.lineNo++
				s.Stats.Lines++
				if end > start && s.buf[end-1] == '\r' {
					end--
				}
				return start, end, false, true
			}
			return 0, 0, false, false
		}
		if s.skip {
			// drop the buffered rest of the cut line
			s.end, s.scan = s.pos, s.pos
		}
		// Make room: move the bytes still needed to the front.
		keep := s.keepFrom()
		if keep > 0 && (s.end == len(s.buf) || keep >= len(s.buf)/2) {
			copy(s.buf, s.buf[keep:s.end])
			s.pos -= keep
			s.scan -= keep
			s.end -= keep
			if s.have {
				s.pStart -= keep
				s.pEnd -= keep
			}
		}
		if s.end == len(s.buf) {
			if len(s.buf) < maxBuf {
				nb := make([]byte, 2*len(s.buf))
				copy(nb, s.buf[:s.end])
				s.buf = nb
			} else if s.have && s.pEnd-s.pStart > maxRecord {
				// The pending record is huge: keep its first maxRecord
				// bytes, move the partial line down behind them.
				newEnd := s.pStart + maxRecord
				n := copy(s.buf[newEnd:], s.buf[s.pos:s.end])
				s.pEnd, s.pTrunc = newEnd, true
				s.pos, s.scan, s.end = newEnd, newEnd+n, newEnd+n
				continue
			} else if !s.skip {
				// A huge line: return its first maxRecord bytes, skip the
				// rest. The pending record is at most maxRecord bytes, so
				// the line holds at least maxBuf-maxRecord bytes here.
				start, end = s.pos, min(s.end, s.pos+maxRecord)
				s.pos, s.scan, s.end = end, end, end
				s.skip = true
				s.lineNo++
				s.Stats.Lines++
				return start, end, true, true
			}
		}
		if s.end == len(s.buf) {
			// unreachable: the branches above always free space
			s.end, s.scan = s.pos, s.pos
			s.skip = true
		}
		n, err := s.r.Read(s.buf[s.end:])
		if n > 0 {
			s.end += n
			s.Stats.Bytes += int64(n)
		}
		if err != nil {
			s.eof = true
			if err != io.EOF {
				s.err = err
			}
		}
	}
}

func (s *Scanner) keepFrom() int {
	if s.have && s.pStart < s.pos {
		return s.pStart
	}
	return s.pos
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// looksLikeTime reports whether b starts with "dddd/dd/dd ".
func looksLikeTime(b []byte) bool {
	return len(b) >= 11 && isDigit(b[0]) && isDigit(b[1]) && isDigit(b[2]) && isDigit(b[3]) &&
		b[4] == '/' && isDigit(b[5]) && isDigit(b[6]) && b[7] == '/' && isDigit(b[8]) && isDigit(b[9]) && b[10] == ' '
}

// looksLikeLevelGroup reports whether b starts with "[LEVEL]".
func looksLikeLevelGroup(b []byte) bool {
	if len(b) < 6 || b[0] != '[' {
		return false
	}
	j := bytes.IndexByte(b[1:min(len(b), 9)], ']')
	return j > 0 && parseLevel(b[1:1+j]) != LevelUnknown
}

// looksLikeCallerGroup reports whether b starts with "[name.go:".
func looksLikeCallerGroup(b []byte) bool {
	if len(b) < 6 || b[0] != '[' {
		return false
	}
	lim := min(len(b), 96)
	j := bytes.IndexByte(b[1:lim], ']')
	if j < 0 {
		return false
	}
	g := b[1 : 1+j]
	k := bytes.Index(g, []byte(".go:"))
	return k > 0 && bytes.IndexByte(g[:k], ' ') < 0 && bytes.IndexByte(g[:k], '"') < 0
}

// classify finds where the log text starts in a line (after a viewer
// prefix such as "2026-01-08 06:12:39 | ") and what kind of line it is.
func classify(line []byte) (off int, k lineKind, quoted bool) {
	if len(line) == 0 {
		return 0, lineBlank, false
	}
	c := line[0]
	if c == '[' {
		if len(line) > 11 && looksLikeTime(line[1:]) {
			return 0, lineHeader, false
		}
		if looksLikeLevelGroup(line) || looksLikeCallerGroup(line) {
			return 0, lineHeader, false
		}
		return 0, lineContinued, false
	}
	if c == ' ' || c == '\t' {
		i := skipSpace(line, 0)
		if i == len(line) {
			return 0, lineBlank, false
		}
		if line[i] == '[' && (looksLikeTime(line[i+1:]) || looksLikeLevelGroup(line[i:]) || looksLikeCallerGroup(line[i:])) {
			return i, lineHeader, false
		}
		return 0, lineIndented, false
	}
	if looksLikeTime(line) && bytes.IndexByte(line[:min(len(line), 40)], ']') > 0 {
		// "2026/01/07 22:12:39.472 +00:00] [WARN] ..." (leading '[' lost)
		return 0, lineHeader, false
	}
	if c == '"' && len(line) > 2 && line[1] == '[' && line[len(line)-1] == '"' {
		return 0, lineHeader, true
	}
	// A viewer prefix: look for "[dddd/dd/dd " close to the start.
	lim := min(len(line), prefixSearch)
	for i := 1; i < lim; i++ {
		j := bytes.IndexByte(line[i:lim], '[')
		if j < 0 {
			break
		}
		i += j
		if looksLikeTime(line[i+1:]) {
			return i, lineHeader, false
		}
	}
	if c == '\r' {
		return 0, lineBlank, false
	}
	return 0, lineOther, false
}

// Next returns the next record, or nil at the end of the input. The record
// is valid until the next call.
func (s *Scanner) Next() *Record {
	for {
		start, end, cut, ok := s.readLine()
		if !ok {
			if s.have {
				if r := s.emit(true); r != nil {
					return r
				}
			}
			if s.fw != nil {
				s.Stats.FullWidth = s.fw.Lines
				s.Stats.Bytes += s.fw.Removed
				s.fw.Removed = 0
			}
			return nil
		}
		line := s.buf[start:end]
		var off int
		var kind lineKind
		var quoted bool
		// pingcap/log's "[2026/07/22 16:30:15.758 +00:00]" in the cached
		// second starts a record (as classify would find), and its time
		// is known
		ms, cached := int64(0), false
		if len(line) > 32 && line[0] == '[' && line[31] == ']' {
			ms, cached = s.tc.cached(line[1:31])
		}
		if cached {
			kind = lineHeader
		} else {
			off, kind, quoted = classify(line)
		}
		if kind == lineHeader && s.have && s.pEnd-s.pStart <= prefixSearch && s.joinsHeader(line[off:]) {
			// the rest of a record's header, wrapped onto its own line
			kind = lineContinued
		}
		switch kind {
		case lineHeader:
			var out *Record
			if s.have {
				out = s.emit(false)
			}
			s.have = true
			s.pStart, s.pEnd = start+off, end
			s.pLine, s.pLines = s.lineNo, 1
			s.pTrunc = cut
			s.pQuoted = quoted
			s.pTime, s.pTimeOK = ms, cached
			if out != nil {
				return out
			}
		case lineContinued, lineIndented, lineBlank:
			if s.have && !s.pQuoted && s.pLines < maxRecordLines && end-s.pStart <= maxRecord &&
				(s.pendingOpen() || kind == lineContinued) {
				s.pEnd = end
				s.pLines++
				if cut {
					s.pTrunc = true
				}
				continue
			}
			var out *Record
			if s.have {
				out = s.emit(false)
			}
			if kind == lineBlank {
				s.Stats.Blank++
			} else {
				s.unparsed()
			}
			if out != nil {
				return out
			}
		default:
			if s.have && !s.pQuoted && s.pLines < maxRecordLines && end-s.pStart <= maxRecord && s.pendingOpen() {
				// a value wrapped onto a line of its own
				s.pEnd = end
				s.pLines++
				if cut {
					s.pTrunc = true
				}
				continue
			}
			var out *Record
			if s.have {
				out = s.emit(false)
			}
			s.unparsed()
			if out != nil {
				return out
			}
		}
	}
}

// Header stages: how far a record's header goes (see headerStage).
const (
	stageNone   = iota
	stageTime   // "[2026/07/22 16:30:15.758 +00:00]"
	stageLevel  // then "[INFO]"
	stageCaller // then "[maintainer.go:799]"
)

// headerStage returns the last header group b holds when b is nothing but
// a header (its time, level and caller groups, in that order, each
// optional), or stageNone when b holds more (a message) or is no header.
func headerStage(b []byte) int {
	stage, i := stageNone, 0
	if len(b) > 0 && b[0] == '[' && looksLikeTime(b[1:]) || looksLikeTime(b) {
		j := bytes.IndexByte(b, ']')
		if j < 0 {
			return stageNone
		}
		stage, i = stageTime, j+1
	}
	i = skipSpace(b, i)
	if i < len(b) && looksLikeLevelGroup(b[i:]) {
		stage, i = stageLevel, i+bytes.IndexByte(b[i:], ']')+1
	}
	i = skipSpace(b, i)
	if i < len(b) && looksLikeCallerGroup(b[i:]) {
		stage, i = stageCaller, i+bytes.IndexByte(b[i:], ']')+1
	}
	if skipSpace(b, i) < len(b) {
		return stageNone
	}
	return stage
}

// joinsHeader reports whether line, a header line that starts with a level
// or a caller group, goes on the pending record: the pending record is a
// header cut before this group (a record wrapped over several lines, one
// group per line, as pasted into an issue).
func (s *Scanner) joinsHeader(line []byte) bool {
	if s.pQuoted || s.pEnd-s.pStart > prefixSearch || s.pLines >= maxRecordLines {
		return false
	}
	var next int
	switch {
	case looksLikeLevelGroup(line):
		next = stageLevel
	case looksLikeCallerGroup(line):
		next = stageCaller
	default:
		return false
	}
	p := headerStage(s.buf[s.pStart:s.pEnd])
	return p != stageNone && p < next
}

func (s *Scanner) unparsed() {
	s.Stats.Unparsed++
	if len(s.Stats.UnparsedAt) < maxUnparsedAt {
		s.Stats.UnparsedAt = append(s.Stats.UnparsedAt, s.lineNo)
	}
}

// pendingOpen reports whether the pending record ends inside a group (an
// unclosed quoted value or bracket), so that the next line continues it.
func (s *Scanner) pendingOpen() bool {
	b := s.buf[s.pStart:s.pEnd]
	i := 0
	if len(b) > 0 && b[0] != '[' && looksLikeTime(b) {
		j := bytes.IndexByte(b, ']')
		if j < 0 {
			return false
		}
		i = j + 1
	}
	for {
		i = skipSpace(b, i)
		if i >= len(b) {
			return false
		}
		if b[i] != '[' {
			// Text outside a group: the record is damaged; treat it as
			// complete unless a quote is left open.
			return false
		}
		e, closed := scanGroup(b, i)
		if !closed {
			return true
		}
		i = e
	}
}

// emit turns the pending record into s.rec. atEOF marks a record whose last
// group is still open as truncated. It returns nil if the pending text is
// not a record after all (then its lines are counted as unparsed).
func (s *Scanner) emit(atEOF bool) *Record {
	s.have = false
	text := s.buf[s.pStart:s.pEnd]
	s.scratch = s.scratch[:0]
	if s.pQuoted {
		s.qbuf = s.qbuf[:0]
		t := unquote(text, &s.qbuf)
		text = t
	}
	r := &s.rec
	*r = Record{fields: r.fields[:0], scratch: &s.scratch, names: s.names}
	r.Line, r.Lines, r.Text, r.Truncated = s.pLine, s.pLines, text, s.pTrunc
	if !parseHeader(text, r, &s.tc, s.hc, s.pTime, s.pTimeOK) {
		s.Stats.Unparsed += int64(s.pLines)
		if len(s.Stats.UnparsedAt) < maxUnparsedAt {
			s.Stats.UnparsedAt = append(s.Stats.UnparsedAt, s.pLine)
		}
		return nil
	}
	if r.HasTime {
		s.lastTime = r.Time
		s.Stats.Timed++
	} else {
		r.Time = s.lastTime
	}
	if !r.Truncated && atEOF && s.pendingOpenText(text) {
		r.Truncated = true
	}
	if r.Truncated {
		s.Stats.Truncated++
	}
	if r.Level == LevelUnknown {
		s.Stats.NoLevel++
	}
	if r.Lines > 1 {
		s.Stats.Wrapped++
	}
	s.Stats.Records++
	return r
}

func (s *Scanner) pendingOpenText(b []byte) bool {
	i := 0
	for {
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != '[' {
			return false
		}
		e, closed := scanGroup(b, i)
		if !closed {
			return true
		}
		i = e
	}
}

// parseHeader parses "[time] [LEVEL] [file.go:line] [message]" (time and
// level may be missing; the '[' before the time may be lost) and sets r's
// header fields and the rest (the fields).
func parseHeader(b []byte, r *Record, tc *timeCache, hc *headerCache, pre int64, preOK bool) bool {
	if i, g0, file, ok := parseHeaderFast(b, r, tc, hc, pre, preOK); ok {
		if i < 0 {
			return true // the caller and message came from hc
		}
		ok := parseMessage(b, i, r)
		if ok && hc != nil {
			hc.fill(b, g0, file, r)
		}
		return ok
	}
	i := 0
	if len(b) > 32 && b[31] == ']' && b[0] == '[' {
		// pingcap/log's own "[2026/07/22 16:30:15.758 +00:00]" with the
		// cached second: the cached prefix and zone hold no ']', so the
		// first ']' is b[31], as the general path below would find
		if ms, ok := tc.cached(b[1:31]); ok {
			r.Time, r.HasTime = ms, true
			i = 32
		}
	}
	if i > 0 {
		// time parsed above
	} else if len(b) > 0 && b[0] == '[' && looksLikeTime(b[1:]) {
		j := bytes.IndexByte(b, ']')
		if j < 0 {
			return false
		}
		r.Time, r.HasTime = tc.parse(b[1:j])
		i = j + 1
	} else if looksLikeTime(b) {
		j := bytes.IndexByte(b, ']')
		if j < 0 {
			return false
		}
		r.Time, r.HasTime = tc.parse(b[:j])
		i = j + 1
	}
	// level
	i = skipSpace(b, i)
	if i+6 <= len(b) && (string(b[i:i+6]) == "[INFO]" || string(b[i:i+6]) == "[WARN]") {
		// the common levels, as the general path below would read them
		r.Level = LevelInfo
		if b[i+1] == 'W' {
			r.Level = LevelWarn
		}
		i += 6
	} else if i < len(b) && b[i] == '[' {
		if j := bytes.IndexByte(b[i:min(len(b), i+9)], ']'); j > 0 {
			if l := parseLevel(b[i+1 : i+j]); l != LevelUnknown {
				r.Level = l
				i += j + 1
			}
		}
	}
	// caller
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != '[' {
		return r.HasTime && i >= len(b) // a bare header cut after the time/level
	}
	// A caller group ("[pkg/file.go:123]", short) ends at the first ']';
	// a '"' or '=' before it means this is not a caller group. The file is
	// what lies between the last '/' before the last ':' and that ':'.
	g := b[i+1:]
	stop := len(g) // the first ']', '"' or '=' in g
	if j := bytes.IndexByte(g, ']'); j >= 0 {
		stop = j
	}
	notCaller := false
	if q := bytes.IndexByte(g[:stop], '"'); q >= 0 {
		stop, notCaller = q, true
	}
	if q := bytes.IndexByte(g[:stop], '='); q >= 0 {
		stop, notCaller = q, true
	}
	k := i + 1 + stop
	if notCaller || k == len(b) {
		if bytes.IndexByte(b[k:], ']') < 0 {
			r.Truncated = true
			return r.HasTime
		}
		// no caller group: this is already the message or a field
		if !r.HasTime && r.Level == LevelUnknown {
			return false
		}
	} else {
		end := stop // g[stop] is the group's ']'
		if colon := bytes.LastIndexByte(g[:stop], ':'); colon >= 0 {
			end = colon
		}
		r.File = g[bytes.LastIndexByte(g[:end], '/')+1 : end]
		i = k + 1
	}
	if !r.HasTime && r.Level == LevelUnknown && len(r.File) == 0 {
		return false
	}
	return parseMessage(b, i, r)
}

// callerStop marks the bytes parseHeaderFast's caller scan acts on.
var callerStop = [256]bool{']': true, '"': true, '=': true, ':': true, '/': true}

// parseHeaderFast parses pingcap/log's own header, "[2026/07/22
// 16:30:15.758 +00:00] [INFO] [pkg/file.go:123] ", in the cached second
// (see timeCache), exactly as parseHeader's general path would, in one pass
// over the caller. It returns where the message starts, where the caller
// group's text starts (g0) and where r.File starts, or false (r untouched)
// for any other header.
// When the caller and the message that follow are a prefix hc holds, it
// sets them (and the catalogue entry) from hc and returns -1. pre is the
// time when preOK (the Scanner found it in the cached second).
func parseHeaderFast(b []byte, r *Record, tc *timeCache, hc *headerCache, pre int64, preOK bool) (msg, g0, file int, ok bool) {
	if len(b) < 42 || b[0] != '[' || b[31] != ']' || b[32] != ' ' || b[33] != '[' {
		return 0, 0, 0, false
	}
	ms, cached := pre, preOK
	if !cached {
		ms, cached = tc.cached(b[1:31])
	}
	if !cached {
		return 0, 0, 0, false
	}
	// the level: "[INFO]", "[WARN]", "[ERROR]", "[DEBUG]", "[FATAL]", "[PANIC]"
	var lvl Level
	i := 39 // after "[INFO]"
	switch string(b[33:39]) {
	case "[INFO]":
		lvl = LevelInfo
	case "[WARN]":
		lvl = LevelWarn
	default:
		if b[39] != ']' {
			return 0, 0, 0, false
		}
		switch string(b[34:39]) {
		case "ERROR":
			lvl = LevelError
		case "DEBUG":
			lvl = LevelDebug
		case "FATAL":
			lvl = LevelFatal
		case "PANIC":
			lvl = LevelPanic
		default:
			return 0, 0, 0, false
		}
		i = 40
	}
	// the caller: " [" then up to the first ']' no '"' or '=' (else the
	// general path decides)
	if i+2 >= len(b) || b[i] != ' ' || b[i+1] != '[' {
		return 0, 0, 0, false
	}
	g0 = i + 2
	if hc != nil && len(b) >= g0+24 {
		// a prefix hc holds (hc's slots, inline: this runs for every
		// record): r's File, Msg, rest and catalogue entry from its slot
		set := headerSet(b, g0)
		p := b[g0:]
		for w := set; w < set+2; w++ {
			sl := &hc.slots[w]
			n := len(sl.prefix)
			if n == 0 || len(p) < n || string(p[:n]) != sl.prefix {
				continue
			}
			r.File = p[sl.fileLo:sl.fileHi]
			r.Msg = p[sl.msgLo:sl.msgHi]
			r.rest = p[n:]
			r.entry, r.looked, r.slot = sl.e, true, sl
			r.Time, r.HasTime, r.Level = ms, true, lvl
			return -1, g0, 0, true
		}
	}
	slash, colon, slashAtColon := -1, -1, -1
	j := g0
	for {
		for j < len(b) && !callerStop[b[j]] {
			j++
		}
		if j >= len(b) {
			return 0, 0, 0, false
		}
		c := b[j]
		if c == ']' {
			break
		}
		switch c {
		case ':':
			colon, slashAtColon = j, slash
		case '/':
			slash = j
		default: // '"' or '='
			return 0, 0, 0, false
		}
		j++
	}
	end, sl := j, slash
	if colon >= 0 {
		end, sl = colon, slashAtColon
	}
	if sl < 0 {
		sl = g0 - 1
	}
	r.Time, r.HasTime, r.Level = ms, true, lvl
	r.File = b[sl+1 : end]
	return j + 1, g0, sl + 1, true
}

// headerCache remembers, for one parse worker, the callers and messages
// of recent records ("span_registry.go:328] [\"subscription client finds a
// initialized slow region\"]", from just after the caller's '[' to the
// message group's ']'), with where the file name and the message lie in
// them and the message's catalogue entry: most records of a log repeat
// one of a few dozen log statements, and a record that starts with such a
// prefix parses as it did (the parse of that prefix depends on its bytes
// alone). Two ways per set, picked by the caller's first 24 bytes.
type headerCache struct {
	slots [2 * headerSets]headerSlot
	// chunk numbers the parse worker's chunks (see headerSlot.unknown)
	chunk uint64
}

const headerSets = 128

type headerSlot struct {
	prefix         string // "" if empty
	fileLo, fileHi int    // r.File is prefix[fileLo:fileHi]
	msgLo, msgHi   int    // r.Msg is prefix[msgLo:msgHi]
	e              *entry // lookup's answer
	// unknown is the counter of the chunk's unknownMessages the message's
	// records add to, if e is nil and chunk is headerCache.chunk.
	unknown *int64
	chunk   uint64
}

func headerSet(b []byte, g0 int) int {
	b = b[g0 : g0+24]
	h := (binary.LittleEndian.Uint64(b) + binary.LittleEndian.Uint64(b[8:])) ^ binary.LittleEndian.Uint64(b[16:])
	return int((h*0x9e3779b97f4a7c15)>>(64-7)) * 2
}

// fill remembers the prefix of a record whose header parseHeaderFast
// parsed (the caller group's text starting at g0, r.File at file) and
// whose message group
// parseMessage read as a closed, quoted message without escapes.
func (hc *headerCache) fill(b []byte, g0, file int, r *Record) {
	end := len(b) - len(r.rest) // just after the message group, if rest is b's suffix
	mlo := end - 2 - len(r.Msg)
	if r.Truncated || len(r.Msg) == 0 || len(b) < g0+24 || end-g0 > 256 || mlo < g0+2 ||
		b[mlo-2] != '[' || b[mlo-1] != '"' || b[end-2] != '"' || b[end-1] != ']' ||
		string(b[mlo:end-2]) != string(r.Msg) || bytes.IndexByte(r.Msg, '\\') >= 0 {
		return
	}
	fileLo := file - g0
	set := headerSet(b, g0)
	w := set
	if hc.slots[w].prefix != "" {
		w = set + 1
		if hc.slots[w].prefix != "" {
			// both taken: the older way moves out
			hc.slots[set+1] = hc.slots[set]
			w = set
		}
	}
	r.slot = &hc.slots[w]
	hc.slots[w] = headerSlot{
		prefix: string(b[g0:end]),
		fileLo: fileLo, fileHi: fileLo + len(r.File),
		msgLo: mlo - g0, msgHi: mlo - g0 + len(r.Msg),
		e: lookup(r),
	}
}

// parseMessage parses the message group from b[i] on and sets r.Msg and
// r.rest (the fields).
func parseMessage(b []byte, i int, r *Record) bool {
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != '[' {
		r.rest = nil
		return true
	}
	if i+2 < len(b) && b[i+1] == '"' {
		// the common ["message"] without escapes, as the general path
		// below would read it
		if q := bytes.IndexByte(b[i+2:], '"'); q >= 0 {
			qe := i + 2 + q // the closing quote
			if qe+1 < len(b) && b[qe+1] == ']' && bytes.IndexByte(b[i+2:qe], '\\') < 0 {
				r.Msg = b[i+2 : qe]
				r.rest = b[qe+2:]
				return true
			}
		}
	}
	var e int
	var closed bool
	if i+1 < len(b) && b[i+1] != '"' {
		// An unquoted message has no brackets, quotes or spaces
		// (pingcap/log quotes it otherwise): the first ']' ends it.
		if j := bytes.IndexByte(b[i+1:], ']'); j >= 0 {
			e, closed = i+1+j+1, true
		} else {
			e = len(b)
		}
	} else {
		e, closed = scanGroup(b, i)
	}
	inner := b[i+1 : e]
	if closed {
		inner = b[i+1 : e-1]
	} else {
		r.Truncated = true
	}
	if len(inner) > 0 && inner[0] == '"' {
		r.Msg = unquote(inner, r.scratch)
	} else {
		r.Msg = inner
	}
	r.rest = b[e:]
	return true
}
