package traces

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A damage is what pasting a log into an issue or a chat does to it (issue
// 30): each turns an intact fixture into a damaged one.
type damage struct {
	name string
	// untimed: the damage removes the timestamps (the properties that
	// measure time are not judged on the damaged fixture).
	untimed bool
	apply   func(log string) string
	// repaired reads the count of this damage's repair from the report.
	repaired func(Repairs) int64
}

var (
	reTime  = regexp.MustCompile(`(?m)^\[\d{4}/\d\d/\d\d [^]\n]*\] ?`)
	reLevel = regexp.MustCompile(`(?m)^(\[\d{4}/\d\d/\d\d [^]\n]*\] ?)?\[(INFO|WARN|ERROR|DEBUG|FATAL|PANIC)\] ?`)
	// an error value, to wrap at its spaces
	reErrValue = regexp.MustCompile(`\[error="[^"\n]*"\]`)
)

var damages = []damage{
	{name: "fullwidth", apply: func(log string) string {
		// a CJK input method's punctuation: every '[', ']', ',' and ':'
		return strings.NewReplacer("[", "［", "]", "］", ",", "，", ":", "：").Replace(log)
	}, repaired: func(r Repairs) int64 { return r.FullWidthLines }},
	{name: "untimed", untimed: true, apply: func(log string) string {
		return reTime.ReplaceAllString(log, "")
	}, repaired: func(r Repairs) int64 { return r.UntimedRecords }},
	{name: "nolevel", apply: func(log string) string {
		return reLevel.ReplaceAllString(log, "$1")
	}, repaired: func(r Repairs) int64 { return r.NoLevelRecords }},
	// pasted from "[file.go:line]" on: neither timestamp nor level
	{name: "bare", untimed: true, apply: func(log string) string {
		return reLevel.ReplaceAllString(reTime.ReplaceAllString(log, ""), "")
	}, repaired: func(r Repairs) int64 { return r.UntimedRecords }},
	// one group per line, and error values wrapped at their spaces with
	// an indent (as a chat or a narrow terminal does)
	{name: "wrapped", apply: func(log string) string {
		log = reErrValue.ReplaceAllStringFunc(log, func(v string) string {
			var b strings.Builder
			col := 0
			for _, w := range strings.SplitAfter(v, " ") {
				if col > 40 {
					b.WriteString("\n        ")
					col = 0
				}
				b.WriteString(strings.TrimSuffix(w, " "))
				if strings.HasSuffix(w, " ") && col+len(w) <= 40 {
					b.WriteByte(' ')
				}
				col += len(w)
			}
			return b.String()
		})
		lines := strings.SplitAfter(log, "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, "[") { // not a quoted excerpt line
				lines[i] = strings.ReplaceAll(l, "] [", "]\n[")
			}
		}
		return strings.Join(lines, "")
	}, repaired: func(r Repairs) int64 { return r.WrappedRecords }},
}

// damagedOriginals are the fixtures committed in damaged form, one file
// per damage, in testdata/damaged/ (go test ./traces -run TestDamaged
// -rewrite regenerates them).
var damagedOriginals = []string{"planted_duplicate_dispatcher.log", "planted_error_resends.log",
	"planted_removal_only_add.log", "planted_ddl_scheduled_out_of_order.log", "planted_bootstrap_failed.log"}

// findingKey is what a damaged fixture must reproduce of a finding.
type findingKey struct{ prop, cf, node, sym string }

type findingGrade struct {
	sev   Severity
	count int64
}

func gradesOf(rep *Report) map[findingKey]findingGrade {
	out := map[findingKey]findingGrade{}
	for _, f := range rep.Findings {
		out[findingKey{f.Property, f.Changefeed, f.Node, f.Symptom}] = findingGrade{f.Severity, f.Count}
	}
	return out
}

// checkDamaged compares the report on a damaged fixture with the one on
// its original: the same findings for every property that does not measure
// time; when the damage removed the timestamps, no violation or suspicion of
// a property that does, and the coverage says why; the repair is listed.
func checkDamaged(t *testing.T, d damage, orig, dmg *Report) {
	t.Helper()
	want, got := gradesOf(orig), gradesOf(dmg)
	for k, w := range want {
		if _, timed := timeWindows[k.prop]; timed && d.untimed {
			// the same finding (a duration TiCDC wrote in the line), or
			// none above insufficient-evidence
			if g := got[k]; g != w {
				assert.NotContains(t, []Severity{Violation, Suspect}, g.sev, "%+v judged on untimed records", k)
			}
			continue
		}
		assert.Equal(t, w, got[k], "finding %+v", k)
	}
	for k, g := range got {
		_, ok := want[k]
		assert.True(t, ok, "finding %+v %+v not in the original", k, g)
	}
	if d.untimed {
		// the coverage says which records a property that measures time
		// was not judged on
		for i, p := range orig.Coverage.Properties {
			dp := dmg.Coverage.Properties[i]
			if _, timed := timeWindows[p.Property]; timed && p.Judged && dp.Basis != p.Basis {
				assert.Positive(t, dp.Untimed, "%s: %s", p.Property, dp.Basis)
				assert.Contains(t, dp.Basis, "timestamp")
			}
		}
	}
	assert.Equal(t, orig.Stats.Records, dmg.Stats.Records, "records")
	assert.Equal(t, orig.Coverage.Recognised, dmg.Coverage.Recognised, "recognised records")
	assert.Positive(t, d.repaired(dmg.Repairs), "the repair is listed: %+v", dmg.Repairs)
	var text bytes.Buffer
	dmg.WriteText(&text)
	assert.Contains(t, text.String(), "\nrepairs: ")
}

// TestDamagedInput (issue 30): every fixture, damaged each way a paste
// damages a log, gives the same findings as the intact fixture for every
// property that does not need the lost timestamps, and the report lists
// the repairs.
func TestDamagedInput(t *testing.T) {
	fixtures, _ := filepath.Glob("testdata/*.log")
	require.NotEmpty(t, fixtures)
	for _, fx := range fixtures {
		orig := runFixture(t, fx)
		src, err := os.ReadFile(fx)
		require.NoError(t, err)
		for _, d := range damages {
			damaged := d.apply(string(src))
			if damaged == string(src) {
				continue // nothing of this kind to damage (an excerpt already without it)
			}
			t.Run(d.name+"/"+filepath.Base(fx), func(t *testing.T) {
				dmg, err := Run([]Input{stringInput(filepath.Base(fx), damaged)}, Options{})
				require.NoError(t, err)
				checkDamaged(t, d, orig, dmg)
			})
		}
	}
}

// TestDamagedFixtures: the committed damaged fixtures are the damages of
// their originals, and check as TestDamagedInput says.
func TestDamagedFixtures(t *testing.T) {
	for _, name := range damagedOriginals {
		src, err := os.ReadFile("testdata/" + name)
		require.NoError(t, err)
		orig := runFixture(t, "testdata/"+name)
		for _, d := range damages {
			path := fmt.Sprintf("testdata/damaged/%s_%s", d.name, name)
			t.Run(filepath.Base(path), func(t *testing.T) {
				want := d.apply(string(src))
				if *rewrite {
					require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
					require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
				}
				got, err := os.ReadFile(path)
				require.NoError(t, err, "run with -rewrite to create it")
				require.Equal(t, want, string(got), "%s is not the %s damage of %s (run with -rewrite)", path, d.name, name)
				checkDamaged(t, d, orig, runFixture(t, path))
			})
		}
	}
}

// TestUntimedOnlyIsNotAPass: a log whose records all lack a timestamp
// (pasted from "[file.go:line]" on) does not pass the properties that
// measure time: #5709's re-sends over the error window, a violation with
// timestamps, are insufficient evidence without them, and with no finding
// of the properties judged on order the verdict is nothing-checked.
func TestUntimedOnlyIsNotAPass(t *testing.T) {
	src, err := os.ReadFile("testdata/planted_error_resends.log")
	require.NoError(t, err)
	for _, d := range damages {
		if !d.untimed {
			continue
		}
		rep, err := Run([]Input{stringInput("resends.log", d.apply(string(src)))}, Options{})
		require.NoError(t, err)
		v := rep.Verdict()
		assert.Equal(t, VerdictNothingChecked, v.Result, "%s: %s", d.name, v)
		assert.Contains(t, v.Why, "no property that measures time was judged")
		fs := findingsOf(rep, "error-never-dropped")
		require.NotEmpty(t, fs, "%s", d.name)
		for _, f := range fs {
			assert.Equal(t, InsufficientEvidence, f.Severity, "%s", d.name)
			assert.Contains(t, f.Message, "have no timestamp")
		}
		assert.NotEmpty(t, rep.Repairs.NotJudged)
	}
}

// TestFullWidthReaderBoundaries: a full-width character cut by a read
// boundary is still normalised, at every boundary.
func TestFullWidthReaderBoundaries(t *testing.T) {
	in := "［2026/07/22 16：30：15.758 +00：00］ ［INFO］ ［x.go：1］ ［\"msg，中文\"］\nplain line\n［a］"
	want := "[2026/07/22 16:30:15.758 +00:00] [INFO] [x.go:1] [\"msg,中文\"]\nplain line\n[a]"
	for size := 1; size <= len(in); size++ {
		r := newFullWidthReader(&chunkedReader{b: []byte(in), n: size})
		var out bytes.Buffer
		buf := make([]byte, 3)
		for {
			n, err := r.Read(buf)
			out.Write(buf[:n])
			if err != nil {
				break
			}
		}
		require.Equal(t, want, out.String(), "read size %d", size)
		require.EqualValues(t, 2, r.Lines, "read size %d", size)
	}
}

// chunkedReader returns at most n bytes per Read.
type chunkedReader struct {
	b []byte
	n int
}

func (c *chunkedReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	k := copy(p, c.b[:min(c.n, len(c.b))])
	c.b = c.b[k:]
	return k, nil
}
