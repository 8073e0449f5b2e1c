package search

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"cdcspec/spec"
)

// Check explores sys breadth-first from its initial states. Each level is
// expanded by the workers in parallel (exploreLevel): successors are
// deduplicated by fingerprint (of their orbit's representative when sys is
// Symmetric), safety is judged on every transition, and liveness by fair
// settling from every state, memoised by round-start state (unless
// b.SafetyOnly; only a Fair system has liveness properties). The first
// level with a violation ends the search (rankViolations picks the lowest
// in BFS order), and its path is rebuilt from the stored fingerprints
// (rebuildPath), so the counterexample is a shortest one. progress, when
// not nil, is called about once a second from one goroutine.
//
// Memory: the visited set holds 8-byte fingerprints (fpTable), full states
// are kept only for the frontier, and each state's fingerprint and parent
// (the trail) for counterexamples. With b.Memory the frontier and the
// trail spill to disk past the budget, and the search stops (BoundReached,
// naming the flag) when the visited set or the memo would pass it.
func Check[S, A any](sys System[S, A], b Bounds, progress func(Progress)) (Result[S, A], error) {
	if err := b.Validate(); err != nil {
		return Result[S, A]{}, err
	}
	r := newRun(sys, b)
	defer r.close()
	stop := r.reportProgress(progress)
	defer stop()
	defer r.watchStop()()

	frontier := r.initialLevel()
	var best, fallback *finding[A]
	for len(frontier) > 0 {
		r.depth.Store(int64(r.level))
		select {
		case <-b.Stop: // also checked here, so a closed Stop stops at once
			r.stopWith(fmt.Sprintf("interrupted after %d states at depth %d", r.distinct.Load(), r.level))
		default:
		}
		lv := r.exploreLevel(frontier, b.MaxDepth == 0 || r.level < b.MaxDepth)
		best, fallback = rankViolations(lv.workers, best, fallback)
		if lv.cut && r.cut == "" {
			r.cut = "a bound (depth or network size) cut the search"
		}
		if best != nil {
			break // the shortest violations are in this level
		}
		frontier = r.addLevel(lv)
		if h := r.haltReason(); h != "" {
			r.cut = h
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
		Symmetry:    1,
	}}
	if r.sym != nil {
		res.Symmetry = r.sym.SymmetryGroup()
	}
	if best != nil {
		res.Violation = r.rebuildPath(best)
		// The states of the levels before the violating one's successors,
		// as the counts have always been reported.
		res.Distinct = r.nextBase
	}
	if h := r.haltReason(); h != "" && r.cut == "" {
		r.cut = h // halted in the last level
	}
	res.Seconds = time.Since(r.start).Seconds()
	res.Collision = CollisionProbability(res.Distinct)
	if r.delay {
		// The visited set's keys leave out the delay bits.
		res.Collision = math.Min(1, res.Collision*(1<<delayBits))
	}
	if r.memo != nil {
		m := float64(r.memo.len())
		res.Collision = math.Min(1, res.Collision+m*m/math.Exp2(2*64-memoBits-1))
	}
	res.Spilled = r.spilled.Load()
	res.PeakMemory = r.peak.Load()
	res.Reduction = "none"
	if r.delay {
		res.Reduction = fmt.Sprintf("delay-bound k=%d", b.DelayBound)
		res.DelayBounded, res.DelayBound = true, b.DelayBound
		res.DelayPruned, res.Reexpanded = r.pruned.Load(), r.reexpanded.Load()
	}
	switch {
	case best != nil:
		res.Outcome = Violation
	case r.cut != "":
		res.Outcome, res.Reason = BoundReached, r.cut
	case res.DelayPruned > 0:
		// Every schedule within the bound, and nothing else cut.
		res.Outcome, res.Reason = BoundReached, delayReason(b.DelayBound)
	default:
		res.Outcome = OK
	}
	return res, nil
}

// recentSlots is the size of a worker's cache of seen fingerprints: 256 KB,
// which stays in a core's L2 cache.
const recentSlots = 1 << 15

// memoBits are the value bits of the verdict memo's slots (a verdict code).
const memoBits = 6

