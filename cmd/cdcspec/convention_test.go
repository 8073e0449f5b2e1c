package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIssue28BadInputs holds issue 28's bad-input list for the commands
// check, sim, trace, bugs, faults and version: each is refused with exit 2
// before any work, on stderr, naming its own flag (and no other), or works
// as documented.
func TestIssue28BadInputs(t *testing.T) {
	cases := []struct {
		args []string
		want string   // on stderr
		not  []string // flags the message must not name
	}{
		{[]string{"sim", "-bugs", "regressed-checkpoint-drops-error"}, "give --bug NAME once per bug", nil},
		{[]string{"sim", "--bugs", "a,b"}, "-bugs LIST is gone", nil},
		{[]string{"sim", "--bug", "nope"}, `--bug: unknown bug "nope" (known: regressed-checkpoint-drops-error,`, nil},
		{[]string{"sim", "-log", "/nonexistent/dir/x.log"}, "--log: open /nonexistent/dir/x.log", nil},
		{[]string{"sim", "--seeds", "0"}, "--seeds 0 out of range", nil},
		{[]string{"check", "--faults", "2"}, "now --fault-budget N", nil},
		{[]string{"check", "--fault-budget", "9"}, "--fault-budget 9 out of range [0, 7]", nil},
		{[]string{"check", "--bug", "nope"}, `unknown --bug "nope" (known: regressed-checkpoint-drops-error, add-accepts-unbootstrapped-maintainer,`, nil},
		{[]string{"check", "--restarts", "-1"}, "--restarts -1 out of range [0, 7]", nil},
		{[]string{"check", "--crashes", "8"}, "--crashes 8 out of range [0, 7]", nil},
		{[]string{"check", "--nodes", "4"}, "--nodes 4 out of range [2, 3]", nil},
		{[]string{"check", "--ts", "300"}, "--ts 300 out of range [2, 9]", nil},
		{[]string{"check", "--workers", "100000"}, "--workers 100000 out of range [1, 256]", nil},
		{[]string{"check", "--workers", "0"}, "--workers 0 out of range [1, 256]", nil},
		{[]string{"check", "--max-states", "-1"}, "--max-states -1 out of range", nil},
		{[]string{"check", "--walks", "0"}, "--walks 0 out of range", nil},
		{[]string{"check", "--memory", "lots"}, "--memory: want a positive size", nil},
		{[]string{"check", "--format", "xml"}, `--format "xml" unknown (known: text, json)`, nil},
		{[]string{"check", "--bug", "unchanged-warning-not-acted-on"}, "'cdcspec sim --bug unchanged-warning-not-acted-on' runs it", nil},
		{[]string{"trace", "--skew", "-2s", "x.log"}, "--skew -2s out of range", []string{"--error-window", "--stuck-after", "--error-min-reports"}},
		{[]string{"trace", "--fail-on", "info", "x.log"}, `--fail-on "info" unknown (known: violation, suspect)`, nil},
		{[]string{"trace", "--error-min-reports", "0", "x.log"}, "--error-min-reports 0 out of range", []string{"--skew"}},
		{[]string{"bugs", "--format", "yaml"}, `--format "yaml" unknown`, nil},
		{[]string{"faults", "--format", "yaml"}, `--format "yaml" unknown`, nil},
		{[]string{"version", "extra"}, `unexpected argument "extra"`, nil},
		{[]string{"check", "--nope"}, "flag provided but not defined: -nope", nil},
	}
	for _, c := range cases {
		start := time.Now()
		code, out, stderr := runCmd(c.args...)
		assert.Equal(t, exitUsage, code, "%v: stderr %q", c.args, stderr)
		assert.Contains(t, stderr, c.want, "%v", c.args)
		assert.Empty(t, out, "%v: a refusal prints nothing on stdout", c.args)
		for _, n := range c.not {
			assert.NotContains(t, stderr, n, "%v names another flag", c.args)
		}
		assert.Less(t, time.Since(start), 2*time.Second, "%v took long to refuse", c.args)
	}
}

