package traces

import (
	"container/heap"
	"fmt"
	"sort"
	"sync/atomic"
)

const (
	// reorderMax and reorderWindow bound the per-input reorder buffer that
	// sorts records written slightly out of order (excerpts pasted newest
	// first, several goroutines logging at once).
	reorderMax    = 512
	reorderWindow = 60_000 // ms
)

// maxHeld bounds the parsed chunks an input's ordering holds on to for
// the items it has not checked yet; past it, the oldest chunk's items are
// copied out (orderer.evacuate). Most of the time the reorder buffer's
// reorderMax items span two or three chunks. (A variable for the tests.)
var maxHeld = 8

// eagerMerge activates every input at once (the tests compare it with the
// merge activating inputs as their time comes); mostActive is the most
// inputs the last merge had activated and not yet finished at once (for
// the tests; atomic, as merges may run concurrently).
var (
	eagerMerge = false
	mostActive atomic.Int64
)

// reorder is the per-input reorder buffer: a priority queue of item keys
// by (time, order in the input), so that a record written out of order
// costs O(log reorderMax) whatever the input's order. It has two parts:
// run, a sorted FIFO of the keys pushed no earlier than its tail (O(1) in
// and out: every item of a sorted log), and h, a min-heap of the others;
// the earliest key heads one of them. The items stay where they were
// parsed (see orderer).
type reorder struct {
	h []roKey
	// run is a ring (its length a power of two) of keys in increasing
	// order: run[head], ..., run[(head+n-1) & (len(run)-1)].
	run  []roKey
	head int
	n    int
}

// roKey is an item's place in the order, and where the item is: in a
// held chunk (slot >= 0, at items[idx]) or copied out (slot < 0, at
// orderer.spill[idx]).
type roKey struct {
	time int64
	seq  int64
	idx  int32
	slot int32
}

func (a roKey) less(b roKey) bool {
	return a.time < b.time || (a.time == b.time && a.seq < b.seq)
}

func (r *reorder) len() int { return len(r.h) + r.n }

// minKey is the earliest buffered key and whether it heads the run
// (len() > 0).
func (r *reorder) minKey() (roKey, bool) {
	if r.n == 0 {
		return r.h[0], false
	}
	k := r.run[r.head]
	if len(r.h) > 0 && r.h[0].less(k) {
		return r.h[0], false
	}
	return k, true
}

// minTime is the time of the earliest buffered item (len() > 0).
func (r *reorder) minTime() int64 {
	k, _ := r.minKey()
	return k.time
}

func (r *reorder) push(k roKey) {
	if r.n == 0 || !k.less(r.run[(r.head+r.n-1)&(len(r.run)-1)]) {
		// no earlier than the run's tail: the run stays sorted
		if r.n == len(r.run) {
			r.growRun()
		}
		r.run[(r.head+r.n)&(len(r.run)-1)] = k
		r.n++
		return
	}
	h := append(r.h, k)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].less(h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	r.h = h
}

func (r *reorder) growRun() {
	nr := make([]roKey, max(16, 2*len(r.run)))
	for i := 0; i < r.n; i++ {
		nr[i] = r.run[(r.head+i)&(len(r.run)-1)]
	}
	r.run, r.head = nr, 0
}

// pop removes and returns the earliest key (len() > 0).
func (r *reorder) pop() roKey {
	k, inRun := r.minKey()
	if inRun {
		r.head = (r.head + 1) & (len(r.run) - 1)
		r.n--
		return k
	}
	h := r.h
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if l+1 < n && h[l+1].less(h[l]) {
			m = l + 1
		}
		if !h[m].less(h[i]) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	r.h = h
	return k
}

// each calls fn on every buffered key, in no particular order; fn may
// change where the item is, not its place in the order.
func (r *reorder) each(fn func(k *roKey)) {
	for i := range r.h {
		fn(&r.h[i])
	}
	for i := 0; i < r.n; i++ {
		fn(&r.run[(r.head+i)&(len(r.run)-1)])
	}
}

// orderer puts one input's items in time order (within the reorder
// bound), on the checking goroutine. It reads the items where the parse
// workers wrote them: a chunk is held until every one of its items is
// checked, then returned to the source for reuse. No item is copied,
// unless more than maxHeld chunks would be held.
type orderer struct {
	src *source
	ro  reorder
	// out holds the released keys, in order, until they are checked
	// (head, consume): one, or a whole buffer when the input jumps.
	out     []roKey
	outHead int
	held    []heldChunk // maxHeld slots
	arrived int64       // chunks taken so far (heldChunk.order)
	// spill holds the items copied out of evacuated chunks; spillFree
	// lists its free slots.
	spill     []Item
	spillFree []int32
	// cur is the chunk being pushed, its slot, and the next item's index.
	cur     *chunk
	curSlot int32
	ci      int

	seq     int64
	maxTime int64
	jumps   int64
	// ended: the source has sent its last chunk; chunks are no longer
	// returned to it.
	ended bool
	self  selfNode
}

