package search

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"cdcspec/spec"
)

// Check explores sys breadth-first from its initial states. Each level is
// expanded by the workers in parallel (exploreLevel): successors are
// deduplicated by fingerprint, safety is judged on every transition, and
// liveness by fair settling from every state (unless b.SafetyOnly; only a
// Fair system has liveness properties). The first level with a violation
// ends the search (rankViolations picks the lowest in BFS order), and its
// path is rebuilt from the stored fingerprints (rebuildPath), so the
// counterexample is a shortest one. progress, when not nil, is called about
// once a second from one goroutine.
func Check[S, A any](sys System[S, A], b Bounds, progress func(Progress)) (Result[S, A], error) {
	if err := b.Validate(); err != nil {
		return Result[S, A]{}, err
	}
	r := newRun(sys, b)
	stop := r.reportProgress(progress)
	defer stop()

	frontier := r.initialLevel()
	var best, fallback *finding[A]
	for len(frontier) > 0 {
		r.depth.Store(int64(r.level))
		lv := r.exploreLevel(frontier, b.MaxDepth == 0 || r.level < b.MaxDepth)
		best, fallback = rankViolations(lv.workers, best, fallback)
		if lv.cut && r.cut == "" {
			r.cut = "a bound (depth or network size) cut the search"
		}
		if best != nil {
			break // the shortest violations are in this level
		}
		frontier = r.addLevel(lv)
		if b.MaxStates > 0 && r.distinct.Load() >= int64(b.MaxStates) {
			r.cut = fmt.Sprintf("stopped at the state bound (%d states)", b.MaxStates)
			break
		}
	}
	if best == nil {
		best = fallback // a safety violation met inside a fair schedule: real, maybe not shortest
	}
	res := Result[S, A]{Stats: Stats{
		Distinct:    r.distinct.Load(),
		Transitions: r.transitions.Load(),
		Depth:       r.level,
	}}
	if best != nil {
		res.Violation = r.rebuildPath(best)
	}
	res.Seconds = time.Since(r.start).Seconds()
	switch {
	case best != nil:
		res.Outcome = Violation
	case r.cut != "":
		res.Outcome, res.Reason = BoundReached, r.cut
	default:
		res.Outcome = OK
	}
	return res, nil
}

// run is the state of one Check.
type run[S, A any] struct {
	sys      System[S, A]
	live     *liveness[S, A] // nil: safety only
	memo     *verdictMemo
	b        Bounds
	workers  int
	start    time.Time
	inits    []S
	seen     *fpSet
	all      []*block[S] // every level's blocks, for rebuildPath
	nextBase int64
	level    int    // depth of the frontier being expanded
	cut      string // why the search is incomplete ("" = it is not)

	distinct, transitions atomic.Int64
	queue, depth          atomic.Int64 // for progress
}

func newRun[S, A any](sys System[S, A], b Bounds) *run[S, A] {
	r := &run[S, A]{sys: sys, b: b, workers: b.Workers, start: time.Now(), seen: newFPSet()}
	if r.workers <= 0 {
		r.workers = runtime.GOMAXPROCS(0)
	}
	if f, ok := sys.(Fair[S, A]); ok && b.Liveness() {
		r.live = newLiveness(f, b)
		r.memo = newVerdictMemo()
	}
	return r
}

// block holds states discovered in one level by one worker. States are
// stored in fixed-size blocks so that growing the frontier never copies
// them; fingerprints and parents are kept after the states are expanded, to
// rebuild counterexample paths.
type block[S any] struct {
	base    int64 // global index of the block's first state
	states  []S
	fps     []uint64
	parents []int64 // global index of the parent; -1 for an initial state
}

const blockSize = 2048

func newBlock[S any]() *block[S] {
	return &block[S]{
		states:  make([]S, 0, blockSize),
		fps:     make([]uint64, 0, blockSize),
		parents: make([]int64, 0, blockSize),
	}
}

// lookup returns the block holding global index gi.
func lookup[S any](blocks []*block[S], gi int64) *block[S] {
	lo, hi := 0, len(blocks)
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if blocks[mid].base <= gi {
			lo = mid
		} else {
			hi = mid
		}
	}
	return blocks[lo]
}

