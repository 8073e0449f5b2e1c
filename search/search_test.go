package search

import (
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/spec"
)

func check[S, A any](t *testing.T, sys System[S, A], b Bounds) Result[S, A] {
	t.Helper()
	r, err := Check(sys, b, nil)
	require.NoError(t, err)
	return r
}

// TestCheckAgreesWithNaiveBFS: with no property violated, the search counts
// the same distinct states, transitions and depth as a map-based BFS, with
// any number of workers.
func TestCheckAgreesWithNaiveBFS(t *testing.T) {
	systems := map[string]func(workers int) (Stats, [3]int64){
		"grid": func(w int) (Stats, [3]int64) {
			g := grid{Max: 40, Inits: []gridState{{0, 0}, {3, 1}, {0, 0}}}
			d, tr, dp := naiveBFS[gridState, gridAct](g)
			return check[gridState, gridAct](t, g, Bounds{Workers: w}).Stats, [3]int64{d, tr, int64(dp)}
		},
		"ring": func(w int) (Stats, [3]int64) {
			r := ring{N: 5, Regen: true}
			d, tr, dp := naiveBFS[ringState, ringAct](r)
			return check[ringState, ringAct](t, r, Bounds{Workers: w}).Stats, [3]int64{d, tr, int64(dp)}
		},
	}
	for name, run := range systems {
		for _, w := range []int{1, 2, 4} {
			st, want := run(w)
			assert.Equal(t, OK, st.Outcome, "%s, %d workers: %s", name, w, st.Reason)
			assert.Equal(t, want, [3]int64{st.Distinct, st.Transitions, int64(st.Depth)}, "%s, %d workers: distinct, transitions, depth", name, w)
		}
	}
	// 41 x 41 grid points; the duplicate initial state is counted once.
	st, _ := systems["grid"](2)
	assert.Equal(t, int64(41*41), st.Distinct)
}

// TestSafetyViolationIsShortest: the counterexample of a safety property is
// a shortest path whose last step violates it, whatever the worker count.
func TestSafetyViolationIsShortest(t *testing.T) {
	g := grid{Max: 30, Bad: 17}
	for _, w := range []int{1, 2, 3} {
		r := check[gridState, gridAct](t, g, Bounds{Workers: w})
		require.Equal(t, Violation, r.Outcome)
		ce := r.Violation
		require.NotNil(t, ce)
		assert.Equal(t, spec.Property("sum-not-bad"), ce.Property)
		assert.Equal(t, "the sum reached the bad value", ce.Message)
		assert.False(t, ce.Liveness)
		require.Len(t, ce.Path, 17, "%d workers", w)
		states := replay[gridState, gridAct](g, ce.Start, ce.Path)
		for i := 1; i < len(states)-1; i++ {
			idx, _ := g.Safety(&states[i-1], &states[i])
			assert.Equal(t, -1, idx, "step %d already violates", i)
		}
		idx, _ := g.Safety(&states[len(states)-2], &states[len(states)-1])
		assert.Equal(t, 0, idx, "the last step must violate the property")
		// The search stops at the violating level: depth 16 is the deepest
		// level it numbered.
		assert.Equal(t, 16, r.Depth)
	}
	// One worker is deterministic: the lowest violation in BFS order.
	r := check[gridState, gridAct](t, g, Bounds{Workers: 1})
	want := make([]gridAct, 17)
	for i := range want {
		if i < 16 {
			want[i] = bumpX
		} else {
			want[i] = bumpY
		}
	}
	assert.Equal(t, want[:16], r.Violation.Path[:16], "BFS order: X first")
}

