package tikv

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"cdcspec/impl/logging"
	"cdcspec/spec"
)

type wallClock struct{}

func (wallClock) NowMs() int64 { return time.Now().UnixMilli() }

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// upstream is a resolved ts source: now - 200 ms, frozen while stalled.
type upstream struct {
	frozen atomic.Uint64
}

func (u *upstream) resolved() uint64 {
	if f := u.frozen.Load(); f != 0 {
		return f
	}
	return uint64(time.Now().UnixMilli() - 200)
}

// outage runs 8 tables over 3 stores with one kv-client, takes every store
// down for down, brings them back, and returns the client and the heal
// target after settle.
func outage(t *testing.T, bugs spec.BugSet, down, settle time.Duration) (*Client, *PD, uint64, *syncBuf) {
	t.Helper()
	up := &upstream{}
	pd, err := StartPD(PDConfig{Stores: 3, Tables: 8, Seed: 7, Resolved: up.resolved})
	require.NoError(t, err)
	t.Cleanup(pd.Close)
	buf := &syncBuf{}
	lg := logging.New(buf, wallClock{}, "debug")
	c := NewClient(PDFunc(func(context.Context) (State, error) { return pd.State(), nil }), lg, bugs)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c.SetRecvDelay(5 * time.Millisecond)
	go func() { _ = c.Run(ctx) }()
	start := up.resolved()
	require.Eventually(t, func() bool {
		for tb := int64(1); tb <= 8; tb++ {
			if c.ResolvedTs(spec.WholeTable(tb), start) <= start {
				return false
			}
		}
		return true
	}, 10*time.Second, 50*time.Millisecond, "every table resolves past its start")
	for _, s := range pd.Stores() {
		require.NoError(t, pd.StoreDown(s.ID))
	}
	time.Sleep(down)
	for _, s := range pd.Stores() {
		require.NoError(t, pd.StoreUp(s.ID))
	}
	target := up.resolved()
	time.Sleep(settle)
	return c, pd, target, buf
}

// TestOutageRecoversWithFix: after every store failed and came back, every
// table resolves past the resolved ts of the stores' return, and no region
// is left in an exited worker (tiflow#9597's eviction).
func TestOutageRecoversWithFix(t *testing.T) {
	t.Parallel()
	c, _, target, _ := outage(t, 0, 1500*time.Millisecond, 7*time.Second)
	for tb := int64(1); tb <= 8; tb++ {
		require.Greater(t, c.ResolvedTs(spec.WholeTable(tb), 0), target, "table %d resolves past the heal target", tb)
	}
	require.Empty(t, c.StuckRegions())
}

// TestOutageStuckWithBug: with tiflow#9519's eviction in the worker's exit,
// regions whose first response the receive loop handled after their
// stream's worker exited stay there: their tables never resolve past the
// stores' return.
func TestOutageStuckWithBug(t *testing.T) {
	t.Parallel()
	bugs, err := spec.ParseBugs([]string{"stuck-after-upstream-failure"})
	require.NoError(t, err)
	c, _, target, _ := outage(t, bugs, 1500*time.Millisecond, 7*time.Second)
	stuck := c.StuckRegions()
	t.Logf("stuck regions: %v", stuck)
	require.NotEmpty(t, stuck)
	behind := 0
	for tb := int64(1); tb <= 8; tb++ {
		if c.ResolvedTs(spec.WholeTable(tb), 0) <= target {
			behind++
		}
	}
	require.Positive(t, behind)
}
