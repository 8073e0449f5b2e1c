package docs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The markers a page uses to opt a command out of the check or into a real
// run (development.md, "Documented commands are checked"):
//
//	<!-- docs-check: skip REASON -->   on the line before a fence: the whole block
//	cmd   # docs-check: skip REASON    one command line of an sh block
//	cmd   # docs-check: run [exit=N]   also run it for real (30 s at most), expecting exit N (default 0)
const (
	markSkip = "docs-check: skip"
	markRun  = "docs-check: run"
	// runTimeout bounds one `docs-check: run` command; the whole test stays
	// within about a minute on 2 shared cores.
	runTimeout = 30 * time.Second
)

// cmdLine is one command line of a page: a line of a fenced sh block, or an
// inline code span in prose that starts with a command.
type cmdLine struct {
	file   string
	line   int
	text   string
	inline bool // an inline span: names are checked, values may be placeholders
	run    bool
	exit   int
}

func (c cmdLine) where() string { return fmt.Sprintf("%s:%d: %s", c.file, c.line, c.text) }

// checker holds the real artefacts the commands are checked against: the
// repository root, a freshly built cdcspec binary, and caches of what they
// answered.
type checker struct {
	root     string
	bin      string
	help     map[string]helpOut
	make     map[string]error
	problems []string
	counts   map[string]int
}

type helpOut struct {
	code  int
	text  string
	flags map[string]bool // name -> takes a value
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "the docs test runs from the docs/ directory of the repository")
	return root
}

// binary is the cdcspec binary TestMain builds once for every test.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cdcspec-docs-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "cdcspec")
	cmd := exec.Command("go", "build", "-o", binary, "./cmd/cdcspec")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build ./cmd/cdcspec: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func newChecker(t *testing.T, root string) *checker {
	t.Helper()
	return &checker{root: root, bin: binary, help: map[string]helpOut{}, make: map[string]error{}, counts: map[string]int{}}
}

// pages lists README.md and every page under docs/, recursively.
func pages(t *testing.T, root string) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, rel)
		}
		return nil
	})
	require.NoError(t, err)
	sort.Strings(files)
	return files
}

// TestDocumentedCommands checks every command of README.md and docs/ against
// the real binary (flags parsed by its own flag sets), the Makefile (make -n)
// and the packages (go test patterns match tests that exist).
func TestDocumentedCommands(t *testing.T) {
	root := repoRoot(t)
	c := newChecker(t, root)
	for _, f := range pages(t, root) {
		src, err := os.ReadFile(filepath.Join(root, f))
		require.NoError(t, err)
		for _, cl := range c.extract(f, string(src)) {
			c.check(cl)
		}
	}
	t.Logf("checked: %v", c.counts)
	for _, p := range c.problems {
		t.Error(p)
	}
}

// maxReadmeLines is the README's budget (STYLE.md item 15): what cdcspec is,
// the two commands and what they print, the parts, links. Detail goes to a
// page under docs/.
const maxReadmeLines = 250

func TestReadmeFitsOnAFewScreens(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	require.NoError(t, err)
	n := strings.Count(string(src), "\n")
	require.LessOrEqual(t, n, maxReadmeLines, "README.md has %d lines; move detail to a page under docs/", n)
}

var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocumentedLinks requires every relative link of README.md and docs/ to
// name a file or directory the repository has.
func TestDocumentedLinks(t *testing.T) {
	root := repoRoot(t)
	for _, f := range pages(t, root) {
		src, err := os.ReadFile(filepath.Join(root, f))
		require.NoError(t, err)
		for i, l := range strings.Split(string(src), "\n") {
			for _, m := range linkRE.FindAllStringSubmatch(l, -1) {
				target, _, _ := strings.Cut(m[1], "#")
				if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				if _, err := os.Stat(filepath.Join(root, filepath.Dir(f), target)); err != nil {
					t.Errorf("%s:%d: link to %s: the repository has no such file", f, i+1, m[1])
				}
			}
		}
	}
}

