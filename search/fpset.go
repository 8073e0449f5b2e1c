package search

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
)

// fingerprint is the 64-bit hash of s's canonical encoding; canon is the
// caller's scratch buffer for Canonical, returned for reuse.
func fingerprint[S, A any](sys System[S, A], s *S, canon []byte) (uint64, []byte) {
	b := sys.Canonical(s, canon[:0])
	return xxhash.Sum64(b), b
}

// fpShards is the number of shards of a fingerprint table: a power of two,
// indexed by the fingerprint's top bits.
const fpShards = 256

// fpTable is a concurrent set of 64-bit fingerprints in the way TLC keeps
// its visited set: fpShards open-addressing tables of bare uint64 slots,
// each behind its own lock and grown on its own (doubling) when it passes
// maxLoad. A slot costs 8 bytes, so a fingerprint costs 8/load bytes:
// between 8/maxLoad and 16/maxLoad, 10.7-21 bytes at maxLoad 3/4; when the
// memory budget allows no more growth each shard fills to fullLoad (95 %,
// 8.4 bytes), and the search stops when the first shard is full.
//
// The low valueBits bits of a slot can carry a small value (the verdict
// memo of liveness): the key is then the fingerprint with those bits
// cleared, so the memo's keys are valueBits shorter than the visited
// set's. 0 is never a stored key (a key of 0 is stored as the lowest
// non-zero key).
//
// Growth is bounded by limit (bytes over all shards, shared by the tables
// of one search; nil = unbounded): a shard that would grow past it refuses
// the insert, and the search stops with the memory budget as its reason.
type fpTable struct {
	shards    [fpShards]fpShard
	valueBits uint
	maxLoad   float64
	mem       *memBudget
}

type fpShard struct {
	mu    sync.Mutex
	slots []uint64 // len is a power of two; 0 = free
	n     int
	grow  int      // n at which the shard grows
	_     [16]byte // keep hot shards on separate cache lines
}

const fpShardInitial = 1 << 8

// fullLoad is how full a shard may get when the memory budget refuses it
// room to grow: the fingerprints then cost 8/fullLoad = 8.4 bytes each.
const fullLoad = 0.95

// memBudget is the bytes a search may hold in its tables and frontier.
type memBudget struct {
	limit int64 // 0 = unbounded
	used  atomic.Int64
}

// take reserves n bytes and reports whether they fit.
func (m *memBudget) take(n int64) bool {
	if m == nil {
		return true
	}
	if m.used.Add(n) > m.limit && m.limit > 0 {
		m.used.Add(-n)
		return false
	}
	return true
}

// add counts n bytes whether or not they fit (the frontier must be held:
// past the budget it spills).
func (m *memBudget) add(n int64) {
	if m != nil {
		m.used.Add(n)
	}
}

func (m *memBudget) give(n int64) {
	if m != nil {
		m.used.Add(-n)
	}
}

func newFPTable(valueBits uint, mem *memBudget) *fpTable {
	t := &fpTable{valueBits: valueBits, maxLoad: 0.75, mem: mem}
	for i := range t.shards {
		t.shards[i].slots = make([]uint64, fpShardInitial)
		t.shards[i].grow = int(t.maxLoad * fpShardInitial)
	}
	mem.take(fpShards * fpShardInitial * 8)
	return t
}

func (t *fpTable) key(fp uint64) uint64 {
	k := fp &^ (1<<t.valueBits - 1)
	if k == 0 {
		k = 1 << t.valueBits
	}
	return k
}

// insert outcomes.
const (
	fpPresent = iota // the key was there already
	fpAdded          // the key is new
	fpFull           // the key is new and the memory budget refused room for it
)

// fpLowered: the key was there with a greater value, now replaced by the
// smaller one (lower).
const fpLowered = fpFull + 1

// How add treats a present key's value.
const (
	keepValue  = iota // keep it
	setValue          // replace it
	lowerValue        // replace it when the new value is smaller (fpLowered)
)

// insert adds fp (with value v in the value bits) and reports whether it
// was new; a present key keeps its value.
func (t *fpTable) insert(fp uint64, v uint64) int {
	return t.add(fp, v, keepValue)
}

