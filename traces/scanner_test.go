package traces

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

type scanned struct {
	recs  []string // "line:file:msg"
	flds  []map[string]string
	trunc []bool
	stats ParseStats
}

func scanAll(t testing.TB, text []byte) scanned {
	sc := NewScanner(bytes.NewReader(text))
	var out scanned
	var recLines int64
	for r := sc.Next(); r != nil; r = sc.Next() {
		out.recs = append(out.recs, strings.Join([]string{itoa(r.Line), string(r.File), string(r.Msg)}, ":"))
		f := map[string]string{}
		for i := 0; i < r.NumFields(); i++ {
			k, v := r.FieldAt(i)
			f[string(k)] = string(v)
		}
		out.flds = append(out.flds, f)
		out.trunc = append(out.trunc, r.Truncated)
		recLines += int64(r.Lines)
	}
	out.stats = sc.Stats
	if got := out.stats.Blank + out.stats.Unparsed + recLines; got != out.stats.Lines {
		t.Fatalf("line accounting: blank %d + unparsed %d + record lines %d != lines %d",
			out.stats.Blank, out.stats.Unparsed, recLines, out.stats.Lines)
	}
	return out
}

func itoa(n int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + fmtInt(n)) }

func fmtInt(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	if neg {
		b = append([]byte{'-'}, b...)
	}
	return string(b)
}

func TestScannerQuoting(t *testing.T) {
	in := `[2026/01/07 22:12:39.472 +00:00] [WARN] [backoff.go:220] ["changefeed meets an error, will be stopped"] [changefeed=default/cf] [checkpointTs=463424440748738003] [nextRetryTime=2026/01/07 22:12:48.641 +00:00] [error="[{\"code\":\"CDC:ErrChangefeedRetryable\",\"message\":\"a ] [ b\"}]"] [nodes=["a","b c"]] [plain] [k=v]` + "\r\n" +
		`[2026/01/07 22:12:39.473 +00:00] [INFO] [x.go:1] [plain-message] [cn=中文] [q="he said \"hi\""]` + "\n"
	s := scanAll(t, []byte(in))
	if len(s.recs) != 2 || s.recs[0] != "1:backoff.go:changefeed meets an error, will be stopped" || s.recs[1] != "2:x.go:plain-message" {
		t.Fatalf("records %q", s.recs)
	}
	f := s.flds[0]
	if f["nextRetryTime"] != "2026/01/07 22:12:48.641 +00:00" {
		t.Errorf("time field %q", f["nextRetryTime"])
	}
	if f["error"] != `[{"code":"CDC:ErrChangefeedRetryable","message":"a ] [ b"}]` {
		t.Errorf("error %q", f["error"])
	}
	if f["nodes"] != `["a","b c"]` || f["k"] != "v" || f["checkpointTs"] != "463424440748738003" {
		t.Errorf("fields %q", f)
	}
	if s.flds[1]["q"] != `he said "hi"` || s.flds[1]["cn"] != "中文" {
		t.Errorf("fields %q", s.flds[1])
	}
}

