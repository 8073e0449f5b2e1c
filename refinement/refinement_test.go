package refinement

import (
	"strings"
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
	for seed := uint64(1); seed <= 3; seed++ {
		tr := slowBootstrap(t, seed, 0)
		require.Nil(t, tr.Divergence, "seed %d without the planted divergence: %v", seed, tr.Divergence)

		tr = slowBootstrap(t, seed, spec.BugSet(0).With(spec.BugAddAcceptsUnbootstrappedMaintainer))
		require.NotNil(t, tr.Divergence, "seed %d: the planted divergence went unnoticed", seed)
		assert.Contains(t, tr.Divergence.Field, "coordinator", "seed %d", seed)
		assert.Contains(t, tr.Divergence.Error(), "the implementation left the model at step")
	}
}

// moveRun runs cf1 with implBugs in the implementation and modelBugs in
// the model, moves its maintainer once it replicates and runs on; it
// returns the capture the maintainer was moved from.
// moveDelayMs lets the dispatchers' add operators finish (their statuses
// are taken at the operator controller's next poll, HEAD's
// pollQueueingOperator) so that the origin's checkpoint moves while the
// move is under way.
var moveDelayMs int64 = 500

func moveRun(t *testing.T, seed uint64, implBugs, modelBugs spec.BugSet) (*sim.Sim, *Tracker, core.NodeID) {
	s := sim.New(sim.Config{Seed: seed, Nodes: 3, Tables: 2, Options: core.Options{Bugs: implBugs}})
	require.NoError(t, s.CreateChangefeed("cf1"))
	tr := Follow(s, "cf1", Config(3, 2, model.Config{Features: model.Base().Features, Bugs: modelBugs}))
	// Move as soon as the changefeed replicates, while the model's
	// timestamps still follow the implementation's upstream: the origin's
	// progress after the move started (what #6283 loses) is then in both.
	var origin core.NodeID
	for i := 0; i < 100; i++ {
		s.RunFor(50)
		if cf := s.State().Changefeeds[0]; cf.Sched == "replicating" {
			origin = cf.Node
			break
		}
	}
	require.NotEmpty(t, origin, "seed %d: the changefeed did not replicate", seed)
	s.RunFor(moveDelayMs)
	moved := false
	for _, n := range s.Captures() {
		if n != origin && s.MoveMaintainer("cf1", n) == nil {
			moved = true
			break
		}
	}
	require.True(t, moved, "seed %d: no capture took the move", seed)
	s.RunFor(15_000)
	return s, tr, origin
}

// TestMaintainerMoveConforms: the Tracker follows a maintainer move step by
// step to its end: the coordinator's move operator (epoch bump,
// scheduling, the origin's non-cascade remove re-sent), the origin closing
// its table trigger over several steps while the model removes it in one
// (SPEC.md 7.1, item 16: mapped at the step that closes the origin's
// maintainer), the origin's final Stopped report, the add at the target, its
// bootstrap and the changefeed replicating there. With
// move-final-stopped-rejected on both sides too. Without the origin's
// mapping the Tracker stops or diverges at the remove, and the test fails.
func TestMaintainerMoveConforms(t *testing.T) {
	for _, bugs := range []spec.BugSet{0, spec.BugSet(0).With(spec.BugMoveFinalStoppedRejected)} {
		for seed := uint64(1); seed <= 2; seed++ {
			s, tr, origin := moveRun(t, seed, bugs, bugs)
			if tr.Divergence != nil {
				t.Fatalf("seed %d bugs %v: %v", seed, bugs.Names(), tr.Divergence)
			}
			require.Empty(t, tr.Stopped, "seed %d bugs %v", seed, bugs.Names())
			require.True(t, tr.moved(), "seed %d: no candidate took the move", seed)
			cf := s.State().Changefeeds[0]
			require.NotEqual(t, origin, cf.Node, "seed %d bugs %v: the maintainer did not move", seed, bugs.Names())
			require.Equal(t, "replicating", cf.Sched, "seed %d bugs %v", seed, bugs.Names())
			require.True(t, tr.closedOrigin, "seed %d bugs %v: the origin's closing was never mapped", seed, bugs.Names())
			want := "kept"
			if bugs != 0 {
				want = "behind"
			}
			require.Equal(t, want, tr.implView().Handoff, "seed %d bugs %v", seed, bugs.Names())
			t.Logf("seed %d bugs %v: %d steps, peak %d candidates", seed, bugs.Names(), tr.Steps, tr.PeakCandidates())
		}
	}
}