// initialLevel stores the distinct initial states as level 0.
func (r *run[S, A]) initialLevel() []*block[S] {
	r.inits = r.sys.Initial()
	b0 := newBlock[S]()
	var canon []byte
	for i := range r.inits {
		var fp uint64
		fp, canon = fingerprint(r.sys, &r.inits[i], canon)
		if !r.seen.insert(fp) {
			continue
		}
		b0.states = append(b0.states, r.inits[i])
		b0.fps = append(b0.fps, fp)
		b0.parents = append(b0.parents, -1)
	}
	r.all = append(r.all, b0)
	r.nextBase = int64(len(b0.states))
	r.distinct.Store(r.nextBase)
	return []*block[S]{b0}
}

// finding is a violation found while exploring, not yet ranked.
type finding[A any] struct {
	prop   spec.Property
	msg    string
	parent int64 // global index of the state before the bad step (liveness: the state itself)
	action A     // the bad step (safety)
	live   bool
	// fairSafety: a safety property broke inside a fair schedule. It is
	// real but not shortest; the search goes on, and reports it only if it
	// finds no shorter violation.
	fairSafety bool
	order      int64 // BFS order: a deterministic choice among one level's violations
}

// found keeps f in *slot if it comes first in BFS order.
func found[A any](slot **finding[A], f *finding[A]) {
	if *slot == nil || f.order < (*slot).order {
		*slot = f
	}
}

// worker is one goroutine's share of a level.
type worker[S, A any] struct {
	r              *run[S, A]
	acts           []A
	canon          []byte
	blocks         []*block[S] // the successors it discovered
	cur            *block[S]
	best, fallback *finding[A]
	cut            bool // a bound stopped it from expanding or judging a state
}

// levelResult is the outcome of exploreLevel.
type levelResult[S, A any] struct {
	workers []*worker[S, A]
	cut     bool
}

// exploreLevel expands every state of frontier (when expand) and judges
// it, in parallel: the workers take the frontier's blocks in turn. An
// expanded block keeps only its fingerprints and parents.
func (r *run[S, A]) exploreLevel(frontier []*block[S], expand bool) levelResult[S, A] {
	n := int64(0)
	for _, b := range frontier {
		n += int64(len(b.states))
	}
	r.queue.Store(n)
	lv := levelResult[S, A]{workers: make([]*worker[S, A], r.workers)}
	var next atomic.Int64
	var wg sync.WaitGroup
	for i := range lv.workers {
		w := &worker[S, A]{r: r, cur: newBlock[S]()}
		w.blocks = append(w.blocks, w.cur)
		lv.workers[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				bi := int(next.Add(1)) - 1
				if bi >= len(frontier) {
					return
				}
				fb := frontier[bi]
				for i := range fb.states {
					w.visit(&fb.states[i], fb.fps[i], fb.base+int64(i), expand)
				}
				fb.states = nil // expanded: keep only fingerprints and parents
			}
		}()
	}
	wg.Wait()
	for _, w := range lv.workers {
		lv.cut = lv.cut || w.cut
	}
	return lv
}

// visit judges one frontier state (gi is its global index) and, when
// expand, explores its successors.
func (w *worker[S, A]) visit(st *S, fp uint64, gi int64, expand bool) {
	r := w.r
	if r.sys.Cut(st) {
		w.cut = true
		return
	}
	if r.live != nil {
		w.checkLiveness(st, fp, gi)
	}
	if !expand {
		w.cut = true
		return
	}
	w.expand(st, gi)
}

// checkLiveness judges st by fair settling, through the memo.
func (w *worker[S, A]) checkLiveness(st *S, fp uint64, gi int64) {
	r := w.r
	c := r.memo.get(fp)
	if c == codeUnknown {
		c = r.live.settle(*st, r.memo, false).code
	}
	switch r.live.verdict(c) {
	case Unsettled:
		w.cut = true
	case SafetyBroken:
		found(&w.fallback, &finding[A]{prop: r.live.property(c), parent: gi, live: true, fairSafety: true, order: gi<<8 | 255})
	case GoalMissed:
		found(&w.best, &finding[A]{prop: r.live.property(c), parent: gi, live: true, order: gi<<8 | 255})
	}
}

// expand steps every action enabled in st, judges safety on each
// transition, and keeps the successors not seen before.
func (w *worker[S, A]) expand(st *S, gi int64) {
	r := w.r
	w.acts = r.sys.Actions(st, w.acts[:0])
	for ai := range w.acts {
		if len(w.cur.states) == blockSize {
			w.cur = newBlock[S]()
			w.blocks = append(w.blocks, w.cur)
		}
		cur := w.cur
		cur.states = append(cur.states, *st)
		nx := &cur.states[len(cur.states)-1]
		r.sys.Step(nx, w.acts[ai])
		r.transitions.Add(1)
		if idx, msg := r.sys.Safety(st, nx); idx >= 0 {
			found(&w.best, &finding[A]{prop: r.sys.SafetyProperties()[idx], msg: msg, parent: gi, action: w.acts[ai], order: gi<<8 | int64(ai)})
			cur.states = cur.states[:len(cur.states)-1]
			continue
		}
		var fp uint64
		fp, w.canon = fingerprint(r.sys, nx, w.canon)
		if !r.seen.insert(fp) {
			cur.states = cur.states[:len(cur.states)-1]
			continue
		}
		cur.fps = append(cur.fps, fp)
		cur.parents = append(cur.parents, gi)
	}
}

