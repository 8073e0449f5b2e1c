package model

import (
	"hash/fnv"

	"cdcspec/search"
)

// StateSet summarises the states a search encoded (its visited set, plus
// the states of the fair schedules when liveness is checked): how many
// distinct encodings and an order-independent hash of them. Two complete
// searches of one configuration with equal StateSets reached the same
// states (up to a 64-bit hash collision). `make mutate-all` compares a
// mutant's with the original's: a mutant that changes a step but no
// reachable state is equivalent in that configuration (SPEC.md 10.1).
type StateSet struct {
	Count int64
	Hash  uint64
}

// stateSet collects the encodings. CheckStateSet runs one search worker,
// so one goroutine at a time adds to it and the model needs no lock
// (spec/ and model/ stay pure: no sync, purity_test.go).
type stateSet struct {
	seen map[uint64]struct{}
	sum  uint64
}

func (ss *stateSet) add(enc []byte) {
	h := fnv.New64a()
	h.Write(enc)
	k := h.Sum64()
	if _, ok := ss.seen[k]; !ok {
		ss.seen[k] = struct{}{}
		ss.sum += mix64(k)
	}
}

// mix64 is splitmix64's finaliser: a sum of mixed keys is an
// order-independent set hash that a few equal keys do not cancel.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// fingerprinted is the model's system that records every canonical
// encoding the search asks for; the embedded system provides the rest
// (symmetry, the default scheduler, fairness).
type fingerprinted struct {
	system
	set *stateSet
}

func (f fingerprinted) Canonical(s *State, buf []byte) []byte {
	enc := f.system.Canonical(s, buf)
	f.set.add(enc)
	return enc
}

// CheckStateSet is Check (b may bound delays: search.Bounds.DelayBounded)
// that also returns the StateSet of the states the search encoded. It runs
// one worker whatever b.Workers says.
func CheckStateSet(cfg Config, b search.Bounds) (Result, StateSet, error) {
	b.Workers = 1
	if err := cfg.Validate(); err != nil {
		return Result{Config: cfg, Bounds: b}, StateSet{}, err
	}
	set := &stateSet{seen: map[uint64]struct{}{}}
	r, err := search.Check[State, Action](fingerprinted{system: newSystem(&cfg), set: set}, b, nil)
	return result(&cfg, b, r), StateSet{Count: int64(len(set.seen)), Hash: set.sum}, err
}