// run is the state of one Check.
type run[S, A any] struct {
	sys      System[S, A]
	sym      Symmetric[S, A] // nil: no reduction
	live     *liveness[S, A] // nil: safety only
	memo     *fpTable        // verdicts by round-start fingerprint (liveness)
	b        Bounds
	workers  int
	start    time.Time
	inits    []S
	seen     *fpTable
	mem      *memBudget
	spill    *spiller[S]
	all      []*block[S]            // every level's blocks, for rebuildPath
	recent   []*[recentSlots]uint64 // each worker's cache of seen fingerprints (worker.recent)
	nextBase int64
	level    int    // depth of the frontier being expanded
	cut      string // why the search is incomplete ("" = it is not)

	// Delay bounding (Bounds.DelayBounded): the visited set's value is a
	// state's fewest delays, and the frontier's and the trail's
	// fingerprints carry the delays of their path in their low delayBits
	// bits (fpMask), which the visited set's keys leave out.
	sched    Scheduler[S, A] // nil: the first enabled action is the default
	delay    bool
	fpMask   uint64
	maxDelay uint64

	distinct, transitions atomic.Int64
	pruned, reexpanded    atomic.Int64 // delay bounding
	queue, depth          atomic.Int64 // for progress
	spilled, peak         atomic.Int64

	halted atomic.Bool
	haltMu sync.Mutex
	halt   string
}

func newRun[S, A any](sys System[S, A], b Bounds) *run[S, A] {
	r := &run[S, A]{sys: sys, b: b, workers: b.Workers, start: time.Now()}
	if b.Memory > 0 {
		r.mem = &memBudget{limit: b.Memory}
		r.spill = newSpiller[S](b.SpillDir)
	}
	if b.DelayBounded {
		r.delay, r.fpMask, r.maxDelay = true, 1<<delayBits-1, uint64(b.DelayBound)
		r.sched, _ = sys.(Scheduler[S, A])
		r.seen = newFPTable(delayBits, r.mem)
	} else {
		r.seen = newFPTable(0, r.mem)
	}
	if r.workers <= 0 {
		r.workers = runtime.GOMAXPROCS(0)
	}
	if sy, ok := sys.(Symmetric[S, A]); ok && !b.NoSymmetry && sy.SymmetryGroup() > 1 {
		r.sym = sy
	}
	if f, ok := sys.(Fair[S, A]); ok && b.Liveness() {
		r.live = newLiveness(f, b)
		r.memo = newFPTable(memoBits, r.mem)
	}
	return r
}

// watchStop halts the search when b.Stop closes, until the returned
// function is called.
func (r *run[S, A]) watchStop() (done func()) {
	if r.b.Stop == nil {
		return func() {}
	}
	quit := make(chan struct{})
	go func() {
		select {
		case <-r.b.Stop:
			r.stopWith(fmt.Sprintf("interrupted after %d states at depth %d", r.distinct.Load(), r.depth.Load()))
		case <-quit:
		}
	}()
	return func() { close(quit) }
}

func (r *run[S, A]) close() {
	if r.spill != nil {
		r.spill.close()
	}
}

// stopWith halts the search at the end of the current level (the workers
// stop taking states at once) with reason, unless it is halted already.
func (r *run[S, A]) stopWith(reason string) {
	r.haltMu.Lock()
	if r.halt == "" {
		r.halt = reason
	}
	r.haltMu.Unlock()
	r.halted.Store(true)
}

func (r *run[S, A]) haltReason() string {
	r.haltMu.Lock()
	defer r.haltMu.Unlock()
	return r.halt
}

func (r *run[S, A]) memoryFull() {
	r.stopWith(fmt.Sprintf("stopped at the memory budget after %d states at depth %d: the visited set and the verdict memo "+
		"cannot grow within the search's %d MB; raise --memory to go further, or run a budgeted swarm with --time",
		r.distinct.Load(), r.level, r.b.Memory>>20))
}

// note updates the peak of the accounted memory.
func (r *run[S, A]) note() {
	if r.mem == nil {
		return
	}
	u := r.mem.used.Load()
	for {
		p := r.peak.Load()
		if u <= p || r.peak.CompareAndSwap(p, u) {
			return
		}
	}
}

// key fingerprints *s for the visited set: its orbit's representative
// when the search reduces by symmetry (s is replaced by it).
func (r *run[S, A]) key(s *S, canon []byte) (uint64, []byte) {
	if r.sym != nil {
		r.sym.Represent(s)
	}
	return fingerprint(r.sys, s, canon)
}

