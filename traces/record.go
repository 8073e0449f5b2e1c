// Package traces checks TiCDC production logs against cdcspec's properties.
//
// A log is read by a streaming Scanner that understands TiCDC's unified log
// format (github.com/pingcap/log), damaged as real logs are: records wrapped
// over several lines, viewer prefixes, truncated lines, lines of other
// programs, invalid UTF-8 and huge lines. Records whose (file, message) is in
// the catalogue become spec.Events; several files are merged by timestamp;
// the spec monitors and the log-only symptom monitors of this package turn
// the events into Findings, each with the log lines that show it.
//
// Blind spots, stated once: the checker sees only what TiCDC logs at the
// level the logs were written with. The stored checkpoint and the
// coordinator's per-status decisions are DEBUG-only in TiCDC, so properties
// that need them are judged from weaker symptoms (suspect) or not at all
// (see the coverage summary of every run).
package traces

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// Level is a log record's level.
type Level uint8

// Levels, in pingcap/log's spelling.
const (
	LevelUnknown Level = iota
	LevelDebug
	LevelInfo
	LevelWarn
	LevelError
	LevelFatal
	LevelPanic
)

var levelNames = [...]string{"", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "PANIC"}

func (l Level) String() string {
	if int(l) < len(levelNames) {
		return levelNames[l]
	}
	return "?"
}

func parseLevel(b []byte) Level {
	switch string(b) {
	case "DEBUG", "debug":
		return LevelDebug
	case "INFO", "info":
		return LevelInfo
	case "WARN", "warn", "WARNING", "warning":
		return LevelWarn
	case "ERROR", "error":
		return LevelError
	case "FATAL", "fatal":
		return LevelFatal
	case "PANIC", "panic", "DPANIC":
		return LevelPanic
	}
	return LevelUnknown
}

// Record is one parsed log record. Its byte slices point into the Scanner's
// buffer and are valid only until the next call to Scanner.Next.
type Record struct {
	// Time is Unix milliseconds; HasTime is false for records without a
	// timestamp (quoted excerpts), which inherit the previous record's time.
	Time    int64
	HasTime bool
	Level   Level
	// File is the caller's file name without directory and line number,
	// e.g. "maintainer.go".
	File []byte
	// Msg is the message, unquoted and unescaped.
	Msg []byte
	// Line is the 1-based line number of the record's first line; Lines is
	// how many physical lines it spans.
	Line  int
	Lines int
	// Text is the record as written (after any viewer prefix), including the
	// newlines of a wrapped record.
	Text []byte
	// Truncated is set when the record was cut: a huge line, a record left
	// open at the end of the input or interrupted by another record.
	Truncated bool

	rest    []byte // the bytes after the message group: the fields
	fields  []field
	parsed  bool
	scratch *[]byte
	names   *names // the Scanner's (nil: toItems copies identifiers)
	// own is Text as a string when an item's evidence text is the record
	// as written ("" otherwise): set by toItems for its conversions.
	own string
	// entry is lookup's answer when looked (the scanner's headerCache knew
	// the record's file and message).
	entry  *entry
	looked bool
	slot   *headerSlot // the header cache's slot of the record's prefix, if any
}

type field struct {
	key, val []byte
	// off is where val starts in the record's Text when val is Text's
	// own bytes (not unescaped into scratch), else -1.
	off int32
}

// Field returns the value of the last field named key, unquoted. ok is false
// if the record has no such field.
func (r *Record) Field(key string) (val []byte, ok bool) {
	r.parseFields()
	for i := len(r.fields) - 1; i >= 0; i-- {
		if string(r.fields[i].key) == key {
			return r.fields[i].val, true
		}
	}
	return nil, false
}

// fieldString is Field as a string, cut from r.own (no copy) when the
// value is the record's own bytes.
func (r *Record) fieldString(key string) (string, bool) {
	r.parseFields()
	for i := len(r.fields) - 1; i >= 0; i-- {
		if f := &r.fields[i]; string(f.key) == key {
			return textOf(r.own, f.val, f.off), true
		}
	}
	return "", false
}

