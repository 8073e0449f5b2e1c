package refinement

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/impl/core"
	"cdcspec/impl/sim"
	"cdcspec/model"
	"cdcspec/spec"
)

func TestQuietRunConforms(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		s := sim.New(sim.Config{Seed: seed, Nodes: 3, Tables: 2, Options: core.Options{}})
		require.NoError(t, s.CreateChangefeed("cf1"))
		tr := Follow(s, "cf1", Config(3, 2, model.Config{Features: model.Base().Features}))
		s.RunFor(20_000)
		if tr.Divergence != nil {
			t.Fatalf("seed %d: %v", seed, tr.Divergence)
		}
		require.Empty(t, tr.Stopped)
		t.Logf("seed %d: %d steps, peak %d candidates", seed, tr.Steps, tr.PeakCandidates())
	}
}

// slowBootstrap runs cf1 on a simulation whose bootstrap responses are
// slow, so a new maintainer reports Working before it has bootstrapped.
func slowBootstrap(t *testing.T, seed uint64, implBugs spec.BugSet) *Tracker {
	s := sim.New(sim.Config{Seed: seed, Nodes: 3, Tables: 2, Options: core.Options{Bugs: implBugs}})
	require.NoError(t, s.AddRule(sim.Rule{Type: "MaintainerBootstrapResponse", Action: "delay", DelayMs: 1500, Count: 100}))
	require.NoError(t, s.CreateChangefeed("cf1"))
	tr := Follow(s, "cf1", Config(3, 2, model.Config{Features: model.Base().Features})) // the model keeps every fix
	tr.MaxCandidates = 4096                                                             // slow bootstrap responses leave many re-sends in flight
	s.RunFor(20_000)
	require.Empty(t, tr.Stopped)
	return tr
}

// TestPlantedDivergenceCaught: a rule switched off in the implementation
// only (the coordinator's add operator accepts a Working report from a
// maintainer that has not bootstrapped, #3952) while the model keeps it is
// caught at the step where the implementation acts on it, and the report
// names the field that differs. With the rule on, the same runs conform.
func TestPlantedDivergenceCaught(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		tr := slowBootstrap(t, seed, 0)
		require.Nil(t, tr.Divergence, "seed %d without the planted divergence: %v", seed, tr.Divergence)

		tr = slowBootstrap(t, seed, spec.BugSet(0).With(spec.BugAddAcceptsUnbootstrappedMaintainer))
		require.NotNil(t, tr.Divergence, "seed %d: the planted divergence went unnoticed", seed)
		assert.Contains(t, tr.Divergence.Field, "coordinator", "seed %d", seed)
		assert.Contains(t, tr.Divergence.Error(), "the implementation left the model at step")
	}
}

// TestMaintainerMoveConforms: the Tracker follows a maintainer move step by
// step (the coordinator's move operator: epoch bump, scheduling, the
// origin's non-cascade remove re-sent) up to the remove's delivery at the
// origin, where it stops with the reason (SPEC.md 7.1, item 13), with
// #6280's rule and with HEAD's (move-final-stopped-rejected) on both sides.
func TestMaintainerMoveConforms(t *testing.T) {
	for _, bugs := range []spec.BugSet{0, spec.BugSet(0).With(spec.BugMoveFinalStoppedRejected)} {
		for seed := uint64(1); seed <= 3; seed++ {
			s := sim.New(sim.Config{Seed: seed, Nodes: 3, Tables: 2, Options: core.Options{Bugs: bugs}})
			require.NoError(t, s.CreateChangefeed("cf1"))
			tr := Follow(s, "cf1", Config(3, 2, model.Config{Features: model.Base().Features, Bugs: bugs}))
			s.RunFor(5_000)
			moved := false
			for _, n := range s.Captures() {
				if s.MoveMaintainer("cf1", n) == nil {
					moved = true
					break
				}
			}
			require.True(t, moved, "seed %d: no capture took the move", seed)
			s.RunFor(15_000)
			if tr.Divergence != nil {
				t.Fatalf("seed %d bugs %v: %v", seed, bugs.Names(), tr.Divergence)
			}
			require.Contains(t, tr.Stopped, "a move's non-cascade remove at the origin", "seed %d", seed)
			require.True(t, tr.moved(), "seed %d: no candidate took the move", seed)
			t.Logf("seed %d bugs %v: %d steps, peak %d candidates", seed, bugs.Names(), tr.Steps, tr.PeakCandidates())
		}
	}
}
