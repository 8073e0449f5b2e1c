package traces

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"cdcspec/spec"
)

// entry maps one (file, message) to what it means.
type entry struct {
	msg   string
	files []string // caller file names; empty: any file
	kind  spec.Kind
	sym   Symptom
	// keys maps Event field names to the log keys that carry them, as a
	// comma-separated list of alternatives (first found wins).
	keys map[string]string
	// fields is keys, compiled once: in a stable order, alternatives split.
	fields []fieldKeys
	// keyIdx lists every log key of fields with its field and its rank
	// among the field's alternatives (toItems reads a record's fields
	// once); keyTab indexes it by keySlot (see findKey).
	keyIdx []keyRef
	keyTab [keySlots]uint8
	// conv post-processes the event (operator strings, membership lists):
	// it is out's last element; conv returns out, possibly with that item
	// replaced by several.
	conv func(r *Record, it *Item, out []Item) []Item
	// v records where the line comes from, for the catalogue listing.
	v string

	// Derived once from the tables below (see catalogueIndex), so that the
	// parse workers need no map lookup per record:
	read    bool   // a benign line a monitor still reads (contextItems)
	none    noneTs // the timestamp values that mean none here (tsMeansNone)
	ownLine bool   // one of cdcspec's own lines (v "cdcspec..."): no impossible-value check
}

type fieldKeys struct {
	name string     // Event field name
	id   eventField // name, as setField switches on it
	keys []string   // log keys, first found wins
}

// eventField names a field of spec.Event that catalogue lines fill in.
type eventField uint8

// eventFields are the names the catalogue's keys may map, in eventField
// order (0 is no field).
var eventFields = []string{"", "Changefeed", "Node", "Origin", "Dispatcher", "State", "Err", "Reason", "Op",
	"Epoch", "Checkpoint", "NextRetry", "Span", "Tables", "BootstrapDone", "Accepted", "RemovalOnly",
	"Removed", "Merge", "SyncPoint", "Influence", "Dropped", "Added"}

const (
	fChangefeed eventField = iota + 1
	fNode
	fOrigin
	fDispatcher
	fState
	fErr
	fReason
	fOp
	fEpoch
	fCheckpoint
	fNextRetry
	fSpan
	fTables
	fBootstrapDone
	fAccepted
	fRemovalOnly
	fRemoved
	fMerge
	fSyncPoint
	fInfluence
	fDropped
	fAdded
)

type keyRef struct {
	key         string
	field, rank int
}

// findKey returns the keyRef of log key k, if the entry reads it: one
// probe of keyTab, and a string comparison only for a key of the slot
// (most of a record's field keys are not the entry's and find an empty
// slot at once).
func (e *entry) findKey(k []byte) (keyRef, bool) {
	if len(k) == 0 {
		return keyRef{}, false
	}
	for h := keySlot(k); ; h = (h + 1) & (keySlots - 1) {
		x := e.keyTab[h]
		if x == 0 {
			return keyRef{}, false
		}
		if r := &e.keyIdx[x-1]; r.key == string(k) {
			return *r, true
		}
	}
}

// keySlots is the size of an entry's key table: a power of two, at least
// twice as many as the keys an entry reads (compileKeys checks).
const keySlots = 64

// keySlot is where the probe for key k (not empty) starts: a hash of its
// length and first and last bytes.
func keySlot(k []byte) uint32 {
	n := len(k)
	return (uint32(n) | uint32(k[0])<<8 | uint32(k[n-1])<<16) * 0x9e3779b1 >> (32 - 6)
}

// findKeyIn is findKey by a scan of refs (compileKeys' and the tests').
func findKeyIn(refs []keyRef, k []byte) (keyRef, bool) {
	for i := range refs {
		if refs[i].key == string(k) {
			return refs[i], true
		}
	}
	return keyRef{}, false
}

