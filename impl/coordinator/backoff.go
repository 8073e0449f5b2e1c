package coordinator

import (
	"time"

	"go.uber.org/zap"

	"cdcspec/impl/core"
	"cdcspec/impl/logging"
	"cdcspec/spec"
)

// Backoff schedule of coordinator/changefeed/backoff.go: exponential, 10 s
// initial, x2, capped at 10 min, +-10 % jitter, and a budget of
// changefeed-error-stuck-duration (30 min by default).
const (
	backoffInitialMs   = 10_000
	backoffMaxMs       = 10 * 60_000
	backoffMultiplier  = 2.0
	backoffRandomRatio = 0.1
)

// exponentialBackoff mirrors cenkalti/backoff's ExponentialBackOff with an
// injected clock (now) and randomness.
type exponentialBackoff struct {
	currentIntervalMs int64
	startMs           int64
	maxElapsedMs      int64
	rnd               core.Rand
}

func (b *exponentialBackoff) Reset(now int64) {
	b.currentIntervalMs = backoffInitialMs
	b.startMs = now
}

// NextBackOff returns the next wait in ms, or -1 (Stop) when the budget is
// spent.
func (b *exponentialBackoff) NextBackOff(now int64) int64 {
	if b.maxElapsedMs > 0 && now-b.startMs > b.maxElapsedMs {
		return -1
	}
	delta := backoffRandomRatio * float64(b.currentIntervalMs)
	lo := float64(b.currentIntervalMs) - delta
	hi := float64(b.currentIntervalMs) + delta
	next := int64(lo + b.rnd.Float64()*(hi-lo+1))
	if float64(b.currentIntervalMs) >= backoffMaxMs/backoffMultiplier {
		b.currentIntervalMs = backoffMaxMs
	} else {
		b.currentIntervalMs = int64(float64(b.currentIntervalMs) * backoffMultiplier)
	}
	return next
}

// Backoff is coordinator/changefeed/backoff.go's per-changefeed retry state.
type Backoff struct {
	id core.ChangefeedID
	// failed: the changefeed gave up (budget spent or fast-fail). Sticky.
	failed bool
	// retrying: an error was handled and no checkpoint progress since.
	retrying bool
	// isRestarting: between an accepted error and StartFinished (the add
	// operator that restarts the maintainer finished).
	isRestarting bool
	// erredWhileRestarting: the last error CheckStatus handled arrived
	// while a restart was already under way (cdcspec's rule for an
	// unchanged warning reads it; see Coordinator.handleStateChange).
	erredWhileRestarting bool
	// nextRetryTime: the scheduler may not add the changefeed before it.
	nextRetryTime int64
	// checkpointTs: the baseline; progress past it means recovery.
	checkpointTs uint64
	timer        exponentialBackoff
	lg           *logging.Logger
}

// newBackoff starts with a reset retry state (NewBackoff calls
// resetErrRetry), so a changefeed restored as retrying waits the initial
// interval first.
func newBackoff(now int64, id core.ChangefeedID, checkpoint uint64, maxElapsedMs int64, rnd core.Rand, lg *logging.Logger) *Backoff {
	b := &Backoff{id: id, checkpointTs: checkpoint, timer: exponentialBackoff{maxElapsedMs: maxElapsedMs, rnd: rnd}, lg: lg}
	b.resetErrRetry(now)
	return b
}

// ShouldRun: backoff not failed and now past nextRetryTime.
func (b *Backoff) ShouldRun(now int64) bool { return !b.failed && now > b.nextRetryTime }

// StartFinished is called when the add operator finished.
func (b *Backoff) StartFinished() { b.isRestarting = false }

// resetErrRetry clears the retry state: a fresh timer, no retry time, not
// failed, not retrying. isRestarting is left to StartFinished. Follows
// coordinator/changefeed/backoff.go Backoff.resetErrRetry at b813e76f9.
func (b *Backoff) resetErrRetry(now int64) {
	b.timer.Reset(now)
	b.nextRetryTime = 0
	b.failed, b.retrying = false, false
}

// resetBackoff is used by resume (MoveToSchedulingQueue(resetBackoff=true)):
// resetErrRetry, the baseline moves to the (possibly overwritten)
// checkpoint, and the restarting marker is cleared. Follows
// coordinator/changefeed/changefeed_db.go ChangefeedDB.MoveToSchedulingQueue
// at b813e76f9.
func (b *Backoff) resetBackoff(now int64, checkpoint uint64) {
	b.resetErrRetry(now)
	b.checkpointTs = checkpoint
	b.StartFinished()
}