// TestCheckerCatchesStaleCommands plants stale commands in a page and
// requires the checker to name each; the good ones pass.
func TestCheckerCatchesStaleCommands(t *testing.T) {
	root := repoRoot(t)
	c := newChecker(t, root)
	bad := map[string]string{
		"cdcspec check --no-such-flag":                      "unknown flag",
		"cdcspec frobnicate --x 1":                          "unknown command",
		"bin/cdcspec check --max-states many":               "rejected",
		"make no-such-target":                               "make target",
		"go test ./model -run TestNoSuchTestAnywhere":       "matches no test",
		"go test ./no/such/pkg":                             "no package",
		"go test ./traces -run '^$' -bench NoSuchBenchmark": "matches no benchmark",
		"go test ./model -no-such-test-flag":                "not defined",
		"kcat -b 127.0.0.1:9092":                            "unknown program",
		"scripts/no-such-script.sh":                         "no executable",
	}
	for cmd, want := range bad {
		c.problems = nil
		for _, cl := range c.extract("planted.md", "```sh\n"+cmd+"\n```\n") {
			c.check(cl)
		}
		require.Len(t, c.problems, 1, "%s: %v", cmd, c.problems)
		require.Contains(t, c.problems[0], want, cmd)
	}

	c.problems = nil
	c.extract("planted.md", "```\ncdcspec check\n```\n")
	require.Len(t, c.problems, 1)
	require.Contains(t, c.problems[0], "without a language")

	c.problems = nil
	page := "Prose with `cdcspec check --no-such-flag NAME` inline.\n"
	for _, cl := range c.extract("planted.md", page) {
		c.check(cl)
	}
	require.Len(t, c.problems, 1)
	require.Contains(t, c.problems[0], "unknown flag")

	good := "```sh\n" +
		"cdcspec check --config merge --max-depth 19 --memory 2GB --liveness=false\n" +
		"go run ./cmd/cdcspec bugs --format json   # a comment\n" +
		"RAPID_SEED=1 go test ./proptest -run '^TestProtocol$' -v\n" +
		"go test ./model -run TestCensus -v -census-config barrier -census-depth 11\n" +
		"scripts/peak-rss.sh ./bin/cdcspec check --max-states 100\n" +
		"make test   # CI\n" +
		"kcat -b 127.0.0.1:9092   # docs-check: skip an external tool\n" +
		"cdcspec faults   # docs-check: run\n" +
		"```\n" +
		"Inline: `cdcspec check --bug NAME` and `make bugs`.\n"
	c.problems = nil
	for _, cl := range c.extract("planted.md", good) {
		c.check(cl)
	}
	require.Empty(t, c.problems)
}

var (
	fenceRE     = regexp.MustCompile("^\\s*```\\s*([A-Za-z0-9_+-]*)")
	inlineRE    = regexp.MustCompile("`([^`]+)`")
	inlineStart = regexp.MustCompile(`^(cdcspec|bin/cdcspec|\./bin/cdcspec|go run \./cmd/cdcspec|make|go test) `)
	// inlineOutput is a span quoting output ("cdcspec run: OK"), not a command.
	inlineOutput = regexp.MustCompile(`^\S*cdcspec [\w-]+:`)
	usageAlt     = regexp.MustCompile(`\b([\w-]+)(\|[\w-]+)+\b`)
)

