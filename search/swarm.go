package search

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"cdcspec/spec"
)

// Swarm parameterizes SwarmCheck: a budgeted search for configurations too
// big to exhaust. Workers alternate random walks from an initial state and
// bounded-depth breadth-first searches from the end of a random prefix,
// each worker with its own seed, until the time budget is spent or a
// violation is found.
type Swarm struct {
	Seed      uint64        // worker i draws from Seed+i
	Time      time.Duration // the budget (required)
	WalkDepth int           // steps per random walk at most; 0 = 100
	BFSDepth  int           // depth of a bounded search; 0 = 6
	BFSStates int           // states of one bounded search at most; 0 = 20000
}

// Validate reports the first parameter out of range.
func (w Swarm) Validate() error {
	if w.Time <= 0 {
		return fmt.Errorf("swarm: the time budget must be > 0, got %s", w.Time)
	}
	if w.WalkDepth < 0 || w.BFSDepth < 0 || w.BFSStates < 0 {
		return fmt.Errorf("swarm: walk depth, search depth and search states must be >= 0")
	}
	return nil
}

func (w Swarm) walkDepth() int { return orDefault(w.WalkDepth, 100) }
func (w Swarm) bfsDepth() int  { return orDefault(w.BFSDepth, 6) }
func (w Swarm) bfsStates() int { return orDefault(w.BFSStates, 20000) }

func orDefault(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}

// Coverage is what a swarm exercised.
type Coverage struct {
	Walks, Searches int64
	// Depths[d] is the number of distinct states first seen d steps from
	// an initial state (along the walk or prefix+search that found them).
	Depths []int64
	// Actions counts the transitions taken per action name (Named), or
	// under "action" when the system does not name them.
	Actions map[string]int64
	// SafetyJudged is the transitions on which every safety property was
	// judged; FairRuns the fair schedules run to judge liveness, by verdict.
	SafetyJudged int64
	FairRuns     map[Verdict]int64
	Safety       []spec.Property
	Liveness     []spec.Property
}

// SwarmCheck runs a swarm on sys within b (only SafetyOnly, MaxFairSteps,
// NoSymmetry, Memory and Workers are read) and sw. Distinct counts the
// distinct states (orbits, with symmetry) seen. Without a violation the
// outcome is Inconclusive: a swarm proves nothing. A violation's path is
// the walk (or prefix and search path) that met it: real, not shortest.
func SwarmCheck[S, A any](sys System[S, A], b Bounds, sw Swarm, progress func(Progress)) (Result[S, A], Coverage, error) {
	if err := b.Validate(); err != nil {
		return Result[S, A]{}, Coverage{}, err
	}
	if err := sw.Validate(); err != nil {
		return Result[S, A]{}, Coverage{}, err
	}
	r := newRun(sys, Bounds{Workers: b.Workers, SafetyOnly: b.SafetyOnly, MaxFairSteps: b.MaxFairSteps, NoSymmetry: b.NoSymmetry, Memory: b.Memory, Stop: b.Stop})
	defer r.close()
	defer r.watchStop()()
	r.inits = sys.Initial()
	deadline := r.start.Add(sw.Time)
	sh := &swarmShared[S, A]{deadline: deadline}
	stop := tick(progress, func(el time.Duration) Progress {
		d := r.distinct.Load()
		p := Progress{Distinct: d, Depth: int(r.depth.Load()), Elapsed: el, StatesPerSec: float64(d) / el.Seconds()}
		if left := time.Until(deadline); left > 0 {
			p.ETA = left
		}
		return p
	})
	var wg sync.WaitGroup
	ws := make([]*swarmWorker[S, A], r.workers)
	for i := range ws {
		w := &swarmWorker[S, A]{r: r, sh: sh, sw: sw, actions: map[string]int64{},
			rng: rand.New(rand.NewPCG(sw.Seed+uint64(i), (sw.Seed+uint64(i))^0x9e3779b97f4a7c15))}
		ws[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.loop()
		}()
	}
	wg.Wait()
	stop()

	res := Result[S, A]{Stats: Stats{Distinct: r.distinct.Load(), Transitions: r.transitions.Load(), Symmetry: 1}}
	if r.sym != nil {
		res.Symmetry = r.sym.SymmetryGroup()
	}
	cov := Coverage{Actions: map[string]int64{}, FairRuns: map[Verdict]int64{}, Safety: sys.SafetyProperties()}
	if r.live != nil {
		cov.Liveness = r.live.live
	}
	for _, w := range ws {
		cov.Walks += w.walks
		cov.Searches += w.searches
		cov.SafetyJudged += w.judged
		for k, v := range w.actions {
			cov.Actions[k] += v
		}
		for v, n := range w.fair {
			cov.FairRuns[Verdict(v)] += n
		}
		for d, n := range w.depths {
			for len(cov.Depths) <= d {
				cov.Depths = append(cov.Depths, 0)
			}
			cov.Depths[d] += n
		}
	}
	res.Depth = len(cov.Depths) - 1
	res.Seconds = time.Since(r.start).Seconds()
	res.Collision = CollisionProbability(res.Distinct)
	switch {
	case sh.ce != nil:
		res.Outcome, res.Violation = Violation, sh.ce
	default:
		res.Outcome = Inconclusive
		res.Reason = fmt.Sprintf("swarm: the time budget (%s) is spent; random walks and bounded searches (seed %d) cannot prove the absence of violations", sw.Time, sw.Seed)
		if h := r.haltReason(); h != "" {
			res.Reason = "swarm: " + h
		}
	}
	return res, cov, nil
}

