package search

import (
	"sync"

	"github.com/cespare/xxhash/v2"
)

// fingerprint is the 64-bit hash of s's canonical encoding; canon is the
// caller's scratch buffer for Canonical, returned for reuse.
func fingerprint[S, A any](sys System[S, A], s *S, canon []byte) (uint64, []byte) {
	b := sys.Canonical(s, canon[:0])
	return xxhash.Sum64(b), b
}

// fpShards is the number of shards of a fingerprint set: a power of two,
// indexed by the fingerprint's top bits.
const fpShards = 256

// fpSet is a concurrent set of fingerprints: fpShards open-addressing
// tables, each behind its own lock and grown on its own when it passes half
// full. Memory stays within 16-32 bytes per fingerprint whatever the
// branching factor, and a growing shard stalls only the inserts that land in
// it. 0 is never stored (a fingerprint of 0 is mapped to 1).
type fpSet struct {
	shards [fpShards]fpShard
}

type fpShard struct {
	mu    sync.Mutex
	slots []uint64 // len is a power of two; 0 = free
	n     int
	_     [24]byte // keep hot shards on separate cache lines
}

const fpShardInitial = 1 << 8

func newFPSet() *fpSet {
	s := &fpSet{}
	for i := range s.shards {
		s.shards[i].slots = make([]uint64, fpShardInitial)
	}
	return s
}

// insert adds fp and reports whether it was new.
func (s *fpSet) insert(fp uint64) bool {
	if fp == 0 {
		fp = 1
	}
	sh := &s.shards[fp>>56]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if 2*(sh.n+1) > len(sh.slots) {
		sh.grow()
	}
	mask := uint64(len(sh.slots) - 1)
	for i := fp & mask; ; i = (i + 1) & mask {
		switch sh.slots[i] {
		case fp:
			return false
		case 0:
			sh.slots[i] = fp
			sh.n++
			return true
		}
	}
}

// grow doubles the shard's table. The caller holds the lock.
func (sh *fpShard) grow() {
	old := sh.slots
	sh.slots = make([]uint64, 2*len(old))
	mask := uint64(len(sh.slots) - 1)
	for _, fp := range old {
		if fp == 0 {
			continue
		}
		i := fp & mask
		for sh.slots[i] != 0 {
			i = (i + 1) & mask
		}
		sh.slots[i] = fp
	}
}

// len is the number of fingerprints in the set. Not safe concurrently with
// insert.
func (s *fpSet) len() int {
	n := 0
	for i := range s.shards {
		n += s.shards[i].n
	}
	return n
}
