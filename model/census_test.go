package model

import (
	"flag"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/search"
)

var (
	censusConfig = flag.String("census-config", "", "TestCensus: the standard configuration to take a census of (default: barrier-create-syncpoint to depth 7)")
	censusDepth  = flag.Int("census-depth", 7, "TestCensus: the census's depth")
	censusDiam   = flag.Bool("census-diamonds", true, "TestCensus: count the one-step diamonds too (a step per pair of enabled actions)")
)

// TestCensus: a census counts the same states as the search to the same
// depth, each erased part leaves at most as many states (the network, the
// barrier configurations' spread, strictly fewer), and the one-step diamonds
// it reports are diamonds. With -census-config and -census-depth it prints
// the census of that configuration (README, "The blocking DDL barrier").
func TestCensus(t *testing.T) {
	name, depth := *censusConfig, *censusDepth
	if name == "" {
		name, depth = "barrier-create-syncpoint", 7
	}
	cfg, ok := Standard(name)
	require.True(t, ok, "unknown configuration %q", name)
	rep, err := Census(cfg, depth, *censusDiam)
	require.NoError(t, err)
	t.Log("\n" + rep.String())

	if !cfg.SpanMoves || cfg.Nodes < 3 { // no symmetry: the search counts states, not orbits
		r, err := Check(cfg, search.Bounds{MaxDepth: depth, SafetyOnly: true}, nil)
		require.NoError(t, err)
		assert.EqualValues(t, r.Distinct, rep.States, "the census and the search disagree on the states to depth %d", depth)
	}
	sum := 0
	for _, n := range rep.Levels {
		sum += n
	}
	assert.Equal(t, rep.States, sum)
	for _, p := range rep.Parts {
		assert.LessOrEqual(t, p.Left, rep.States, p.Name)
		assert.GreaterOrEqual(t, p.Left, 1, p.Name)
		if p.Name == "network" {
			assert.Less(t, p.Left, rep.States, "erasing the network merges no state")
		}
	}
	by := 0
	for _, n := range rep.CommutingBy {
		by += n
	}
	assert.Equal(t, rep.Commuting, by)
	assert.LessOrEqual(t, rep.Commuting, rep.States)
	if *censusDiam && depth >= 3 {
		assert.Positive(t, rep.Commuting, "every standard configuration has commuting re-sends from its first steps")
	}

	// The diamond test itself: at the initial state of a configuration
	// with a crash, the crash (a fault) never counts, and an action that
	// commutes is reported only if every other enabled action closes the
	// diamond with it.
	d := mustStandard(t, "default")
	s := Init(&d)
	if a, ok := commutingAction(&d, &s); ok {
		assert.False(t, a.Kind.IsFault())
		sa := s
		step(&d, &sa, a, nil)
		for _, b := range appendActions(&d, &s, nil, true) {
			if b == a {
				continue
			}
			sb := s
			step(&d, &sb, b, nil)
			ab, ba := sa, sb
			step(&d, &ab, b, nil)
			step(&d, &ba, a, nil)
			assert.Equal(t, ab, ba, "%s and %s", a, b)
		}
	}

	_, err = Census(cfg, 31, false)
	assert.Error(t, err, "a census deeper than 30 is refused")
}

func mustStandard(t *testing.T, name string) Config {
	t.Helper()
	c, ok := Standard(name)
	require.True(t, ok, name)
	return c
}
