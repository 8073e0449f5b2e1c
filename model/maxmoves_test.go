package model

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// movesOnWalks runs seeded random walks that take a balance move whenever
// one is enabled, and returns the most moves one walk took.
func movesOnWalks(t *testing.T, cfg Config) int {
	t.Helper()
	require.NoError(t, cfg.Validate())
	rng := rand.New(rand.NewPCG(1, 2))
	most := 0
	for walk := 0; walk < 50; walk++ {
		s, moves := Init(&cfg), 0
		var buf []Action
		for range 80 {
			buf = appendActions(&cfg, &s, buf[:0], true)
			if len(buf) == 0 {
				break
			}
			a := buf[rng.IntN(len(buf))]
			for _, b := range buf {
				if b.Kind == AMaintMove {
					a = b
				}
			}
			if a.Kind == AMaintMove {
				moves++
			}
			step(&cfg, &s, a, nil)
		}
		most = max(most, moves)
	}
	return most
}

// MaxMoves bounds the balance moves of SpanMoves (the --max-moves flag);
// without it the same walks move more than once.
func TestMaxMovesBoundsBalanceMoves(t *testing.T) {
	cfg := Base()
	cfg.Name, cfg.TsMax, cfg.SpanMoves = "moves", 2, true
	require.Greater(t, movesOnWalks(t, cfg), 1, "unbounded moves: the walks should move more than once")
	cfg.MaxMoves = 1
	require.Equal(t, 1, movesOnWalks(t, cfg))
}

func TestMaxMovesValidated(t *testing.T) {
	cfg := Base()
	cfg.MaxMoves = 1
	require.ErrorContains(t, cfg.Validate(), "moves=false")
	cfg.SpanMoves, cfg.MaxMoves = true, 8
	require.ErrorContains(t, cfg.Validate(), "max moves must be 0..7")
}