// followCheckpoint is step 6's progress check run for a checkpoint the
// coordinator accepted outside step 6 of UpdateStatus (a BootstrapDone
// toggle): the baseline follows it, and a retrying changefeed is recovered
// (resetErrRetry), as CheckStatus would have done. Without it the next
// status at the same checkpoint is taken for progress and its error is
// ignored; HEAD does not run it (catalogue entry toggle-keeps-baseline).
func (b *Backoff) followCheckpoint(now int64, checkpoint uint64, out *core.Effects) {
	if checkpoint <= b.checkpointTs {
		return
	}
	b.checkpointTs = checkpoint
	if b.retrying {
		b.resetErrRetry(now)
		b.lg.Event(out, spec.Event{Kind: spec.BackoffRecovered, Changefeed: string(b.id), Checkpoint: checkpoint})
	}
}

// CheckStatus is step 6 of Changefeed.UpdateStatus: checkpoint progress
// raises the baseline (and recovers a retrying changefeed, resetErrRetry);
// otherwise an error goes to HandleError. Returns (changed, state, err);
// state is normal when nothing changed. Follows
// coordinator/changefeed/backoff.go Backoff.CheckStatus at b813e76f9.
// fastFailInHandleError: before #5424 (catalogue entry
// fast-fail-ignored-with-progress) HandleError was the only place that
// looked for a fast-fail error.
func (b *Backoff) CheckStatus(now int64, s *core.MaintainerStatus, fastFailInHandleError bool, out *core.Effects) (bool, string, *core.RunningError) {
	if s.CheckpointTs > b.checkpointTs {
		b.checkpointTs = s.CheckpointTs
		if b.retrying {
			b.resetErrRetry(now)
			b.lg.Event(out, spec.Event{Kind: spec.BackoffRecovered, Changefeed: string(b.id), Checkpoint: s.CheckpointTs})
			return true, spec.StateNormal, nil
		}
		return false, spec.StateNormal, nil
	}
	if len(s.Err) == 0 {
		return false, spec.StateNormal, nil
	}
	last := s.Err[len(s.Err)-1]
	b.erredWhileRestarting = b.isRestarting
	if b.isRestarting {
		// HEAD logs "ignore the error" and handles it all the same.
		b.lg.Event(out, spec.Event{Kind: spec.BackoffIgnored, Changefeed: string(b.id), Err: last.Message})
	}
	b.lg.Event(out, spec.Event{Kind: spec.BackoffErrorSeen, Changefeed: string(b.id), Checkpoint: s.CheckpointTs,
		Node: string(last.Node), State: spec.StateWarning, Err: last.Message})
	b.isRestarting = true
	if fastFailInHandleError {
		for _, e := range s.Err {
			if spec.IsFastFailCode(e.Code) {
				b.failed = true
				b.lg.Event(out, spec.Event{Kind: spec.BackoffGaveUp, Changefeed: string(b.id), Checkpoint: s.CheckpointTs, Err: e.Message})
				return true, spec.StateFailed, &e
			}
		}
	}
	return b.HandleError(now, s.CheckpointTs, last, out)
}

// HandleError: the first retry resets the retry state; the next wait sets
// nextRetryTime (now-1 once the budget is spent: the timer's Stop); a spent
// budget fails the changefeed. Follows coordinator/changefeed/backoff.go
// Backoff.HandleError at b813e76f9.
func (b *Backoff) HandleError(now int64, checkpoint uint64, err core.RunningError, out *core.Effects) (bool, string, *core.RunningError) {
	if !b.retrying {
		b.resetErrRetry(now)
		b.retrying = true
	}
	next := b.timer.NextBackOff(now)
	b.nextRetryTime = now + next
	if next < 0 {
		b.failed = true
		b.lg.Event(out, spec.Event{Kind: spec.BackoffGaveUp, Changefeed: string(b.id), Checkpoint: checkpoint},
			zap.Duration("maxElapsedTime", time.Duration(b.timer.maxElapsedMs)*time.Millisecond))
		return true, spec.StateFailed, &err
	}
	b.lg.Event(out, spec.Event{Kind: spec.BackoffStarted, Changefeed: string(b.id), Checkpoint: checkpoint,
		NextRetry: b.nextRetryTime, Err: err.Message})
	return true, spec.StateWarning, &err
}
