package search

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Walks parameterizes Simulate.
type Walks struct {
	Seed  uint64 // the walks are a function of the seed
	Count int    // walks
	Depth int    // steps per walk at most
}

// Validate reports the first parameter out of range.
func (w Walks) Validate() error {
	if w.Count < 1 || w.Depth < 1 {
		return fmt.Errorf("random walks: count and depth must be >= 1, got %d and %d", w.Count, w.Depth)
	}
	return nil
}

// Simulate runs random walks and judges safety on every step and (unless
// b.SafetyOnly) liveness by fair settling at the end of each walk. It reads
// only SafetyOnly and MaxFairSteps from b. Distinct counts the visited
// states, not deduplicated. Without a violation the outcome is Inconclusive:
// random walks prove nothing.
func Simulate[S, A any](sys System[S, A], b Bounds, w Walks) (Result[S, A], error) {
	if err := b.Validate(); err != nil {
		return Result[S, A]{}, err
	}
	if err := w.Validate(); err != nil {
		return Result[S, A]{}, err
	}
	start := time.Now()
	var res Result[S, A]
	var live *liveness[S, A]
	if f, ok := sys.(Fair[S, A]); ok && b.Liveness() {
		live = newLiveness(f, b)
	}
	inits := sys.Initial()
	r := rand.New(rand.NewPCG(w.Seed, w.Seed^0x9e3779b97f4a7c15))
	var buf []A
	var sc fairScratch[S, A]
	for walk := 0; walk < w.Count; walk++ {
		init := inits[walk%len(inits)]
		s := init
		var path []A
		for d := 0; d < w.Depth; d++ {
			buf = sys.Actions(&s, buf[:0])
			if len(buf) == 0 {
				break
			}
			a := buf[r.IntN(len(buf))]
			nx := s
			sys.Step(&nx, a)
			res.Transitions++
			res.Distinct++
			path = append(path, a)
			if idx, msg := sys.Safety(&s, &nx); idx >= 0 {
				res.Violation = &Counterexample[S, A]{Property: sys.SafetyProperties()[idx], Message: msg, Start: init, Path: path}
				res.Outcome = Violation
				res.Depth = len(path)
				res.Seconds = time.Since(start).Seconds()
				return res, nil
			}
			s = nx
			res.Depth = max(res.Depth, len(path))
		}
		if live != nil {
			if c := live.judge(&sc, &s, 0, nil, false); live.verdict(c) == GoalMissed {
				ce := &Counterexample[S, A]{Property: live.property(c), Start: init, Path: path}
				live.explain(ce, s, nil)
				res.Violation = ce
				res.Outcome = Violation
				res.Seconds = time.Since(start).Seconds()
				return res, nil
			}
		}
	}
	res.Outcome = Inconclusive
	res.Reason = fmt.Sprintf("random walks (%d walks, seed %d) cannot prove the absence of violations", w.Count, w.Seed)
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}
