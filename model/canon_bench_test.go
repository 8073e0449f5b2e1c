package model

import (
	"math/rand/v2"
	"testing"
)

// walkStates returns n states of seeded random walks of the default
// configuration, each a copy taken after a step.
func walkStates(n int) []State {
	cfg, _ := Standard("default")
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]State, 0, n)
	var buf []Action
	for len(out) < n {
		s := Init(&cfg)
		for d := 0; d < 40 && len(out) < n; d++ {
			buf = appendActions(&cfg, &s, buf[:0], true)
			if len(buf) == 0 {
				break
			}
			step(&cfg, &s, buf[r.IntN(len(buf))], nil)
			out = append(out, s)
		}
	}
	return out
}

// BenchmarkCanonicalize: canonicalisation of canonical states (what every
// step ends with).
func BenchmarkCanonicalize(b *testing.B) {
	states := walkStates(4096)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := states[i%len(states)]
		canonicalize(&s, nil)
	}
}

// BenchmarkStep: one step of a random action from a walk's state.
func BenchmarkStep(b *testing.B) {
	cfg, _ := Standard("default")
	states := walkStates(4096)
	acts := make([][]Action, len(states))
	for i := range states {
		acts[i] = appendActions(&cfg, &states[i], nil, true)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := i % len(states)
		if len(acts[j]) == 0 {
			continue
		}
		s := states[j]
		step(&cfg, &s, acts[j][i%len(acts[j])], nil)
	}
}