// TestHelpOnStdout: every -h of these commands prints, on stdout with exit
// 0, a one-line description, a usage line, examples, the flags with
// readable placeholders, and the exit codes; hidden rename flags are not
// listed.
func TestHelpOnStdout(t *testing.T) {
	for _, name := range []string{"check", "sim", "trace", "bugs", "faults", "version"} {
		for _, h := range []string{"-h", "--help"} {
			code, out, stderr := runCmd(name, h)
			require.Equal(t, exitOK, code, "%s %s", name, h)
			assert.Empty(t, stderr, "%s %s", name, h)
			first, _, _ := strings.Cut(out, "\n")
			assert.Equal(t, "cdcspec "+name+": "+commands[name].summary, first)
			for _, want := range []string{"Usage:\n  cdcspec " + name, "Examples:\n  cdcspec " + name, "Flags:", "Exit status:\n  0  "} {
				assert.Contains(t, out, want, "%s %s", name, h)
			}
		}
	}
	_, out, _ := runCmd("sim", "-h")
	assert.Contains(t, out, "--bug NAME")
	assert.NotContains(t, out, "cdcspec bugs\n", "a back-quoted word is no placeholder")
	assert.NotContains(t, out, "--bugs")
	_, out, _ = runCmd("check", "-h")
	assert.Contains(t, out, "--fault-budget N")
	assert.Contains(t, out, "--bug NAME")
	assert.NotContains(t, out, "\n  --faults", "the rename flag is hidden")
	assert.Contains(t, out, "3  incomplete")
	_, out, _ = runCmd("trace", "-h")
	assert.Contains(t, out, "--fail-on SEVERITY")
	assert.Contains(t, out, "3  nothing checked")

	code, out, stderr := runCmd("-h")
	assert.Equal(t, exitOK, code)
	assert.Empty(t, stderr)
	assert.Contains(t, out, "usage: cdcspec <command>")
	assert.Contains(t, out, "version")
	code, out, _ = runCmd("help", "trace")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "cdcspec trace: ")
	code, _, stderr = runCmd()
	assert.Equal(t, exitUsage, code, "no command is a usage error")
	assert.Contains(t, stderr, "usage: cdcspec")
}

func TestVersion(t *testing.T) {
	code, out, _ := runCmd("version")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "TiCDC HEAD pinned: pingcap/ticdc@b813e76f9")
	assert.Regexp(t, `^cdcspec \S`, out)
}

// TestSimLogChecked: --log is opened before the run (a bad path costs no
// run); a good path receives the log.
func TestSimLogChecked(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.log")
	code, out, stderr := runCmd("sim", "--steps", "3", "--log", p)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, out, "log: "+p)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.NotEmpty(t, b)
}

func TestDefaultMemoryBudget(t *testing.T) {
	b := defaultMemoryBudget()
	assert.LessOrEqual(t, b, int64(maxDefaultMemory))
	if total := memTotal(); total > 0 && cgroupMemoryLimit() == 0 {
		assert.Equal(t, min(total/2, int64(maxDefaultMemory)), b)
	}
}

// TestDocsCommands runs every "$ cdcspec ..." line of docs/trace.md and
// docs/check.md from the repository root and checks the exit code its
// "# exit N" comment states, so the pages cannot drift from the CLI.
func TestDocsCommands(t *testing.T) {
	t.Chdir("../..")
	n := 0
	for _, page := range []string{"docs/trace.md", "docs/check.md"} {
		b, err := os.ReadFile(page)
		require.NoError(t, err)
		for i, line := range strings.Split(string(b), "\n") {
			cmd, ok := strings.CutPrefix(line, "$ cdcspec ")
			if !ok {
				continue
			}
			cmd, comment, ok := strings.Cut(cmd, "#")
			require.True(t, ok, "%s:%d: no '# exit N' comment", page, i+1)
			var want int
			_, err := fmt.Sscanf(strings.TrimSpace(comment), "exit %d", &want)
			require.NoError(t, err, "%s:%d: comment %q", page, i+1, comment)
			code, _, stderr := runCmd(strings.Fields(cmd)...)
			assert.Equal(t, want, code, "%s:%d: cdcspec %s\n%s", page, i+1, cmd, stderr)
			n++
		}
	}
	assert.GreaterOrEqual(t, n, 10)
}
