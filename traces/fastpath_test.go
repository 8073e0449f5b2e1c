package traces

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlainField pins parseFields' one-pass read of a group without
// quotes, brackets or braces to scanGroup and splitField, on random groups.
func TestPlainField(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const alphabet = "ab=:. 09_-/\"[]{}\\\n"
	for n := 0; n < 50000; n++ {
		b := make([]byte, 1+rng.IntN(40))
		b[0] = '['
		for i := 1; i < len(b); i++ {
			b[i] = alphabet[rng.IntN(len(alphabet))]
			if rng.IntN(4) == 0 {
				b[i] = byte(rng.IntN(256))
			}
		}
		end, eq, ok := plainField(b, 0)
		if !ok {
			continue
		}
		wantEnd, closed := scanGroup(b, 0)
		require.True(t, closed, "%q", b)
		require.Equal(t, wantEnd, end, "%q", b)
		key, val, off := splitField(b[1:end-1], nil)
		require.GreaterOrEqual(t, off, 0, "%q", b)
		if eq >= 0 {
			require.Equal(t, string(key), string(b[1:eq]), "%q", b)
			require.Equal(t, string(val), string(b[eq+1:end-1]), "%q", b)
			require.Equal(t, off+1, eq+1, "%q", b)
		} else {
			require.Nil(t, key, "%q", b)
			require.Equal(t, string(val), string(b[1:end-1]), "%q", b)
			require.Equal(t, 0, off, "%q", b)
		}
	}
}

// TestHeaderCache: a scanner with a (warm) header cache reads every record
// exactly as one without (header, message, fields, catalogue entry), and
// both read the header as the general parse does.
func TestHeaderCache(t *testing.T) {
	var inputs [][]byte
	paths, _ := filepath.Glob("testdata/*.log")
	more, _ := filepath.Glob("testdata/*/*.log")
	for _, p := range append(paths, more...) {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		inputs = append(inputs, b)
	}
	var gen bytes.Buffer
	_, err := GenerateLog(&gen, 2<<20, 7)
	require.NoError(t, err)
	inputs = append(inputs, gen.Bytes())
	// near misses of a cached prefix: the same caller and message with
	// other fields, levels and escapes; callers and messages the fast
	// paths leave to the general parse
	var odd strings.Builder
	callers := []string{"barrier.go:583", "helper.go:379", "a/b/helper.go:379", "helper.go:37", "x:y/z.go:1", "nocolon.go", "k=v.go:1", `q"x.go:1`, ""}
	msgs := []string{"event trySchedule", "resend task periodic resend", `resend task \"periodic\" resend`, "resend task periodic resend]", "new block event is created"}
	levels := []string{"INFO", "WARN", "ERROR", "DEBUG", "FATAL", "PANIC", "TRACE", "info"}
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 4000; i++ {
		c, m, l := callers[rng.IntN(len(callers))], msgs[rng.IntN(len(msgs))], levels[rng.IntN(len(levels))]
		fields := []string{"", " [dispatcherID=1.2] [executeCount=10]", " [changefeed=cf] [checkpointTs=0]", ` [k="v w"]`, " [", ` ["x"=1]`}[rng.IntN(6)]
		switch rng.IntN(8) {
		case 0:
			fmt.Fprintf(&odd, "[2026/07/22 16:30:%02d.%03d +00:00] [%s] [%s] [%s]%s\n", rng.IntN(60), rng.IntN(1000), l, c, strings.ReplaceAll(m, " ", ""), fields)
		case 1:
			fmt.Fprintf(&odd, "[2026/07/22 16:30:%02d.%03d +00:00] [%s] [%s] [\"%s\"]%s\n  continued\n", rng.IntN(60), rng.IntN(1000), l, c, m, fields)
		default:
			fmt.Fprintf(&odd, "[2026/07/22 16:30:%02d.%03d +00:00] [%s] [%s] [\"%s\"]%s\n", rng.IntN(60), rng.IntN(1000), l, c, m, fields)
		}
	}
	inputs = append(inputs, []byte(odd.String()))

	hc := new(headerCache)
	for pass := 0; pass < 2; pass++ { // the second pass starts warm
		for n, in := range inputs {
			plain, cached := newBytesScanner(in), newBytesScanner(in)
			cached.hc = hc
			for i := 0; ; i++ {
				a, b := plain.Next(), cached.Next()
				if a == nil || b == nil {
					require.True(t, a == nil && b == nil, "input %d record %d: one scanner ended early", n, i)
					break
				}
				where := fmt.Sprintf("input %d record %d: %q", n, i, a.Text)
				// the general header parse (a cold time cache: no fast path)
				var scratch []byte
				ref := Record{scratch: &scratch}
				if a.HasTime && parseHeader(a.Text, &ref, &timeCache{}, nil, 0, false) {
					require.Equal(t, [2]any{ref.Time, ref.Level}, [2]any{a.Time, a.Level}, where)
					require.Equal(t, ref.Truncated, a.Truncated, where)
					require.Equal(t, string(ref.File), string(a.File), where)
					require.Equal(t, string(ref.Msg), string(a.Msg), where)
					require.Equal(t, string(ref.rest), string(a.rest), where)
				}
				require.Equal(t, [4]int64{a.Time, int64(a.Level), int64(a.Line), int64(a.Lines)}, [4]int64{b.Time, int64(b.Level), int64(b.Line), int64(b.Lines)}, where)
				require.Equal(t, [2]bool{a.HasTime, a.Truncated}, [2]bool{b.HasTime, b.Truncated}, where)
				require.Equal(t, string(a.File), string(b.File), where)
				require.Equal(t, string(a.Msg), string(b.Msg), where)
				require.Equal(t, string(a.rest), string(b.rest), where)
				require.Same(t, lookup(a), lookup(b), where)
				require.Equal(t, a.NumFields(), b.NumFields(), where)
				for f := 0; f < a.NumFields(); f++ {
					ak, av := a.FieldAt(f)
					bk, bv := b.FieldAt(f)
					require.Equal(t, string(ak)+"="+string(av), string(bk)+"="+string(bv), where)
				}
			}
			require.Equal(t, plain.Stats, cached.Stats, "input %d", n)
		}
	}
	hits := 0
	for _, sl := range hc.slots {
		if sl.prefix != "" {
			hits++
		}
	}
	require.Greater(t, hits, 10, "the cache was used")
}