// TestMoveFinalStoppedRejectedDivergence: move-final-stopped-rejected
// (#6283: the coordinator drops the origin's final Stopped report as stale,
// so the target starts below the checkpoint the origin reached) switched on
// in one side only is a divergence, named by View.Handoff.
func TestMoveFinalStoppedRejectedDivergence(t *testing.T) {
	bug := spec.BugSet(0).With(spec.BugMoveFinalStoppedRejected)
	for seed := uint64(1); seed <= 3; seed++ {
		_, tr, _ := moveRun(t, seed, bug, 0)
		require.NotNil(t, tr.Divergence, "seed %d: move-final-stopped-rejected in the implementation only went unnoticed", seed)
		assert.Contains(t, tr.Divergence.Field, "handoff", "seed %d", seed)
		assert.Equal(t, "behind", tr.Divergence.Impl.Handoff, "seed %d", seed)

		_, tr, _ = moveRun(t, seed, 0, bug)
		require.NotNil(t, tr.Divergence, "seed %d: move-final-stopped-rejected in the model only went unnoticed", seed)
		assert.Contains(t, tr.Divergence.Field, "handoff", "seed %d", seed)
		assert.Equal(t, "kept", tr.Divergence.Impl.Handoff, "seed %d", seed)
	}
}

// splitRun runs cf1 on one table with implBugs in the implementation and
// modelBugs in the model, splits the table once its dispatcher replicates
// and runs on for after ms.
func splitRun(t *testing.T, seed uint64, nodes int, implBugs, modelBugs spec.BugSet, after int64) (*sim.Sim, *Tracker) {
	s := sim.New(sim.Config{Seed: seed, Nodes: nodes, Tables: 1, Options: core.Options{Bugs: implBugs}})
	require.NoError(t, s.CreateChangefeed("cf1"))
	tr := Follow(s, "cf1", WithSplits(Config(nodes, 1, model.Config{Features: model.Base().Features, Bugs: modelBugs}), 1))
	tr.MaxCandidates = 4096 // the split's choices (mode, right half's target) multiply the re-sends in flight
	s.RunFor(5_000)
	k, err := s.SplitTable("cf1", 1)
	require.NoError(t, err)
	require.Equal(t, 1, k, "seed %d: the split did not start", seed)
	s.RunFor(after)
	return s, tr
}

// TestSplitConforms: the Tracker follows a split-table request step by
// step: the split operator's Remove at the origin, the origin's Stopped,
// PostFinish replacing the whole span by its halves (absent with three
// nodes, whose targets do not align with the two halves; bound to the
// targets with two), and the halves' dispatchers created and Working.
// Without the split mapping the Tracker stops at the request, and the test
// fails.
func TestSplitConforms(t *testing.T) {
	for _, nodes := range []int{2, 3} {
		for seed := uint64(1); seed <= 2; seed++ {
			s, tr := splitRun(t, seed, nodes, 0, 0, 15_000)
			if tr.Divergence != nil {
				t.Fatalf("%d nodes seed %d: %v", nodes, seed, tr.Divergence)
			}
			require.Empty(t, tr.Stopped, "%d nodes seed %d", nodes, seed)
			require.True(t, tr.took(func(st *model.State) bool { return st.Splits > 0 }), "%d nodes seed %d: no candidate took the split", nodes, seed)
			// Both halves replicate, in the implementation and so in the
			// View the candidates share.
			v := tr.implView()
			halves := 0
			for _, d := range v.Disp {
				if strings.Contains(d, "/t1"+model.PartLeft+"/Working") || strings.Contains(d, "/t1"+model.PartRight+"/Working") {
					halves++
				}
			}
			require.Equal(t, 2, halves, "%d nodes seed %d: %v", nodes, seed, v.Disp)
			t.Logf("%d nodes seed %d: %d steps, peak %d candidates, %v", nodes, seed, tr.Steps, tr.PeakCandidates(), len(s.Captures()))
		}
	}
}

