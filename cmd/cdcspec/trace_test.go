package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fixtures = "../../traces/testdata/"

func runTraceCmd(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	old := traceStdin
	traceStdin = strings.NewReader(stdin)
	defer func() { traceStdin = old }()
	var out, errb bytes.Buffer
	code := run(append([]string{"trace"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func TestTraceSeed5709Text(t *testing.T) {
	code, out, _ := runTraceCmd(t, "", fixtures+"seed000_5709.log")
	if code != exitOK {
		t.Fatalf("exit %d, want %d (a suspicion is not a violation)\n%s", code, exitOK, out)
	}
	for _, want := range []string{"error-never-dropped  SUSPECT  changefeed default/<changefeed>", "seed000_5709.log:21", "coverage:", "parse: 42 lines"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestTraceViolationExitsOne(t *testing.T) {
	code, out, _ := runTraceCmd(t, "", fixtures+"planted_error_resends.log")
	if code != exitViolation || !strings.Contains(out, "VIOLATION") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

func TestTraceJSON(t *testing.T) {
	code, out, _ := runTraceCmd(t, "", "--format", "json", fixtures+"seed000_5709.log")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	var rep struct {
		Lines, Parsed, Unparsed, Bytes int64
		Seconds                        float64
		Findings                       []struct {
			Property, Severity, Changefeed, Message string
			Evidence                                []struct {
				File string
				Line int
				Text string
			}
		}
		Coverage struct {
			Events map[string]int64
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Lines != 42 || rep.Parsed != 34 || rep.Unparsed != 0 || rep.Bytes == 0 || len(rep.Findings) == 0 {
		t.Fatalf("report %+v", rep)
	}
	f := rep.Findings[0]
	if f.Property != "error-never-dropped" || f.Severity != "suspect" || len(f.Evidence) == 0 || f.Evidence[0].Line != 21 {
		t.Fatalf("first finding %+v", f)
	}
	if rep.Coverage.Events["dispatcher-error-reported"] != 1 {
		t.Fatalf("coverage %+v", rep.Coverage)
	}
}

func TestTraceJUnit(t *testing.T) {
	code, out, _ := runTraceCmd(t, "", "--format", "junit", fixtures+"planted_duplicate_dispatcher.log")
	if code != exitViolation {
		t.Fatalf("exit %d", code)
	}
	var suites struct {
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(out), &suites); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	failed := ""
	for _, c := range suites.Suites[0].Cases {
		if c.Failure != nil {
			failed += c.Name
		}
	}
	if suites.Failures != 1 || failed != "at-most-one-dispatcher-per-span" {
		t.Fatalf("failures %d %q\n%s", suites.Failures, failed, out)
	}
}

func TestTraceInputs(t *testing.T) {
	dir := t.TempDir()
	seed, err := os.ReadFile(fixtures + "seed000_5709.log")
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(seed)
	zw.Close()
	gzPath := filepath.Join(dir, "cdc.log.1.gz")
	if err := os.WriteFile(gzPath, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"gzip":  {gzPath},
		"stdin": {"-"},
		"dir":   {dir},
		"glob":  {filepath.Join(dir, "*.gz")},
	} {
		code, out, errOut := runTraceCmd(t, string(seed), args...)
		if code != exitOK || !strings.Contains(out, "error-never-dropped  SUSPECT") {
			t.Errorf("%s: exit %d\n%s%s", name, code, out, errOut)
		}
	}
	// two captures merged by time
	code, out, _ := runTraceCmd(t, "", fixtures+"healthy")
	if code != exitOK || strings.Contains(out, "VIOLATION") || strings.Contains(out, "SUSPECT") {
		t.Errorf("healthy: exit %d\n%s", code, out)
	}
}

func TestTraceUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{nil, "no input"},
		{[]string{"--format", "xml", "x.log"}, `--format "xml" unknown`},
		{[]string{"--error-window", "-1s", "x.log"}, "--error-window -1s out of range"},
		{[]string{"--bogus"}, "flag provided but not defined"},
		{[]string{"/nonexistent/cdc.log"}, "/nonexistent/cdc.log"},
		{[]string{"/nonexistent/*.log"}, "no file matches"},
	}
	for _, c := range cases {
		code, _, errOut := runTraceCmd(t, "", c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q (want %q)", c.args, code, errOut, c.want)
		}
	}
	// an unreadable (non-gzip) .gz still reads as text; a corrupt gzip is an error naming the file
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.gz")
	os.WriteFile(bad, []byte{0x1f, 0x8b, 0, 1, 2}, 0o644)
	code, _, errOut := runTraceCmd(t, "", bad)
	if code != exitUsage || !strings.Contains(errOut, "bad.gz") {
		t.Errorf("corrupt gzip: exit %d, stderr %q", code, errOut)
	}
}

// TestTraceNotALog: an input with no TiCDC record checked nothing, so it must
// not pass: an empty file, a binary and another program's text exit 2 naming
// the file; a log that is mostly other text is checked with a warning.
func TestTraceNotALog(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.log")
	os.WriteFile(empty, nil, 0o644)
	binary := filepath.Join(dir, "binary")
	bin := make([]byte, 64<<10)
	for i := range bin {
		bin[i] = byte(i*7 + i/251)
	}
	copy(bin, "\x7fELF\x02\x01\x01")
	os.WriteFile(binary, bin, 0o644)
	other := filepath.Join(dir, "nginx.log")
	os.WriteFile(other, []byte("127.0.0.1 - - [22/Jul/2026:16:30:15 +0000] \"GET / HTTP/1.1\" 200 612\n"), 0o644)
	self, err := os.Executable()
	require.NoError(t, err)
	for _, in := range []string{empty, binary, other, self} {
		code, out, errOut := runTraceCmd(t, "", in)
		assert.Equal(t, exitUsage, code, "%s: %s", in, out)
		assert.Contains(t, errOut, "no TiCDC log record found in "+in)
	}
	// stdin too
	code, _, errOut := runTraceCmd(t, "", "-")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "no TiCDC log record found in <stdin>")
	// one good input does not excuse a bad one
	code, _, errOut = runTraceCmd(t, "", fixtures+"seed000_5709.log", empty)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "no TiCDC log record found in "+empty)

	// mostly not a log: checked, with a warning naming the share
	seed, err := os.ReadFile(fixtures + "seed000_5709.log")
	require.NoError(t, err)
	mixed := filepath.Join(dir, "mixed.log")
	os.WriteFile(mixed, append(bytes.Repeat([]byte("some other program's output line\n"), 200), seed...), 0o644)
	code, out, errOut := runTraceCmd(t, "", mixed)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "error-never-dropped  SUSPECT")
	assert.Contains(t, errOut, "warning: only 34 of the 234 non-blank lines of "+mixed)
	// a real log: no warning
	_, _, errOut = runTraceCmd(t, "", fixtures+"seed000_5709.log")
	assert.NotContains(t, errOut, "warning")
}

// TestTraceDirWithOtherFiles: a log directory also holding an empty or
// non-log file (a process's stderr) is checked, with a warning naming it; a
// directory with no log record at all exits 2.
func TestTraceDirWithOtherFiles(t *testing.T) {
	dir := t.TempDir()
	seed, err := os.ReadFile(fixtures + "seed000_5709.log")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "capture-1.log"), seed, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "capture-1.log.stderr"), nil, 0o644))
	code, out, errOut := runTraceCmd(t, "", dir)
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "error-never-dropped  SUSPECT")
	assert.Contains(t, errOut, "warning: no TiCDC log record found in "+filepath.Join(dir, "capture-1.log.stderr"))
	empty := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(empty, "cdc.log"), nil, 0o644))
	code, _, errOut = runTraceCmd(t, "", empty)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "no TiCDC log record found in "+filepath.Join(empty, "cdc.log"))
}

