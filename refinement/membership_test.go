package refinement

import (
	"testing"

	"github.com/stretchr/testify/require"

	"cdcspec/impl/core"
	"cdcspec/impl/sim"
	"cdcspec/model"
)

// replicating runs s until cf1 replicates and returns the capture of its
// maintainer.
func replicating(t *testing.T, s *sim.Sim) core.NodeID {
	t.Helper()
	for i := 0; i < 200; i++ {
		s.RunFor(50)
		if m := s.MaintainerNode("cf1"); m != "" && s.State().Changefeeds[0].Sched == "replicating" {
			return m
		}
	}
	t.Fatal("cf1 never replicated")
	return ""
}

// TestKilledCaptureStaysATarget: the maintainer's capture expires, a
// capture joins and is killed at once, before the coordinator's basic
// scheduler places the absent changefeed. The killed capture's key lives
// until its session TTL, so the scheduler may bind the changefeed to it
// (HEAD: coordinator/scheduler/basic.go:81 picks from NodeManager's alive
// nodes); the model follows (model.State.schedulable). Before the model
// saw the crash at once, such a binding left the model ("coordinator's
// maintainer node").
func TestKilledCaptureStaysATarget(t *testing.T) {
	bound := 0
	for _, seed := range []uint64{5, 7} { // of seeds 1-8, these bind cf1 to the killed capture
		s := sim.New(sim.Config{Seed: seed, Nodes: 3, Tables: 2, Options: core.Options{}})
		require.NoError(t, s.CreateChangefeed("cf1"))
		tr := Follow(s, "cf1", Config(3, 2, model.Config{Features: model.Base().Features}))
		tr.MaxCandidates = 4096 // the re-sends after a crash stay in the model's flight
		m := replicating(t, s)
		if m == s.Owner() {
			continue // the model's slot 0 never crashes
		}
		require.NoError(t, s.ExpireSession(m))
		joined := s.AddCapture()
		s.RunFor(150) // the coordinator bootstraps the joined capture
		require.NoError(t, s.KillCapture(joined))
		onKilled := false
		for i := 0; i < 400 && tr.Following(); i++ {
			s.RunFor(50)
			onKilled = onKilled || s.State().Changefeeds[0].Node == joined
		}
		require.Nil(t, tr.Divergence, "seed %d: %v", seed, tr.Divergence)
		require.Empty(t, tr.Stopped, "seed %d", seed)
		t.Logf("seed %d: maintainer on %s, bound to the killed capture: %v, %d steps, peak %d candidates", seed, m, onKilled, tr.Steps, tr.PeakCandidates())
		if onKilled {
			bound++
		}
		require.NotEmpty(t, s.MaintainerNode("cf1"), "seed %d: cf1 was not placed again once the killed capture's key expired", seed)
	}
	require.Positive(t, bound, "no seed bound cf1 to the killed capture: the test no longer covers the case")
}

// TestCaptureJoinsWhileMaintainerRuns: a capture other than the
// maintainer's expires and a new one joins while cf1's maintainer runs.
// The maintainer bootstraps the joined capture (HEAD: maintainer.go:620,
// bootstrapper.HandleNodesChange; the model's onNodeJoined), whose
// dispatcher manager then answers to it. The Tracker used to stop at
// such a join, saying the model's maintainer did not bootstrap joining
// nodes; it does, and the runs conform.
func TestCaptureJoinsWhileMaintainerRuns(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		s := sim.New(sim.Config{Seed: seed, Nodes: 3, Tables: 2, Options: core.Options{}})
		require.NoError(t, s.CreateChangefeed("cf1"))
		tr := Follow(s, "cf1", Config(3, 2, model.Config{Features: model.Base().Features}))
		tr.MaxCandidates = 4096
		m := replicating(t, s)
		var other core.NodeID
		for _, id := range s.Captures() {
			if id != m && id != s.Owner() {
				other = id
				break
			}
		}
		require.NoError(t, s.ExpireSession(other))
		s.RunFor(500)
		joined := s.AddCapture()
		s.RunFor(5_000)
		require.Nil(t, tr.Divergence, "seed %d: %v", seed, tr.Divergence)
		require.Empty(t, tr.Stopped, "seed %d", seed)
		v := tr.implView()
		require.Equal(t, tr.name(m), v.DM[tr.slot[joined]], "seed %d: the joined capture's dispatcher manager answers to the maintainer", seed)
		t.Logf("seed %d: %d steps, peak %d candidates", seed, tr.Steps, tr.PeakCandidates())
	}
}