func TestScannerDamage(t *testing.T) {
	in := strings.Join([]string{
		`2026-01-08 06:12:39 | [2026/01/07 22:12:39.317 +00:00] [ERROR] [maintainer.go:785] ["dispatcher report an error"] [changefeedID=default/cf] [error="x"]`,
		`2026/01/07 22:12:39.472 +00:00] [WARN] [backoff.go:220] ["changefeed meets an error, will be stopped"] [changefeed=default/cf]`,
		`panic: runtime error: index out of range`,
		`[2026/07/22 16:30:15.758 +00:00] [ERROR] [maintainer.go:799]`,
		`["dispatcher report an error"]`,
		`[changefeedID=default/<changefeed>]`,
		`[error="[CDC:ErrKafkaAsyncSendMessage]kafka async send message failed:`,
		`        keyspace=default, eventType=dml;`,
		``,
		`        ErrorInfo: i/o timeout"]`,
		``,
		"[2026/07/22 16:30:16.000 +00:00] [INFO] [a.go:1] [\"bad \xff\xfe bytes\"] [k=\xc3]",
		`"[meta_manager.go:334] [\"Redo meta has not changed for a long time, owner may be stuck\"] [changefeed=c] [lastFlushTime=9m21.99436182s]"`,
		`[2026/07/22 16:30:17.000 +00:00] [INFO] [a.go:2] ["cut"] [error="never closed`,
	}, "\n")
	s := scanAll(t, []byte(in))
	want := []string{
		"1:maintainer.go:dispatcher report an error",
		"2:backoff.go:changefeed meets an error, will be stopped",
		"4:maintainer.go:dispatcher report an error",
		"12:a.go:bad \xff\xfe bytes",
		"13:meta_manager.go:Redo meta has not changed for a long time, owner may be stuck",
		"14:a.go:cut",
	}
	if strings.Join(s.recs, "|") != strings.Join(want, "|") {
		t.Fatalf("records\n got  %q\n want %q", s.recs, want)
	}
	if got := s.flds[2]["error"]; !strings.HasPrefix(got, "[CDC:ErrKafkaAsyncSendMessage]") || !strings.HasSuffix(got, "ErrorInfo: i/o timeout") {
		t.Errorf("wrapped value %q", got)
	}
	if s.stats.Unparsed != 1 || len(s.stats.UnparsedAt) != 1 || s.stats.UnparsedAt[0] != 3 {
		t.Errorf("unparsed %d at %v, want 1 at [3]", s.stats.Unparsed, s.stats.UnparsedAt)
	}
	if !s.trunc[5] || s.stats.Truncated != 1 {
		t.Errorf("last record must be truncated: %v %d", s.trunc, s.stats.Truncated)
	}
	if s.flds[4]["lastFlushTime"] != "9m21.99436182s" {
		t.Errorf("quoted excerpt fields %q", s.flds[4])
	}
}

// TestScannerHugeLine: a line longer than the buffer bound is cut, counted
// as truncated, and the next record still parses; memory stays bounded.
func TestScannerHugeLine(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`[2026/07/22 16:30:15.758 +00:00] [ERROR] [a.go:1] ["huge"] [error="`)
	b.Write(bytes.Repeat([]byte("x"), maxBuf+123))
	b.WriteString("\"]\n")
	b.WriteString(`[2026/07/22 16:30:16.000 +00:00] [INFO] [b.go:2] ["after"]` + "\n")
	sc := NewScanner(&b)
	var recs []string
	for r := sc.Next(); r != nil; r = sc.Next() {
		recs = append(recs, string(r.Msg))
	}
	if strings.Join(recs, ",") != "huge,after" || sc.Stats.Truncated != 1 || sc.Stats.Lines != 2 {
		t.Fatalf("records %q stats %+v", recs, sc.Stats)
	}
	if len(sc.buf) > maxBuf {
		t.Fatalf("buffer grew to %d", len(sc.buf))
	}
}

func TestParseLogTime(t *testing.T) {
	ms, ok := parseLogTime([]byte("2026/07/22 16:30:15.758 +08:00"))
	// 2026-07-22T08:30:15.758Z
	if !ok || ms != 1784709015758 {
		t.Fatalf("got %d %v", ms, ok)
	}
	if _, ok := parseLogTime([]byte("2026/13/22 16:30:15.758 +00:00")); ok {
		t.Fatal("month 13 accepted")
	}
}

// FuzzParse: no input makes the scanner, the field reader or the catalogue
// panic, and every line is accounted for (records, blank or unparsed).
func FuzzParse(f *testing.F) {
	fixtures, _ := filepath.Glob("testdata/*.log")
	more, _ := filepath.Glob("testdata/*/*.log")
	for _, p := range append(fixtures, more...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("[2026/07/22 16:30:15.758 +00:00] [INFO] [a.go:1] [\"x\"] [k=\"unterminated\n\n["))
	// every TiCDC HEAD control-plane message, as pingcap/log writes it
	if tsv, err := os.ReadFile("testdata/ticdc-head-log-messages.tsv"); err == nil {
		var all []byte
		for _, line := range strings.Split(string(tsv), "\n") {
			p := strings.SplitN(line, "\t", 3)
			if len(p) == 3 && !strings.HasPrefix(line, "#") && p[0] != "level" {
				all = append(all, formatLine(f, "maintainer.go", p[0], p[2], zap.String("changefeedID", "default/cf"), zap.Uint64("checkpointTs", 0))...)
			}
		}
		f.Add(all)
	}
	f.Add([]byte("\"[a.go:1] [\\\"m\\\"] [k=\\\"v\\\"]\"\n\"[\"\n[\n]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc := newScannerSize(iotest.OneByteReader(bytes.NewReader(data)), 64)
		var recLines int64
		var items []Item
		for r := sc.Next(); r != nil; r = sc.Next() {
			recLines += int64(r.Lines)
			for i := 0; i < r.NumFields(); i++ {
				r.FieldAt(i)
			}
			if e := lookup(r); e != nil {
				items = toItems(r, e, "fuzz", 0, items[:0])
			}
		}
		st := sc.Stats
		if st.Blank+st.Unparsed+recLines != st.Lines {
			t.Fatalf("line accounting: %+v, record lines %d", st, recLines)
		}
		if st.Bytes != int64(len(data)) {
			t.Fatalf("read %d of %d bytes", st.Bytes, len(data))
		}
	})
}