// TestSplitDoubleAddDivergence: split-double-add (#4077: PostFinish adds
// the halves to the split's target nodes although they do not align with
// them, while the basic scheduler adds them too) switched on in one side
// only is a divergence wherever it has an effect: in the implementation
// that is a half replicated on two nodes, which its monitors report; where
// the basic scheduler picks the very nodes postFinish's Creates went to,
// both sides are the same and the runs conform. On both sides the runs
// conform.
func TestSplitDoubleAddDivergence(t *testing.T) {
	bug := spec.BugSet(0).With(spec.BugSplitDoubleAdd)
	effect := 0
	for seed := uint64(1); seed <= 4; seed++ {
		s, tr := splitRun(t, seed, 3, bug, 0, 15_000)
		doubled := len(s.Violations()) > 0
		if doubled {
			effect++
			require.NotNil(t, tr.Divergence, "seed %d: split-double-add in the implementation only went unnoticed", seed)
			assert.Contains(t, tr.Divergence.Field, "dispatchers", "seed %d", seed)
		} else {
			require.Nil(t, tr.Divergence, "seed %d: the bug had no effect, yet: %v", seed, tr.Divergence)
		}
		if seed == 1 || seed == 3 {
			// Seeds whose scheduler places a half elsewhere than
			// postFinish's target: the model alone adds it twice.
			_, tr = splitRun(t, seed, 3, 0, bug, 15_000)
			require.NotNil(t, tr.Divergence, "seed %d: split-double-add in the model only went unnoticed", seed)
			assert.Contains(t, tr.Divergence.Field, "dispatchers", "seed %d", seed)
		}
	}
	require.Positive(t, effect, "no seed showed the bug's effect in the implementation")
	s, tr := splitRun(t, 1, 3, bug, bug, 2_000)
	require.Nil(t, tr.Divergence, "the bug on both sides: %v", tr.Divergence)
	require.Empty(t, tr.Stopped)
	require.NotEmpty(t, s.Violations(), "the bug on both sides had no effect by the end of the run")
}

// mergeRun runs cf1 on one table split at creation (EnableTableAcrossNodes,
// the model's merge configuration), with implBugs in the implementation
// and modelBugs in the model: once both halves replicate it moves them to
// one capture if they are apart (move-table), then merges them
// (merge-table) and runs on. With slowClose the halves' capture finishes
// closing dispatchers only after the merge committed and 3 s passed (the
// failpoint NotReadyToCloseDispatcher, then heal): the sources' late
// Stopped of #4542.
func mergeRun(t *testing.T, seed uint64, nodes int, implBugs, modelBugs spec.BugSet, slowClose bool) (*sim.Sim, *Tracker) {
	s := sim.New(sim.Config{Seed: seed, Nodes: nodes, Tables: 1, Options: core.Options{Bugs: implBugs, EnableTableAcrossNodes: true}})
	require.NoError(t, s.CreateChangefeed("cf1"))
	tr := Follow(s, "cf1", WithMerges(Config(nodes, 1, model.Config{Features: model.Base().Features, Bugs: modelBugs})))
	tr.MaxCandidates = 4096
	halves := func() []core.NodeID {
		var at []core.NodeID
		for _, n := range s.State().Nodes {
			for _, d := range n.Dispatchers {
				if d.Span.Table == 1 && d.State == "Working" && (d.Span.Start == "") != (d.Span.End == "") {
					at = append(at, n.ID)
				}
			}
		}
		return at
	}
	for i := 0; i < 100 && len(halves()) < 2; i++ {
		s.RunFor(100)
	}
	at := halves()
	require.Len(t, at, 2, "seed %d: the halves do not replicate", seed)
	s.RunFor(500) // the maintainer sees both Working
	if at[0] != at[1] {
		k, err := s.MoveTable("cf1", 1, at[0])
		require.NoError(t, err)
		require.Equal(t, 1, k, "seed %d: the move did not start", seed)
		for i := 0; i < 100; i++ {
			if h := halves(); len(h) == 2 && h[0] == h[1] {
				break
			}
			s.RunFor(100)
		}
		s.RunFor(500)
	}
	if slowClose {
		require.NoError(t, s.SetFailpoint(halves()[0], "NotReadyToCloseDispatcher", true))
	}
	k, err := s.MergeTable("cf1", 1)
	require.NoError(t, err)
	require.Equal(t, 1, k, "seed %d: the merge did not start", seed)
	if slowClose {
		s.RunFor(3_000)
		s.Heal()
	}
	s.RunFor(10_000)
	return s, tr
}

