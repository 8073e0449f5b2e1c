package tikv

import (
	"bytes"
	"context"
	"os"
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
	return outageWith(t, bugs, 5*time.Millisecond, down, settle)
}

// outageWith is outage with the receive loop's KVClientRecvDelay.
func outageWith(t *testing.T, bugs spec.BugSet, recvDelay, down, settle time.Duration) (*Client, *PD, uint64, *syncBuf) {
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
	c.SetRecvDelay(recvDelay)
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

// TestRegionsOfCoverTable: a table's regions are contiguous, from the
// table's start to its end.
func TestRegionsOfCoverTable(t *testing.T) {
	for _, n := range []int{1, 3, 4, 8} {
		rs := RegionsOf(5, n)
		require.Len(t, rs, n)
		require.Equal(t, "", rs[0].Start)
		require.Equal(t, "", rs[n-1].End)
		for i := 1; i < n; i++ {
			require.Equal(t, rs[i-1].End, rs[i].Start, "n=%d region %d", n, i)
			require.Less(t, rs[i-1].Start, rs[i].Start)
		}
	}
}

// TestStoreDownMovesLeaders: PD elects a down store's leaders elsewhere
// after DetectDelay; the store listens again on its address when it is back.
func TestStoreDownMovesLeaders(t *testing.T) {
	up := &upstream{}
	pd, err := StartPD(PDConfig{Stores: 3, Tables: 2, Resolved: up.resolved, DetectDelay: 50 * time.Millisecond, RecoveryWindow: 300 * time.Millisecond})
	require.NoError(t, err)
	defer pd.Close()
	led := func(id uint64) int {
		n := 0
		for _, r := range pd.State().Regions {
			if r.Leader == id {
				n++
			}
		}
		return n
	}
	require.Positive(t, led(1))
	require.NoError(t, pd.StoreDown(1))
	require.Eventually(t, func() bool { return led(1) == 0 }, 5*time.Second, 10*time.Millisecond)
	s := pd.Stores()[0]
	require.False(t, s.Up())
	require.NoError(t, pd.StoreUp(1))
	require.True(t, s.Up())
	c, err := dialStream(context.Background(), s.Addr, s.ID)
	require.NoError(t, err)
	c.cancel()
	_, err = c.Recv()
	require.ErrorIs(t, err, errStreamCanceled)
}

// TestResolvedTsOfSplitSpan: a span's resolved ts is the lowest of the
// regions it overlaps, not of the whole table.
func TestResolvedTsOfSplitSpan(t *testing.T) {
	c := NewClient(PDFunc(func(context.Context) (State, error) { return State{}, nil }), nil, 0)
	for i, r := range RegionsOf(1, 4) { // boundaries g, n, t
		c.locks[r.ID] = &regionLock{table: 1, start: r.Start, end: r.End, resolvedTs: uint64(100 + 10*i)}
	}
	c.subscribed[1] = true
	require.Equal(t, uint64(100), c.ResolvedTs(spec.WholeTable(1), 0))
	require.Equal(t, uint64(110), c.ResolvedTs(spec.Span{Table: 1, Start: "h", End: "m"}, 0))
	require.Equal(t, uint64(120), c.ResolvedTs(spec.Span{Table: 1, Start: "n"}, 0))
	require.Equal(t, uint64(0), c.ResolvedTs(spec.WholeTable(2), 0), "a table without regions is not resolved")
}

// TestOutageRaceWithoutFailpoint (CDCSPEC_LONG=1, ~1 min) measures how often
// the race of tiflow#9595 strands a region when the receive loop is not
// slowed: five all-store outages with the bug. It checks that the stranded
// regions are exactly what holds tables back: a table is behind the stores'
// return iff one of its regions is in an exited worker.
func TestOutageRaceWithoutFailpoint(t *testing.T) {
	if os.Getenv("CDCSPEC_LONG") == "" {
		t.Skip("set CDCSPEC_LONG=1")
	}
	bugs, err := spec.ParseBugs([]string{"stuck-after-upstream-failure"})
	require.NoError(t, err)
	const runs = 5
	stuckRuns := 0
	for i := 0; i < runs; i++ {
		c, _, target, _ := outageWith(t, bugs, 0, 1500*time.Millisecond, 7*time.Second)
		stuck := map[int64]bool{}
		for _, r := range c.StuckRegions() {
			stuck[int64(r/1000)] = true
		}
		if len(stuck) > 0 {
			stuckRuns++
		}
		for tb := int64(1); tb <= 8; tb++ {
			behind := c.ResolvedTs(spec.WholeTable(tb), 0) <= target
			require.Equal(t, stuck[tb], behind, "run %d table %d: stranded region iff behind", i, tb)
		}
	}
	t.Logf("without the failpoint: regions stranded in %d of %d outages", stuckRuns, runs)
}