// TestPipelineHugeRecords: records longer than a parse chunk, and longer
// than the buffer bound, go through the chunked parallel pipeline with
// their line numbers intact.
func TestPipelineHugeRecords(t *testing.T) {
	var b strings.Builder
	line := func(ms int, msg, val string) {
		b.WriteString("[2026/07/22 16:30:15." + fmtInt(100+ms) + " +00:00] [ERROR] [maintainer.go:799] [\"" + msg + "\"] [changefeedID=default/cf] [sourceNode=n2] [error=\"" + val + "\"]\n")
	}
	line(1, "dispatcher report an error", "small")
	line(2, "filler", strings.Repeat("x", 3*chunkSize))      // longer than a chunk
	line(3, "filler", strings.Repeat("y", maxBuf+chunkSize)) // longer than the bound: cut
	for i := 0; i < 20000; i++ {
		line(4, "filler", "z")
	}
	line(5, "dispatcher report an error", "last")
	rep, err := Run([]Input{{Name: "huge.log", Open: func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(b.String())), nil
	}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Stats.Lines != 20004 || rep.Stats.Records != 20004 || rep.Stats.Unparsed != 0 ||
		rep.Stats.Truncated != 1 || rep.Stats.Bytes != int64(b.Len()) {
		t.Fatalf("stats %+v", rep.Stats)
	}
	if rep.Coverage.Events["dispatcher-error-reported"] != 2 {
		t.Fatalf("coverage %+v", rep.Coverage.Events)
	}
	f := findingsOf(rep, "error-never-dropped")
	if len(f) != 1 || len(f[0].Evidence) < 2 || f[0].Evidence[0].Line != 1 || f[0].Evidence[1].Line != 20004 {
		t.Fatalf("findings %+v", rep.Findings)
	}
}

// TestImpossibleTsPrefilter: mayNameTsField, the check that lets benign
// lines skip field parsing, never hides an impossible timestamp that the
// full field scan finds.
func TestImpossibleTsPrefilter(t *testing.T) {
	fields := []string{
		"[checkpointTs=0]", "[startTs=-1]", "[checkpoint-ts=18446744073709551615]", "[start-ts=0]",
		`["checkpointTs"=0]`, `["\u0063heckpointTs"=0]`, `[checkpointTs="0"]`, "[startTs=0",
		"[checkpointTs=1]", "[startTs=42]", "[slowRegion=\"{CheckpointTs:0 Span:[7480, 7481)}\"]", "[subscriptionID=0]",
		"[stats={startTs: 0}]", "[x=[checkpointTs=0]]", "",
	}
	found := 0
	for _, f := range fields {
		for _, before := range []string{"", "[changefeed=cf] ", "[a=\"[b]\"] "} {
			line := headLine(0, "INFO", "x.go:1", "some benign line", before+f)
			fast := NewScanner(strings.NewReader(line)).Next()
			require.NotNil(t, fast, line)
			got := impossibleTs(fast, 0)
			full := NewScanner(strings.NewReader(line)).Next()
			full.parseFields() // impossibleTs then skips the pre-check
			assert.Equal(t, impossibleTs(full, 0), got, line)
			if got != "" {
				found++
			}
		}
	}
	assert.GreaterOrEqual(t, found, 3*7, "the impossible values above are found")
}

// TestSkipPlain checks the word-at-a-time skip against the byte table: it
// stops at the first byte scanGroup acts on, or short of it in the last 7
// bytes.
func TestSkipPlain(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 20000; n++ {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.IntN(256))
			if rng.IntN(3) > 0 {
				b[i] = "abc=:. 0x9_\x7a\x7c\x5a\x5c\x21\x23\xdb\xfb"[rng.IntN(18)]
			}
		}
		j := rng.IntN(len(b) + 1)
		got := skipPlain(b, j)
		want := j
		for want < len(b) && !groupByte[b[want]] {
			want++
		}
		if got != want && (got < j || got > want || got+8 <= len(b)) {
			t.Fatalf("skipPlain(%q, %d) = %d; first group byte at %d", b, j, got, want)
		}
	}
}