// TestBoundsReached: each bound gives BoundReached with its reason, never OK.
func TestBoundsReached(t *testing.T) {
	g := grid{Max: 20}
	r := check[gridState, gridAct](t, g, Bounds{MaxDepth: 5})
	assert.Equal(t, BoundReached, r.Outcome)
	assert.Equal(t, "a bound (depth or network size) cut the search", r.Reason)
	assert.Equal(t, int64(21), r.Distinct, "levels 0..5 of the grid: 1+2+...+6")
	assert.Equal(t, 5, r.Depth)

	r = check[gridState, gridAct](t, g, Bounds{MaxStates: 50})
	assert.Equal(t, BoundReached, r.Outcome)
	assert.Equal(t, "stopped at the state bound (50 states)", r.Reason)
	assert.Equal(t, int64(50), r.Distinct, "stops exactly at the bound")

	// States on the system's own bound are neither expanded nor judged.
	r = check[gridState, gridAct](t, grid{Max: 20, Edge: 3, Bad: 30}, Bounds{})
	assert.Equal(t, BoundReached, r.Outcome)
	assert.Equal(t, int64(4*21), r.Distinct, "X in 0..3, Y in 0..20")

	// A violation beyond the depth bound is not found.
	r = check[gridState, gridAct](t, grid{Max: 20, Bad: 10}, Bounds{MaxDepth: 9})
	assert.Equal(t, BoundReached, r.Outcome)
	assert.Nil(t, r.Violation)

	// A closed Stop interrupts the search: bound-reached, never ok.
	stop := make(chan struct{})
	close(stop)
	r = check[gridState, gridAct](t, grid{Max: 200}, Bounds{Stop: stop})
	assert.Equal(t, BoundReached, r.Outcome)
	assert.Contains(t, r.Reason, "interrupted")
	assert.Less(t, r.Distinct, int64(201*201))

	_, err := Check[gridState, gridAct](g, Bounds{MaxDepth: -1}, nil)
	assert.Error(t, err)
}

// TestLivenessGoalMissed: a lost token with no regeneration misses the goal;
// the counterexample is the shortest path to the state the fair schedule
// fails from, plus the recorded schedule.
func TestLivenessGoalMissed(t *testing.T) {
	r := check[ringState, ringAct](t, ring{N: 4}, Bounds{Workers: 2})
	require.Equal(t, Violation, r.Outcome)
	ce := r.Violation
	assert.Equal(t, spec.Property("token-exists"), ce.Property)
	assert.Equal(t, "no token after the faults healed", ce.Message)
	assert.True(t, ce.Liveness)
	assert.Equal(t, GoalMissed, ce.Verdict)
	assert.Equal(t, []ringAct{lose}, ce.Path)
	assert.Empty(t, ce.Schedule, "nothing is enabled once the token is lost")

	// Safety only: the same system holds.
	r = check[ringState, ringAct](t, ring{N: 4}, Bounds{SafetyOnly: true})
	assert.Equal(t, OK, r.Outcome)
	// With regeneration the goal holds everywhere.
	r = check[ringState, ringAct](t, ring{N: 4, Regen: true}, Bounds{})
	assert.Equal(t, OK, r.Outcome)
}

// TestLivenessSafetyOnTheWay: a safety violation met inside a fair schedule
// is reported (as a liveness counterexample with its schedule) when the BFS
// finds no violation itself, here because of the depth bound; without the
// bound the BFS finds the shorter, plain one.
func TestLivenessSafetyOnTheWay(t *testing.T) {
	sys := ring{N: 6, Bad: 4, Regen: true}
	r := check[ringState, ringAct](t, sys, Bounds{MaxDepth: 1, Workers: 1})
	require.Equal(t, Violation, r.Outcome)
	ce := r.Violation
	assert.Equal(t, spec.Property("never-at-bad"), ce.Property)
	assert.Equal(t, SafetyBroken, ce.Verdict)
	assert.True(t, ce.Liveness)
	assert.Empty(t, ce.Path, "the fair schedule from the initial state breaks it")
	// The schedule passes the token round until it repeats; its fourth
	// step (and every sixth after it) enters the bad position.
	states := replay[ringState, ringAct](sys, ce.Start, ce.Schedule)
	require.Greater(t, len(states), 4)
	for i, a := range ce.Schedule {
		assert.Equal(t, pass, a)
		idx, _ := sys.Safety(&states[i], &states[i+1])
		assert.Equal(t, (i+1)%6 == 4, idx == 0, "step %d", i+1)
	}

	r = check[ringState, ringAct](t, sys, Bounds{Workers: 1})
	require.Equal(t, Violation, r.Outcome)
	assert.False(t, r.Violation.Liveness)
	assert.Len(t, r.Violation.Path, 4)
}