// lower adds fp with value v, or lowers a present key's value to v: the
// visited set of a delay-bounded search, whose value is the fewest delays
// a state was reached with. fpPresent: the key was there with a value <= v.
func (t *fpTable) lower(fp uint64, v uint64) int {
	return t.add(fp, v, lowerValue)
}

// add adds fp with value v; a present key's value is treated by mode.
func (t *fpTable) add(fp uint64, v uint64, mode int) int {
	k := t.key(fp)
	sh := &t.shards[fp>>56]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.n+1 > sh.grow {
		n := int64(len(sh.slots)) * 8
		switch {
		case t.mem.take(n):
			sh.resize(2*len(sh.slots), t.valueBits)
			sh.grow = int(t.maxLoad * float64(len(sh.slots)))
		case float64(sh.n+1) <= fullLoad*float64(len(sh.slots)):
			// The budget allows no growth: fill the table to fullLoad.
		default:
			i := sh.lookup(k, t.valueBits)
			if i < 0 {
				return fpFull
			}
			return sh.update(i, k, v, t.valueBits, mode)
		}
	}
	mask := uint64(len(sh.slots) - 1)
	vm := uint64(1)<<t.valueBits - 1
	for i := (k >> t.valueBits) & mask; ; i = (i + 1) & mask {
		e := sh.slots[i]
		switch {
		case e == 0:
			sh.slots[i] = k | v&vm
			sh.n++
			return fpAdded
		case e&^vm == k:
			return sh.update(int(i), k, v, t.valueBits, mode)
		}
	}
}

// update treats the value of the present key k in slot i by mode. The
// caller holds the lock.
func (sh *fpShard) update(i int, k, v uint64, vb uint, mode int) int {
	vm := uint64(1)<<vb - 1
	switch {
	case mode == setValue:
		sh.slots[i] = k | v&vm
	case mode == lowerValue && v&vm < sh.slots[i]&vm:
		sh.slots[i] = k | v&vm
		return fpLowered
	}
	return fpPresent
}

// put sets fp's value, adding it when absent; it reports false when the
// budget refused the room.
func (t *fpTable) put(fp uint64, v uint64) bool {
	return t.add(fp, v, setValue) != fpFull
}

// get returns fp's value and whether fp is present.
func (t *fpTable) get(fp uint64) (uint64, bool) {
	k := t.key(fp)
	sh := &t.shards[fp>>56]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if i := sh.lookup(k, t.valueBits); i >= 0 {
		return sh.slots[i] & (1<<t.valueBits - 1), true
	}
	return 0, false
}

func (sh *fpShard) lookup(k uint64, vb uint) int {
	mask := uint64(len(sh.slots) - 1)
	vm := uint64(1)<<vb - 1
	for i := (k >> vb) & mask; ; i = (i + 1) & mask {
		e := sh.slots[i]
		switch {
		case e == 0:
			return -1
		case e&^vm == k:
			return int(i)
		}
	}
}

// resize rehashes the shard into size slots. The caller holds the lock.
func (sh *fpShard) resize(size int, vb uint) {
	old := sh.slots
	sh.slots = make([]uint64, size)
	mask := uint64(size - 1)
	vm := uint64(1)<<vb - 1
	for _, e := range old {
		if e == 0 {
			continue
		}
		i := ((e &^ vm) >> vb) & mask
		for sh.slots[i] != 0 {
			i = (i + 1) & mask
		}
		sh.slots[i] = e
	}
}

// len is the number of keys. Not safe concurrently with insert.
func (t *fpTable) len() int {
	n := 0
	for i := range t.shards {
		n += t.shards[i].n
	}
	return n
}

// bytes is the memory of the table's slots. Not safe concurrently with insert.
func (t *fpTable) bytes() int64 {
	var n int64
	for i := range t.shards {
		n += int64(len(t.shards[i].slots)) * 8
	}
	return n
}

// CollisionProbability is the probability that two of n distinct states
// share a 64-bit fingerprint, so that the search takes one for the other
// and misses what lies behind it: about n²/2⁶⁵ (the birthday bound, as TLC
// reports it), capped at 1.
func CollisionProbability(n int64) float64 {
	p := float64(n) * float64(n) / math.Exp2(65)
	return math.Min(p, 1)
}
