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

// TestFinish: a survivor with the baseline's counts on complete searches
// is equivalent; on bounded ones it is only marked; an argued one is
// equivalent; a killed one that is argued is flagged.
func TestFinish(t *testing.T) {
	base := map[string]checkLine{
		"a": {Config: "a", Outcome: "ok", Distinct: 10, Transitions: 20},
		"b": {Config: "b", Outcome: "bound", Distinct: 10, Transitions: 20},
	}
	r := result{Mutant: mutate.Mutant{ID: "x"}, Status: stSurvived, Checks: []checkLine{base["a"]}}
	finish(&r, map[string]checkLine{"a": base["a"]}, nil)
	assert.Equal(t, stEquivalent, r.Status)

	r = result{Mutant: mutate.Mutant{ID: "x"}, Status: stSurvived, Checks: []checkLine{base["a"], base["b"]}}
	finish(&r, base, nil)
	assert.Equal(t, stSurvived, r.Status)
	assert.True(t, r.SameAsBaseline)

	changed := base["a"]
	changed.Distinct = 11
	r = result{Mutant: mutate.Mutant{ID: "x"}, Status: stSurvived, Checks: []checkLine{changed, base["b"]}}
	finish(&r, base, map[string]string{"x": "argued"})
	assert.Equal(t, stEquivalent, r.Status)
	assert.Equal(t, "argued", r.Detail)
	assert.False(t, r.SameAsBaseline)

	r = result{Mutant: mutate.Mutant{ID: "x"}, Status: stKilled}
	finish(&r, base, map[string]string{"x": "argued"})
	assert.Equal(t, stKilled, r.Status)
	assert.Contains(t, r.Detail, "stale")
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
	assert.Contains(t, out.String(), `"config":"default","outcome":"bound","distinct":500`)
}