// compile sets e's fields, keyIdx and keyTab from its keys.
func (e *entry) compile() {
	e.fields, e.keyIdx = compileKeys(e.keys)
	if len(e.keyIdx) > keySlots/2 {
		panic(fmt.Sprintf("catalogue: %q reads %d keys, more than %d", e.msg, len(e.keyIdx), keySlots/2))
	}
	e.keyTab = [keySlots]uint8{}
	for i, r := range e.keyIdx {
		if r.key == "" || r.key == "keyspace" || r.key == "namespace" {
			// (toItems reads the changefeed's keyspace from these keys
			// only when the entry does not)
			panic(fmt.Sprintf("catalogue: %q maps the key %q", e.msg, r.key))
		}
		h := keySlot([]byte(r.key))
		for e.keyTab[h] != 0 {
			h = (h + 1) & (keySlots - 1)
		}
		e.keyTab[h] = uint8(i + 1)
	}
}

func compileKeys(keys map[string]string) ([]fieldKeys, []keyRef) {
	out := make([]fieldKeys, 0, len(keys))
	for name, ks := range keys {
		id := slices.Index(eventFields, name)
		if id <= 0 {
			panic(fmt.Sprintf("catalogue: keys map %q, which is no event field", name))
		}
		out = append(out, fieldKeys{name: name, id: eventField(id), keys: strings.Split(ks, ",")})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	var idx []keyRef
	for i, fk := range out {
		for r, k := range fk.keys {
			if _, dup := findKeyIn(idx, []byte(k)); !dup {
				idx = append(idx, keyRef{key: k, field: i, rank: r})
			}
		}
	}
	return out, idx
}

// index: message → entries.
var catalogueIndex = func() map[string][]*entry {
	idx := map[string][]*entry{}
	catalogue = append(catalogue, ownEntries()...)
	catalogue = append(catalogue, barrierEntries...)
	catalogue = append(catalogue, headEntries()...)
	for i := range catalogue {
		e := &catalogue[i]
		e.compile()
		e.derive()
		idx[e.msg] = append(idx[e.msg], e)
	}
	panicEntry.compile()
	panicEntry.derive()
	return idx
}()

func (e *entry) derive() {
	e.read, e.none, e.ownLine = contextItems[e.msg], tsMeansNone[e.msg], strings.HasPrefix(e.v, ownVersion)
}

// msgFilter is a cheap pre-check before the map lookup: for each message
// length (mod 256), a bit per first byte (mod 64) of the catalogued
// messages. Most records' messages fail it.
var msgFilter = func() (f [256]uint64) {
	_ = catalogueIndex // the full catalogue
	for i := range catalogue {
		msg := catalogue[i].msg
		if msg != "" {
			f[len(msg)&255] |= 1 << (msg[0] & 63)
		}
	}
	return f
}()

// msgTable is catalogueIndex as an open-addressing table on a cheap hash
// of a message's length and a few of its bytes: lookup runs for every
// record, and most records' messages are catalogued or repeat.
var msgTable = func() (t msgHash) {
	n := 16
	for n < 4*len(catalogueIndex) {
		n *= 2
	}
	t.slots = make([]msgSlot, n)
	t.mask = uint32(n - 1)
	for msg, es := range catalogueIndex {
		i := msgHashOf([]byte(msg)) & t.mask
		for t.slots[i].es != nil {
			i = (i + 1) & t.mask
		}
		t.slots[i] = msgSlot{msg: msg, es: es}
	}
	return t
}()

type msgHash struct {
	slots []msgSlot
	mask  uint32
}

type msgSlot struct {
	msg string
	es  []*entry // nil: an empty slot
}

func msgHashOf(b []byte) uint32 {
	n := len(b)
	h := uint32(n) * 0x9e3779b1
	if n > 0 {
		h ^= (uint32(b[0]) | uint32(b[n/2])<<8 | uint32(b[n-1])<<16 | uint32(b[n/3])<<24) * 0x85ebca6b
	}
	return h ^ h>>15
}

// find returns the entries of message b, nil if it is not catalogued.
func (t *msgHash) find(b []byte) []*entry {
	for i := msgHashOf(b) & t.mask; ; i = (i + 1) & t.mask {
		sl := &t.slots[i]
		if sl.es == nil {
			return nil
		}
		if len(sl.msg) == len(b) && sl.msg == string(b) {
			return sl.es
		}
	}
}

// lookup finds the catalogue entry of a record.
func lookup(r *Record) *entry {
	if r.looked {
		return r.entry
	}
	if len(r.Msg) == 0 || msgFilter[len(r.Msg)&255]&(1<<(r.Msg[0]&63)) == 0 {
		return nil
	}
	es := msgTable.find(r.Msg)
	for _, e := range es {
		if len(e.files) == 0 {
			return e
		}
		for _, f := range e.files {
			if string(r.File) == f {
				return e
			}
		}
	}
	return nil
}

// maxEvidenceText bounds the text kept per evidence line.
const maxEvidenceText = 1024

// isEvidenceText reports whether b is its own evidence text: one short
// valid-UTF-8 line.
func isEvidenceText(b []byte) bool {
	if len(b) > maxEvidenceText {
		return false
	}
	// One pass over 8-byte words: a line of printable ASCII, the common
	// case, has no byte below 0x20 (control bytes, '\n', '\r' and '\t'
	// among them) and none from 0x80 (UTF-8 sequences). A word that may
	// hold one takes the exact check: x|(x-0x20*ones) has the high bit of
	// every byte from 0x80 (x's own) and of the lowest byte below 0x20
	// (its borrow; the borrow may flag the bytes above it too, which can
	// only err towards the exact check).
	const ones = 0x0101010101010101
	i := 0
	for ; i+32 <= len(b); i += 32 {
		// four words a round, one test: the OR of the four words' flags
		w := b[i : i+32 : i+32]
		x0, x1 := binary.LittleEndian.Uint64(w), binary.LittleEndian.Uint64(w[8:])
		x2, x3 := binary.LittleEndian.Uint64(w[16:]), binary.LittleEndian.Uint64(w[24:])
		if (x0|x1|x2|x3|(x0-0x20*ones)|(x1-0x20*ones)|(x2-0x20*ones)|(x3-0x20*ones))&(0x80*ones) != 0 {
			return isEvidenceTextExact(b)
		}
	}
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if (x|(x-0x20*ones))&(0x80*ones) != 0 {
			return isEvidenceTextExact(b)
		}
	}
	if i == len(b) {
		return true
	}
	if len(b) >= 8 {
		// the last word, overlapping the words above (testing a byte
		// twice changes nothing)
		x := binary.LittleEndian.Uint64(b[len(b)-8:])
		if (x|(x-0x20*ones))&(0x80*ones) != 0 {
			return isEvidenceTextExact(b)
		}
		return true
	}
	for _, c := range b[i:] {
		if c < 0x20 || c >= 0x80 {
			return isEvidenceTextExact(b)
		}
	}
	return true
}

