package model

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"

	"cdcspec/spec"
)

// fingerprint is the 64-bit hash of a state's canonical encoding.
func fingerprint(s *State) uint64 { return xxhash.Sum64(s.Bytes()) }

// fpSet is a concurrent set of fingerprints: one open-addressing table with
// lock-free inserts (compare-and-swap on the slot). It only grows between
// BFS levels (ensure), when no worker inserts, so inserts never race a
// resize. 0 is never stored (a fingerprint of 0 is mapped to 1).
type fpSet struct {
	slots []uint64
	n     atomic.Int64
	full  atomic.Bool // a probe found no free slot: the state was dropped (incomplete)
}

func newFPSet() *fpSet { return &fpSet{slots: make([]uint64, 1<<16)} }

// ensure makes room for extra more fingerprints at a load factor <= 1/2.
// Not safe to call concurrently with insert.
func (s *fpSet) ensure(extra int64) {
	need := 2 * (s.n.Load() + extra)
	if need <= int64(len(s.slots)) {
		return
	}
	size := len(s.slots)
	for int64(size) < need {
		size *= 2
	}
	old := s.slots
	s.slots = make([]uint64, size)
	mask := uint64(size - 1)
	for _, fp := range old {
		if fp == 0 {
			continue
		}
		i := fp & mask
		for s.slots[i] != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = fp
	}
}

// insert adds fp and reports whether it was new.
func (s *fpSet) insert(fp uint64) bool {
	if fp == 0 {
		fp = 1
	}
	mask := uint64(len(s.slots) - 1)
	for i, probes := fp&mask, 0; ; i, probes = (i+1)&mask, probes+1 {
		if probes > len(s.slots) {
			s.full.Store(true)
			return false
		}
		p := &s.slots[i]
		v := atomic.LoadUint64(p)
		if v == fp {
			return false
		}
		if v == 0 {
			if atomic.CompareAndSwapUint64(p, 0, fp) {
				s.n.Add(1)
				return true
			}
			if atomic.LoadUint64(p) == fp {
				return false
			}
		}
	}
}

// fairMemo remembers the fair-schedule verdict of states.
type fairMemo struct {
	shards [64]struct {
		mu sync.Mutex
		m  map[uint64]uint8
	}
}

func newFairMemo() *fairMemo {
	f := &fairMemo{}
	for i := range f.shards {
		f.shards[i].m = map[uint64]uint8{}
	}
	return f
}

func (f *fairMemo) get(fp uint64) uint8 {
	sh := &f.shards[fp&63]
	sh.mu.Lock()
	v := sh.m[fp]
	sh.mu.Unlock()
	return v
}

func (f *fairMemo) put(fp uint64, v uint8) {
	sh := &f.shards[fp&63]
	sh.mu.Lock()
	sh.m[fp] = v
	sh.mu.Unlock()
}

// Options tune a check run.
type Options struct {
	Workers  int            // 0 = GOMAXPROCS
	Progress func(Progress) // called about once a second, from one goroutine
}

// Progress is a snapshot of a running check.
type Progress struct {
	Distinct     int64
	Queue        int64
	Depth        int
	Elapsed      time.Duration
	StatesPerSec float64
}

// Step of a counterexample: who did what, the events, and (for the story)
// whether it belongs to the fair schedule after faults healed.
type TraceStep struct {
	Actor  string
	Action Action
	Text   string
	Events []spec.Event
	Fair   bool
}

// Counterexample is a violated property with the shortest path to it (for
// liveness: the shortest path to the state from which the fair schedule
// fails, followed by that schedule).
type Counterexample struct {
	Property spec.Property
	Message  string
	Steps    []TraceStep
	Final    State
}

// Actions returns the counterexample's actions, for Replay.
func (c *Counterexample) Actions() []Action {
	out := make([]Action, len(c.Steps))
	for i, s := range c.Steps {
		out[i] = s.Action
	}
	return out
}

// Result is the outcome of a check.
type Result struct {
	Config      Config
	Outcome     string // "ok", "violation", "incomplete"
	Reason      string // why incomplete
	Distinct    int64
	Transitions int64
	Depth       int
	Seconds     float64
	Violation   *Counterexample
}

// StatesPerSecond is distinct states per wall-clock second.
func (r *Result) StatesPerSecond() float64 {
	if r.Seconds == 0 {
		return 0
	}
	return float64(r.Distinct) / r.Seconds
}

type found struct {
	prop   spec.Property
	msg    string
	parent int64 // global index of the state before the bad step (or the state itself for liveness)
	action Action
	live   bool
	// fairSafety: a safety property broke inside a liveness schedule. It is
	// real but not shortest; the search goes on, and reports it only if it
	// finds no shorter violation.
	fairSafety bool
	order      int64 // for a deterministic choice among violations of one level
}

