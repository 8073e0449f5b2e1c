package mutate

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fixture = "testdata/fixture"

// site is a mutant without its offsets and ID.
type site struct {
	Func string
	Op   Op
	Orig string
	Repl string
}

// TestFindFixture: the mutator finds exactly the fixture's sites: the
// conditions of its ifs (not the emitter's nil check, the mutation switch,
// the configuration flag or a configuration bound, nor the code that runs
// only with a hand-written mutation on), the timestamp and epoch comparisons, the
// state updates and sends (not a local's), and nothing in String.
func TestFindFixture(t *testing.T) {
	ms, err := Find(fixture, ModelOptions())
	require.NoError(t, err)
	var got []site
	for _, m := range ms {
		got = append(got, site{m.Func, m.Op, m.Orig, m.Repl})
	}
	want := []site{
		{"State.send", OpSkip, "s.Net = append(s.Net, m)", "/* mutant: skipped */"},
		{"State.removeMsg", OpSkip, "s.Net = append(s.Net[:i], s.Net[i+1:]...)", "/* mutant: skipped */"},
		{"handle", OpNegate, "m.Epoch < mt.Epoch", "!(m.Epoch < mt.Epoch)"},
		{"handle", OpDrop, "m.Epoch < mt.Epoch", "false"},
		{"handle", OpCmp, "<", "<="},
		{"handle", OpNegate, "mt.Removing", "!(mt.Removing)"},
		{"handle", OpDrop, "mt.Removing", "true"},
		{"handle", OpSkip, "s.UpTs++", "/* mutant: skipped */"},
		{"handle", OpNegate, "m.Ts >= mt.Ckpt", "!(m.Ts >= mt.Ckpt)"},
		{"handle", OpDrop, "m.Ts >= mt.Ckpt", "true"},
		{"handle", OpCmp, ">=", ">"},
		{"handle", OpSkip, "mt.Ckpt = m.Ts", "/* mutant: skipped */"},
		{"handle", OpSkip, "s.send(Msg{Kind: 1, Epoch: mt.Epoch})", "/* mutant: skipped */"},
		{"tick", OpNegate, "mt.Bootstrap", "!(mt.Bootstrap)"},
		{"tick", OpDrop, "mt.Bootstrap", "true"},
		{"tick", OpNegate, "!mt.Removing", "!(!mt.Removing)"},
		{"tick", OpDrop, "!mt.Removing", "true"},
		{"tick", OpSkip, "mt.Epoch++", "/* mutant: skipped */"},
		{"tick", OpNegate, "len(s.Net) > 0", "!(len(s.Net) > 0)"},
		{"tick", OpDrop, "len(s.Net) > 0", "true"},
		{"tick", OpSkip, "s.removeMsg(0)", "/* mutant: skipped */"},
	}
	sortSites := func(xs []site) {
		sort.Slice(xs, func(a, b int) bool {
			x, y := xs[a], xs[b]
			return x.Func+string(x.Op)+x.Orig < y.Func+string(y.Op)+y.Orig
		})
	}
	sortSites(got)
	sortSites(want)
	require.Equal(t, want, got)

	ids := map[string]bool{}
	for _, m := range ms {
		require.False(t, ids[m.ID], "duplicate ID %s", m.ID)
		ids[m.ID] = true
		require.Regexp(t, `^(state|proto):[A-Za-z.]+:(negate|drop|cmp|skip):[0-9a-f]{8}$`, m.ID)
	}
}

// TestApplyFixture: each mutant applied alone changes exactly its site and
// leaves a file that parses.
func TestApplyFixture(t *testing.T) {
	ms, err := Find(fixture, ModelOptions())
	require.NoError(t, err)
	for _, m := range ms {
		src, err := os.ReadFile(filepath.Join(fixture, m.File))
		require.NoError(t, err)
		out, err := Apply(src, m)
		require.NoError(t, err, m.ID)
		assert.Equal(t, string(src[:m.Start]), string(out[:m.Start]), m.ID)
		assert.Equal(t, m.Repl, string(out[m.Start:m.Start+len(m.Repl)]), m.ID)
		assert.Equal(t, string(src[m.End:]), string(out[m.Start+len(m.Repl):]), m.ID)
		_, err = parser.ParseFile(token.NewFileSet(), m.File, out, 0)
		assert.NoError(t, err, "%s: the mutated file does not parse", m.ID)
	}
	// A stale mutant (the file changed under it) is refused.
	src, _ := os.ReadFile(filepath.Join(fixture, ms[0].File))
	_, err = Apply(append([]byte("// shifted\n"), src...), ms[0])
	require.ErrorContains(t, err, "no longer reads")
}