// isEvidenceTextExact is isEvidenceText byte by byte.
func isEvidenceTextExact(b []byte) bool {
	return bytes.IndexByte(b, '\n') < 0 && bytes.IndexByte(b, '\r') < 0 && bytes.IndexByte(b, '\t') < 0 && utf8.Valid(b)
}

// evidenceText renders a record's text as one valid-UTF-8 line, cut to
// maxEvidenceText bytes.
func evidenceText(b []byte) string {
	if isEvidenceText(b) {
		return string(b)
	}
	cut := false
	if len(b) > maxEvidenceText {
		b = b[:maxEvidenceText]
		cut = true
	}
	var sb strings.Builder
	sb.Grow(len(b) + 8)
	space := false
	for len(b) > 0 {
		c := b[0]
		if c == '\n' || c == '\r' || c == '\t' {
			if !space {
				sb.WriteByte(' ')
			}
			space = true
			b = b[1:]
			for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
				b = b[1:]
			}
			continue
		}
		space = false
		if c < utf8.RuneSelf {
			sb.WriteByte(c)
			b = b[1:]
			continue
		}
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size <= 1 {
			if cut && len(b) < utf8.UTFMax {
				break // a rune cut by the length limit
			}
			sb.WriteString("\uFFFD")
			b = b[1:]
			continue
		}
		sb.Write(b[:size])
		b = b[size:]
	}
	if cut {
		sb.WriteString(" …")
	}
	return sb.String()
}

