package model

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"cdcspec/spec"
)

// TestIDsBelowNextID: along random walks of every standard configuration,
// with and without each catalogued bug, every field that holds a
// DispatcherID holds 0 or an ID below NextID, and the IDs are compact. This
// is what lets canonicalize decide compactness from the dispatchers and the
// span controllers alone (heldIDsCompact): whenever that fast path says
// compact, the full scan agrees.
func TestIDsBelowNextID(t *testing.T) {
	var cfgs []Config
	for _, name := range StandardNames() {
		cfg, _ := Standard(name)
		cfgs = append(cfgs, cfg)
	}
	for _, b := range spec.Bugs() {
		cfg, _ := Standard(BugConfig(b.Name))
		cfg.Bugs = spec.BugSet(0).With(b.ID)
		cfgs = append(cfgs, cfg)
	}
	r := rand.New(rand.NewPCG(7, 13))
	var buf []Action
	fast := 0
	for _, cfg := range cfgs {
		for walk := 0; walk < 100; walk++ {
			s := Init(&cfg)
			for d := 0; d < 60; d++ {
				buf = appendActions(&cfg, &s, buf[:0], true)
				if len(buf) == 0 {
					break
				}
				a := buf[r.IntN(len(buf))]
				step(&cfg, &s, a, nil)
				var bits [4]uint64
				s.visitIDs(&bits, nil)
				bits[0] &^= 1
				var want [4]uint64
				for id := 1; id < int(s.NextID); id++ {
					want[id>>6] |= 1 << (id & 63)
				}
				require.Equal(t, want, bits, "%s after %v: the held IDs are not 1..NextID-1 (NextID %d)\n%s", cfg.Name, a, s.NextID, &s)
				if s.heldIDsCompact() {
					fast++
				}
			}
		}
	}
	require.Positive(t, fast, "the fast path never applied")
}
