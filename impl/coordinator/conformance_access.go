package coordinator

import (
	"fmt"

	"cdcspec/impl/core"
	"cdcspec/impl/logging"
	"cdcspec/spec"
)

// Accessors for impl/conformance, which replays TiCDC's unit tests of
// coordinator/changefeed (backoff_test.go, changefeed_test.go) against one
// Changefeed. Nothing else uses them.

// NewChangefeedForConformance builds a changefeed the way TiCDC's
// changefeed.NewChangefeed(id, info, checkpointTs, isNew) does
// (coordinator/changefeed/changefeed.go at b813e76f9): status Working at
// checkpoint with BootstrapDone unset, and a backoff whose baseline is the
// checkpoint and whose budget is opts.ErrorStuckDurationMs.
func NewChangefeedForConformance(now int64, id core.ChangefeedID, checkpoint uint64, opts *core.Options, rnd core.Rand, lg *logging.Logger) *Changefeed {
	cf := &Changefeed{ID: id, opts: opts, lg: lg, progress: ProgressNone,
		status:                core.MaintainerStatus{Changefeed: id, CheckpointTs: checkpoint, State: core.ComponentWorking},
		lastSavedCheckpointTs: checkpoint}
	cf.backoff = newBackoff(now, id, checkpoint, opts.ErrorStuckDurationMs, rnd, lg)
	return cf
}

// BackoffView is the backoff's state as TiCDC's backoff tests read it.
type BackoffView struct {
	Failed        bool
	Retrying      bool
	Restarting    bool
	Baseline      uint64 // checkpointTs: progress past it means recovery
	NextRetryTime int64
}

// BackoffView returns the changefeed's backoff state.
func (c *Changefeed) BackoffView() BackoffView {
	b := c.backoff
	return BackoffView{Failed: b.failed, Retrying: b.retrying, Restarting: b.isRestarting, Baseline: b.checkpointTs, NextRetryTime: b.nextRetryTime}
}

// ShouldRun is Changefeed.ShouldRun: the scheduler may add it at now.
func (c *Changefeed) ShouldRun(now int64) bool { return c.backoff.ShouldRun(now) }

// StartFinished is what the add operator's PostFinish calls.
func (c *Changefeed) StartFinished() { c.backoff.StartFinished() }

// ResetErrRetry is Backoff.resetErrRetry, which TiCDC's TestRetry calls
// directly: baseline and restarting marker stay.
func (c *Changefeed) ResetErrRetry(now int64) { c.backoff.resetErrRetry(now) }

// NewChangefeedDBForConformance returns an empty ChangefeedDB, as TiCDC's
// changefeed.NewChangefeedDB does for coordinator/changefeed/changefeed_db_test.go.
func NewChangefeedDBForConformance(lg *logging.Logger) *ChangefeedDB { return newChangefeedDB(lg, 0) }

// SetBackoffForConformance sets what TiCDC's ChangefeedDB tests set on a
// changefeed's backoff: the baseline checkpoint (NewBackoff's checkpointTs),
// failed and the restarting marker.
func (c *Changefeed) SetBackoffForConformance(baseline uint64, failed, restarting bool) {
	c.backoff.checkpointTs, c.backoff.failed, c.backoff.isRestarting = baseline, failed, restarting
}

// HandleStateChangeForConformance is coordinator.handleStateChange called
// with a ChangefeedStateChangeEvent, as TiCDC's coordinator tests
// (coordinator/coordinator_test.go TestHandleStateChange*) call it: the
// state and error arrive directly, not through a maintainer status and
// Changefeed.UpdateStatus.
func (c *Coordinator) HandleStateChangeForConformance(now int64, id core.ChangefeedID, state string, err *core.RunningError, out *core.Effects) error {
	c.now = now
	cf := c.db.Get(id)
	if cf == nil {
		return fmt.Errorf("changefeed %s not found", id)
	}
	c.handleStateChange(now, cf, state, err, out)
	return nil
}

// BackoffCheckStatusForConformance is TiCDC's Backoff.CheckStatus
// (coordinator/changefeed/backoff.go:147-196 at b813e76f9), which the
// backoff tests call directly: checkFailedStatus, then the progress and
// error handling. impl splits it between Changefeed.UpdateStatus (steps 3
// and 6); the regressed-checkpoint and BootstrapDone steps are skipped, and
// the changefeed's status is left alone.
func (c *Changefeed) BackoffCheckStatusForConformance(now int64, s core.MaintainerStatus, out *core.Effects) (bool, string, *core.RunningError) {
	if changed, state, err := c.checkFailedStatus(&s, out); state == spec.StateFailed {
		return changed, state, err
	}
	return c.backoff.CheckStatus(now, &s, c.opts.Bugs.Has(spec.BugFastFailIgnoredWithProgress), out)
}