// block holds states discovered in one level by one worker. States are
// stored in fixed-size blocks so that growing the frontier never copies
// them; fingerprints and parents (the trail) are kept after the states are
// expanded, to rebuild counterexample paths. Past the memory budget the
// states and, once expanded, the trail live in the spill file.
type block[S any] struct {
	base    int64 // global index of the block's first state
	n       int   // states in the block
	states  []S   // nil once expanded or spilled
	fps     []uint64
	parents []int64 // global index of the parent; -1 for an initial state
	stOff   int64   // offset of the spilled states in the level's file; -1 = in memory
	stFile  *levelFile
	trOff   int64 // offset of the spilled trail; -1 = in memory
}

// blockCap is the states of a block: 2048, or fewer for big states, so
// that a block's states stay within about 2 MB.
func blockCap[S any]() int {
	return max(16, min(2048, int((2<<20)/max(1, stateSize[S]()))))
}

func (r *run[S, A]) newBlock() *block[S] {
	n := blockCap[S]()
	r.mem.add(int64(n) * (stateSize[S]() + 16))
	r.note()
	return &block[S]{
		states:  make([]S, 0, n),
		fps:     make([]uint64, 0, n),
		parents: make([]int64, 0, n),
		stOff:   -1,
		trOff:   -1,
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

// initialLevel stores the distinct initial states (representatives) as
// level 0.
func (r *run[S, A]) initialLevel() []*block[S] {
	r.inits = r.sys.Initial()
	b0 := r.newBlock()
	var canon []byte
	for i := range r.inits {
		s := r.inits[i]
		var fp uint64
		fp, canon = r.key(&s, canon)
		fp &^= r.fpMask // no delays yet
		if r.admit(fp, 0) != fpAdded {
			continue
		}
		b0.states = append(b0.states, s)
		b0.fps = append(b0.fps, fp)
		b0.parents = append(b0.parents, -1)
	}
	b0.n = len(b0.states)
	r.all = append(r.all, b0)
	r.nextBase = int64(b0.n)
	r.distinct.Store(r.nextBase)
	return []*block[S]{b0}
}

// admit adds fp, reached with d delays, to the visited set: fpAdded (a new
// state), fpPresent (seen, with no more delays when delay bounding),
// fpLowered (seen, but with more delays: expand it again) or fpFull.
func (r *run[S, A]) admit(fp, d uint64) int {
	if r.delay {
		return r.seen.lower(fp, d)
	}
	return r.seen.insert(fp, 0)
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
	r       *run[S, A]
	acts    []A
	canon   []byte
	blocks  []*block[S] // the successors it discovered
	cur     *block[S]
	scratch []S // a spilled frontier block, read back
	fair    *fairScratch[S, A]
	next    S // the successor being judged; copied into cur when new
	// recent caches fingerprints this worker found in the visited set, by
	// their low bits: a successor met again (the far side of a diamond of
	// independent actions, mostly) is known seen without touching the
	// shared table. Only fingerprints in the set are cached, and the set
	// only grows, so a hit is always right.
	recent         *[recentSlots]uint64
	best, fallback *finding[A]
	cut            bool // a bound stopped it from expanding or judging a state
	err            error
}

// levelResult is the outcome of exploreLevel.
type levelResult[S, A any] struct {
	workers []*worker[S, A]
	cut     bool
}

// exploreLevel expands every state of frontier (when expand) and judges
// it, in parallel: the workers take the frontier's blocks in turn. An
// expanded block keeps only its trail.
func (r *run[S, A]) exploreLevel(frontier []*block[S], expand bool) levelResult[S, A] {
	n := int64(0)
	for _, b := range frontier {
		n += int64(b.n)
	}
	r.queue.Store(n)
	if r.spill != nil {
		r.spill.rotate() // the successors go to the next level's file
	}
	lv := levelResult[S, A]{workers: make([]*worker[S, A], r.workers)}
	if r.recent == nil {
		r.recent = make([]*[recentSlots]uint64, r.workers)
		for i := range r.recent {
			r.recent[i] = new([recentSlots]uint64)
		}
		r.mem.add(int64(r.workers) * recentSlots * 8)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for i := range lv.workers {
		w := &worker[S, A]{r: r, recent: r.recent[i]}
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
				states := fb.states
				if fb.stOff >= 0 {
					if w.scratch == nil {
						w.scratch = make([]S, blockCap[S]())
					}
					var err error
					if states, err = readStates(fb.stFile, w.scratch[:fb.n], fb.stOff); err != nil {
						r.stopWith(fmt.Sprintf("reading the spilled frontier: %v", err))
						return
					}
				}
				for i := range states {
					if r.halted.Load() {
						w.cut = true
						break
					}
					w.visit(&states[i], fb.fps[i], fb.base+int64(i), expand)
					r.queue.Add(-1)
				}
				if fb.stOff < 0 && fb.states != nil {
					r.mem.give(int64(cap(fb.states)) * stateSize[S]())
				}
				fb.states, fb.stFile = nil, nil // expanded: keep only the trail
				r.spillTrail(fb)
			}
		}()
	}
	wg.Wait()
	for _, b := range frontier {
		if b.stFile != nil {
			b.stFile.remove()
			b.stFile = nil
		}
	}
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
	w.expand(st, fp, gi)
}

// checkLiveness judges st by fair settling, through the memo. st is a
// representative when the search reduces by symmetry, so the verdict is
// the same for every member of the orbit.
func (w *worker[S, A]) checkLiveness(st *S, fp uint64, gi int64) {
	r := w.r
	c, ok := r.memo.get(fp)
	if !ok {
		if w.fair == nil {
			w.fair = &fairScratch[S, A]{}
		}
		c = uint64(r.live.judge(w.fair, st, fp, r.memo, false))
	}
	switch r.live.verdict(code(c)) {
	case Unsettled:
		w.cut = true
	case SafetyBroken:
		found(&w.fallback, &finding[A]{prop: r.live.property(code(c)), parent: gi, live: true, fairSafety: true, order: gi<<8 | 255})
	case GoalMissed:
		found(&w.best, &finding[A]{prop: r.live.property(code(c)), parent: gi, live: true, order: gi<<8 | 255})
	}
}

// expand steps every action enabled in st (fp is its fingerprint, with
// its path's delays when delay bounding), judges safety on each
// transition, and keeps the successors not seen before (or, delay
// bounding, seen only with more delays).
func (w *worker[S, A]) expand(st *S, fp0 uint64, gi int64) {
	r := w.r
	w.acts = r.sys.Actions(st, w.acts[:0])
	var added, pruned, again int64
	d0, def := fp0&r.fpMask, -1
	if r.delay {
		def = 0
		if r.sched != nil {
			def = r.sched.DefaultAction(st, w.acts)
		}
	}
	nx := &w.next
	for ai := range w.acts {
		d := d0
		if r.delay && ai != def {
			if d++; d > r.maxDelay {
				pruned++
				continue
			}
		}
		*nx = *st
		r.sys.Step(nx, w.acts[ai])
		if idx, msg := r.sys.Safety(st, nx); idx >= 0 {
			found(&w.best, &finding[A]{prop: r.sys.SafetyProperties()[idx], msg: msg, parent: gi, action: w.acts[ai], order: gi<<8 | int64(ai)})
			continue
		}
		var fp uint64
		fp, w.canon = r.key(nx, w.canon)
		fp = fp&^r.fpMask | d
		slot := &w.recent[(fp>>delayBits)&(recentSlots-1)]
		if s := *slot; s&^r.fpMask == fp&^r.fpMask && s&r.fpMask <= d {
			continue // seen (with no more delays): recently by this worker
		}
		switch r.admit(fp, d) {
		case fpPresent:
			*slot = fp
			continue
		case fpFull:
			r.memoryFull()
			continue
		case fpLowered:
			again++ // not a new state: a new frontier entry
		default:
			if m := r.b.MaxStates; m > 0 && r.distinct.Add(1) > int64(m) {
				// Exact: the state bound admits no state past it.
				r.distinct.Add(-1)
				r.stopWith(fmt.Sprintf("stopped at the state bound (%d states)", m))
				continue
			} else if m == 0 {
				added++
			}
		}
		*slot = fp
		if w.cur == nil || len(w.cur.states) == cap(w.cur.states) {
			w.finishBlock()
			w.cur = r.newBlock()
			w.blocks = append(w.blocks, w.cur)
		}
		cur := w.cur
		cur.states = append(cur.states, *nx)
		cur.fps = append(cur.fps, fp)
		cur.parents = append(cur.parents, gi)
	}
	// One update of the shared counters per state, not per transition.
	r.transitions.Add(int64(len(w.acts)) - pruned)
	if added > 0 {
		r.distinct.Add(added)
	}
	if pruned > 0 {
		r.pruned.Add(pruned)
	}
	if again > 0 {
		r.reexpanded.Add(again)
	}
	r.note()
}

// finishBlock spills the worker's full block when the frontier passes its
// share of the memory budget.
func (w *worker[S, A]) finishBlock() {
	if w.cur != nil {
		w.r.spillStates(w.cur)
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
			b.n = len(b.fps)
			if b.n == 0 {
				r.mem.give(int64(cap(b.states)) * (stateSize[S]() + 16))
				continue
			}
			b.base = r.nextBase
			r.nextBase += int64(b.n)
			added += int64(b.n)
			r.spillStates(b)
			next = append(next, b)
			r.all = append(r.all, b)
		}
	}
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
		fp, parent, err := r.trailAt(b, i-b.base)
		if err != nil {
			break // the chain is cut short; pathTo re-derives what it has
		}
		chain = append(chain, fp)
		i = parent
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	start, end, path := pathTo(r, chain)
	ce := &Counterexample[S, A]{Property: f.prop, Message: f.msg, Start: start, Path: path}
	if !f.live {
		ce.Path = append(ce.Path, f.action)
		return ce
	}
	r.live.explain(ce, end, r.sym)
	return ce
}