// toItems converts a catalogued record into items appended to out.
func toItems(r *Record, e *entry, fileName string, fileIdx int, out []Item) []Item {
	// the new item is built in place: out's spare capacity is a recycled
	// chunk's, so this is no allocation and no temporary Item
	if len(out) < cap(out) {
		out = out[:len(out)+1]
	} else {
		out = append(out, Item{})
	}
	it := &out[len(out)-1]
	// zeroed in place, then set: a composite literal would be built on
	// the stack and copied
	*it = Item{}
	it.Sym, it.Level, it.Msg, it.file = e.sym, r.Level, e.msg, fileIdx
	ev := &it.Event
	ev.Kind = e.kind
	ev.Time = r.Time
	// The string fields are cut from the evidence text when it is the
	// record as written and the value is the record's own bytes: one
	// allocation per item instead of one per field.
	var text string
	if isEvidenceText(r.Text) {
		text = string(r.Text)
		r.own = text
		ev.Source.File, ev.Source.Line, ev.Source.Text = fileName, r.Line, text
	} else {
		ev.Source = spec.Source{File: fileName, Line: r.Line, Text: evidenceText(r.Text)}
	}
	// one pass over the record's fields: for each event field the first
	// listed alternative present wins; of one key, the last occurrence
	const maxFields = 16
	var rank [maxFields]int
	var at [maxFields]int32 // the index in r.fields of the chosen field
	nf := min(len(e.fields), maxFields)
	for i := range nf {
		rank[i] = -1
	}
	var keyspace []byte
	r.parseFields()
	checkTs := !e.ownLine // impossibleTs, in the same pass
	recAt := int64(0)     // the record's own time, for impossibleField
	if r.HasTime {
		recAt = r.Time
	}
	for i := range r.fields {
		f := &r.fields[i]
		if checkTs {
			if s := impossibleField(f, e.none, recAt); s != "" {
				it.impossible, checkTs = s, false
			}
		}
		if ref, ok := e.findKey(f.key); ok {
			if ref.field < maxFields && (rank[ref.field] < 0 || ref.rank <= rank[ref.field]) {
				rank[ref.field], at[ref.field] = ref.rank, int32(i)
			}
		} else if keyspace == nil && (string(f.key) == "keyspace" || string(f.key) == "namespace") {
			// (no entry reads these keys: entry.compile panics otherwise)
			keyspace = f.val
		}
	}
	for i := range nf {
		if rank[i] >= 0 {
			f := &r.fields[at[i]]
			setField(ev, e.fields[i].id, f.val, text, f.off, r.names)
		}
	}
	if ev.Changefeed != "" && len(keyspace) > 0 && strings.IndexByte(ev.Changefeed, '/') < 0 {
		var buf [2 * maxInterned]byte
		full := append(append(append(buf[:0], keyspace...), '/'), ev.Changefeed...)
		ev.Changefeed = r.names.intern(full)
	}
	if e.sym == SymPanic {
		it.caller = string(r.File)
	}
	if e.conv != nil {
		return e.conv(r, it, out)
	}
	return out
}

// tsFields are the fields in which TiCDC reports a changefeed's or a
// dispatcher's checkpoint or start timestamp: 0 is impossible there too
// (unless the line's entry says 0 means none, tsMeansNone).
var tsFields = []string{"checkpointTs", "startTs", "checkpoint-ts", "start-ts"}

// noneTs says which timestamp values mean "none" on a line (tsMeansNone):
// they are not impossible there.
type noneTs uint8

const (
	noneZero noneTs = 1 << iota // 0 in tsFields
	noneMax                     // MaxUint64 in any ts field
)

// maxTsAhead bounds how far a TSO's physical time may lie beyond the time of
// the record that logs it: PD's clock and the capture's differ by a clock
// skew, not by hours.
const maxTsAhead = int64(time.Hour / time.Millisecond)

// impossibleTs returns "field=value" for the first timestamp field of r
// whose value no TSO can have (#4703 and #4845: a changefeed started or
// checkpointed at such a value). Every field that holds a ts is checked
// (isTsKey: checkpointTs, startTs, resolvedTs, commitTs, blockTs, ...): a
// negative value, MaxUint64, or a TSO whose physical time is more than
// maxTsAhead beyond the record's own time; 0 in tsFields as well. TiCDC's
// removal-only maintainer reports checkpointTs=1 on purpose; that is not
// impossible.
func impossibleTs(r *Record, none noneTs) string {
	if !r.parsed && !mayNameTsField(r.rest) {
		return ""
	}
	r.parseFields()
	at := int64(0)
	if r.HasTime {
		at = r.Time
	}
	for i := range r.fields {
		if s := impossibleField(&r.fields[i], none, at); s != "" {
			return s
		}
	}
	return ""
}