// TestSettle: the recorded fair schedule heals first, and its verdicts.
func TestSettle(t *testing.T) {
	sys := ring{N: 3, Regen: true}
	st := Settle[ringState, ringAct](sys, ringState{Pos: 1, Paused: true, Faults: 1}, Bounds{})
	assert.Equal(t, Holds, st.Verdict)
	assert.Equal(t, 1, st.Healing)
	require.NotEmpty(t, st.Schedule)
	assert.Equal(t, resume, st.Schedule[0])
	assert.False(t, st.Healed.Paused)
	assert.Equal(t, len(st.Schedule)-st.Healing, st.Steps)

	st = Settle[ringState, ringAct](sys, ringState{}, Bounds{MaxFairSteps: 2})
	assert.Equal(t, Unsettled, st.Verdict, "the ring needs 3 passes to repeat")

	st = Settle[ringState, ringAct](ring{N: 3}, ringState{Lost: true, Faults: 1}, Bounds{})
	assert.Equal(t, GoalMissed, st.Verdict)
	assert.Equal(t, spec.Property("token-exists"), st.Property)
}

func TestSimulate(t *testing.T) {
	r, err := Simulate[gridState, gridAct](grid{Max: 10, Bad: 6}, Bounds{}, Walks{Seed: 1, Count: 10, Depth: 20})
	require.NoError(t, err)
	require.Equal(t, Violation, r.Outcome)
	assert.Len(t, r.Violation.Path, 6)

	r, err = Simulate[gridState, gridAct](grid{Max: 10}, Bounds{}, Walks{Seed: 1, Count: 10, Depth: 20})
	require.NoError(t, err)
	assert.Equal(t, Inconclusive, r.Outcome, "random walks prove nothing")
	assert.Equal(t, int64(10*20), r.Distinct, "every walk runs to the grid's corner: 20 steps")

	rr, err := Simulate[ringState, ringAct](ring{N: 3}, Bounds{}, Walks{Seed: 2, Count: 50, Depth: 5})
	require.NoError(t, err)
	require.Equal(t, Violation, rr.Outcome)
	assert.True(t, rr.Violation.Liveness)
	assert.Equal(t, GoalMissed, rr.Violation.Verdict)

	_, err = Simulate[gridState, gridAct](grid{Max: 10}, Bounds{}, Walks{Count: 0, Depth: 1})
	assert.Error(t, err)
}

func TestOutcome(t *testing.T) {
	assert.Equal(t, "unknown", Outcome(0).String())
	assert.False(t, Outcome(0).Complete(), "no outcome is never a pass")
	assert.Equal(t, []string{"ok", "violation", "bound-reached", "inconclusive"},
		[]string{OK.String(), Violation.String(), BoundReached.String(), Inconclusive.String()})
	assert.True(t, OK.Complete())
	assert.True(t, Violation.Complete())
	assert.False(t, BoundReached.Complete())
	assert.False(t, Inconclusive.Complete())
	assert.Equal(t, "liveness=true", Bounds{Workers: 3}.String())
	assert.Equal(t, "liveness=false depth<=4 states<=9", Bounds{SafetyOnly: true, MaxDepth: 4, MaxStates: 9}.String())
}

