package coordinator

import (
	"testing"

	"github.com/stretchr/testify/require"

	"cdcspec/impl/core"
	"cdcspec/impl/logging"
	"cdcspec/spec"
)

type fixedRand struct{ f float64 }

func (r fixedRand) Uint64() uint64   { return 0 }
func (r fixedRand) Float64() float64 { return r.f }

type clock struct{ ms int64 }

func (c *clock) NowMs() int64 { return c.ms }

func newTestChangefeed(t *testing.T, bugs spec.BugSet) (*Changefeed, *clock, *[]spec.Event) {
	t.Helper()
	ck := &clock{ms: 1_000_000}
	lg := logging.New(nil, ck, "debug")
	var evs []spec.Event
	lg.OnEvent = func(e spec.Event) { evs = append(evs, e) }
	opts := core.Options{Bugs: bugs}.WithDefaults()
	cf := &Changefeed{ID: "default/cf", opts: &opts, lg: lg,
		status: core.MaintainerStatus{Changefeed: "default/cf", CheckpointTs: 100, BootstrapDone: true, State: core.ComponentWorking}}
	cf.backoff = newBackoff(ck.ms, cf.ID, 100, opts.ErrorStuckDurationMs, fixedRand{0.5}, lg)
	return cf, ck, &evs
}

var kafkaErr = []core.RunningError{{Code: "CDC:ErrChangefeedRetryable", Message: "kafka async send message failed"}}

// TestBackoffSchedule pins coordinator/changefeed/backoff.go's schedule:
// 10 s initial, doubling, 10 min cap, failed once 30 min are spent.
func TestBackoffSchedule(t *testing.T) {
	cf, ck, _ := newTestChangefeed(t, 0)
	var waits []int64
	for i := 0; i < 12; i++ {
		cf.backoff.isRestarting = false // the restart's add operator finished
		changed, state, _ := cf.UpdateStatus(ck.ms, core.MaintainerStatus{Changefeed: cf.ID, CheckpointTs: 100, BootstrapDone: true, Err: kafkaErr}, nil)
		if !changed {
			t.Fatalf("retry %d: error not handled", i)
		}
		if state == spec.StateFailed {
			if ck.ms-1_000_000 <= 30*60_000 {
				t.Fatalf("failed after %d ms, before the 30 min budget", ck.ms-1_000_000)
			}
			if len(waits) < 6 {
				t.Fatalf("failed too early, waits %v", waits)
			}
			t.Logf("waits %v, failed at +%d ms", waits, ck.ms-1_000_000)
			// Jitter 0.5 in [0,1) maps to the interval itself (+-10 % around it).
			want := []int64{10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 600_000}
			for j, w := range want {
				if j < len(waits) && (waits[j] < w*9/10 || waits[j] > w*11/10+1) {
					t.Errorf("wait %d = %d ms, want %d ms +-10%%", j, waits[j], w)
				}
			}
			return
		}
		if state != spec.StateWarning {
			t.Fatalf("retry %d: state %s, want warning", i, state)
		}
		w := cf.backoff.nextRetryTime - ck.ms
		waits = append(waits, w)
		ck.ms = cf.backoff.nextRetryTime + 1
	}
	t.Fatalf("never failed; waits %v", waits)
}

// TestUpdateStatusRegressedCheckpoint is #5779: a regressed status without
// an error is ignored; with an error it reaches the backoff with the stored
// checkpoint. With the bug regressed-checkpoint-drops-error the error is
// dropped too.
func TestUpdateStatusRegressedCheckpoint(t *testing.T) {
	cf, ck, evs := newTestChangefeed(t, 0)
	if changed, _, _ := cf.UpdateStatus(ck.ms, core.MaintainerStatus{CheckpointTs: 50, BootstrapDone: true}, nil); changed {
		t.Fatal("regressed status without error changed the state")
	}
	changed, state, _ := cf.UpdateStatus(ck.ms, core.MaintainerStatus{CheckpointTs: 50, BootstrapDone: true, Err: kafkaErr}, nil)
	if !changed || state != spec.StateWarning || cf.status.CheckpointTs != 100 {
		t.Fatalf("fix: changed=%v state=%s stored=%d, want warning with stored checkpoint 100", changed, state, cf.status.CheckpointTs)
	}
	if n := countKind(*evs, spec.BackoffErrorSeen); n != 1 {
		t.Fatalf("fix: %d backoff-error-seen events", n)
	}

	cf, ck, evs = newTestChangefeed(t, spec.BugSet(0).With(spec.BugRegressedCheckpointDropsError))
	if changed, _, _ := cf.UpdateStatus(ck.ms, core.MaintainerStatus{CheckpointTs: 50, BootstrapDone: true, Err: kafkaErr}, nil); changed {
		t.Fatal("bug: regressed status with error changed the state")
	}
	if n := countKind(*evs, spec.BackoffErrorSeen); n != 0 {
		t.Fatalf("bug: the error reached the backoff (%d events)", n)
	}
}