type swarmShared[S, A any] struct {
	deadline time.Time
	done     atomic.Bool
	mu       sync.Mutex
	ce       *Counterexample[S, A]
}

func (sh *swarmShared[S, A]) over() bool {
	return sh.done.Load() || time.Now().After(sh.deadline)
}

// report keeps the first violation and stops the swarm.
func (sh *swarmShared[S, A]) report(ce *Counterexample[S, A]) {
	sh.mu.Lock()
	if sh.ce == nil {
		sh.ce = ce
	}
	sh.mu.Unlock()
	sh.done.Store(true)
}

type swarmWorker[S, A any] struct {
	r                       *run[S, A]
	sh                      *swarmShared[S, A]
	sw                      Swarm
	rng                     *rand.Rand
	acts                    []A
	canon                   []byte
	walks, searches, judged int64
	actions                 map[string]int64
	weights                 map[string]float64 // this walk's bias per action name
	depths                  []int64
	fair                    [5]int64
	fairSc                  fairScratch[S, A]
}

func (w *swarmWorker[S, A]) loop() {
	for i := 0; !w.sh.over() && !w.r.halted.Load(); i++ {
		if i%4 == 3 {
			w.search()
		} else {
			w.walk()
		}
	}
}

// seen records a state at depth d and reports whether it is new.
func (w *swarmWorker[S, A]) seen(s *S, d int) bool {
	k := *s
	var fp uint64
	fp, w.canon = w.r.key(&k, w.canon)
	switch w.r.seen.insert(fp, 0) {
	case fpPresent:
		return false
	case fpFull:
		w.r.memoryFull()
		return false
	}
	w.r.distinct.Add(1)
	for len(w.depths) <= d {
		w.depths = append(w.depths, 0)
	}
	w.depths[d]++
	for {
		m := w.r.depth.Load()
		if int64(d) <= m || w.r.depth.CompareAndSwap(m, int64(d)) {
			break
		}
	}
	return true
}

func (w *swarmWorker[S, A]) name(a A) string {
	if n, ok := w.r.sys.(Named[A]); ok {
		return n.ActionName(a)
	}
	return "action"
}

// try steps a from s into *nx and judges safety; false: a violation
// (reported) ends the swarm.
func (w *swarmWorker[S, A]) try(start S, path func() []A, s *S, a A, nx *S) bool {
	*nx = *s
	w.r.sys.Step(nx, a)
	w.r.transitions.Add(1)
	w.judged++
	w.actions[w.name(a)]++
	if idx, msg := w.r.sys.Safety(s, nx); idx >= 0 {
		p := append(path(), a)
		w.sh.report(&Counterexample[S, A]{Property: w.r.sys.SafetyProperties()[idx], Message: msg, Start: start, Path: p})
		return false
	}
	return true
}

// judge settles s (liveness); false: a violation (reported).
func (w *swarmWorker[S, A]) judge(start S, path func() []A, s *S) bool {
	r := w.r
	if r.live == nil || r.sys.Cut(s) {
		return true
	}
	k := *s
	if r.sym != nil {
		r.sym.Represent(&k)
	}
	var fp uint64
	fp, w.canon = fingerprint(r.sys, &k, w.canon)
	c, ok := r.memo.get(fp)
	if !ok {
		c = uint64(r.live.judge(&w.fairSc, &k, fp, r.memo, false))
	}
	v := r.live.verdict(code(c))
	w.fair[v]++
	if v == GoalMissed || v == SafetyBroken {
		ce := &Counterexample[S, A]{Property: r.live.property(code(c)), Start: start, Path: path()}
		r.live.explain(ce, *s, r.sym)
		w.sh.report(ce)
		return false
	}
	return true
}

// swarmWeights are the biases a walk draws for each action name: the
// swarm's diversity (each walk favours some kinds of step and neglects
// others, as swarm verification varies its searches' configurations).
var swarmWeights = []float64{0.05, 0.3, 1, 1, 3, 10}