// TestTraceVerdict (issue 28): every report starts with the verdict; a log
// the checker cannot judge exits 3 (nothing checked) instead of passing, and
// --fail-on suspect turns the #5709 excerpt's suspicion into exit 1.
func TestTraceVerdict(t *testing.T) {
	dir := t.TempDir()
	seed, err := os.ReadFile(fixtures + "seed000_5709.log")
	require.NoError(t, err)
	// every timestamp invalid: the record layout parses, no time does
	badTS := filepath.Join(dir, "badts.log")
	var b strings.Builder
	for _, line := range strings.SplitAfter(string(seed), "\n") {
		if strings.HasPrefix(line, "[2026/07/22 ") {
			line = "[2026/13/45 99:99:99.999 +00:00]" + line[len("[2026/07/22 16:30:08.634 +00:00]"):]
		}
		b.WriteString(line)
	}
	require.NoError(t, os.WriteFile(badTS, []byte(b.String()), 0o644))
	// one truncated record (a header with no message)
	trunc := filepath.Join(dir, "trunc.log")
	require.NoError(t, os.WriteFile(trunc, seed[:60], 0o644))

	cases := []struct {
		args  []string
		code  int
		first string
	}{
		{[]string{fixtures + "seed000_5709.log"}, exitOK, "verdict: SUSPECT: 0 violations, 1 suspect; 2 of 21 properties judged; 9 of 9 records recognised"},
		{[]string{"--fail-on", "suspect", fixtures + "seed000_5709.log"}, exitViolation, "verdict: SUSPECT:"},
		{[]string{"--fail-on", "violation", fixtures + "seed000_5709.log"}, exitOK, "verdict: SUSPECT:"},
		{[]string{fixtures + "planted_error_resends.log"}, exitViolation, "verdict: VIOLATION: 1 violation"},
		{[]string{fixtures + "healthy"}, exitOK, "verdict: PASS: 0 violations, 0 suspects;"},
		{[]string{badTS}, exitIncomplete, "verdict: NOTHING-CHECKED:"},
		{[]string{"--fail-on", "suspect", badTS}, exitIncomplete, "verdict: NOTHING-CHECKED:"},
		{[]string{trunc}, exitIncomplete, "verdict: NOTHING-CHECKED: 0 violations, 0 suspects; 0 of 21 properties judged; 0 of 1 records recognised"},
	}
	for _, c := range cases {
		code, out, errOut := runTraceCmd(t, "", c.args...)
		assert.Equal(t, c.code, code, "%v: %s%s", c.args, out, errOut)
		first, _, _ := strings.Cut(out, "\n")
		assert.True(t, strings.HasPrefix(first, c.first), "%v: first line %q, want prefix %q", c.args, first, c.first)
	}
	_, out, _ := runTraceCmd(t, "", badTS)
	assert.Contains(t, out, "(no record's timestamp parses: 0 of 9, so no property that measures time was judged;")

	// JSON: the verdict is the first field
	code, out, _ := runTraceCmd(t, "", "--format", "json", fixtures+"seed000_5709.log")
	require.Equal(t, exitOK, code)
	require.True(t, strings.HasPrefix(out, "{\n  \"verdict\": {\n    \"result\": \"suspect\","), out[:min(len(out), 200)])
	var rep struct {
		Verdict  struct{ Result string }
		Findings []struct {
			Property string
			Next     *struct {
				Component, Check string
				KnownBugs        []string `json:"known_bugs"`
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.NotNil(t, rep.Findings[0].Next, "the error-never-dropped finding says where to look")
	assert.Contains(t, rep.Findings[0].Next.Component, "coordinator")
	assert.Contains(t, rep.Findings[0].Next.Check, "ticdc_owner_changefeed_error_info")
	assert.Contains(t, rep.Findings[0].Next.KnownBugs, "regressed-checkpoint-drops-error (pingcap/ticdc#5709 (fixed by #5779))")
	code, out, _ = runTraceCmd(t, "", "--format", "json", trunc)
	require.Equal(t, exitIncomplete, code)
	require.Contains(t, out, `"result": "nothing-checked"`)
	code, out, _ = runTraceCmd(t, "", "--format", "junit", badTS)
	require.Equal(t, exitIncomplete, code)
	require.Contains(t, out, `<property name="verdict" value="nothing-checked">`)
	require.Contains(t, out, `<testcase name="verdict" classname="cdcspec.trace">`)
	require.Contains(t, out, `type="nothing-checked"`)
}

// TestTraceKafkaUsage: --kafka, --topic and --group go together, read no
// files, and print text or json; anything else is a usage error naming
// the flags.
func TestTraceKafkaUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--kafka", "127.0.0.1:9092"}, "--kafka, --topic and --group go together"},
		{[]string{"--topic", "ticdc-log", "--group", "g"}, "--kafka, --topic and --group go together"},
		{[]string{"--kafka", "127.0.0.1:9092", "--topic", "t", "--group", "g", "cdc.log"}, "--kafka reads no files"},
		{[]string{"--kafka", "127.0.0.1:9092", "--topic", "t", "--group", "g", "--format", "html"}, "with --kafka, text or json"},
	} {
		code, _, errOut := runTraceCmd(t, "", c.args...)
		assert.Equal(t, exitUsage, code, "%v", c.args)
		assert.Contains(t, errOut, c.msg, "%v", c.args)
	}
}