// FieldString is Field as a string ("" if absent).
func (r *Record) FieldString(key string) string {
	v, _ := r.Field(key)
	return string(v)
}

// NumFields returns the number of fields after the message.
func (r *Record) NumFields() int {
	r.parseFields()
	return len(r.fields)
}

// FieldAt returns the i-th field's key and value.
func (r *Record) FieldAt(i int) (key, val []byte) {
	r.parseFields()
	return r.fields[i].key, r.fields[i].val
}

func (r *Record) parseFields() {
	if r.parsed {
		return
	}
	r.parsed = true
	r.fields = r.fields[:0]
	b := r.rest
	base := len(r.Text) - len(b) // rest is a suffix of Text
	i := 0
	for {
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != '[' {
			return
		}
		if end, eq, ok := plainField(b, i); ok {
			// what scanGroup and splitField give such a group
			f := r.newField()
			if eq >= 0 {
				f.key, f.val, f.off = b[i+1:eq], b[eq+1:end-1], int32(base+eq+1)
			} else {
				f.key, f.val, f.off = nil, b[i+1:end-1], int32(base+i+1)
			}
			i = end
			continue
		}
		end, closed := scanGroup(b, i)
		inner := b[i+1 : end]
		if closed {
			inner = b[i+1 : end-1]
		}
		k, v, off := splitField(inner, r.scratch)
		if off >= 0 {
			off += base + i + 1
		}
		r.fields = append(r.fields, field{key: k, val: v, off: int32(off)})
		if !closed {
			return
		}
		i = end
	}
}

// newField appends a field to r.fields and returns it, to be set in place
// (an appended literal is built and copied).
func (r *Record) newField() *field {
	n := len(r.fields)
	if n < cap(r.fields) {
		r.fields = r.fields[:n+1]
	} else {
		r.fields = append(r.fields, field{})
	}
	return &r.fields[n]
}

// plainField reads the group at b[i] == '[' if it holds no quote, bracket
// or brace before its ']' ("[key=value]", "[value]"): it returns the index
// just after the ']' and of the first '=' (-1 if none).
func plainField(b []byte, i int) (end, eq int, ok bool) {
	j := stopAt(b, i+1, &fieldByte)
	eq = -1
	if j < len(b) && b[j] == '=' {
		eq = j
		j = stopAt(b, j+1, &groupByte)
	}
	if j < len(b) && b[j] == ']' {
		return j + 1, eq, true
	}
	return 0, 0, false
}

// stopAt returns the index of the first byte from b[j] on that stop
// marks, or len(b). It tests eight bytes a round, one byte at a time (keys
// and values are short, so a word-wise test costs more than it saves); the
// byte-wise loop reads the last seven.
func stopAt(b []byte, j int, stop *[256]bool) int {
	for ; j+8 <= len(b); j += 8 {
		w := b[j : j+8 : j+8]
		switch {
		case stop[w[0]]:
			return j
		case stop[w[1]]:
			return j + 1
		case stop[w[2]]:
			return j + 2
		case stop[w[3]]:
			return j + 3
		case stop[w[4]]:
			return j + 4
		case stop[w[5]]:
			return j + 5
		case stop[w[6]]:
			return j + 6
		case stop[w[7]]:
			return j + 7
		}
	}
	for j < len(b) && !stop[b[j]] {
		j++
	}
	return j
}

// fieldByte marks the bytes plainField's key scan stops at.
var fieldByte = [256]bool{'"': true, '[': true, '{': true, ']': true, '}': true, '=': true}