// TestFindKey pins the entries' key tables to a scan of their keys: every
// key any entry reads, near misses of it and random keys, looked up in
// every entry.
func TestFindKey(t *testing.T) {
	seen := map[string]bool{}
	var keys [][]byte
	add := func(k []byte) {
		if !seen[string(k)] {
			seen[string(k)] = true
			keys = append(keys, k)
		}
	}
	for i := range catalogue {
		for _, r := range catalogue[i].keyIdx {
			k := []byte(r.key)
			add(k)
			add(k[:len(k)-1])
			add(k[1:])
			add(append(bytes.Clone(k), 'x'))
			add(bytes.ToUpper(k))
		}
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for n := 0; n < 500; n++ {
		k := make([]byte, rng.IntN(20))
		for i := range k {
			k[i] = "abcdeITs-_"[rng.IntN(10)]
		}
		add(k)
	}
	entries := []*entry{&panicEntry}
	for i := range catalogue {
		entries = append(entries, &catalogue[i])
	}
	found := 0
	for _, e := range entries {
		for _, k := range keys {
			want, wantOK := findKeyIn(e.keyIdx, k)
			if got, ok := e.findKey(k); ok != wantOK || got != want {
				t.Fatalf("findKey(%q) in %q = %v, %v; the scan finds %v, %v", k, e.msg, got, ok, want, wantOK)
			}
			if wantOK {
				found++
			}
		}
	}
	require.Greater(t, found, len(catalogue), "the entries' own keys are found")
}

// TestIsTsKey: the keys that hold a timestamp at TiCDC HEAD are ts keys,
// and near misses are not; mayNameTsField passes every ts key.
func TestIsTsKey(t *testing.T) {
	yes := append([]string{"resolvedTs", "commitTs", "blockTs", "barrierTS", "redoCheckpointTs", "tableProgressMaxCommitTs",
		"minCheckpointTsForScheduler", "ts", "start_ts"}, tsFields...)
	no := []string{"affectedReplicaSets", "toMergedReplicaSets", "Ts", "s", "", "tsx", "status", "counts"}
	for _, k := range yes {
		assert.True(t, isTsKey([]byte(k)), "%q", k)
		assert.True(t, mayNameTsField([]byte("["+k+"=1]")), "%q", k)
	}
	for _, k := range no {
		assert.False(t, isTsKey([]byte(k)), "%q", k)
	}
}

// TestItemImpossibleTs pins toItems' one-pass impossible-value check to
// impossibleTs: the first impossible timestamp field, in field order, on
// catalogued lines with several timestamp fields.
func TestItemImpossibleTs(t *testing.T) {
	fields := []string{"[checkpointTs=0]", "[startTs=-1]", "[checkpoint-ts=18446744073709551615]", "[start-ts=0]",
		`[checkpointTs="0"]`, "[checkpointTs=1]", "[startTs=42]", "[changefeed=cf]", `["checkpointTs"=-1]`, "[x=[startTs=0]]"}
	rng := rand.New(rand.NewPCG(11, 12))
	found := 0
	for n := 0; n < 2000; n++ {
		b := randomJoin(rng, fields, 4, " ")
		for _, msg := range [][2]string{{"maintainer.go:277", "changefeed maintainer started"}, {"maintainer_controller_bootstrap.go:1", "handle bootstrap response"}} {
			line := headLine(0, "INFO", msg[0], msg[1], b)
			rec := newBytesScanner([]byte(line)).Next()
			e := lookup(rec)
			require.NotNil(t, e, line)
			want := impossibleTs(newBytesScanner([]byte(line)).Next(), e.none)
			items := toItems(rec, e, "x.log", 0, nil)
			require.Equal(t, want, items[0].impossible, line)
			if want != "" {
				found++
			}
		}
	}
	require.Greater(t, found, 100)
}

// TestIndexStop pins indexStop to strings.IndexAny and trimQuoteSpace to
// bytes.TrimLeft, on random strings of every length around the round of
// eight.
func TestIndexStop(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for n := 0; n < 20000; n++ {
		b := make([]byte, rng.IntN(30))
		for i := range b {
			b[i] = "ab0:, }\"\\x"[rng.IntN(10)]
			if rng.IntN(3) > 0 {
				b[i] = 'a' + byte(rng.IntN(26))
			}
		}
		s := string(b)
		require.Equal(t, strings.IndexAny(s, ", }"), indexStop(s, &spanValueStop), "%q", s)
		require.Equal(t, strings.IndexAny(s, ", "), indexStop(s, &opValueStop), "%q", s)
		require.Equal(t, string(bytes.TrimLeft(b, `\" `)), string(trimQuoteSpace(b)), "%q", s)
	}
}

// TestOpTextValue pins opTextValue's one scan to looking each spelling up
// in turn ("key:" first, then "key "), on random operator texts.
func TestOpTextValue(t *testing.T) {
	byScans := func(s, key string) string {
		for _, k := range []string{key + ":", key + " "} {
			if i := strings.Index(s, k); i >= 0 {
				rest := strings.TrimLeft(s[i+len(k):], " ")
				if j := strings.IndexAny(rest, ", "); j >= 0 {
					rest = rest[:j]
				}
				return rest
			}
		}
		return ""
	}
	parts := []string{"dest", "origin", "remove", ":", " ", ",", "n1", "true", "de", "st", "add dispatcher operator: 12", "destdest"}
	rng := rand.New(rand.NewPCG(15, 16))
	found := 0
	for n := 0; n < 20000; n++ {
		s := randomJoin(rng, parts, 8, "")
		for _, key := range []string{"dest", "origin", "remove"} {
			want := byScans(s, key)
			require.Equal(t, want, opTextValue(s, key), "%q %q", s, key)
			if want != "" {
				found++
			}
		}
	}
	require.Greater(t, found, 1000)
}

// TestBlockStatusKeyFields pins blockStatusKey's one pass over the fields
// to reading each key with Record.Field (the last field of a key), on
// lines with the keys missing, repeated and in any order.
func TestBlockStatusKeyFields(t *testing.T) {
	byField := func(r *Record, it *Item) {
		if n, ok := r.Field("executeCount"); ok {
			it.Dur = int64(parseTs(n)) * resendIntervalMs
		}
		if id, ok := r.Field("identifier"); ok {
			if v, ok := structField(id, "CommitTs"); ok {
				it.Event.Checkpoint = parseTs(v)
			} else {
				it.Event.Checkpoint = parseTs(id)
			}
			v, _ := structField(id, "IsSyncPoint")
			it.Event.SyncPoint = string(v) == "true"
		}
	}
	fields := []string{"[executeCount=3]", "[executeCount=7]", `[identifier="{CommitTs:100 IsSyncPoint:true}"]`,
		`[identifier="{CommitTs:200 IsSyncPoint:false}"]`, "[identifier=300]", "[dispatcherID=1.2]", "[x=y]"}
	rng := rand.New(rand.NewPCG(17, 18))
	set := 0
	for n := 0; n < 3000; n++ {
		b := randomJoin(rng, fields, 5, " ")
		line := headLine(0, "INFO", "helper.go:379", "resend task periodic resend", b)
		rec := newBytesScanner([]byte(line)).Next()
		var got, want Item
		blockStatusKey(rec, &got, nil)
		byField(newBytesScanner([]byte(line)).Next(), &want)
		require.Equal(t, [3]any{want.Dur, want.Event.Checkpoint, want.Event.SyncPoint}, [3]any{got.Dur, got.Event.Checkpoint, got.Event.SyncPoint}, line)
		if want.Dur != 0 && want.Event.Checkpoint != 0 {
			set++
		}
	}
	require.Greater(t, set, 100)
}

// randomJoin is 1 to n pieces drawn from parts, each followed by sep.
func randomJoin(rng *rand.Rand, parts []string, n int, sep string) string {
	var b strings.Builder
	for k := rng.IntN(n); k >= 0; k-- {
		b.WriteString(parts[rng.IntN(len(parts))] + sep)
	}
	return b.String()
}