type heldChunk struct {
	c       *chunk // nil: a free slot
	live    int    // its items in the buffer or in out
	pushing bool   // its items are still being pushed
	order   int64
}

// head returns the input's next item in order, nil at its end. The item
// stays valid until consume.
func (o *orderer) head() *Item {
	for o.outHead == len(o.out) {
		if !o.step() {
			return nil
		}
	}
	return o.item(o.out[o.outHead])
}

// consume is done with the item head returned.
func (o *orderer) consume() {
	k := o.out[o.outHead]
	o.outHead++
	if o.outHead == len(o.out) {
		o.out, o.outHead = o.out[:0], 0
	}
	if k.slot < 0 {
		o.spillFree = append(o.spillFree, k.idx)
		return
	}
	h := &o.held[k.slot]
	h.live--
	if h.live == 0 && !h.pushing {
		o.unhold(k.slot)
	}
}

func (o *orderer) item(k roKey) *Item {
	if k.slot < 0 {
		return &o.spill[k.idx]
	}
	return &o.held[k.slot].c.items[k.idx]
}

// step pushes the input's next item, taking the next chunk when needed,
// and releases what the reorder bound lets go; at the end of the input it
// releases everything. It returns false when there is nothing left.
func (o *orderer) step() bool {
	for o.cur == nil || o.ci == len(o.cur.items) {
		if o.cur != nil {
			h := &o.held[o.curSlot]
			h.pushing = false
			if h.live == 0 {
				o.unhold(o.curSlot)
			}
			o.cur = nil
		}
		c, ok := <-o.src.ch
		if !ok {
			o.drainFree()
			if o.ro.len() == 0 {
				return false
			}
			for o.ro.len() > 0 {
				o.release(o.ro.pop())
			}
			return true
		}
		if len(c.items) == 0 {
			o.recycle(c)
			continue
		}
		o.cur, o.curSlot, o.ci = c, o.hold(c), 0
	}
	idx := o.ci
	o.ci++
	it := &o.cur.items[idx]
	o.self.learn(it)
	it.seq = o.seq
	o.seq++
	if it.Event.Time < o.maxTime-reorderWindow {
		// A jump back beyond the window: the next file of a
		// concatenation. Release what is buffered and go on in file
		// order.
		for o.ro.len() > 0 {
			o.release(o.ro.pop())
		}
		o.maxTime = it.Event.Time
		o.jumps++
	}
	if it.Event.Time > o.maxTime {
		o.maxTime = it.Event.Time
	}
	o.ro.push(roKey{time: it.Event.Time, seq: it.seq, idx: int32(idx), slot: o.curSlot})
	o.held[o.curSlot].live++
	for o.ro.len() > reorderMax || (o.ro.len() > 0 && o.ro.minTime() < o.maxTime-reorderWindow) {
		o.release(o.ro.pop())
	}
	return true
}

// selfNode is an input's own capture: its node ID, once a line names it
// ("changefeed bootstrap initial nodes" [selfNodeID=...]). It is learnt as
// the input is read and filled in as its items are checked.
type selfNode struct {
	id string
	// ambiguous: the input names several captures as its own (several
	// logs combined into one), and id is no longer filled in.
	ambiguous bool
}

func (n *selfNode) learn(it *Item) {
	if it.self != "" && !n.ambiguous {
		if n.id == "" {
			n.id = it.self
		} else if n.id != it.self {
			// Several captures' lines in one input (a combined log): a
			// line without its node cannot be placed.
			n.id, n.ambiguous = "", true
		}
	}
}

// fill gives it the capture's own node if its event is the logging
// capture's and names none.
func (n *selfNode) fill(it *Item) {
	if it.Event.Node == "" && n.id != "" && isOwnNode[it.Event.Kind] {
		it.Event.Node = n.id
	}
}

// release moves k, the earliest buffered key, to out; the item gets the
// capture's own node (selfNode.fill).
func (o *orderer) release(k roKey) {
	o.self.fill(o.item(k))
	o.out = append(o.out, k)
}

// hold gives c a slot, copying out the items of the chunk held longest
// if every slot is taken.
func (o *orderer) hold(c *chunk) int32 {
	free, oldest := int32(-1), int32(-1)
	for i := range o.held {
		h := &o.held[i]
		if h.c == nil {
			free = int32(i)
			break
		}
		if oldest < 0 || h.order < o.held[oldest].order {
			oldest = int32(i)
		}
	}
	if free < 0 {
		o.evacuate(oldest)
		free = oldest
	}
	o.held[free] = heldChunk{c: c, pushing: true, order: o.arrived}
	o.arrived++
	return free
}