// TestUpdateStatusOrder: a fast-fail error wins over everything; a
// BootstrapDone toggle reports Normal and ignores a retryable error;
// checkpoint progress ignores errors.
func TestUpdateStatusOrder(t *testing.T) {
	cf, ck, _ := newTestChangefeed(t, 0)
	fast := []core.RunningError{{Code: "CDC:ErrGCTTLExceeded", Message: "gc ttl exceeded"}}
	if _, state, _ := cf.UpdateStatus(ck.ms, core.MaintainerStatus{CheckpointTs: 200, BootstrapDone: false, Err: fast}, nil); state != spec.StateFailed {
		t.Fatalf("fast-fail: state %s, want failed", state)
	}
	cf, ck, _ = newTestChangefeed(t, 0)
	if changed, state, _ := cf.UpdateStatus(ck.ms, core.MaintainerStatus{CheckpointTs: 100, BootstrapDone: false, Err: kafkaErr}, nil); !changed || state != spec.StateNormal {
		t.Fatalf("BootstrapDone toggle: changed=%v state=%s, want normal", changed, state)
	}
	cf, ck, _ = newTestChangefeed(t, 0)
	if changed, _, _ := cf.UpdateStatus(ck.ms, core.MaintainerStatus{CheckpointTs: 150, BootstrapDone: true, Err: kafkaErr}, nil); changed {
		t.Fatal("progress: an error with checkpoint progress changed the state")
	}
}

func countKind(evs []spec.Event, k spec.Kind) int {
	n := 0
	for _, e := range evs {
		if e.Kind == k {
			n++
		}
	}
	return n
}

// TestFailoverRestartsErrorStuckBudget pins why the catalogue entry
// failover-loses-retrying (#921, fixed by #938) is not expressible through the
// backoff's give-up either: NewBackoff resets errBackoff (resetErrRetry), so
// a new coordinator restarts the changefeed-error-stuck-duration clock at its
// bootstrap whether or not retrying is restored. A changefeed that spent 29
// of its 30 minutes before the failover gets a fresh budget with the fix
// too; without it the clock starts at the first error after the bootstrap
// instead, a shift of the time between the two (2 s here, within the last
// wait), so both give up at the same restart.
func TestFailoverRestartsErrorStuckBudget(t *testing.T) {
	restartsAfterFailover := func(bugs spec.BugSet) (int, int64) {
		ck := &clock{ms: 1_000_000 + 29*60_000} // the streak began 29 min ago
		lg := logging.New(nil, ck, "debug")
		opts := core.Options{Bugs: bugs}.WithDefaults()
		co := &Coordinator{opts: &opts, lg: lg, rnd: fixedRand{0.5}}
		cf := co.newChangefeed(ck.ms, "default/cf", ChangeFeedInfo{State: spec.StateWarning}, 100)
		bootstrap := ck.ms
		ck.ms += 2_000
		// The adopted maintainer's first status toggles BootstrapDone.
		if _, state, _ := cf.UpdateStatus(ck.ms, core.MaintainerStatus{Changefeed: cf.ID, CheckpointTs: 100, BootstrapDone: true, State: core.ComponentWorking}, nil); state != spec.StateNormal {
			t.Fatalf("toggle: state %s", state)
		}
		for n := 0; n < 20; n++ {
			cf.backoff.isRestarting = false
			_, state, _ := cf.UpdateStatus(ck.ms, core.MaintainerStatus{Changefeed: cf.ID, CheckpointTs: 100, BootstrapDone: true, State: core.ComponentWorking, Err: kafkaErr}, nil)
			if state == spec.StateFailed {
				return n, ck.ms - bootstrap
			}
			require.Equal(t, spec.StateWarning, state)
			ck.ms = cf.backoff.nextRetryTime + 1
		}
		t.Fatal("never failed")
		return 0, 0
	}
	fixed, fixedMs := restartsAfterFailover(0)
	buggy, buggyMs := restartsAfterFailover(spec.BugSet(0).With(spec.BugFailoverLosesRetrying))
	require.Equal(t, fixed, buggy, "restarts after the failover, fix on and off")
	require.GreaterOrEqual(t, fixed, 6, "with the fix the budget restarted at the bootstrap (29 of 30 min were spent before it)")
	require.Greater(t, fixedMs, int64(30*60_000))
	// Without the fix the clock starts 2 s later: the give-up can only come
	// later, here at the same retry.
	require.GreaterOrEqual(t, buggyMs, fixedMs)
}