// extract returns the command lines of one page. A fence without a language
// is a problem: a command could hide in it unchecked.
func (c *checker) extract(file, src string) []cmdLine {
	var out []cmdLine
	lines := strings.Split(src, "\n")
	inFence, lang, skipBlock := false, "", false
	var para []string
	paraStart := 0
	flushPara := func() {
		if len(para) > 0 {
			out = append(out, c.inlineSpans(file, paraStart, para)...)
		}
		para = nil
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if m := fenceRE.FindStringSubmatch(l); m != nil {
			if !inFence {
				flushPara()
				inFence, lang, skipBlock = true, m[1], false
				if lang == "" {
					c.problem(fmt.Sprintf("%s:%d: a fenced block without a language: say sh for commands, text for output", file, i+1))
				}
				for j := i - 1; j >= 0 && strings.TrimSpace(lines[j]) != ""; j-- {
					if strings.Contains(lines[j], markSkip) {
						skipBlock = true
						c.requireReason(file, j+1, lines[j])
					}
					break
				}
				if skipBlock {
					c.counts["skipped blocks"]++
				}
			} else {
				inFence = false
			}
			continue
		}
		if inFence {
			if lang != "sh" || skipBlock {
				continue
			}
			start := i
			text := l
			for strings.HasSuffix(strings.TrimRight(text, " "), "\\") && i+1 < len(lines) {
				i++
				text = strings.TrimSuffix(strings.TrimRight(text, " "), "\\") + " " + strings.TrimSpace(lines[i])
			}
			if cl, ok := c.shLine(file, start+1, text); ok {
				out = append(out, cl)
			}
			continue
		}
		if strings.TrimSpace(l) == "" {
			flushPara()
			continue
		}
		if len(para) == 0 {
			paraStart = i + 1
		}
		para = append(para, l)
	}
	flushPara()
	return out
}

func (c *checker) requireReason(file string, line int, text string) {
	rest := text[strings.Index(text, markSkip)+len(markSkip):]
	rest = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "-->"))
	if rest == "" {
		c.problem(fmt.Sprintf("%s:%d: %q needs a reason", file, line, markSkip))
	}
}

// shLine turns one logical line of an sh block into a command line; comments
// carry the markers.
func (c *checker) shLine(file string, line int, text string) (cmdLine, bool) {
	code, comment := splitComment(text)
	cl := cmdLine{file: file, line: line, text: strings.TrimSpace(code)}
	if strings.Contains(comment, markSkip) {
		c.requireReason(file, line, comment)
		c.counts["skipped lines"]++
		return cl, false
	}
	if i := strings.Index(comment, markRun); i >= 0 {
		cl.run = true
		for _, f := range strings.Fields(comment[i+len(markRun):]) {
			if v, ok := strings.CutPrefix(f, "exit="); ok {
				n, err := strconv.Atoi(v)
				if err != nil {
					c.problem(fmt.Sprintf("%s:%d: bad %q", file, line, f))
				}
				cl.exit = n
			}
		}
	}
	return cl, cl.text != ""
}

// splitComment splits a shell line at its first unquoted comment.
func splitComment(s string) (code, comment string) {
	var q byte
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case q != 0:
			if ch == q {
				q = 0
			} else if ch == '\\' && q == '"' {
				i++
			}
		case ch == '\'' || ch == '"':
			q = ch
		case ch == '\\':
			i++
		case ch == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return s[:i], s[i:]
		}
	}
	return s, ""
}

// inlineSpans returns the inline code spans of a prose paragraph that start
// with a command (the span may wrap over lines).
func (c *checker) inlineSpans(file string, start int, para []string) []cmdLine {
	joined := strings.Join(para, "\n")
	var out []cmdLine
	for _, m := range inlineRE.FindAllStringSubmatchIndex(joined, -1) {
		span := strings.Join(strings.Fields(joined[m[2]:m[3]]), " ")
		if !inlineStart.MatchString(span) || inlineOutput.MatchString(span) {
			continue
		}
		// Usage syntax in prose (create|get|list): the first alternative.
		span = usageAlt.ReplaceAllString(span, "$1")
		line := start + strings.Count(joined[:m[0]], "\n")
		out = append(out, cmdLine{file: file, line: line, text: span, inline: true})
	}
	return out
}

func (c *checker) problem(s string) { c.problems = append(c.problems, s) }

