package model

import (
	"reflect"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/search"
	"cdcspec/spec"
)

// TestMatrixRows: names are unique and plain, every row validates and has a
// reason, and every standard configuration is a row under its own name
// with its own Config.
func TestMatrixRows(t *testing.T) {
	rows := Matrix()
	byName := map[string]MatrixRow{}
	plain := regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	for _, r := range rows {
		_, dup := byName[r.Name]
		require.False(t, dup, "row %q twice", r.Name)
		byName[r.Name] = r
		assert.Regexp(t, plain, r.Name)
		assert.Equal(t, r.Name, r.Config.Name, "row %q: its Config is named %q", r.Name, r.Config.Name)
		assert.NotEmpty(t, r.Reason, "row %q has no reason", r.Name)
		assert.NoError(t, r.Config.Validate(), "row %q", r.Name)
		if r.Name == "default" {
			assert.Zero(t, r.Config.DelayBound, "the default configuration completes unbounded")
		} else {
			assert.GreaterOrEqual(t, r.Config.DelayBound, MinStatedDelayBound, "row %q states no delay bound", r.Name)
		}
		assert.Zero(t, r.Config.Bugs, "row %q: matrix rows run with every catalogued fix on", r.Name)
	}
	for _, n := range StandardNames() {
		r, ok := byName[n]
		if !assert.True(t, ok, "standard configuration %q is no row of the matrix", n) {
			continue
		}
		c, _ := Standard(n)
		assert.True(t, reflect.DeepEqual(c, r.Config), "row %q: Config differs from the standard configuration", n)
	}
}

// TestMatrixPairwise: every feature x fault pair has a row, or an
// impossible entry with a reason, never both.
func TestMatrixPairwise(t *testing.T) {
	for _, g := range MatrixGaps(Matrix(), Impossible()) {
		t.Error(g)
	}
	axis := map[string]bool{}
	for _, a := range append(MatrixFeatures(), MatrixFaults()...) {
		require.False(t, axis[a.Name], "axis value %q twice", a.Name)
		axis[a.Name] = true
	}
	for _, p := range Impossible() {
		assert.True(t, axis[p.A], "impossible entry names unknown %q", p.A)
		assert.True(t, axis[p.B], "impossible entry names unknown %q", p.B)
		assert.Regexp(t, `^impossible until `, p.Reason)
	}
	for _, f := range MatrixFaults() {
		if f.How != "" {
			continue
		}
		// A fault without a How is a model action of that name.
		_, unsupported := UnsupportedFaults[spec.Fault(f.Name)]
		assert.False(t, unsupported, "fault %q is unsupported by the model but has no How", f.Name)
	}
}

// TestMatrixGapsFindsAMissingPair: dropping the rows of one pair makes
// MatrixGaps report it (the pairwise test can fail).
func TestMatrixGapsFindsAMissingPair(t *testing.T) {
	var rows []MatrixRow
	for _, r := range Matrix() {
		if r.Config.Merges == 0 || r.Config.Dups == 0 {
			rows = append(rows, r)
		}
	}
	gaps := MatrixGaps(rows, Impossible())
	require.Len(t, gaps, 1)
	assert.Equal(t, MatrixGap{Feature: "merge", Fault: "duplicate-messages"}, gaps[0])
	extra := append(Impossible(), MatrixImpossible{A: "merge", B: "expire-session", Reason: "impossible until never"})
	gaps = MatrixGaps(Matrix(), extra)
	require.Len(t, gaps, 1)
	assert.True(t, gaps[0].Covered)
}

// TestMatrixImpossibleFeaturePairsRefused: the feature pairs listed as
// impossible are refusals of Validate, and no row combines them.
func TestMatrixImpossibleFeaturePairsRefused(t *testing.T) {
	for _, c := range []Config{
		{Splits: 1, Barrier: "syncpoint"},
		{Merges: 1, Barrier: "syncpoint"},
		{Merges: 1, Splits: 1},
		{MaintMoves: 1, ClientOps: 1},
	} {
		b := Base()
		c.Name, c.Nodes, c.Tables, c.TsMax, c.Features = "pair", b.Nodes, b.Tables, 2, b.Features
		assert.Error(t, c.Validate(), "%s", c.String())
	}
	features := map[string]MatrixAxis{}
	for _, f := range MatrixFeatures() {
		features[f.Name] = f
	}
	for _, p := range Impossible() {
		fa, okA := features[p.A]
		fb, okB := features[p.B]
		if !okA || !okB {
			continue
		}
		for _, r := range Matrix() {
			assert.False(t, fa.In(&r.Config) && fb.In(&r.Config), "row %q combines %s and %s, listed as impossible", r.Name, p.A, p.B)
		}
	}
}

// TestStatedBounds: a configuration's stated delay bound reaches the
// search; 0 leaves it unbounded; Validate refuses a bound below
// MinStatedDelayBound or past the search's; rowDelayBounds names only rows.
func TestStatedBounds(t *testing.T) {
	c := Base()
	c.DelayBound = 4
	b := c.StatedBounds(search.Bounds{MaxDepth: 7})
	assert.True(t, b.DelayBounded)
	assert.Equal(t, 4, b.DelayBound)
	assert.Equal(t, 7, b.MaxDepth)
	c.DelayBound = 0
	assert.False(t, c.StatedBounds(search.Bounds{}).DelayBounded)
	for _, k := range []int{1, -1, search.MaxDelayBound + 1} {
		c.DelayBound = k
		assert.ErrorContains(t, c.Validate(), "stated delay bound", "k=%d", k)
	}
	names := map[string]bool{}
	for _, r := range Matrix() {
		names[r.Name] = true
	}
	for n := range rowDelayBounds {
		assert.True(t, names[n], "rowDelayBounds names %q, no row of the matrix", n)
		_, std := Standard(n)
		assert.False(t, std, "rowDelayBounds names the standard configuration %q, which states its own", n)
	}
}