// rankViolations folds the workers' violations of one level into best (the
// lowest in BFS order) and fallback (the first safety violation met inside
// a fair schedule).
func rankViolations[S, A any](ws []*worker[S, A], best, fallback *finding[A]) (*finding[A], *finding[A]) {
	for _, w := range ws {
		if w.best != nil {
			found(&best, w.best)
		}
		if w.fallback != nil && fallback == nil {
			fallback = w.fallback
		}
	}
	return best, fallback
}

// addLevel numbers the level's new states, keeps their blocks and returns
// them as the next frontier.
func (r *run[S, A]) addLevel(lv levelResult[S, A]) []*block[S] {
	var next []*block[S]
	added := int64(0)
	for _, w := range lv.workers {
		for _, b := range w.blocks {
			if len(b.states) == 0 {
				continue
			}
			b.base = r.nextBase
			r.nextBase += int64(len(b.states))
			added += int64(len(b.states))
			next = append(next, b)
			r.all = append(r.all, b)
		}
	}
	r.distinct.Add(added)
	if added > 0 {
		r.level++
	}
	return next
}

// rebuildPath turns a finding into a counterexample: the chain of stored
// fingerprints from an initial state to the finding, re-derived as actions
// (pathTo), plus the bad step or the recorded fair schedule.
func (r *run[S, A]) rebuildPath(f *finding[A]) *Counterexample[S, A] {
	var chain []uint64
	for i := f.parent; i >= 0; {
		b := lookup(r.all, i)
		chain = append(chain, b.fps[i-b.base])
		i = b.parents[i-b.base]
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	start, end, path := pathTo(r.sys, r.inits, chain)
	ce := &Counterexample[S, A]{Property: f.prop, Message: f.msg, Start: start, Path: path}
	if !f.live {
		ce.Path = append(ce.Path, f.action)
		return ce
	}
	r.live.explain(ce, end)
	return ce
}

// explain completes a liveness counterexample whose path ends in end with
// the recorded fair schedule from there; the recorded run is authoritative
// for the property and message.
func (l *liveness[S, A]) explain(ce *Counterexample[S, A], end S) {
	st := l.settle(end, nil, true)
	ce.Liveness = true
	ce.Schedule, ce.Healing, ce.Verdict = st.schedule, st.healing, l.verdict(st.code)
	if p := l.property(st.code); p != "" {
		ce.Property, ce.Message = p, st.msg
	}
}

// pathTo turns a chain of fingerprints (an initial state's first) into the
// actions that connect them, by re-deriving each step from the concrete
// states, so it works whatever canonical form produced the fingerprints. It
// returns the initial state, the state at the end and the actions.
func pathTo[S, A any](sys System[S, A], inits []S, chain []uint64) (start, end S, path []A) {
	var canon []byte
	for i := range inits {
		var fp uint64
		fp, canon = fingerprint(sys, &inits[i], canon)
		if fp == chain[0] {
			start = inits[i]
			break
		}
	}
	s := start
	var acts []A
	for _, want := range chain[1:] {
		ok := false
		acts = sys.Actions(&s, acts[:0])
		for _, a := range acts {
			nx := s
			sys.Step(&nx, a)
			var fp uint64
			fp, canon = fingerprint(sys, &nx, canon)
			if fp == want {
				path = append(path, a)
				s = nx
				ok = true
				break
			}
		}
		if !ok {
			break // cannot happen unless fingerprints collide
		}
	}
	return start, s, path
}

// reportProgress calls progress about once a second until the returned
// stop is called. A nil progress costs nothing.
func (r *run[S, A]) reportProgress(progress func(Progress)) (stop func()) {
	if progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				el := time.Since(r.start)
				d := r.distinct.Load()
				progress(Progress{Distinct: d, Queue: r.queue.Load(), Depth: int(r.depth.Load()), Elapsed: el, StatesPerSec: float64(d) / el.Seconds()})
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