// TestMergeConforms: the Tracker follows a merge step by step: the merge
// operator with its occupy operators, the MergeDispatcherRequest journaled
// and committed at a later tick (the model commits on delivery, SPEC.md 7.1
// item 14), the sources Removing and their late Stopped, PostFinish, and the
// merged dispatcher Working; before it, the move of a half to the other's
// capture (move-table). Without the merge mapping the Tracker stops at the
// request, and the test fails.
func TestMergeConforms(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		_, tr := mergeRun(t, seed, 2, 0, 0, false)
		if tr.Divergence != nil {
			t.Fatalf("seed %d: %v", seed, tr.Divergence)
		}
		require.Empty(t, tr.Stopped, "seed %d", seed)
		require.True(t, tr.took(func(st *model.State) bool { return st.Merges > 0 }), "seed %d: no candidate took the merge", seed)
		v := tr.implView()
		whole := 0
		for _, d := range v.Disp {
			require.NotContains(t, d, "/t1"+model.PartLeft+"/", "seed %d: a source is left: %v", seed, v.Disp)
			require.NotContains(t, d, "/t1"+model.PartRight+"/", "seed %d: a source is left: %v", seed, v.Disp)
			if strings.HasSuffix(d, "/t1/Working") {
				whole++
			}
		}
		require.Equal(t, 1, whole, "seed %d: %v", seed, v.Disp)
		t.Logf("seed %d: %d steps, peak %d candidates", seed, tr.Steps, tr.PeakCandidates())
	}
}

// TestMergeOccupyFinishesEarlyDivergence: merge-occupy-finishes-early
// (#4542: the merge's PostFinish releases the occupy operators before it
// removes the sources, so a source's late Stopped falls back to
// MarkSpanAbsent and leaves a ghost span) switched on in the implementation
// only is a divergence, named by View.Ghosts; on both sides the runs
// conform. Switched on in the model only it cannot be: the model with the
// bug may still remove the sources before their late Stopped arrives, which
// is what the fixed implementation does (the bug only adds a window).
func TestMergeOccupyFinishesEarlyDivergence(t *testing.T) {
	bug := spec.BugSet(0).With(spec.BugMergeOccupyFinishesEarly)
	for seed := uint64(1); seed <= 3; seed++ {
		_, tr := mergeRun(t, seed, 2, bug, bug, true)
		require.Nil(t, tr.Divergence, "seed %d, the bug on both sides: %v", seed, tr.Divergence)
		require.Empty(t, tr.Stopped, "seed %d", seed)
		ghosts := 0
		for _, g := range tr.implView().Ghosts {
			ghosts += g
		}
		require.Positive(t, ghosts, "seed %d: the bug left no ghost", seed)

		_, tr = mergeRun(t, seed, 2, bug, 0, true)
		require.NotNil(t, tr.Divergence, "seed %d: merge-occupy-finishes-early in the implementation only went unnoticed", seed)
		assert.Contains(t, tr.Divergence.Field, "ghost", "seed %d", seed)
	}
}