// pick chooses one of w.acts, by this walk's weights.
func (w *swarmWorker[S, A]) pick() A {
	if w.weights == nil {
		return w.acts[w.rng.IntN(len(w.acts))]
	}
	total := 0.0
	ws := make([]float64, len(w.acts))
	for i, a := range w.acts {
		n := w.name(a)
		x, ok := w.weights[n]
		if !ok {
			x = swarmWeights[w.rng.IntN(len(swarmWeights))]
			w.weights[n] = x
		}
		ws[i] = x
		total += x
	}
	f := w.rng.Float64() * total
	for i, x := range ws {
		if f < x {
			return w.acts[i]
		}
		f -= x
	}
	return w.acts[len(w.acts)-1]
}

// walk is one random walk from an initial state, judged on every step and,
// at its end, by fair settling. Half the walks are uniform; the others
// draw a bias per action kind. Their lengths vary up to WalkDepth.
func (w *swarmWorker[S, A]) walk() {
	w.walks++
	w.weights = nil
	if w.rng.IntN(2) == 0 {
		w.weights = map[string]float64{}
	}
	start := w.r.inits[w.rng.IntN(len(w.r.inits))]
	w.seen(&start, 0)
	s, path, ok := w.randomRun(start, 1+w.rng.IntN(w.sw.walkDepth()), true)
	if !ok {
		return
	}
	w.judge(start, func() []A { return append([]A(nil), path...) }, &s)
}

// randomRun takes up to depth random steps from start (stopping early at a
// cut or a dead end, and, when bounded, once the swarm's budget is spent),
// recording each state it reaches; ok is false when a step violated a
// property (try reported it).
func (w *swarmWorker[S, A]) randomRun(start S, depth int, bounded bool) (s S, path []A, ok bool) {
	s = start
	cp := func() []A { return append([]A(nil), path...) }
	for d := 0; d < depth && !(bounded && w.sh.over()); d++ {
		if w.r.sys.Cut(&s) {
			break
		}
		w.acts = w.r.sys.Actions(&s, w.acts[:0])
		if len(w.acts) == 0 {
			break
		}
		a := w.pick()
		var nx S
		if !w.try(start, cp, &s, a, &nx) {
			return s, path, false
		}
		path = append(path, a)
		s = nx
		w.seen(&s, len(path))
	}
	return s, path, true
}

// search is a bounded breadth-first search from the end of a random
// prefix; every state it reaches is judged, liveness included.
func (w *swarmWorker[S, A]) search() {
	w.searches++
	w.weights = map[string]float64{}
	start := w.r.inits[w.rng.IntN(len(w.r.inits))]
	s, prefix, ok := w.randomRun(start, w.rng.IntN(w.sw.walkDepth()/2+1), false)
	if !ok {
		return
	}
	type node struct {
		s      S
		parent int
		a      A
		depth  int
	}
	pathOf := func(nodes []node, i int) []A {
		var p []A
		for ; i > 0; i = nodes[i].parent {
			p = append(p, nodes[i].a)
		}
		for x, y := 0, len(p)-1; x < y; x, y = x+1, y-1 {
			p[x], p[y] = p[y], p[x]
		}
		return append(append([]A(nil), prefix...), p...)
	}
	nodes := []node{{s: s, parent: -1}}
	local := map[uint64]bool{}
	for i := 0; i < len(nodes) && !w.sh.over(); i++ {
		pi := func() []A { return pathOf(nodes, i) }
		if !w.judge(start, pi, &nodes[i].s) {
			return
		}
		if nodes[i].depth >= w.sw.bfsDepth() || w.r.sys.Cut(&nodes[i].s) {
			continue
		}
		w.acts = w.r.sys.Actions(&nodes[i].s, w.acts[:0])
		acts := append([]A(nil), w.acts...)
		for _, a := range acts {
			var nx S
			if !w.try(start, pi, &nodes[i].s, a, &nx) {
				return
			}
			var fp uint64
			k := nx
			fp, w.canon = w.r.key(&k, w.canon)
			if local[fp] || len(nodes) >= w.sw.bfsStates() {
				continue
			}
			local[fp] = true
			w.seen(&nx, len(prefix)+nodes[i].depth+1)
			nodes = append(nodes, node{s: nx, parent: i, a: a, depth: nodes[i].depth + 1})
		}
	}
}

// ActionNames lists the coverage's action names, most taken first.
func (c *Coverage) ActionNames() []string {
	out := make([]string, 0, len(c.Actions))
	for k := range c.Actions {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if c.Actions[out[i]] != c.Actions[out[j]] {
			return c.Actions[out[i]] > c.Actions[out[j]]
		}
		return out[i] < out[j]
	})
	return out
}
