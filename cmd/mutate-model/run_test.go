package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/tools/mutate"
)

func TestParseShard(t *testing.T) {
	i, n, err := parseShard("2/6")
	require.NoError(t, err)
	assert.Equal(t, [2]int{2, 6}, [2]int{i, n})
	for _, bad := range []string{"0/3", "4/3", "3", "a/b", "1/0"} {
		_, _, err := parseShard(bad)
		assert.ErrorContains(t, err, "--shard", bad)
	}
}

func TestReadEquivalent(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "eq.tsv")
	require.NoError(t, os.WriteFile(p, []byte("# comment\n\na:b:drop:01\tbecause\n"), 0o644))
	eq, err := readEquivalent(p)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a:b:drop:01": "because"}, eq)
	require.NoError(t, os.WriteFile(p, []byte("a:b:drop:01 no tab\n"), 0o644))
	_, err = readEquivalent(p)
	assert.ErrorContains(t, err, "eq.tsv:1")
	eq, err = readEquivalent(filepath.Join(dir, "missing.tsv"))
	require.NoError(t, err)
	assert.Empty(t, eq)
}

// TestFinish: a survivor that took its changed step in a complete search
// and reached the original's states in every complete search is
// equivalent; with bounded searches it is only marked; one that never took
// its step is not reached; an argued one is equivalent; a killed one that
// is argued is flagged.
func TestFinish(t *testing.T) {
	base := map[string]checkLine{
		"a@all": {Killer: "a@all", Outcome: "ok", Distinct: 10, Transitions: 20, States: 10, StatesHash: "f"},
		"b@d3":  {Killer: "b@d3", Outcome: "delays", Distinct: 10, Transitions: 20, States: 10, StatesHash: "e"},
	}
	with := func(l checkLine, infected bool) checkLine { l.Infected = infected; return l }

	r := result{Mutant: mutate.Mutant{ID: "x"}, Status: stSurvived, Checks: []checkLine{with(base["b@d3"], true), with(base["a@all"], true)}}
	finish(&r, base, nil)
	assert.Equal(t, stEquivalent, r.Status)
	assert.Contains(t, r.Detail, "a@all")
	assert.True(t, r.Reached)

	r = result{Mutant: mutate.Mutant{ID: "x"}, Status: stSurvived, Checks: []checkLine{with(base["b@d3"], true), base["a@all"]}}
	finish(&r, base, nil)
	assert.Equal(t, stSurvived, r.Status, "the complete search never took the step: no evidence")
	assert.True(t, r.SameAsBaseline)

	changed := with(base["b@d3"], true)
	changed.StatesHash = "d"
	r = result{Mutant: mutate.Mutant{ID: "x"}, Status: stSurvived, Checks: []checkLine{changed, with(base["a@all"], true)}}
	finish(&r, base, nil)
	assert.Equal(t, stEquivalent, r.Status, "a bounded search's states may differ where the complete one's are the same")
	assert.False(t, r.SameAsBaseline)

	otherAll := with(base["a@all"], true)
	otherAll.Transitions = 21
	r = result{Mutant: mutate.Mutant{ID: "x"}, Status: stSurvived, Checks: []checkLine{otherAll}}
	finish(&r, base, nil)
	assert.Equal(t, stSurvived, r.Status, "another transition count is another behaviour")

	r = result{Mutant: mutate.Mutant{ID: "x"}, Status: stSurvived, Checks: []checkLine{base["b@d3"]}}
	finish(&r, base, nil)
	assert.Equal(t, stSurvived, r.Status)
	assert.False(t, r.Reached)
	assert.False(t, r.SameAsBaseline)

	r = result{Mutant: mutate.Mutant{ID: "x"}, Status: stSurvived, Checks: []checkLine{changed}}
	finish(&r, base, map[string]string{"x": "argued"})
	assert.Equal(t, stEquivalent, r.Status)
	assert.Equal(t, "argued", r.Detail)

	r = result{Mutant: mutate.Mutant{ID: "x"}, Status: stKilled}
	finish(&r, base, map[string]string{"x": "argued"})
	assert.Equal(t, stKilled, r.Status)
	assert.Contains(t, r.Detail, "stale")
}

// TestParseKiller: the modes, a bare row's own mode, and bad specs.
func TestParseKiller(t *testing.T) {
	for in, want := range map[string]string{
		"default@d3": "default@d3", "default@s500": "default@s500", "error-stuck": "error-stuck@w7",
		"default": "default@s100", "merge-loss@all": "merge-loss@all", "default@d0": "default@d0",
	} {
		k, err := parseKiller(in, 100, 7)
		require.NoError(t, err, in)
		assert.Equal(t, want, k.String(), in)
	}
	for _, bad := range []string{"nope@d3", "default@x3", "default@d", "default@s0", "default@d99", "default@w-1"} {
		_, err := parseKiller(bad, 100, 7)
		assert.Error(t, err, bad)
	}
}

// TestCheckUsage: bad flags exit 2 with a message naming the flag.
func TestCheckUsage(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, exitUsage, run([]string{"check", "--configs", "no-such"}, &out, &errb))
	assert.Contains(t, errb.String(), "--configs")
	errb.Reset()
	assert.Equal(t, exitUsage, run([]string{"check", "--row", "no-such", "--configs", "default"}, &out, &errb))
	assert.Contains(t, errb.String(), "--row")
	errb.Reset()
	assert.Equal(t, exitUsage, run([]string{"frobnicate"}, &out, &errb))
	assert.Contains(t, errb.String(), "unknown subcommand")
}

// TestCheckDefaultSmall: the checker's line for a small budget.
func TestCheckDefaultSmall(t *testing.T) {
	var out, errb bytes.Buffer
	require.Equal(t, exitOK, run([]string{"check", "--configs", "default", "--max-states", "500"}, &out, &errb), errb.String())
	assert.Contains(t, out.String(), readyLine)
	assert.Contains(t, out.String(), `"killer":"default@s500","config":"default","outcome":"bound","distinct":500`)
	out.Reset()
	require.Equal(t, exitOK, run([]string{"check", "--killers", "default@d1"}, &out, &errb), errb.String())
	assert.Contains(t, out.String(), `"killer":"default@d1","config":"default","outcome":"delays"`)
	assert.Contains(t, out.String(), `"states_hash":`)
	assert.NotContains(t, out.String(), `"infected"`, "no mutant on")
}

// TestDefaultKillersParse: every default killer names a row (deepKillers
// included) and parses.
func TestDefaultKillersParse(t *testing.T) {
	ks, err := parseKillers(defaultKillers(), 20000, 200)
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, k := range ks {
		seen[k.String()] = true
	}
	for _, k := range deepKillers {
		require.True(t, seen[k], "deep killer %s is not a default killer", k)
	}
}
