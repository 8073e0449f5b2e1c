package spec

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// allKinds hides its property's row's Kinds: Checker gives it every event.
type allKinds struct{ Monitor }

func (allKinds) everyKind() {}

// TestCheckerRoutesByKind checks that routing events by the kinds each
// monitor reads, and sharing one dispatcher tracker among the monitors
// that keep one (NewChecker), change nothing: on random streams over a small world (so
// that monitors meet the same changefeeds, nodes, dispatchers and spans
// again and violations happen), a Checker that routes and one that gives
// every monitor every event report the same violations at every step.
func TestCheckerRoutesByKind(t *testing.T) {
	total := 0
	for seed := uint64(1); seed <= 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, seed*7919))
		routed := NewChecker(Config{ErrorWindow: 5, ErrorMinReports: 2})
		var wrapped []Monitor
		for _, m := range NewMonitors(Config{ErrorWindow: 5, ErrorMinReports: 2}) {
			wrapped = append(wrapped, allKinds{m})
		}
		every := &Checker{Monitors: wrapped}
		for i := 0; i < 400; i++ {
			e := randomEvent(rng, int64(i))
			got, want := routed.Observe(e), every.Observe(e)
			require.Equal(t, want, got, "seed %d step %d: %s", seed, i, e)
			total += len(want)
		}
		require.Equal(t, every.Finish(), routed.Finish(), "seed %d: Finish", seed)
	}
	// the streams must exercise the monitors, or the comparison is hollow
	require.Greater(t, total, 1000, "violations over all streams")
}

func randomEvent(rng *rand.Rand, time int64) Event {
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	tables := func() []int64 {
		var ts []int64
		for i := rng.IntN(3); i > 0; i-- {
			ts = append(ts, int64(1+rng.IntN(3)))
		}
		return ts
	}
	span := Span{Table: int64(rng.IntN(4))}
	if rng.IntN(3) == 0 {
		span.Start, span.End = pick("", "a", "m"), pick("", "m", "z")
	}
	return Event{
		Kind:          Kind(1 + rng.IntN(int(kindCount)-1)),
		Time:          time,
		Changefeed:    pick("", "cf1", "cf2"),
		Node:          pick("", "n1", "n2", "n3"),
		Origin:        pick("", "n1", "n2"),
		Epoch:         uint64(rng.IntN(3)),
		Checkpoint:    uint64(rng.IntN(20)),
		Span:          span,
		Tables:        tables(),
		Dropped:       tables(),
		Added:         tables(),
		Influence:     pick("", InfluenceNormal, InfluenceDB, InfluenceAll),
		Dispatcher:    pick("d1", "d2", "d3"),
		Op:            Op(pick(string(OpAdd), string(OpMove), string(OpRemove))),
		State:         pick("", StateNormal, StateWarning, StateFailed, StateStopped, StateRemoved, StageWaiting, StageDone),
		Err:           pick("", "boom", "[CDC:ErrGCTTLExceeded]gc"),
		Reason:        pick("", "", "canceled"),
		BootstrapDone: rng.IntN(2) == 0,
		Accepted:      rng.IntN(4) > 0,
		RemovalOnly:   rng.IntN(5) == 0,
		Merge:         rng.IntN(6) == 0,
		SyncPoint:     rng.IntN(2) == 0,
		Source:        Source{File: "x.log", Line: int(time), Text: fmt.Sprint(time)},
	}
}