// impossibleField is impossibleTs for one field of a record logged at the
// Unix ms at (0: unknown): "field=value" if f is a timestamp field with an
// impossible value, else "".
func impossibleField(f *field, none noneTs, at int64) string {
	// the value first (most fields' values are no candidate), then the key
	v := f.val
	bad := false
	switch {
	case len(v) < 1:
	case v[0] == '-':
		bad = len(v) > 1 && isDigit(v[1]) && isTsKey(f.key)
	case len(v) == 1:
		bad = v[0] == '0' && none&noneZero == 0 && isTsField(f.key)
	case len(v) >= 18 && isDigit(v[0]) && isTsKey(f.key): // a TSO of this century has 18 or more digits
		ts, err := strconv.ParseUint(string(v), 10, 64)
		bad = err == nil && (ts == math.MaxUint64 && none&noneMax == 0 || ts != math.MaxUint64 && at > 0 && int64(ts>>18) > at+maxTsAhead)
	}
	if !bad {
		return ""
	}
	return string(f.key) + "=" + string(v)
}

// isTsKey reports whether a field key names a timestamp: "ts", a name
// ending in "Ts", "TS", "-ts" or "_ts" (checkpointTs, resolvedTs, commitTs,
// barrierTS, start-ts), or with "Ts" before a capital
// (minCheckpointTsForBarrier); not "affectedReplicaSets".
func isTsKey(k []byte) bool {
	n := len(k)
	if n == 2 {
		return string(k) == "ts"
	}
	if n < 3 {
		return false
	}
	switch string(k[n-2:]) {
	case "Ts", "TS":
		return true
	case "ts":
		return k[n-3] == '-' || k[n-3] == '_'
	}
	for i := 1; i+2 < n; i++ {
		if k[i] == 'T' && k[i+1] == 's' && k[i+2] >= 'A' && k[i+2] <= 'Z' {
			return true
		}
	}
	return false
}

// mayNameTsField is impossibleTs's cheap pre-check on a record's unparsed
// fields: false only if no field key can be a timestamp's (isTsKey). A key
// starts right after a group's '[' and ends at its '='; a quoted key (which
// could spell a name with \u escapes) always passes.
func mayNameTsField(rest []byte) bool {
	for {
		j := bytes.IndexByte(rest, '[')
		if j < 0 || j+1 >= len(rest) {
			return false
		}
		rest = rest[j+1:]
		if rest[0] == '"' {
			return true
		}
		k := bytes.IndexByte(rest[:min(len(rest), maxTsKey+1)], '=')
		if k >= 2 && mayBeTsKey(rest[:k]) {
			return true
		}
	}
}

