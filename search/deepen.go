package search

import (
	"fmt"
	"time"
)

// Budget is the wall-clock budget of a deepening search. The search, not
// the system it explores, reads the clock (spec/purity_test.go), so a
// system passes a Budget on without importing time.
type Budget = time.Duration

// CheckDelays runs delay-bounded searches (Check with b.DelayBounded) for
// k = b.DelayBound, k+1, ... within budget of wall-clock time, and returns
// the search of the largest k that completed: complete up to k delays, or
// exhaustive (OK: the bound cut nothing, so a larger k explores nothing
// more), or the first violation found (a violation within k delays; the
// smallest such k, so the counterexample is shortest among the runs within
// it). The search that the budget (or b.Stop, or another bound) cut is the
// last of tries and is not returned unless no k completed. tries lists
// every search run, in order. Each k explores again what k-1 explored: the
// runs within k delays grow geometrically with k, so the repeated work is
// a fraction of the last search.
func CheckDelays[S, A any](sys System[S, A], b Bounds, budget Budget, progress func(Progress)) (res Result[S, A], tries []Stats, err error) {
	if budget <= 0 {
		return res, nil, fmt.Errorf("the delay search's time budget must be > 0, got %s", budget)
	}
	b.DelayBounded = true
	if err := b.Validate(); err != nil {
		return res, nil, err
	}
	deadline := time.NewTimer(budget)
	defer deadline.Stop()
	stop := make(chan struct{})
	quit := make(chan struct{})
	defer close(quit)
	outer := b.Stop
	go func() {
		select {
		case <-deadline.C:
		case <-outer:
		case <-quit:
			return
		}
		close(stop)
	}()
	b.Stop = stop
	var done bool
	for k := b.DelayBound; k <= MaxDelayBound; k++ {
		b.DelayBound = k
		r, err := Check(sys, b, progress)
		if err != nil {
			return res, tries, err
		}
		tries = append(tries, r.Stats)
		if _, ok := r.CompleteUpToDelays(); !ok && r.Outcome != OK && r.Outcome != Violation {
			if !done {
				res = r // nothing completed: the cut search is all there is
			}
			break
		}
		res, done = r, true
		if r.Outcome != BoundReached {
			break // exhaustive, or a violation
		}
		select {
		case <-stop:
			k = MaxDelayBound // out of time between two searches
		default:
		}
	}
	return res, tries, nil
}