// TestIDsStable: an edit elsewhere in the file (a line inserted above)
// keeps every ID.
func TestIDsStable(t *testing.T) {
	ms, err := Find(fixture, ModelOptions())
	require.NoError(t, err)
	dir := copyFixture(t)
	p := filepath.Join(dir, "proto.go")
	src, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(src), "package fixture\n", "package fixture\n\n// An added comment.\nconst unused = 1\n", 1)), 0o644))
	ms2, err := Find(dir, ModelOptions())
	require.NoError(t, err)
	require.Len(t, ms2, len(ms))
	for i := range ms {
		assert.Equal(t, ms[i].ID, ms2[i].ID)
		if ms[i].File == "proto.go" {
			assert.Equal(t, ms[i].Line+3, ms2[i].Line, ms[i].ID)
		}
	}
}

// TestShard: the shards partition the mutants.
func TestShard(t *testing.T) {
	ms, err := Find(fixture, ModelOptions())
	require.NoError(t, err)
	seen := map[string]int{}
	for i := 1; i <= 3; i++ {
		for _, m := range Shard(ms, i, 3) {
			seen[m.ID]++
		}
	}
	require.Len(t, seen, len(ms))
	for id, n := range seen {
		require.Equal(t, 1, n, id)
	}
}

// TestSchemaFixture: the mutant schema of the fixture compiles; with no
// mutant on it computes what the original does, and with mutant i on what
// Apply's text of mutant i does (every mutant that changes the fixture's
// outcome on the test's grid, checked against its own build).
func TestSchemaFixture(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the fixture several times")
	}
	ms, err := Find(fixture, ModelOptions())
	require.NoError(t, err)
	orig := digest(t, copyFixture(t), -1)

	dir := copyFixture(t)
	files, err := Schema(dir, "fixture", ms)
	require.NoError(t, err)
	require.Contains(t, files, SchemaFile)
	for name, b := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	// The schema's switch package is this module's: the copy requires it.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "infected_test.go"), []byte(infectedTest), 0o644))
	bin := filepath.Join(t.TempDir(), "fixture.test")
	cmd := exec.Command("go", "test", "-c", "-o", bin, ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the schema does not build: %s", out)
	require.Equal(t, orig, runDigest(t, bin, -1), "the schema with no mutant on differs from the original")

	// Three mutants, one per kind of rewrite, against their own builds.
	checked := map[Op]bool{}
	for i, m := range ms {
		if m.Func != "handle" || m.Op == OpDrop || checked[m.Op] {
			continue
		}
		checked[m.Op] = true
		d := copyFixture(t)
		src, err := os.ReadFile(filepath.Join(d, m.File))
		require.NoError(t, err)
		mut, err := Apply(src, m)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(d, m.File), mut, 0o644))
		want := digest(t, d, -1)
		assert.NotEqual(t, orig, want, "%s does not change the fixture's outcome: pick another", m.ID)
		assert.Equal(t, want, runDigest(t, bin, i), "%s: the schema's mutant differs from the applied one", m.ID)
		assert.True(t, runInfected(t, bin, i), "%s changes the outcome but the schema did not record the infection", m.ID)
	}
	assert.False(t, runInfected(t, bin, -1), "no mutant on, yet infected")
	// A dropped && operand that holds in every run of the grid computes the
	// original's value: not infected. mt.Bootstrap in tick is false for
	// some slot, so its drop infects.
	for i, m := range ms {
		if m.Func == "tick" && m.Op == OpDrop && m.Orig == "mt.Bootstrap" {
			assert.True(t, runInfected(t, bin, i), m.ID)
		}
	}
	require.Len(t, checked, 3)
	// Every mutant runs: to a digest, or to a panic of the mutated code
	// (negating len(s.Net) > 0 removes from an empty network).
	for i := range ms {
		cmd := exec.Command(bin, "-test.run", "TestDrive", "-test.v")
		cmd.Env = append(os.Environ(), SchemaEnv+"="+strconv.Itoa(i))
		out, _ := cmd.CombinedOutput()
		assert.Regexp(t, `DIGEST|panic: runtime error`, string(out), ms[i].ID)
	}
}

