package cluster

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/spec"
)

// TestInjectorsCoverTheVocabulary: every fault of the vocabulary has an
// injector or is listed in UnsupportedFaults with a reason, never both;
// every scenario and the default schedule name only what cdcspec run
// injects.
func TestInjectorsCoverTheVocabulary(t *testing.T) {
	require.NoError(t, spec.CheckUnsupported("cdcspec run", UnsupportedFaults))
	for _, f := range spec.Faults() {
		_, unsupported := UnsupportedFaults[f]
		_, injected := faultInjectors[f]
		assert.NotEqual(t, unsupported, injected, "%s must be exactly one of: injected, listed in UnsupportedFaults", f)
	}
	for a := range actionInjectors {
		assert.True(t, a.Known(), "action %s is no domain action of spec", a)
	}
	_, err := Schedule(DefaultFaults, 60)
	require.NoError(t, err)
	for _, name := range Scenarios() {
		sc, err := LoadScenario(name)
		require.NoError(t, err)
		for _, st := range sc.Steps {
			assert.NoError(t, st.check(), "%s: %s", name, st.Name())
		}
	}
}

func TestParseStep(t *testing.T) {
	st, err := ParseStep("kill-capture")
	require.NoError(t, err)
	assert.Equal(t, spec.FaultKillCapture, st.Fault)
	st, err = ParseStep("move-table")
	require.NoError(t, err)
	assert.Equal(t, spec.ActionMoveTable, st.Action)

	_, err = ParseStep("kill")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown fault "kill" (known: kill-capture, kill-maintainer-capture, `)
	assert.Contains(t, err.Error(), "pause-changefeed")
	_, err = ParseStep("partition")
	assert.ErrorContains(t, err, "fault partition: cdcspec run cannot inject it: every capture runs on one host's loopback")
	_, err = ParseStep("create-changefeed")
	assert.ErrorContains(t, err, `unknown fault "create-changefeed"`)

	steps, err := Schedule([]string{"sink-error", "stall-upstream", "create-table"}, 40)
	require.NoError(t, err)
	require.Len(t, steps, 3)
	assert.Equal(t, []string{"sink-error", "stall-upstream", "create-table"}, []string{steps[0].Name(), steps[1].Name(), steps[2].Name()})
	assert.Equal(t, []int64{10, 20, 30}, []int64{int64(steps[0].At), int64(steps[1].At), int64(steps[2].At)})
}

// TestRunCheckedNothingFails: a run whose data check saw no produced row,
// or whose fault was never applied, is a failure even when nothing was
// lost.
func TestRunCheckedNothingFails(t *testing.T) {
	ok := Result{Settled: true, Produced: 10, Recovery: []Recovery{{Fault: "kill-capture", Attempts: 1}}}
	ok.judge()
	require.True(t, ok.OK(), "%v", ok.Failures)

	empty := Result{Settled: true}
	empty.judge()
	assert.False(t, empty.OK())
	assert.Contains(t, empty.Failures[0], "checked no data")

	unapplied := Result{Settled: true, Produced: 10, Recovery: []Recovery{{Fault: "move-table", Error: "no span of table 4 could move", Attempts: 9}}}
	unapplied.judge()
	assert.False(t, unapplied.OK())
	assert.Contains(t, unapplied.Failures[0], "fault move-table at 0.0s was never applied (9 attempts): no span of table 4 could move")

	interrupted := Result{Settled: true, Produced: 10, Interrupted: "received terminated"}
	interrupted.judge()
	assert.False(t, interrupted.OK())
}

// TestRecoveryPath: a sink-error reached its path when the changefeed went
// to warning and back before the next fault; a pause when it was stopped
// and came back; the per-fault lag peak never exceeds the run's.
func TestRecoveryPath(t *testing.T) {
	tl := []Sample{
		{At: 1000, State: "normal", Checkpoint: 900},
		{At: 2000, State: "warning", Checkpoint: 1000},
		{At: 3000, State: "normal", Checkpoint: 2900},
		{At: 4000, State: "stopped", Checkpoint: 3000},
		{At: 6000, State: "normal", Checkpoint: 5900},
	}
	recs := recovery([]Recovery{
		{Fault: "sink-error", FaultToWarningMs: -1, WarningToNormalMs: -1, LagBelow3sMs: -1, at: 1500},
		{Fault: "pause-changefeed", FaultToWarningMs: -1, WarningToNormalMs: -1, LagBelow3sMs: -1, at: 3500},
		{Fault: "sink-error", FaultToWarningMs: -1, WarningToNormalMs: -1, LagBelow3sMs: -1, at: 5500},
	}, tl)
	resumed := recovery([]Recovery{{Fault: "resume-changefeed", FaultToWarningMs: -1, WarningToNormalMs: -1, LagBelow3sMs: -1, at: 3500}}, tl)
	assert.True(t, resumed[0].PathReached, "resume-changefeed pauses first: stopped, then normal: %s", resumed[0].Path)
	assert.True(t, recs[0].PathReached, recs[0].Path)
	assert.True(t, recs[1].PathReached, recs[1].Path)
	assert.False(t, recs[2].PathReached, "a sink-error with no warning after it did not reach its path")
	assert.Contains(t, recs[2].Path, "no warning")
	assert.Equal(t, int64(1000), recs[1].LagPeakMs, "the lag of the samples between this fault and the next")
}

// TestRandomSchedule: a seed draws the same steps every time, only steps
// cdcspec run injects and never one of notDrawn; every notDrawn entry
// names an injectable step.
func TestRandomSchedule(t *testing.T) {
	a, names, err := RandomSchedule(40, 7, 60*time.Second)
	require.NoError(t, err)
	b, _, err := RandomSchedule(40, 7, 60*time.Second)
	require.NoError(t, err)
	require.Equal(t, a, b)
	require.Len(t, names, 40)
	for _, n := range names {
		_, skip := notDrawn[n]
		require.False(t, skip, "drew %s", n)
	}
	known := map[string]bool{}
	for _, n := range Names() {
		known[n] = true
	}
	for n := range notDrawn {
		require.True(t, known[n], "notDrawn names %s, which cdcspec run does not inject", n)
	}
	c, _, err := RandomSchedule(40, 8, 60*time.Second)
	require.NoError(t, err)
	require.NotEqual(t, a, c, "two seeds drew the same 40 steps")
}

// TestFaultPhaseStretched: a fault phase that ran past --duration is
// reported as stretched, with the late steps and why; one on time is not.
func TestFaultPhaseStretched(t *testing.T) {
	rc := RunConfig{Duration: 30 * time.Second, MinGap: 3 * time.Second}
	rs := &runState{}
	rs.add(Recovery{Fault: "sink-error", PlannedAtMs: 10_000, AtMs: 10_050})
	rs.add(Recovery{Fault: "move-table", PlannedAtMs: 20_000, AtMs: 36_700, Attempts: 4,
		Late: "waited for sink-error's 3s window and the 3s gap; applied at attempt 4"})
	fp := faultPhaseReport(rc, time.Now().Add(-39700*time.Millisecond), rs)
	require.True(t, fp.Stretched)
	require.Equal(t, int64(30_000), fp.PlannedMs)
	require.InDelta(t, 39_700, fp.ActualMs, 500)
	require.Equal(t, []string{
		"move-table planned at 20.0s, applied at 36.7s (waited for sink-error's 3s window and the 3s gap; applied at attempt 4)",
		"the last step, move-table, was applied at 36.7s, after which the phase ends",
	}, fp.Why)

	onTime := &runState{}
	onTime.add(Recovery{Fault: "sink-error", PlannedAtMs: 10_000, AtMs: 10_050})
	fp = faultPhaseReport(rc, time.Now().Add(-30100*time.Millisecond), onTime)
	require.False(t, fp.Stretched)
	require.Empty(t, fp.Why)
}
