package main

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/tools/mutate"
)

// TestParseRefineKiller: refine@N parses and prints back; a bare refine,
// a non-positive or non-numeric N, or a search mode is refused with the
// form it wants.
func TestParseRefineKiller(t *testing.T) {
	k, err := parseKiller("refine@7", 100, 7)
	require.NoError(t, err)
	assert.True(t, k.refinement())
	assert.Equal(t, "refine@7", k.String())
	for _, bad := range []string{"refine", "refine@0", "refine@-2", "refine@x", "refine@d3", "refine@", "refine@1000001"} {
		_, err := parseKiller(bad, 100, 7)
		assert.ErrorContains(t, err, "refine wants @N", bad)
	}
	ks, err := parseKillers(defaultKillers(), 20000, 200)
	require.NoError(t, err)
	last := ks[len(ks)-1]
	assert.True(t, last.refinement(), "the refinement killer comes last in the default list")
	for _, k := range ks[:len(ks)-1] {
		assert.False(t, k.refinement(), k.String())
	}
}

// TestRefineUsage: bad refinement killers exit 2 naming the flag, in the
// checker and in the runner; a --row cannot be switched in refine@N.
func TestRefineUsage(t *testing.T) {
	for _, args := range [][]string{
		{"check", "--killers", "refine"},
		{"check", "--killers", "default@d1,refine@0"},
		{"run", "--killers", "refine@many"},
	} {
		var out, errb bytes.Buffer
		assert.Equal(t, exitUsage, run(args, &out, &errb), args)
		assert.Contains(t, errb.String(), "--killers", args)
		assert.Contains(t, errb.String(), "refine wants @N", args)
	}
	var out, errb bytes.Buffer
	assert.Equal(t, exitUsage, run([]string{"check", "--row", "dm-ack-fence", "--killers", "refine@1"}, &out, &errb))
	assert.Contains(t, errb.String(), "--row")
}

// TestRouteScores: the report counts the searches' kills (route 1) apart
// from the refinement's (route 2); a panic counts for the killer that was
// running.
func TestRouteScores(t *testing.T) {
	assert.Equal(t, routeRefinement, routeOf("refine@30"))
	assert.Equal(t, routeSearch, routeOf("barrier@d2"))
	assert.Equal(t, []string{"a@d2", "refine@3"}, argKillers([]string{"check", "--walks", "2", "--killers", "a@d2,refine@3"}))
	rep := &report{Results: []result{
		{Status: stKilled, Killer: "barrier@d2", Route: routeSearch},
		{Status: stKilled, Killer: "refine@30", Route: routeRefinement},
		{Status: stKilled, Killer: "refine@30", Route: routeRefinement},
		{Status: stSurvived},
		{Status: stEquivalent},
	}}
	rep.tally()
	assert.Equal(t, 3, rep.Killed)
	assert.Equal(t, 1, rep.KilledBySearch)
	assert.InDelta(t, 75.0, rep.Score, 1e-9)
	assert.InDelta(t, 25.0, rep.ScoreSearch, 1e-9)
	var w bytes.Buffer
	printReport(&w, rep)
	assert.Contains(t, w.String(), "score, searches (route 1): 1 killed of 4 non-equivalent (25.0 %)")
	assert.Contains(t, w.String(), "score, searches or refinement (routes 1 and 2): 3 killed of 4 non-equivalent (75.0 %); 2 killed by the refinement only")
	assert.Contains(t, w.String(), "refinement: refine@30 ")
}

// TestRefineStops: a closed stop channel ends the runs before the next
// one starts: outcome bound, no run counted.
func TestRefineStops(t *testing.T) {
	stop := make(chan struct{})
	close(stop)
	l, err := runRefine(killer{Row: refineKiller, Mode: 'r', N: 5}, stop)
	require.NoError(t, err)
	assert.Equal(t, "bound", l.Outcome)
	assert.Zero(t, l.Distinct)
	assert.Equal(t, "refine@5", l.Killer)
}

// plantedID is a mutant of the model that the searches do not kill
// (SHARD=1/8's survivors, SPEC.md 10.1) and the refinement does: the
// maintainer's tick no longer re-sends an operator's message, where the
// implementation's does, so a split's re-sent Remove has no model step.
const plantedID = "maintainer:resendOp:skip:67074b37"

// TestRefineKillsPlanted builds the checker with one mutant in its schema
// (as the runner does) and runs refine@3 without the mutant (the baseline:
// no divergence) and with it (killed at a step of the split run, route 2).
// About 20 s on an idle machine with a warm build cache; skipped with
// -short.
func TestRefineKillsPlanted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a mutant schema")
	}
	root, err := moduleRoot()
	require.NoError(t, err)
	all, err := mutate.Find(filepath.Join(root, "model"), mutate.ModelOptions())
	require.NoError(t, err)
	var m mutate.Mutant
	for _, x := range all {
		if x.ID == plantedID {
			m = x
		}
	}
	require.Equal(t, plantedID, m.ID, "the planted mutant is not in the list: pick another survivor the refinement kills")
	scratch := t.TempDir()
	mod := filepath.Join(scratch, "mod")
	require.NoError(t, copyModule(root, mod))
	bin, err := buildChecker(mod, scratch, []mutate.Mutant{m}, runFlags{pkg: "model"})
	require.NoError(t, err)
	args := []string{"check", "--killers", "refine@3"}

	base := classify(result{Mutant: m}, bin, -1, args, 5*time.Minute)
	require.Equal(t, stSurvived, base.Status, "the original model diverges: %+v", base.Checks)
	require.Len(t, base.Checks, 1)
	assert.Equal(t, "inconclusive", base.Checks[0].Outcome)
	assert.EqualValues(t, 3, base.Checks[0].Distinct)
	assert.False(t, base.Checks[0].Infected)

	r := classify(result{Mutant: m}, bin, 0, args, 5*time.Minute)
	require.Equal(t, stKilled, r.Status, "%+v", r.Checks)
	assert.Equal(t, routeRefinement, r.Route)
	assert.Equal(t, "refine@3", r.Killer)
	assert.Equal(t, refineProperty, r.Property)
	assert.Contains(t, r.Detail, "(split)")
	assert.True(t, r.Checks[0].Infected)
}