// tokenize splits a shell command line into words and the operators
// && || | ; & (unquoted); redirections are dropped.
func tokenize(s string) ([]string, error) {
	var toks []string
	var cur strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			toks = append(toks, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t':
			flush()
		case ch == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated '")
			}
			cur.WriteString(s[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case ch == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("unterminated \"")
			}
			inWord = true
		case ch == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case ch == '$' && i+1 < len(s) && (s[i+1] == '(' || s[i+1] == '{'), ch == '`':
			return nil, errors.New("command substitution and variables are not checked; write the value or mark the line")
		case ch == '&' || ch == '|' || ch == ';':
			flush()
			op := string(ch)
			if i+1 < len(s) && s[i+1] == ch && ch != ';' {
				op += string(ch)
				i++
			}
			toks = append(toks, op)
		case ch == '>' || ch == '<':
			// A redirection: drop it and its target.
			flush()
			if i+1 < len(s) && (s[i+1] == '>' || s[i+1] == '&') {
				i++
			}
			for i+1 < len(s) && s[i+1] == ' ' {
				i++
			}
			for i+1 < len(s) && s[i+1] != ' ' {
				i++
			}
		default:
			if ch >= '0' && ch <= '9' && !inWord && i+1 < len(s) && s[i+1] == '>' {
				continue // 2>file, 2>&1
			}
			cur.WriteByte(ch)
			inWord = true
		}
	}
	flush()
	return toks, nil
}

// check checks one command line: each simple command of it in turn; a cd
// changes the directory of the ones after it.
func (c *checker) check(cl cmdLine) {
	toks, err := tokenize(cl.text)
	if err != nil {
		c.problem(cl.where() + ": " + err.Error())
		return
	}
	dir := "."
	var simple []string
	flush := func() {
		if len(simple) > 0 {
			dir = c.simple(cl, dir, simple)
		}
		simple = nil
	}
	for _, tk := range toks {
		switch tk {
		case "&&", "||", "|", ";", "&":
			flush()
		default:
			simple = append(simple, tk)
		}
	}
	flush()
}