// splitField splits the inside of a "[key=value]" group. Quoted keys and
// values are unescaped into scratch (values that need no unescaping are not
// copied). off is where val starts in g, or -1 if val was unescaped into
// scratch.
func splitField(g []byte, scratch *[]byte) (key, val []byte, off int) {
	var eq int
	if len(g) > 0 && g[0] == '"' {
		e := scanString(g, 0)
		if e < len(g) && g[e] == '=' {
			key = unquote(g[:e], scratch)
			eq = e
		} else {
			val, off = unquoteAt(g, scratch)
			return nil, val, off
		}
	} else {
		eq = bytes.IndexByte(g, '=')
		if eq < 0 {
			return nil, g, 0
		}
		key = g[:eq]
	}
	v := g[eq+1:]
	if len(v) >= 2 && v[0] == '"' && scanString(v, 0) == len(v) {
		val, off = unquoteAt(v, scratch)
		if off >= 0 {
			off += eq + 1
		}
		return key, val, off
	}
	return key, v, eq + 1
}

// unquoteAt is unquote, also returning where the result starts in s, or -1
// if it was unescaped into scratch.
func unquoteAt(s []byte, scratch *[]byte) ([]byte, int) {
	if len(s) < 2 || s[0] != '"' {
		return s, 0
	}
	body := s[1:]
	if body[len(body)-1] == '"' {
		body = body[:len(body)-1]
	}
	if bytes.IndexByte(body, '\\') < 0 {
		return body, 1 // what unquote returns, without a second scan
	}
	return unquote(s, scratch), -1
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && spaceByte[b[i]] {
		i++
	}
	return i
}

// spaceByte marks the bytes skipSpace skips.
var spaceByte = [256]bool{' ': true, '\n': true, '\r': true, '\t': true}

// scanString scans a double-quoted string starting at b[i] == '"' and
// returns the index just after the closing quote, or len(b) if it is not
// closed.
func scanString(b []byte, i int) int {
	i++
	for i < len(b) {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return len(b)
		}
		q := i + j
		// the quote is escaped if an odd number of backslashes precede it
		n := 0
		for k := q - 1; k >= i && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
	return len(b)
}

// scanGroup scans a bracketed group starting at b[i] == '['. It returns the
// index just after the closing ']' and true, or len(b) and false if the
// group is not closed. A group is either a quoted string ("[\"msg\"]"), or
// key=value where value is quoted, or unquoted text in which nested
// brackets, braces and quoted strings (JSON, arrays) are balanced. Time
// values contain spaces but no brackets.
func scanGroup(b []byte, i int) (int, bool) {
	j := i + 1
	if j < len(b) && b[j] == '"' {
		e := scanString(b, j)
		if e < len(b) && b[e] == ']' {
			return e + 1, true
		}
		if e >= len(b) {
			return len(b), false
		}
		// a quoted key: fall through to the general scan from e
		j = e
	}
	depth := 0
	for j < len(b) {
		j = skipPlain(b, j)
		if j >= len(b) {
			break
		}
		c := b[j]
		if !groupByte[c] {
			j++
			continue
		}
		switch c {
		case '"':
			// A quote opens a string only at the start of a value or inside
			// JSON; an unquoted value cannot contain a bare quote, so this
			// is safe.
			j = scanString(b, j)
			continue
		case '[', '{':
			depth++
		case ']', '}':
			if depth == 0 {
				if c == ']' {
					return j + 1, true
				}
			} else {
				depth--
			}
		}
		j++
	}
	return len(b), false
}

// groupByte marks the bytes scanGroup acts on; it skips the others.
var groupByte = [256]bool{'"': true, '[': true, '{': true, ']': true, '}': true}

// skipPlain skips from b[j] over the bytes scanGroup does not act on, 8
// at a time, and returns where the byte-wise scan resumes: at the first
// byte it acts on, or in the last 7 bytes of b. '[' and '{', ']' and '}'
// differ only in bit 0x20, so that setting it leaves two bytes to look for
// besides '"'.
func skipPlain(b []byte, j int) int {
	const ones = 0x0101010101010101
	for j+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[j:])
		y := x | 0x20*ones
		if m := hasZeroByte(x^'"'*ones) | hasZeroByte(y^'{'*ones) | hasZeroByte(y^'}'*ones); m != 0 {
			// the lowest flagged byte is always a zero byte (see
			// hasZeroByte): the first byte of interest
			return j + bits.TrailingZeros64(m)>>3
		}
		j += 8
	}
	return j
}