// copyFixture copies the fixture module to a new directory; its go.mod
// requires this module (the schema imports cdcspec/tools/mutate/mutant),
// replaced by this checkout.
func copyFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(fixture)
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(fixture, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644))
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	f, err := os.OpenFile(filepath.Join(dir, "go.mod"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("\nrequire cdcspec v0.0.0\n\nreplace cdcspec => " + root + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))
	return dir
}

// infectedTest drives the fixture and prints whether the active mutant
// changed a value.
const infectedTest = `package fixture

import (
	"fmt"
	"testing"

	"cdcspec/tools/mutate/mutant"
)

func TestInfected(t *testing.T) {
	mutant.Reset()
	TestDrive(t)
	fmt.Printf("INFECTED %v\n", mutant.Infected())
}
`

func runInfected(t *testing.T, bin string, mutant int) bool {
	t.Helper()
	cmd := exec.Command(bin, "-test.run", "TestInfected", "-test.v")
	cmd.Env = append(os.Environ(), SchemaEnv+"="+strconv.Itoa(mutant))
	out, _ := cmd.CombinedOutput()
	switch {
	case strings.Contains(string(out), "INFECTED true"):
		return true
	case strings.Contains(string(out), "INFECTED false"):
		return false
	case strings.Contains(string(out), "panic"):
		return true // the mutated code ran and panicked
	}
	t.Fatalf("mutant %d: no INFECTED line: %s", mutant, out)
	return false
}

var digestRE = regexp.MustCompile(`DIGEST ([0-9a-f]+)`)

// digest runs the fixture's TestDrive in dir.
func digest(t *testing.T, dir string, mutant int) string {
	t.Helper()
	cmd := exec.Command("go", "test", "-count=1", "-run", "TestDrive", "-v", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), SchemaEnv+"="+strconv.Itoa(mutant))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	m := digestRE.FindSubmatch(out)
	require.NotNil(t, m, "%s", out)
	return string(m[1])
}

func runDigest(t *testing.T, bin string, mutant int) string {
	t.Helper()
	cmd := exec.Command(bin, "-test.run", "TestDrive", "-test.v")
	cmd.Env = append(os.Environ(), SchemaEnv+"="+strconv.Itoa(mutant))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "mutant %d: %s", mutant, out)
	m := digestRE.FindSubmatch(out)
	require.NotNil(t, m, "%s", out)
	return string(m[1])
}

// TestModelScopeCondsMatch: every condition ModelScope puts out of scope
// names a site of model/ (a stale entry, after an edit of its condition,
// would silently bring the site back), and Find leaves it out.
func TestModelScopeCondsMatch(t *testing.T) {
	dir := filepath.Join("..", "..", "model")
	opt := ModelOptions()
	opt.ExcludeConds = nil
	all, err := Find(dir, opt)
	require.NoError(t, err)
	scoped, err := Find(dir, ModelOptions())
	require.NoError(t, err)
	srcs := map[string][]byte{}
	matched := map[string]int{}
	for _, m := range all {
		if _, ok := srcs[m.File]; !ok {
			srcs[m.File], err = os.ReadFile(filepath.Join(dir, m.File))
			require.NoError(t, err)
		}
		matched[CondKey(m, srcs[m.File])]++
	}
	n := 0
	for _, x := range ModelScope {
		for _, c := range x.Conds {
			assert.NotZero(t, matched[c], "ModelScope condition %q names no site of model/", c)
			n += matched[c]
		}
	}
	assert.Equal(t, len(all)-n, len(scoped), "Find with ModelScope leaves out exactly the scoped conditions' mutants")
}