// block holds states discovered in one level by one worker. States are
// stored in fixed-size blocks so that growing the frontier never copies
// them; fingerprints and parents are kept after the states are expanded, to
// rebuild counterexample paths.
type block struct {
	base    int64 // global index of the block's first state
	states  []State
	fps     []uint64
	parents []int64
}

const blockSize = 2048

// maxActions bounds the enabled actions of one state (for sizing the set).
const maxActions = 64

func newBlock() *block {
	return &block{
		states:  make([]State, 0, blockSize),
		fps:     make([]uint64, 0, blockSize),
		parents: make([]int64, 0, blockSize),
	}
}

// lookup returns the block holding global index gi.
func lookup(blocks []*block, gi int64) *block {
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

// Check explores the configuration breadth-first: every level is expanded
// by the workers in parallel, successors are deduplicated by fingerprint,
// safety is checked on every transition and liveness from every state. The
// first level with a violation yields the shortest counterexample (the
// lowest one in BFS order when several are found).
func Check(cfg Config, opt Options) Result {
	start := time.Now()
	res := Result{Config: cfg}
	if err := cfg.Validate(); err != nil {
		res.Outcome, res.Reason = "incomplete", err.Error()
		return res
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	// The frontier is large and pointer-free; collect garbage less often.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	set := newFPSet()
	var memo *fairMemo
	if cfg.Liveness {
		memo = newFairMemo()
	}
	init := Init(&cfg)
	initFP := canonicalFP(&cfg, &init)
	set.insert(initFP)
	b0 := newBlock()
	b0.states = append(b0.states, init)
	b0.fps = append(b0.fps, initFP)
	b0.parents = append(b0.parents, -1)
	frontier := []*block{b0}
	all := []*block{b0}
	nextBase := int64(1)
	var distinct, transitions atomic.Int64
	distinct.Store(1)
	incomplete := ""

	done := make(chan struct{})
	var queue atomic.Int64
	var curDepth atomic.Int64
	if opt.Progress != nil {
		go func() {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-t.C:
					el := time.Since(start)
					d := distinct.Load()
					opt.Progress(Progress{Distinct: d, Queue: queue.Load(), Depth: int(curDepth.Load()), Elapsed: el, StatesPerSec: float64(d) / el.Seconds()})
				}
			}
		}()
	}
	defer close(done)

	var best, fallback *found
	depth := 0
	for len(frontier) > 0 {
		curDepth.Store(int64(depth))
		n := int64(0)
		for _, b := range frontier {
			n += int64(len(b.states))
		}
		queue.Store(n)
		expand := cfg.MaxDepth == 0 || depth < cfg.MaxDepth
		// every state has fewer than maxActions successors
		set.ensure(n * maxActions)
		type out struct {
			blocks   []*block
			best     *found
			fallback *found
			over     bool
		}
		outs := make([]out, workers)
		var next atomic.Int64
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				o := &outs[w]
				var buf []Action
				cur := newBlock()
				o.blocks = append(o.blocks, cur)
				for {
					bi := int(next.Add(1)) - 1
					if bi >= len(frontier) {
						return
					}
					fb := frontier[bi]
					for i := range fb.states {
						st := &fb.states[i]
						gi := fb.base + int64(i)
						if st.Overflow {
							o.over = true
							continue
						}
						if memo != nil {
							v := memo.get(fb.fps[i])
							if v == fairUnknown {
								v = fairRun(&cfg, *st, memo, false).verdict
							}
							if v == fairNoQuiesce {
								o.over = true
							} else if v >= fairSafety {
								f := &found{prop: verdictProperty(v), parent: gi, live: true, fairSafety: true, order: gi<<8 | 255}
								if o.fallback == nil || f.order < o.fallback.order {
									o.fallback = f
								}
							} else if v != fairOK {
								f := &found{prop: verdictProperty(v), parent: gi, live: true, order: gi<<8 | 255}
								if o.best == nil || f.order < o.best.order {
									o.best = f
								}
							}
						}
						if !expand {
							o.over = true
							continue
						}
						buf = appendActions(&cfg, st, buf[:0], true)
						for ai := range buf {
							if len(cur.states) == blockSize {
								cur = newBlock()
								o.blocks = append(o.blocks, cur)
							}
							cur.states = append(cur.states, *st)
							nx := &cur.states[len(cur.states)-1]
							step(&cfg, nx, buf[ai], nil)
							transitions.Add(1)
							if p, msg := checkSafety(&cfg, st, nx); p != "" {
								f := &found{prop: p, msg: msg, parent: gi, action: buf[ai], order: gi<<8 | int64(ai)}
								if o.best == nil || f.order < o.best.order {
									o.best = f
								}
								cur.states = cur.states[:len(cur.states)-1]
								continue
							}
							fp := canonicalFP(&cfg, nx)
							if !set.insert(fp) {
								cur.states = cur.states[:len(cur.states)-1]
								continue
							}
							cur.fps = append(cur.fps, fp)
							cur.parents = append(cur.parents, gi)
						}
					}
					fb.states = nil // expanded: keep only fingerprints and parents
				}
			}(w)
		}
		wg.Wait()
		var nextFrontier []*block
		added := int64(0)
		for w := range outs {
			o := &outs[w]
			if o.best != nil && (best == nil || o.best.order < best.order) {
				best = o.best
			}
			if o.fallback != nil && fallback == nil {
				fallback = o.fallback
			}
			if o.over && incomplete == "" {
				incomplete = "a bound (depth or network size) cut the search"
			}
			for _, b := range o.blocks {
				if len(b.states) == 0 {
					continue
				}
				b.base = nextBase
				nextBase += int64(len(b.states))
				added += int64(len(b.states))
				nextFrontier = append(nextFrontier, b)
				all = append(all, b)
			}
		}
		if best != nil {
			break
		}
		frontier = nextFrontier
		distinct.Add(added)
		if added > 0 {
			depth++
		}
		if cfg.MaxStates > 0 && distinct.Load() >= int64(cfg.MaxStates) {
			incomplete = fmt.Sprintf("stopped at the state bound (%d states)", cfg.MaxStates)
			break
		}
	}
	if set.full.Load() && incomplete == "" {
		incomplete = "the fingerprint set filled up (more successors per state than sized for)"
	}
	if best == nil && fallback != nil {
		best = fallback
	}
	if best != nil {
		// the chain of fingerprints from the initial state to best.parent
		var chain []uint64
		for i := best.parent; i >= 0; {
			b := lookup(all, i)
			chain = append(chain, b.fps[i-b.base])
			i = b.parents[i-b.base]
		}
		for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
			chain[i], chain[j] = chain[j], chain[i]
		}
		path := pathTo(&cfg, chain)
		if !best.live {
			path = append(path, best.action)
		}
		res.Violation = buildCounterexample(&cfg, path, best.prop, best.msg, best.live)
	}
	res.Distinct = distinct.Load()
	res.Transitions = transitions.Load()
	res.Depth = depth
	res.Seconds = time.Since(start).Seconds()
	switch {
	case best != nil:
		res.Outcome = "violation"
	case incomplete != "":
		res.Outcome, res.Reason = "incomplete", incomplete
	default:
		res.Outcome = "ok"
	}
	return res
}