// TestIsEvidenceText pins the word-wise evidence-text check to the exact
// one on lines of every length up to two rounds of four words, with each kind of
// byte at each position.
func TestIsEvidenceText(t *testing.T) {
	for n := 0; n <= 72; n++ {
		base := bytes.Repeat([]byte("a"), n)
		require.Equal(t, isEvidenceTextExact(base), isEvidenceText(base), "len %d", n)
		for i := 0; i < n; i++ {
			for _, c := range []byte{'\n', '\r', '\t', 0, 0x1f, ' ', '~', 0x7f, 0x80, 0xc3, 0xff} {
				b := bytes.Clone(base)
				b[i] = c
				require.Equal(t, isEvidenceTextExact(b), isEvidenceText(b), "len %d byte %#x at %d", n, c, i)
				if i+1 < n {
					b[i+1] = 0xa9 // "é" when c is 0xc3: valid UTF-8
					require.Equal(t, isEvidenceTextExact(b), isEvidenceText(b), "len %d bytes %#x 0xa9 at %d", n, c, i)
				}
			}
		}
	}
	long := bytes.Repeat([]byte("a"), maxEvidenceText+1)
	require.False(t, isEvidenceText(long))
	require.True(t, isEvidenceText(long[:maxEvidenceText]))
}

// TestParseTs pins parseTs to strconv.ParseUint (0 on error).
func TestParseTs(t *testing.T) {
	for _, s := range []string{"", "0", "1", "463424440748738003", "18446744073709551615", "18446744073709551616",
		"99999999999999999999", "000000000000000000000000001", "-1", "+1", "1a", " 1", "1_000", "１"} {
		want, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			want = 0
		}
		require.Equal(t, want, parseTs([]byte(s)), "%q", s)
	}
	// random digit strings of every length, some with one byte replaced
	// (digits 8 at a time: the replaced byte lands at every position of
	// a word)
	rng := rand.New(rand.NewPCG(7, 8))
	for n := 0; n < 200000; n++ {
		b := make([]byte, rng.IntN(24))
		for i := range b {
			b[i] = byte('0' + rng.IntN(10))
		}
		if len(b) > 0 && rng.IntN(2) == 0 {
			b[rng.IntN(len(b))] = "/:0 9-+a\x00\xff\x3a\x2f\xb0\x39\x40"[rng.IntN(14)]
		}
		want, err := strconv.ParseUint(string(b), 10, 64)
		if err != nil {
			want = 0
		}
		require.Equal(t, want, parseTs(b), "%q", b)
	}
}

// TestTimeCache pins the cached time parse to parseLogTime over a stream
// in which every byte of the cached prefix and zone changes in turn, and
// fractions and lengths vary.
func TestTimeCache(t *testing.T) {
	base := "2026/07/22 16:30:15.758 +00:00"
	var tc timeCache
	rng := rand.New(rand.NewPCG(7, 7))
	check := func(s string) {
		want, wok := parseLogTime([]byte(s))
		got, ok := tc.parse([]byte(s))
		require.Equal(t, wok, ok, "%q", s)
		require.Equal(t, want, got, "%q", s)
	}
	for i := 0; i < 20000; i++ {
		b := []byte(base)
		switch rng.IntN(4) {
		case 0: // another fraction of the cached second
			b[20], b[21], b[22] = byte('0'+rng.IntN(10)), byte('0'+rng.IntN(10)), byte('0'+rng.IntN(10))
		case 1: // one byte of the prefix or zone changed
			p := rng.IntN(len(b))
			b[p] = "0123456789/:.+- x"[rng.IntN(17)]
		case 2: // a shorter or longer form
			b = b[:19+rng.IntN(len(b)-18)]
		default:
			b = append(b, " x"[rng.IntN(2)])
		}
		check(string(b))
		check(base)
	}
}
