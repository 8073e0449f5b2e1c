package conformance

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConformance runs every scenario in testdata/. A scenario whose
// TABLE.md row says "fail" is skipped with the row's reason: it keeps
// TiCDC's expected output, which impl does not produce (TestKnownFailures
// checks that it still does not). Regenerate the passing ones with
//
//	go test ./impl/conformance/ -run TestConformance -rewrite
func TestConformance(t *testing.T) {
	rows := readTable(t)
	failing := map[string]tableRow{}
	for _, r := range rows {
		if r.verdict == "fail" {
			failing[r.scenario] = r
		}
	}
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		if r, ok := failing[filepath.Base(path)]; ok {
			t.Skipf("TABLE.md row %s (%s): fail: %s", r.test, r.file, r.notes)
		}
		h := newHarness()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			out, err := h.run(d)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			return out
		})
	})
}

// TestKnownFailures runs the scenarios marked "fail" and requires each to
// still differ from TiCDC's expected output, so a fix in impl/ shows up as a
// row to flip to "pass".
func TestKnownFailures(t *testing.T) {
	if f := flag.Lookup("rewrite"); f != nil && f.Value.String() == "true" {
		t.Skip("not under -rewrite: failing scenarios keep TiCDC's expected output")
	}
	done := map[string]bool{}
	for _, r := range readTable(t) {
		if r.verdict != "fail" || done[r.scenario] {
			continue
		}
		done[r.scenario] = true
		t.Run(r.scenario, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", r.scenario))
			if err != nil {
				t.Fatal(err)
			}
			rec := &recordingTB{TB: t}
			h := newHarness()
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				// A mismatch ends the goroutine through Fatalf (runtime.Goexit).
				defer wg.Done()
				datadriven.RunTestFromStringAny(rec, string(data), func(_ testing.TB, d *datadriven.TestData) string {
					out, _ := h.run(d)
					return out
				})
			}()
			wg.Wait()
			if !rec.failed {
				t.Errorf("%s now produces TiCDC's expected output: flip its TABLE.md row(s) to pass", r.scenario)
			}
		})
	}
}

// recordingTB records failures instead of failing the test.
type recordingTB struct {
	testing.TB
	mu     sync.Mutex
	failed bool
}

func (r *recordingTB) fail() {
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
}
func (r *recordingTB) Helper()                           {}
func (r *recordingTB) Log(args ...any)                   {}
func (r *recordingTB) Logf(format string, args ...any)   {}
func (r *recordingTB) Error(args ...any)                 { r.fail() }
func (r *recordingTB) Errorf(format string, args ...any) { r.fail() }
func (r *recordingTB) Fail()                             { r.fail() }
func (r *recordingTB) Failed() bool                      { r.mu.Lock(); defer r.mu.Unlock(); return r.failed }
func (r *recordingTB) FailNow()                          { r.fail(); runtime.Goexit() }
func (r *recordingTB) Fatal(args ...any)                 { r.fail(); runtime.Goexit() }
func (r *recordingTB) Fatalf(format string, args ...any) { r.fail(); runtime.Goexit() }

// TestTable checks TABLE.md against testdata/: every scenario has a row,
// every row with a scenario names an existing file whose leading comment
// names the row's TiCDC test and file, every "n/a" row gives its reason, and
// the table lists at least 40 TiCDC tests.
func TestTable(t *testing.T) {
	rows := readTable(t)
	if len(rows) < 40 {
		t.Errorf("TABLE.md lists %d TiCDC tests, want at least 40", len(rows))
	}
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	seen := map[string]bool{}
	for _, r := range rows {
		key := r.file + " " + r.test
		if seen[key] {
			t.Errorf("TABLE.md lists %s twice", key)
		}
		seen[key] = true
		switch r.verdict {
		case "pass", "fail":
			if r.scenario == "" {
				t.Errorf("row %s: verdict %s without a scenario file", r.test, r.verdict)
				continue
			}
			covered[r.scenario] = true
			head, err := leadingComment(filepath.Join("testdata", r.scenario))
			if err != nil {
				t.Errorf("row %s: %v", r.test, err)
				continue
			}
			if !strings.Contains(head, r.file) || !containsWord(head, r.test) {
				t.Errorf("row %s: %s's leading comment does not name %s %s", r.test, r.scenario, r.file, r.test)
			}
			if r.verdict == "fail" && r.notes == "" {
				t.Errorf("row %s: a fail row needs its one-line explanation", r.test)
			}
		case "n/a":
			if r.notes == "" {
				t.Errorf("row %s: n/a needs the missing feature as reason", r.test)
			}
		default:
			t.Errorf("row %s: verdict %q, want pass, fail or n/a", r.test, r.verdict)
		}
		switch r.model {
		case "":
		case "yes":
			data, err := os.ReadFile(filepath.Join("testdata", r.scenario))
			if err != nil || !regexp.MustCompile(`(?m)^model-do$`).Match(data) {
				t.Errorf("row %s: model=yes but %s replays no model actions", r.test, r.scenario)
			}
		default:
			t.Errorf("row %s: model column %q, want yes or empty", r.test, r.model)
		}
	}
	for _, f := range files {
		if !covered[filepath.Base(f)] {
			t.Errorf("%s has no pass/fail row in TABLE.md", f)
		}
	}
	checkTotals(t, rows)
}

// checkTotals compares TABLE.md's Totals line with its rows.
func checkTotals(t *testing.T, rows []tableRow) {
	t.Helper()
	count := map[string]int{}
	model := 0
	for _, r := range rows {
		count[r.verdict]++
		if r.model == "yes" {
			model++
		}
	}
	want := fmt.Sprintf("Totals: %d TiCDC tests listed; %d pass, %d fail, %d not applicable; %d also check the model.",
		len(rows), count["pass"], count["fail"], count["n/a"], model)
	data, err := os.ReadFile("TABLE.md")
	require.NoError(t, err)
	got := regexp.MustCompile(`(?m)^Totals: .*$`).FindAllString(string(data), -1)
	require.Len(t, got, 1, "TABLE.md needs exactly one Totals line")
	assert.Equal(t, want, got[0], "TABLE.md's Totals line does not match its rows")
}

type tableRow struct {
	test, file, scenario, verdict, model, notes string
}

var tableRowRE = regexp.MustCompile(`^\|\s*(Test\w+)\s*\|`)

// readTable parses TABLE.md's rows:
// | TiCDC test | TiCDC file | scenario | verdict | model | notes |
func readTable(t testing.TB) []tableRow {
	t.Helper()
	data, err := os.ReadFile("TABLE.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []tableRow
	for i, l := range strings.Split(string(data), "\n") {
		if !tableRowRE.MatchString(l) {
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(l), "|"), "|")
		if len(cells) != 6 {
			t.Fatalf("TABLE.md:%d: %d cells, want 6", i+1, len(cells))
		}
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		unquote := func(s string) string { return strings.Trim(s, "`") }
		rows = append(rows, tableRow{test: cells[0], file: unquote(cells[1]), scenario: unquote(cells[2]), verdict: cells[3],
			model: cells[4], notes: cells[5]})
	}
	return rows
}

// leadingComment returns a scenario's first comment block.
func leadingComment(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(l, "#") {
			break
		}
		b.WriteString(l + "\n")
	}
	if b.Len() == 0 {
		return "", fmt.Errorf("%s starts with no comment", path)
	}
	return b.String(), nil
}

func containsWord(text, word string) bool {
	return regexp.MustCompile(`\b` + regexp.QuoteMeta(word) + `\b`).MatchString(text)
}
