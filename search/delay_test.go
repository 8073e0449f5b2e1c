package search

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/spec"
)

// cornerGrid is the grid whose safety property fails at (0, Y): X's bump is
// the default scheduler's choice (the first action), so the corner needs Y
// delays.
type cornerGrid struct {
	grid
	Y uint8
}

func (g cornerGrid) Safety(_, next *gridState) (int, string) {
	if next.X == 0 && next.Y == g.Y {
		return 0, "the corner was reached"
	}
	return -1, ""
}

// TestDelayBoundGrid: on the grid (bumping X is the default), a state
// (x, y) with x < Max needs y delays and one with x = Max none, so a bound
// k keeps (Max+1) + Max*(k+1) states; a bound the grid never reaches
// prunes nothing and the search is exhaustive.
func TestDelayBoundGrid(t *testing.T) {
	g := grid{Max: 5}
	for k := 0; k <= 4; k++ {
		for _, w := range []int{1, 3} {
			r := check[gridState, gridAct](t, g, Bounds{Workers: w, DelayBounded: true, DelayBound: k})
			assert.Equal(t, int64(6+5*(k+1)), r.Distinct, "k=%d workers=%d", k, w)
			require.Equal(t, BoundReached, r.Outcome, "k=%d", k)
			got, ok := r.CompleteUpToDelays()
			assert.True(t, ok, "k=%d: %s", k, r.Reason)
			assert.Equal(t, k, got)
			assert.Positive(t, r.DelayPruned)
			assert.Equal(t, "delay-bound k="+string(rune('0'+k)), r.Reduction)
		}
	}
	full := check[gridState, gridAct](t, g, Bounds{})
	r := check[gridState, gridAct](t, g, Bounds{DelayBounded: true, DelayBound: 5})
	assert.Equal(t, OK, r.Outcome, r.Reason)
	assert.Zero(t, r.DelayPruned)
	assert.Equal(t, [3]int64{full.Distinct, full.Transitions, int64(full.Depth)}, [3]int64{r.Distinct, r.Transitions, int64(r.Depth)})
	_, ok := full.CompleteUpToDelays()
	assert.False(t, ok, "a search without a delay bound is never complete up to k delays")
	assert.Equal(t, "none", full.Reduction)

	// A cut by another bound is not completeness up to k delays.
	r = check[gridState, gridAct](t, g, Bounds{DelayBounded: true, DelayBound: 1, MaxDepth: 3})
	_, ok = r.CompleteUpToDelays()
	assert.False(t, ok, r.Reason)
}

// TestDelayBoundViolation: a violation that needs 3 delays is not found
// within 2 and is found, by a shortest path, within 3.
func TestDelayBoundViolation(t *testing.T) {
	g := cornerGrid{grid{Max: 6}, 3}
	r := check[gridState, gridAct](t, g, Bounds{DelayBounded: true, DelayBound: 2})
	require.Equal(t, BoundReached, r.Outcome)
	r = check[gridState, gridAct](t, g, Bounds{Workers: 2, DelayBounded: true, DelayBound: 3})
	require.Equal(t, Violation, r.Outcome)
	assert.Equal(t, []gridAct{bumpY, bumpY, bumpY}, r.Violation.Path)
	assert.Equal(t, spec.Property("sum-not-bad"), r.Violation.Property)
}

// graph is a toy system of explicit edges; the first edge of a node is the
// default scheduler's choice. Safety fails on entering Bad.
type graph struct {
	Edges map[uint8][]uint8
	Bad   uint8
}

func (g graph) Initial() []uint8 { return []uint8{0} }
func (g graph) Actions(s *uint8, buf []uint8) []uint8 {
	return append(buf, g.Edges[*s]...)
}
func (g graph) Step(s *uint8, a uint8)                { *s = a }
func (g graph) Canonical(s *uint8, buf []byte) []byte { return append(buf, *s) }
func (g graph) Cut(*uint8) bool                       { return false }
func (g graph) SafetyProperties() []spec.Property     { return []spec.Property{"never-bad"} }
func (g graph) Safety(_, next *uint8) (int, string) {
	if *next == g.Bad {
		return 0, "entered the bad node"
	}
	return -1, ""
}

// TestDelayBoundReexpands: node 2 is reached first at depth 1 with a delay
// (0 -> 2) and later at depth 3 without (0 -> 1 -> 3 -> 2). Node 6 costs a
// delay from 2, so within one delay it is reachable only through the later
// visit: the search expands 2 (and then 5) again, and the counterexample is the
// shortest among the runs within the bound.
func TestDelayBoundReexpands(t *testing.T) {
	g := graph{Edges: map[uint8][]uint8{0: {1, 2}, 1: {3}, 3: {2}, 2: {5, 6}}, Bad: 6}
	r := check[uint8, uint8](t, g, Bounds{Workers: 1, DelayBounded: true, DelayBound: 1})
	require.Equal(t, Violation, r.Outcome)
	assert.Equal(t, []uint8{1, 3, 2, 6}, r.Violation.Path)
	assert.EqualValues(t, 2, r.Reexpanded, "2, then 5 (its default successor) with fewer delays")

	r = check[uint8, uint8](t, g, Bounds{DelayBounded: true, DelayBound: 0})
	require.Equal(t, BoundReached, r.Outcome)
	r = check[uint8, uint8](t, g, Bounds{})
	require.Equal(t, Violation, r.Outcome)
	assert.Equal(t, []uint8{2, 6}, r.Violation.Path, "without the bound the shortest run is shorter")
}

func TestDelayBoundValidate(t *testing.T) {
	assert.Error(t, Bounds{DelayBounded: true, DelayBound: -1}.Validate())
	assert.Error(t, Bounds{DelayBounded: true, DelayBound: MaxDelayBound + 1}.Validate())
	assert.NoError(t, Bounds{DelayBounded: true, DelayBound: MaxDelayBound}.Validate())
	assert.Contains(t, Bounds{DelayBounded: true, DelayBound: 2}.String(), "delays<=2")
}

// TestCheckDelays: the deepening search returns the largest k that
// completed, or the first violation (at the smallest k that shows it), or
// the exhaustive search once a bound cuts nothing.
func TestCheckDelays(t *testing.T) {
	g := cornerGrid{grid{Max: 6}, 3}
	r, tries, err := CheckDelays[gridState, gridAct](g, Bounds{}, time.Minute, nil)
	require.NoError(t, err)
	require.Equal(t, Violation, r.Outcome)
	assert.Equal(t, 3, r.DelayBound)
	assert.Len(t, tries, 4, "k = 0, 1, 2, 3")
	assert.Len(t, r.Violation.Path, 3)

	r, tries, err = CheckDelays[gridState, gridAct](grid{Max: 4}, Bounds{DelayBound: 2}, time.Minute, nil)
	require.NoError(t, err)
	assert.Equal(t, OK, r.Outcome, "k = 4 cuts nothing on a 4 x 4 grid")
	assert.Len(t, tries, 3, "k = 2, 3, 4")

	// A budget that runs out: the last search is cut, the one before it
	// is returned.
	stop := make(chan struct{})
	close(stop)
	r, tries, err = CheckDelays[gridState, gridAct](grid{Max: 200}, Bounds{Stop: stop}, time.Minute, nil)
	require.NoError(t, err)
	require.Len(t, tries, 1)
	assert.Equal(t, BoundReached, r.Outcome, "nothing completed: the cut search")
	_, ok := r.CompleteUpToDelays()
	assert.False(t, ok)

	_, _, err = CheckDelays[gridState, gridAct](grid{Max: 2}, Bounds{}, 0, nil)
	assert.Error(t, err)
}