// evacuate copies the buffered items of the chunk in slot s to spill and
// lets the chunk go. Their places in the order stay.
func (o *orderer) evacuate(s int32) {
	move := func(k *roKey) {
		if k.slot != s {
			return
		}
		var i int32
		if n := len(o.spillFree); n > 0 {
			i, o.spillFree = o.spillFree[n-1], o.spillFree[:n-1]
		} else {
			i = int32(len(o.spill))
			o.spill = append(o.spill, Item{})
		}
		o.spill[i] = o.held[s].c.items[k.idx]
		k.slot, k.idx = -1, i
	}
	// out is empty: step, which takes chunks, runs only then (head)
	o.ro.each(move)
	o.unhold(s)
}

// unhold returns the chunk in slot s to its source.
func (o *orderer) unhold(s int32) {
	o.recycle(o.held[s].c)
	o.held[s] = heldChunk{}
}

// drainFree drops the chunks the source kept for reuse once it has ended
// (with many inputs, the ended ones' spare chunks would otherwise stay
// until the merge ends).
func (o *orderer) drainFree() {
	o.ended = true
	for {
		select {
		case <-o.src.free:
		default:
			return
		}
	}
}

// recycle returns c to the source (its items buffer is reused; the
// strings the stale items hold are bounded by the chunks in flight).
func (o *orderer) recycle(c *chunk) {
	if o.ended {
		return // nothing reuses it
	}
	c.items = c.items[:0]
	select {
	case o.src.free <- c:
	default:
	}
}

// merger merges the inputs' ordered items by time (ties: input order, then
// the order within the input).
type merger struct {
	heads []mergeHead
}

type mergeHead struct {
	o  *orderer
	it *Item // o.head()
}

func (m *merger) Len() int { return len(m.heads) }
func (m *merger) Less(i, j int) bool {
	a, b := m.heads[i].it, m.heads[j].it
	if a.Event.Time != b.Event.Time {
		return a.Event.Time < b.Event.Time
	}
	if a.file != b.file {
		return a.file < b.file
	}
	return a.seq < b.seq
}
func (m *merger) Swap(i, j int) { m.heads[i], m.heads[j] = m.heads[j], m.heads[i] }
func (m *merger) Push(x any)    { m.heads = append(m.heads, x.(mergeHead)) }
func (m *merger) Pop() any {
	old := m.heads
	x := old[len(old)-1]
	m.heads = old[:len(old)-1]
	return x
}

// mergeInputs parses the inputs and calls fn for each item in merged time
// order. fn must not keep the pointer it is given after it returns: the
// item's chunk is reused once every item in it is checked (fn copies what
// it keeps). It returns the per-input parse statistics and the first input
// error (naming the input).
//
// An input is parsed up to its first item, then only once the merge
// reaches that item's time less the reorder window: no item of the input
// can come earlier (the reorder buffer releases an item earlier than that
// only after a jump, behind the items before it), so the order is the one
// merging every input from the start gives, while only the inputs whose
// time has come hold chunks (a directory of rotated logs is merged one or
// two files at a time).
func mergeInputs(inputs []Input, fn func(it *Item)) ([]*source, error) {
	srcs := make([]*source, len(inputs))
	ords := make([]*orderer, len(inputs))
	for i, in := range inputs {
		srcs[i] = newSource(i, in, max(minChunkSize, min(chunkSize, chunkBudget/(chunksInFlight*len(inputs)))))
		ords[i] = &orderer{src: srcs[i], held: make([]heldChunk, maxHeld)}
		go srcs[i].run()
	}
	if len(ords) == 1 {
		// one input (a file, or stdin): no merge
		o := ords[0]
		<-o.src.first
		close(o.src.activated)
		for it := o.head(); it != nil; it = o.head() {
			fn(it)
			o.consume()
		}
	} else {
		type waiting struct {
			o     *orderer
			first int64
		}
		pending := make([]waiting, len(ords))
		for i, o := range ords {
			pending[i] = waiting{o, <-o.src.first}
		}
		sort.SliceStable(pending, func(i, j int) bool { return pending[i].first < pending[j].first })
		m := &merger{}
		most := 0
		defer func() { mostActive.Store(int64(most)) }()
		activate := func() {
			o := pending[0].o
			pending = pending[1:]
			close(o.src.activated)
			if it := o.head(); it != nil {
				heap.Push(m, mergeHead{o: o, it: it})
				most = max(most, m.Len())
			}
		}
		for eagerMerge && len(pending) > 0 {
			activate()
		}
		for m.Len() > 0 || len(pending) > 0 {
			if m.Len() == 0 || (len(pending) > 0 && pending[0].first-reorderWindow <= m.heads[0].it.Event.Time) {
				activate()
				continue
			}
			h := &m.heads[0]
			fn(h.it)
			h.o.consume()
			if h.it = h.o.head(); h.it == nil {
				heap.Pop(m)
				continue
			}
			heap.Fix(m, 0)
		}
	}
	var firstErr error
	for i, s := range srcs {
		<-s.done
		s.stats.Jumps += ords[i].jumps
		if s.err != nil && firstErr == nil {
			firstErr = fmt.Errorf("%s: %v", s.name, unwrapPathErr(s.err))
		}
	}
	return srcs, firstErr
}