// explain completes a liveness counterexample whose path ends in end with
// the recorded fair schedule from there; the recorded run is authoritative
// for the property and message. With symmetry the schedule runs from end's
// representative, as the search judged it, and is told in end's names.
func (l *liveness[S, A]) explain(ce *Counterexample[S, A], end S, sym Symmetric[S, A]) {
	var p Perm
	if sym != nil {
		p = sym.Represent(&end)
	}
	st := l.settle(end)
	ce.Liveness = true
	ce.Schedule, ce.Healing, ce.Verdict = st.schedule, st.healing, l.verdict(st.code)
	if sym != nil {
		for i, a := range ce.Schedule {
			ce.Schedule[i] = sym.UnpermuteAction(p, a)
		}
	}
	if prop := l.property(st.code); prop != "" {
		ce.Property, ce.Message = prop, st.msg
	}
}

// pathTo turns a chain of fingerprints (an initial state's first) into the
// actions that connect them, by re-deriving each step from the concrete
// states, so it works whatever canonical form (and representative)
// produced the fingerprints, and the path keeps the original names. It
// returns the initial state, the state at the end and the actions.
func pathTo[S, A any](r *run[S, A], chain []uint64) (start, end S, path []A) {
	sys := r.sys
	var canon []byte
	for i := range r.inits {
		s := r.inits[i]
		var fp uint64
		fp, canon = r.key(&s, canon)
		if len(chain) > 0 && fp&^r.fpMask == chain[0]&^r.fpMask {
			start = r.inits[i]
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
			k := nx
			var fp uint64
			fp, canon = r.key(&k, canon)
			if fp&^r.fpMask == want&^r.fpMask {
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
	return tick(progress, func(el time.Duration) Progress {
		d := r.distinct.Load()
		p := Progress{Distinct: d, Queue: r.queue.Load(), Depth: int(r.depth.Load()), Elapsed: el,
			StatesPerSec: float64(d) / el.Seconds()}
		if m := int64(r.b.MaxStates); m > 0 && p.StatesPerSec > 0 {
			p.ETA = time.Duration(float64(m-d) / p.StatesPerSec * float64(time.Second))
		}
		return p
	})
}

// tick calls progress(snap(elapsed)) about once a second, with the
// process's memory filled in, until the returned stop is called.
func tick(progress func(Progress), snap func(time.Duration) Progress) (stop func()) {
	if progress == nil {
		return func() {}
	}
	start := time.Now()
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
				p := snap(time.Since(start))
				p.Memory = ProcessMemory()
				progress(p)
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