// canonicalFP is the fingerprint used for deduplication. (Symmetry reduction
// over node slots is not implemented: slot 0 hosts the coordinator, and the
// standard configurations have a single crashable slot.)
func canonicalFP(cfg *Config, s *State) uint64 {
	return fingerprint(s)
}

// Simulate runs random walks of at most maxDepth steps and checks every
// property on the way (liveness at the end of each walk). Its Result counts
// visited states in Distinct (not deduplicated) and is "incomplete" unless
// a walk finds a violation: random walks prove nothing.
func Simulate(cfg Config, seed uint64, walks, maxDepth int) Result {
	start := time.Now()
	res := Result{Config: cfg}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var buf []Action
	for w := 0; w < walks; w++ {
		s := Init(&cfg)
		var path []Action
		for d := 0; d < maxDepth; d++ {
			buf = appendActions(&cfg, &s, buf[:0], true)
			if len(buf) == 0 {
				break
			}
			a := buf[r.IntN(len(buf))]
			nx := s
			step(&cfg, &nx, a, nil)
			res.Transitions++
			res.Distinct++
			path = append(path, a)
			if p, msg := checkSafety(&cfg, &s, &nx); p != "" {
				res.Violation = buildCounterexample(&cfg, path, p, msg, false)
				res.Outcome = "violation"
				res.Seconds = time.Since(start).Seconds()
				res.Depth = len(path)
				return res
			}
			s = nx
			res.Depth = max(res.Depth, len(path))
		}
		if cfg.Liveness {
			if fr := fairRun(&cfg, s, nil, false); fr.verdict == fairNoSpan || fr.verdict == fairNoCkpt {
				res.Violation = buildCounterexample(&cfg, path, verdictProperty(fr.verdict), "", true)
				res.Outcome = "violation"
				res.Seconds = time.Since(start).Seconds()
				return res
			}
		}
	}
	res.Outcome = "incomplete"
	res.Reason = fmt.Sprintf("random walks (%d walks, seed %d) cannot prove the absence of violations", walks, seed)
	res.Seconds = time.Since(start).Seconds()
	return res
}
