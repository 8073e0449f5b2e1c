package spec

import "fmt"

// error-stuck-fails (coordinator/changefeed/backoff.go Backoff.HandleError
// at b813e76f9; changefeed-error-stuck-duration): a changefeed whose errors
// persist without checkpoint progress fails once the backoff's budget is
// spent ("The changefeed won't be restarted as it has been experiencing
// failures for an extended duration") instead of being restarted again.
//
// A streak of restarts ("changefeed meets an error, will be stopped",
// BackoffStarted) begins at its first restart and ends when
//   - the checkpoint passes the baseline while retrying (BackoffRecovered:
//     CheckStatus's resetErrRetry);
//   - the changefeed is resumed (ChangefeedResumed: resetBackoff) or fails
//     (StateChanged to failed);
//   - a coordinator bootstraps (CoordinatorBootstrapped): TiCDC keeps the
//     budget in memory only, and changefeed.NewChangefeed's NewBackoff
//     restarts it (resetErrRetry) whether or not retrying is restored
//     (#938). The user's contract, a budget counted across coordinator
//     failovers, does not hold at TiCDC HEAD; SPEC.md section 9.
//
// The budget has two units, one per driver: restarts per streak
// (Config.ErrorStuckRestarts, the model's abstraction of the duration) and
// the time since the streak's first restart (Config.ErrorStuckMs, HEAD's
// MaxElapsedTime, for the simulation's virtual clock). A restart past
// either budget is a violation. The backoff's clock starts at or before the
// streak's first restart (HandleError's resetErrRetry, or NewBackoff), so a
// backoff that keeps its budget never restarts later than ErrorStuckMs after
// it.
//
// Blind spot: the trace checker judges production logs only when told the
// duration (cdcspec trace --error-stuck-duration), one value for every
// changefeed; a "coordinator bootstrapped" line missing from the logs makes
// a streak look longer than HEAD's budget.
type errorStuckFails struct {
	cfg     Config
	streaks map[string]*errorStreak
}

type errorStreak struct {
	restarts int
	first    Event // the streak's first restart
}

// NewErrorStuckFails returns the error-stuck-fails monitor.
func NewErrorStuckFails(cfg Config) Monitor {
	return &errorStuckFails{cfg: cfg, streaks: map[string]*errorStreak{}}
}

func (m *errorStuckFails) Property() Property { return ErrorStuckFails }

func (m *errorStuckFails) Observe(e Event) []Violation {
	switch e.Kind {
	case CoordinatorBootstrapped:
		clear(m.streaks)
	case BackoffRecovered, ChangefeedResumed, ChangefeedCreated, ChangefeedRemoved:
		delete(m.streaks, e.Changefeed)
	case StateChanged:
		if e.State == StateFailed {
			delete(m.streaks, e.Changefeed)
		}
	case BackoffStarted:
		st := m.streaks[e.Changefeed]
		if st == nil {
			st = &errorStreak{first: e}
			m.streaks[e.Changefeed] = st
		}
		st.restarts++
		switch {
		case m.cfg.ErrorStuckRestarts > 0 && st.restarts > m.cfg.ErrorStuckRestarts:
			return []Violation{m.violation(e, st, fmt.Sprintf("restart %d of a streak without checkpoint progress, past the budget of %d restarts",
				st.restarts, m.cfg.ErrorStuckRestarts))}
		case m.cfg.ErrorStuckMs > 0 && e.Time-st.first.Time > m.cfg.ErrorStuckMs:
			return []Violation{m.violation(e, st, fmt.Sprintf("a restart %s after the streak's first, past the budget of %s",
				fmtMillis(e.Time-st.first.Time), fmtMillis(m.cfg.ErrorStuckMs)))}
		}
	}
	return nil
}

func (m *errorStuckFails) violation(e Event, st *errorStreak, what string) Violation {
	return Violation{Property: ErrorStuckFails, Changefeed: e.Changefeed, Ts: e.Checkpoint,
		Message: fmt.Sprintf("a changefeed whose errors persist without checkpoint progress must fail once the backoff's budget is spent, but it was restarted again: %s; changefeed %s, checkpoint %d, error %q",
			what, e.Changefeed, e.Checkpoint, e.Err),
		Evidence: []Event{st.first, e}}
}

func (m *errorStuckFails) Finish() []Violation { return nil }