// mayBeTsKey is true for every key isTsKey accepts: one with "Ts" or "TS"
// in it, or ending in "ts".
func mayBeTsKey(k []byte) bool {
	n := len(k)
	if k[n-1] == 's' && k[n-2] == 't' {
		return true
	}
	for i := bytes.IndexByte(k, 'T'); i >= 0 && i+1 < n; {
		if k[i+1] == 's' || k[i+1] == 'S' {
			return true
		}
		j := bytes.IndexByte(k[i+1:], 'T')
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

// maxTsKey bounds the length of a timestamp field's key
// ("tableProgressMaxCommitTs").
const maxTsKey = 64

func isTsField(k []byte) bool {
	for _, t := range tsFields {
		if string(k) == t {
			return true
		}
	}
	return false
}

// maxInterned bounds the identifiers names interns.
const maxInterned = 256

// names interns the identifiers items carry (changefeed, node and
// dispatcher IDs) for one parse worker: a direct-mapped cache, so it stays
// small whatever the log names. The serial checker hashes and compares
// these strings for nearly every item; shared copies are in its cache,
// while each item's own text was just written by another core. A nil
// *names copies.
type names struct {
	slots [1 << namesBits]string
}

// slot picks b's slot from its length and two of its 8-byte words (IDs
// differ in their last digits; changefeed names in their last bytes): a
// collision only costs a copy.
func (n *names) slot(b []byte) *string {
	h := uint64(len(b))
	if len(b) >= 8 {
		h ^= binary.LittleEndian.Uint64(b[len(b)-8:]) ^ binary.LittleEndian.Uint64(b[(len(b)-8)/2:])<<1
	} else {
		for _, c := range b {
			h = h<<8 ^ uint64(c)
		}
	}
	return &n.slots[(h*0x9e3779b97f4a7c15)>>(64-namesBits)]
}

const namesBits = 10

func (n *names) intern(b []byte) string {
	if n == nil || len(b) == 0 || len(b) > maxInterned {
		return string(b)
	}
	sl := n.slot(b)
	if *sl != string(b) {
		*sl = string(b)
	}
	return *sl
}

// textOf returns v as a string: cut from text (the record's evidence
// text, "" if it is not the record as written) when v is text's own bytes
// at off, else copied.
func textOf(text string, v []byte, off int32) string {
	if text != "" && off >= 0 && int(off)+len(v) <= len(text) {
		return text[off : int(off)+len(v)]
	}
	return string(v)
}

// setField sets the event field name from the log value v, which is at
// off in text (see textOf); identifiers are interned in ns.
func setField(ev *spec.Event, name eventField, v []byte, text string, off int32, ns *names) {
	switch name {
	case fChangefeed:
		ev.Changefeed = ns.intern(v)
	case fNode:
		ev.Node = ns.intern(v)
	case fOrigin:
		ev.Origin = ns.intern(v)
	case fDispatcher:
		ev.Dispatcher = ns.intern(v)
	case fState:
		ev.State = strings.ToLower(textOf(text, v, off))
	case fErr:
		if text != "" && off >= 0 {
			ev.Err = textOf(text, v, off) // a piece of evidence text is its own evidence text
		} else {
			ev.Err = evidenceText(v)
		}
	case fReason:
		ev.Reason = textOf(text, v, off)
	case fOp:
		ev.Op = spec.Op(strings.ToLower(textOf(text, v, off)))
	case fEpoch:
		ev.Epoch, _ = strconv.ParseUint(string(v), 10, 64)
	case fCheckpoint:
		ev.Checkpoint = parseTs(v)
	case fNextRetry:
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			ev.NextRetry = n
		} else if t, ok := parseLogTime(v); ok {
			ev.NextRetry = t
		}
	case fSpan:
		ev.Span, _ = parseSpanText(textOf(text, v, off))
	case fTables:
		ev.Tables = parseInts(v)
	case fBootstrapDone:
		ev.BootstrapDone = parseBool(v)
	case fAccepted:
		ev.Accepted = parseBool(v)
	case fRemovalOnly:
		ev.RemovalOnly = parseBool(v)
	case fRemoved:
		ev.Removed = parseBool(v)
	case fMerge:
		ev.Merge = parseBool(v)
	case fSyncPoint:
		ev.SyncPoint = parseBool(v)
	case fInfluence:
		ev.Influence = parseInfluence(v)
	case fDropped:
		ev.Dropped = parseInts(v)
	case fAdded:
		ev.Added = parseInts(v)
	}
}

func parseBool(v []byte) bool { return string(v) == "true" || string(v) == "1" }

// parseTs is strconv.ParseUint(v, 10, 64), 0 on any error, without
// converting v to a string (the conversion allocates: the error keeps it).
// Up to 19 digits cannot overflow: those are read 8 at a time (a TSO has
// 18); longer ones check every digit for overflow.
func parseTs(v []byte) uint64 {
	if len(v) == 0 {
		return 0
	}
	if len(v) > 19 {
		return parseTsLong(v)
	}
	var n uint64
	i := len(v) % 8
	for _, c := range v[:i] {
		d := uint64(c - '0')
		if d > 9 {
			return 0
		}
		n = n*10 + d
	}
	for ; i < len(v); i += 8 {
		d, ok := eightDigits(binary.LittleEndian.Uint64(v[i:]))
		if !ok {
			return 0
		}
		n = n*100_000_000 + d
	}
	return n
}

// eightDigits reads the number of 8 ASCII digits loaded little-endian
// (the first digit in the low byte); ok is false unless every byte is a
// digit: each byte's high nibble is 3, and adding 6 to it carries nothing
// out of its low nibble (a byte that carries into the next fails its own
// test first).
func eightDigits(x uint64) (uint64, bool) {
	const hi = 0xF0F0F0F0F0F0F0F0
	if x&hi|(x+0x0606060606060606)&hi>>4 != 0x3333333333333333 {
		return 0, false
	}
	x -= 0x3030303030303030
	x = x*10 + x>>8 // bytes 0, 2, 4, 6: two-digit numbers
	x = ((x&0x000000FF000000FF)*(100+1_000_000<<32) + (x>>16&0x000000FF000000FF)*(1+10_000<<32)) >> 32
	return x, true
}

// parseTsLong is parseTs digit by digit, with an overflow check.
func parseTsLong(v []byte) uint64 {
	var n uint64
	for _, c := range v {
		d := uint64(c - '0')
		if d > 9 || n > (math.MaxUint64-d)/10 {
			return 0
		}
		n = n*10 + d
	}
	return n
}

func parseInts(v []byte) []int64 {
	v = bytes.Trim(v, "[] ")
	if len(v) == 0 {
		return nil
	}
	var out []int64
	for _, p := range bytes.Split(v, []byte(",")) {
		n, err := strconv.ParseInt(string(bytes.TrimSpace(p)), 10, 64)
		if err == nil {
			out = append(out, n)
		}
	}
	return out
}

// parseSpanText reads a span in cdcspec's form ("t12", "t12[a,m)"), TiCDC's
// FormatTableSpan form ("tableID: 22, startKey: 7480..., endKey: 7480...,
// keyspaceID: 0") or a bare table ID. TiCDC's keys are hex; hex keeps the
// byte order, so Span.Overlaps works on them unchanged.
func parseSpanText(s string) (spec.Span, bool) {
	if len(s) >= 2 && s[0] == 't' && isDigit(s[1]) {
		if sp, err := spec.ParseSpan(s); err == nil {
			return sp, true
		}
	}
	// (ParseInt accepts nothing else; its error would allocate)
	if len(s) > 0 && (isDigit(s[0]) || s[0] == '-' || s[0] == '+') {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return spec.Span{Table: n}, true
		}
	}
	// get returns the value after the first of the spellings of a key
	// ("key: ", "key:", "key=") that s holds.
	get := func(spellings ...string) (string, bool) {
		for _, k := range spellings {
			if i := strings.Index(s, k); i >= 0 {
				rest := s[i+len(k):]
				if j := indexStop(rest, &spanValueStop); j >= 0 {
					rest = rest[:j]
				}
				return strings.Trim(rest, `"`), true
			}
		}
		return "", false
	}
	t, ok := get("tableID: ", "tableID:", "tableID=")
	if !ok {
		t, ok = get("table_id: ", "table_id:", "table_id=")
	}
	if !ok {
		return spec.Span{}, false
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return spec.Span{}, false
	}
	sp := spec.Span{Table: n}
	if k, ok := get("startKey: ", "startKey:", "startKey="); ok {
		sp.Start = k
	} else if k, ok := get("start_key: ", "start_key:", "start_key="); ok {
		sp.Start = k
	}
	if k, ok := get("endKey: ", "endKey:", "endKey="); ok {
		sp.End = k
	} else if k, ok := get("end_key: ", "end_key:", "end_key="); ok {
		sp.End = k
	}
	return sp, true
}

// spanValueStop and opValueStop end a value in a span's and an
// operator's text: strings.IndexAny(s, ", }") and (s, ", ") as indexStop.
var spanValueStop, opValueStop = byteSet(", }"), byteSet(", ")

func byteSet(chars string) (t [256]bool) {
	for i := 0; i < len(chars); i++ {
		t[chars[i]] = true
	}
	return t
}

// indexStop is strings.IndexAny(s, chars) for the byte set of chars
// (TestIndexStop): no set built per call, eight bytes a round.
func indexStop(s string, stop *[256]bool) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8]
		if stop[w[0]] || stop[w[1]] || stop[w[2]] || stop[w[3]] || stop[w[4]] || stop[w[5]] || stop[w[6]] || stop[w[7]] {
			break // the byte-wise loop finds which
		}
	}
	for ; i < len(s); i++ {
		if stop[s[i]] {
			return i
		}
	}
	return -1
}