var envAssign = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`)

// simple checks one simple command and returns the directory after it.
func (c *checker) simple(cl cmdLine, dir string, args []string) string {
	for len(args) > 0 && envAssign.MatchString(args[0]) {
		args = args[1:]
	}
	if len(args) == 0 {
		return dir
	}
	prog, rest := args[0], args[1:]
	switch {
	case prog == "cdcspec" || prog == "bin/cdcspec" || prog == "./bin/cdcspec":
		c.counts["cdcspec"]++
		c.cdcspec(cl, dir, rest)
	case prog == "go" && len(rest) >= 2 && rest[0] == "run" && rest[1] == "./cmd/cdcspec":
		c.counts["cdcspec"]++
		c.cdcspec(cl, dir, rest[2:])
	case prog == "go":
		c.counts["go"]++
		c.goCmd(cl, dir, rest)
	case prog == "make":
		c.counts["make"]++
		c.makeCmd(cl, rest)
	case prog == "cd":
		if len(rest) != 1 || !isDir(filepath.Join(c.root, dir, rest[0])) {
			c.problem(cl.where() + ": cd to a directory the repository does not have")
			return dir
		}
		return filepath.Join(dir, rest[0])
	case prog == "/usr/bin/time" || prog == "time" || prog == "timeout":
		// Wrappers: skip their own flags (and timeout's duration), check the command.
		i := 0
		for i < len(rest) && strings.HasPrefix(rest[i], "-") {
			if rest[i] == "-f" || rest[i] == "-o" {
				i++
			}
			i++
		}
		if prog == "timeout" && i < len(rest) {
			i++
		}
		if i < len(rest) {
			return c.simple(cl, dir, rest[i:])
		}
	case strings.HasPrefix(prog, "scripts/") || strings.HasPrefix(prog, "./scripts/"):
		c.counts["scripts"]++
		st, err := os.Stat(filepath.Join(c.root, dir, prog))
		if err != nil || st.Mode()&0o111 == 0 {
			c.problem(cl.where() + ": no executable " + prog + " in the repository")
			return dir
		}
		// A script that runs a command (peak-rss.sh) has it checked too.
		if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") && (rest[0] == "make" || rest[0] == "go" || strings.Contains(rest[0], "cdcspec")) {
			return c.simple(cl, dir, rest)
		}
	case prog == "echo" || prog == "true" || prog == "git":
	default:
		c.problem(cl.where() + ": unknown program " + prog + ": check it in docs_test.go or mark the line '# " + markSkip + " REASON'")
	}
	return dir
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// --- cdcspec ---------------------------------------------------------------

var flagLineRE = regexp.MustCompile(`(?m)^\s+--?([A-Za-z][\w.-]*)(?:[ \t]+(\S.*))?$`)

// helpOf runs `cdcspec PATH... -h` once per path and reads the flags from
// what the binary prints (stdout and stderr together).
func (c *checker) helpOf(path []string) helpOut {
	key := strings.Join(path, " ")
	if h, ok := c.help[key]; ok {
		return h
	}
	code, text := c.runBin(c.root, append(append([]string{}, path...), "-h"), 10*time.Second)
	h := helpOut{code: code, text: text, flags: map[string]bool{}}
	for _, m := range flagLineRE.FindAllStringSubmatch(text, -1) {
		h.flags[m[1]] = m[2] != ""
	}
	c.help[key] = h
	return h
}

func (c *checker) runBin(dir string, args []string, timeout time.Duration) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Dir = dir
	// Artifacts of a real run (a counterexample folder) go to a directory
	// removed afterwards.
	tmp, err := os.MkdirTemp("", "cdcspec-docs-run-")
	if err == nil {
		defer os.RemoveAll(tmp)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	}
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err = cmd.Run()
	if ctx.Err() != nil {
		return -1, buf.String() + "\n(timed out after " + timeout.String() + ")"
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), buf.String()
	}
	if err != nil {
		return -1, err.Error()
	}
	return 0, buf.String()
}

func isFlag(s string) bool { return len(s) > 1 && s[0] == '-' }

var negative = regexp.MustCompile(`^-[0-9]`)

// cdcspec checks one invocation: its command path exists, every flag is one
// the command defines, and (for sh blocks) the command's own flag set parses
// the flags and values as written (they are passed with -h, so nothing runs).
func (c *checker) cdcspec(cl cmdLine, dir string, args []string) {
	if len(args) == 0 || isFlag(args[0]) {
		if h := c.helpOf(nil); h.code != 0 {
			c.problem(fmt.Sprintf("%s: cdcspec -h exits %d", cl.where(), h.code))
		}
		return
	}
	path := []string{args[0]}
	if h := c.helpOf(path); h.code != 0 {
		c.problem(fmt.Sprintf("%s: unknown command %q (cdcspec %s -h exits %d)", cl.where(), args[0], args[0], h.code))
		return
	}
	i := 1
	for ; i < len(args) && !isFlag(args[i]); i++ {
		parent := c.helpOf(path)
		if !containsWord(parent.text, args[i]) {
			break
		}
		sub := append(append([]string{}, path...), args[i])
		bogus := append(append([]string{}, path...), "docs-check-no-such-command")
		if c.helpOf(sub).code != 0 || c.helpOf(bogus).code == 0 {
			break
		}
		path = sub
	}
	h := c.helpOf(path)
	argv := append([]string{}, path...)
	for j := i; j < len(args); j++ {
		a := args[j]
		if !isFlag(a) {
			continue // a positional argument
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name == "h" || name == "help" {
			continue
		}
		takes, ok := h.flags[name]
		if !ok {
			c.problem(fmt.Sprintf("%s: unknown flag --%s for cdcspec %s (cdcspec %s -h lists: %s)",
				cl.where(), name, strings.Join(path, " "), strings.Join(path, " "), flagNames(h.flags)))
			return
		}
		argv = append(argv, a)
		// A value never looks like a flag, but a negative number may be one.
		if takes && !hasValue && j+1 < len(args) && (!isFlag(args[j+1]) || negative.MatchString(args[j+1])) {
			j++
			argv = append(argv, args[j])
		}
	}
	if cl.inline {
		return
	}
	code, out := c.runBin(c.root, append(argv, "-h"), 10*time.Second)
	if code != 0 {
		c.problem(fmt.Sprintf("%s: the flags are rejected by the binary (cdcspec %s -h exits %d): %s",
			cl.where(), strings.Join(argv, " "), code, firstLines(out, 3)))
		return
	}
	if cl.run {
		c.counts["run"]++
		code, out := c.runBin(filepath.Join(c.root, dir), args, runTimeout)
		if code != cl.exit {
			c.problem(fmt.Sprintf("%s: ran it: exit %d, the page says %d: %s", cl.where(), code, cl.exit, firstLines(out, 5)))
		}
	}
}

func containsWord(text, w string) bool {
	re := regexp.MustCompile(`(^|[^\w-])` + regexp.QuoteMeta(w) + `($|[^\w-])`)
	return re.MatchString(text)
}

func flagNames(m map[string]bool) string {
	var ns []string
	for n := range m {
		ns = append(ns, "--"+n)
	}
	sort.Strings(ns)
	return strings.Join(ns, " ")
}

func firstLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) > n {
		ls = ls[:n]
	}
	return strings.Join(ls, " | ")
}

// --- make ------------------------------------------------------------------

// makeCmd requires every target to exist (make -n TARGET succeeds).
func (c *checker) makeCmd(cl cmdLine, args []string) {
	for _, a := range args {
		if isFlag(a) || envAssign.MatchString(a) || strings.Contains(a, "=") {
			continue
		}
		err, ok := c.make[a]
		if !ok {
			cmd := exec.Command("make", "-n", a)
			cmd.Dir = c.root
			out, e := cmd.CombinedOutput()
			if e != nil {
				err = fmt.Errorf("%v: %s", e, firstLines(string(out), 2))
			}
			c.make[a] = err
		}
		if err != nil {
			c.problem(fmt.Sprintf("%s: no make target %q (%v)", cl.where(), a, err))
		}
	}
}

// --- go --------------------------------------------------------------------

// goTestValueFlags are the go test and build flags that take a value; any
// other flag after the packages must be one the package's tests define.
var goTestValueFlags = map[string]bool{
	"run": true, "bench": true, "benchtime": true, "count": true, "cpu": true, "timeout": true,
	"fuzz": true, "fuzztime": true, "fuzzminimizetime": true, "o": true, "tags": true, "skip": true,
	"coverprofile": true, "cpuprofile": true, "memprofile": true, "blockprofile": true,
	"mutexprofile": true, "trace": true, "outputdir": true, "list": true, "p": true, "parallel": true,
	"shuffle": true, "exec": true, "covermode": true, "coverpkg": true, "ldflags": true, "gcflags": true,
}

var goTestBoolFlags = map[string]bool{
	"v": true, "race": true, "short": true, "failfast": true, "json": true, "c": true, "cover": true,
	"benchmem": true, "a": true, "n": true, "x": true, "work": true, "fullpath": true,
}

var testFuncRE = regexp.MustCompile(`(?m)^func ((Test|Benchmark|Fuzz|Example)\w*)\(`)

func (c *checker) goCmd(cl cmdLine, dir string, args []string) {
	if len(args) == 0 {
		c.problem(cl.where() + ": go without a command")
		return
	}
	switch args[0] {
	case "test":
	case "build", "vet", "run", "list", "install":
		for _, a := range args[1:] {
			if !isFlag(a) && (strings.HasPrefix(a, ".") || strings.HasPrefix(a, "cdcspec")) {
				c.packages(cl, dir, a)
			}
		}
		return
	default:
		c.problem(cl.where() + ": go " + args[0] + " is not checked: use go test/build/vet/run or mark the line")
		return
	}
	var pkgDirs []string
	named := false
	flags := map[string]string{}
	var custom []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		if !isFlag(a) {
			named = true
			pkgDirs = append(pkgDirs, c.packages(cl, dir, a)...)
			continue
		}
		name, val, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimLeft(a, "-"), "test."), "=")
		switch {
		case goTestValueFlags[name]:
			if !hasValue && i+1 < len(args) {
				i++
				val = args[i]
			}
			flags[name] = val
		case goTestBoolFlags[name]:
		default:
			custom = append(custom, name)
			if !hasValue && i+1 < len(args) && !isFlag(args[i+1]) && !c.boolTestFlag(pkgDirs, name) {
				i++
			}
		}
	}
	if !named && cl.inline {
		return // prose naming a go test flag, not a command
	}
	if !named {
		pkgDirs = c.packages(cl, dir, ".")
	}
	var src strings.Builder
	for _, d := range pkgDirs {
		files, _ := filepath.Glob(filepath.Join(d, "*_test.go"))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			src.Write(b)
		}
	}
	funcs := map[string][]string{}
	for _, m := range testFuncRE.FindAllStringSubmatch(src.String(), -1) {
		funcs[m[2]] = append(funcs[m[2]], m[1])
	}
	match := func(flag string, kinds ...string) {
		pat, ok := flags[flag]
		if !ok || len(pkgDirs) == 0 {
			return
		}
		top := strings.Split(pat, "/")[0]
		re, err := regexp.Compile(top)
		if err != nil {
			c.problem(fmt.Sprintf("%s: -%s %q: %v", cl.where(), flag, pat, err))
			return
		}
		if flag == "run" && flags["bench"] != "" || flag == "run" && flags["fuzz"] != "" {
			return // -run '^$' beside -bench or -fuzz
		}
		for _, k := range kinds {
			for _, f := range funcs[k] {
				if re.MatchString(f) {
					return
				}
			}
		}
		c.problem(fmt.Sprintf("%s: -%s %q matches no %s in %s", cl.where(), flag, pat, strings.ToLower(strings.Join(kinds, "/")), strings.Join(relAll(c.root, pkgDirs), " ")))
	}
	match("run", "Test", "Fuzz", "Example")
	match("bench", "Benchmark")
	match("fuzz", "Fuzz")
	for _, name := range custom {
		if lib, ok := libraryFlag(name); ok && strings.Contains(src.String(), `"`+lib+`"`) {
			continue
		}
		if !regexp.MustCompile(`flag\.\w+\((&[\w.]+,\s*)?"` + regexp.QuoteMeta(name) + `"`).MatchString(src.String()) {
			c.problem(fmt.Sprintf("%s: test flag -%s is not defined by the tests of %s", cl.where(), name, strings.Join(relAll(c.root, pkgDirs), " ")))
		}
	}
}

// libraryFlag names the test library that defines a test flag when the
// package imports it: rapid's -rapid.* flags, datadriven's -rewrite.
func libraryFlag(name string) (string, bool) {
	switch {
	case strings.HasPrefix(name, "rapid."):
		return "pgregory.net/rapid", true
	case name == "rewrite":
		return "github.com/cockroachdb/datadriven", true
	}
	return "", false
}

// boolTestFlag reports whether a custom test flag is a boolean one.
func (c *checker) boolTestFlag(pkgDirs []string, name string) bool {
	re := regexp.MustCompile(`flag\.Bool(Var)?\((&[\w.]+,\s*)?"` + regexp.QuoteMeta(name) + `"`)
	for _, d := range pkgDirs {
		files, _ := filepath.Glob(filepath.Join(d, "*.go"))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			if re.Match(b) {
				return true
			}
		}
	}
	return false
}

// packages resolves a package pattern to the directories it names; none is
// a problem.
func (c *checker) packages(cl cmdLine, dir, pat string) []string {
	recursive := strings.HasSuffix(pat, "/...")
	base := filepath.Join(c.root, dir, strings.TrimSuffix(strings.TrimSuffix(pat, "/..."), "..."))
	if pat == "./..." {
		base = filepath.Join(c.root, dir)
	}
	var dirs []string
	if recursive {
		_ = filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() && hasGo(p) {
				dirs = append(dirs, p)
			}
			return nil
		})
	} else if hasGo(base) {
		dirs = []string{base}
	}
	if len(dirs) == 0 {
		c.problem(fmt.Sprintf("%s: no package %s in the repository", cl.where(), pat))
	}
	return dirs
}

func hasGo(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	return len(m) > 0
}

func relAll(root string, dirs []string) []string {
	var out []string
	for _, d := range dirs {
		r, err := filepath.Rel(root, d)
		if err != nil {
			r = d
		}
		out = append(out, "./"+r)
	}
	if len(out) > 3 {
		out = append(out[:3], "...")
	}
	return out
}
