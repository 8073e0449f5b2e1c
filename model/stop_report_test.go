package model

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestClosedMaintainerReportsStoppedOnce: the manager reports a closed
// maintainer's Stopped status in the tick that unregisters it
// (maintainer_manager.go:146-149 at b813e76f9), so once. The model's ticks
// of a closed maintainer before its cleanup re-sent it; a stop that a
// fast-fail error in the move origin's final report had started (cdcspec's
// #6280 rule) then finished on the second copy, and the dispatchers were
// never closed (`cdcspec check --config maintainer-move --fast-fails 1`:
// stop-closes-dispatchers).
func TestClosedMaintainerReportsStoppedOnce(t *testing.T) {
	cfg := standard["maintainer-move"]()
	s := Init(&cfg)
	s.Maint[0] = Maint{Exists: true, Bootstrapped: true, Removing: true, Removed: true, Epoch: 2, Reported: 1, Err: 2}
	statuses := func() int {
		n := 0
		for i := 0; i < s.nmsgs(); i++ {
			if s.Net[i].Kind == mStatus && s.Net[i].Src == s.Ident(0) {
				n++
			}
		}
		return n
	}
	maintTick(&cfg, &s, 0, nil)
	require.Equal(t, 1, statuses(), "the closed maintainer's Stopped status, with its error")
	require.True(t, s.Maint[0].StopReported)
	for i := 0; i < s.nmsgs(); i++ {
		if m := s.Net[i]; m.Kind == mStatus {
			s.removeMsg(i)
			break
		}
	}
	maintTick(&cfg, &s, 0, nil)
	require.Zero(t, statuses(), "reported once")
}