// TestFPSet: the table keeps every fingerprint once, within 21.4 bytes per
// fingerprint (8-byte slots, at least 3/8 full after a doubling) plus the
// shards' initial tables, and 8.4-12 bytes when the memory budget stops its
// growth (each shard then fills to 95 %); a value table keeps values; a memory budget
// refuses growth past it.
func TestFPSet(t *testing.T) {
	s := newFPTable(0, nil)
	r := rand.New(rand.NewPCG(1, 2))
	const n = 300000
	fps := make([]uint64, n)
	for i := range fps {
		fps[i] = r.Uint64()
		require.Equal(t, fpAdded, s.insert(fps[i], 0))
	}
	for _, fp := range fps {
		require.Equal(t, fpPresent, s.insert(fp, 0))
	}
	assert.Equal(t, fpAdded, s.insert(0, 0))
	assert.Equal(t, fpPresent, s.insert(1, 0), "0 is stored as 1")
	assert.Equal(t, n+1, s.len())
	assert.LessOrEqual(t, float64(s.bytes()), 16/0.75*(n+1)+fpShards*fpShardInitial*8)

	v := newFPTable(memoBits, nil)
	for i, fp := range fps[:1000] {
		require.True(t, v.put(fp, uint64(i%40)))
	}
	for i, fp := range fps[:1000] {
		got, ok := v.get(fp)
		require.True(t, ok)
		require.Equal(t, uint64(i%40), got)
	}
	_, ok := v.get(fps[1000])
	assert.False(t, ok)

	m := &memBudget{limit: fpShards * fpShardInitial * 8 * 2}
	b := newFPTable(0, m)
	refused := 0
	for _, fp := range fps {
		if b.insert(fp, 0) == fpFull {
			refused++
		}
	}
	assert.Positive(t, refused, "the budget stops the table's growth")
	assert.LessOrEqual(t, m.used.Load(), m.limit)
	perFP := float64(b.bytes()) / float64(b.len())
	assert.Less(t, perFP, 12.0, "filled towards 95 %% at the budget: %.1f bytes per fingerprint", perFP)
	t.Logf("at the budget: %.2f bytes per fingerprint", perFP)
}

// TestCollisionProbability: the birthday bound.
func TestCollisionProbability(t *testing.T) {
	assert.InDelta(t, 2.9e-8, CollisionProbability(1042254), 0.1e-8)
	assert.Equal(t, 1.0, CollisionProbability(1<<40))
}

// TestMemoryBudgetSpills: under a memory budget the frontier and the
// trail spill to disk (here every block, as if the budget were full), and
// the search counts the same states and finds the same shortest
// counterexample as without; the spill files are removed.
func TestMemoryBudgetSpills(t *testing.T) {
	defer func(f float64) { spillFraction = f }(spillFraction)
	spillFraction = 0
	g := grid{Max: 200}
	free := check[gridState, gridAct](t, g, Bounds{Workers: 2})
	dir := t.TempDir()
	spilt := check[gridState, gridAct](t, g, Bounds{Workers: 2, Memory: MinMemory, SpillDir: dir})
	assert.Equal(t, OK, spilt.Outcome, spilt.Reason)
	assert.Equal(t, [3]int64{free.Distinct, free.Transitions, int64(free.Depth)}, [3]int64{spilt.Distinct, spilt.Transitions, int64(spilt.Depth)})
	assert.Greater(t, spilt.Spilled, 16*spilt.Distinct, "the states spilled besides the trail (16 bytes a state)")
	files, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, files, "the spill files are removed")

	bad := grid{Max: 200, Bad: 150}
	r := check[gridState, gridAct](t, bad, Bounds{Workers: 2, Memory: MinMemory, SpillDir: dir})
	require.Equal(t, Violation, r.Outcome)
	assert.Len(t, r.Violation.Path, 150, "the trail read back from disk gives a shortest path")
	assert.Positive(t, r.Spilled)
}

// TestSymmetric: a symmetric system is explored by representatives (the
// unordered pairs of the grid), with the same verdicts and shortest
// counterexamples in the original names.
func TestSymmetric(t *testing.T) {
	m := mirror{grid{Max: 40}}
	r := check[gridState, gridAct](t, m, Bounds{})
	assert.Equal(t, OK, r.Outcome)
	assert.Equal(t, int64(41*42/2), r.Distinct, "orbits: pairs with X <= Y")
	assert.Equal(t, 2, r.Symmetry)
	r = check[gridState, gridAct](t, m, Bounds{NoSymmetry: true})
	assert.Equal(t, int64(41*41), r.Distinct)
	assert.Equal(t, 1, r.Symmetry)

	bad := mirror{grid{Max: 40, Bad: 7}}
	r = check[gridState, gridAct](t, bad, Bounds{Workers: 1})
	require.Equal(t, Violation, r.Outcome)
	require.Len(t, r.Violation.Path, 7)
	states := replay[gridState, gridAct](bad, r.Violation.Start, r.Violation.Path)
	idx, _ := bad.Safety(&states[len(states)-2], &states[len(states)-1])
	assert.Equal(t, 0, idx, "the path replays on the concrete system")
}