// hasZeroByte is non-zero if and only if one of v's bytes is zero; its
// lowest set bit is the high bit of v's lowest zero byte (the bytes above a
// zero byte may be flagged too).
func hasZeroByte(v uint64) uint64 {
	const ones = 0x0101010101010101
	return (v - ones) &^ v & (0x80 * ones)
}

// unquote removes the surrounding quotes of s and resolves escapes. If s has
// no escapes the result aliases s; otherwise it is written to scratch, which
// is reused by the Scanner for every record.
func unquote(s []byte, scratch *[]byte) []byte {
	if len(s) < 2 || s[0] != '"' {
		return s
	}
	body := s[1:]
	if body[len(body)-1] == '"' {
		body = body[:len(body)-1]
	}
	if bytes.IndexByte(body, '\\') < 0 {
		return body
	}
	if scratch == nil {
		var tmp []byte
		scratch = &tmp
	}
	start := len(*scratch)
	out := *scratch
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' || i+1 >= len(body) {
			out = append(out, c)
			continue
		}
		i++
		switch body[i] {
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case '"', '\\', '/':
			out = append(out, body[i])
		case 'u':
			if i+4 < len(body) {
				if r, ok := hex4(body[i+1 : i+5]); ok {
					out = appendRune(out, r)
					i += 4
					continue
				}
			}
			out = append(out, '\\', 'u')
		default:
			out = append(out, '\\', body[i])
		}
	}
	*scratch = out
	return out[start:len(out):len(out)]
}

func hex4(b []byte) (rune, bool) {
	var r rune
	for _, c := range b {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r |= rune(c-'A') + 10
		default:
			return 0, false
		}
	}
	return r, true
}

func appendRune(b []byte, r rune) []byte {
	switch {
	case r < 0x80:
		return append(b, byte(r))
	case r < 0x800:
		return append(b, byte(0xC0|r>>6), byte(0x80|r&0x3F))
	default:
		return append(b, byte(0xE0|r>>12), byte(0x80|(r>>6)&0x3F), byte(0x80|r&0x3F))
	}
}

// parseLogTime parses pingcap/log's "2026/07/22 16:30:15.758 +00:00" (the
// fraction and zone are optional) into Unix milliseconds.
func parseLogTime(b []byte) (int64, bool) {
	if len(b) < 19 || b[4] != '/' || b[7] != '/' || b[10] != ' ' || b[13] != ':' || b[16] != ':' {
		return 0, false
	}
	y, ok1 := atoiN(b[0:4])
	mo, ok2 := atoiN(b[5:7])
	d, ok3 := atoiN(b[8:10])
	h, ok4 := atoiN(b[11:13])
	mi, ok5 := atoiN(b[14:16])
	s, ok6 := atoiN(b[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 {
		return 0, false
	}
	i := 19
	ms := 0
	if i < len(b) && b[i] == '.' {
		i++
		n, scale := 0, 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			if scale < 3 {
				n = n*10 + int(b[i]-'0')
				scale++
			}
			i++
		}
		for ; scale < 3; scale++ {
			n *= 10
		}
		ms = n
	}
	off := 0
	if i+7 <= len(b) && b[i] == ' ' && (b[i+1] == '+' || b[i+1] == '-') && b[i+4] == ':' {
		oh, okh := atoiN(b[i+2 : i+4])
		om, okm := atoiN(b[i+5 : i+7])
		if okh && okm {
			off = oh*60 + om
			if b[i+1] == '-' {
				off = -off
			}
		}
	}
	days := daysFromCivil(y, mo, d)
	sec := days*86400 + int64(h*3600+mi*60+s) - int64(off*60)
	return sec*1000 + int64(ms), true
}

func atoiN(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// daysFromCivil returns the days since 1970-01-01 (proleptic Gregorian).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}
