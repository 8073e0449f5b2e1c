package spec

import "testing"

// error-stuck-fails over both budgets: a streak of restarts without
// checkpoint progress, ended by recovery, resume, failure or a coordinator's
// bootstrap.
func TestErrorStuckFails(t *testing.T) {
	restart := func(ms int64) Event {
		return Event{Kind: BackoffStarted, Changefeed: cf, Time: ms, Checkpoint: 100, Err: "kafka async send message failed"}
	}
	count := Config{ErrorStuckRestarts: 2}
	expectViolation(t, run(t, count, ErrorStuckFails, restart(1), restart(2), restart(3)), "restart 3 of a streak without checkpoint progress, past the budget of 2 restarts")
	expectNone(t, run(t, count, ErrorStuckFails, restart(1), restart(2)))
	for _, end := range []Event{
		{Kind: BackoffRecovered, Changefeed: cf, Checkpoint: 101},
		{Kind: ChangefeedResumed, Changefeed: cf, Checkpoint: 100},
		{Kind: StateChanged, Changefeed: cf, State: StateFailed},
		{Kind: CoordinatorBootstrapped, Node: "n2"}, // every changefeed's budget restarts
	} {
		expectNone(t, run(t, count, ErrorStuckFails, restart(1), restart(2), end, restart(3), restart(4)))
	}
	// Warning and normal do not end a streak (a BootstrapDone toggle reports
	// normal while the backoff keeps retrying).
	normal := Event{Kind: StateChanged, Changefeed: cf, State: StateNormal}
	expectViolation(t, run(t, count, ErrorStuckFails, restart(1), normal, restart(2), restart(3)), "restart 3")
	// Another changefeed's recovery is not this one's.
	other := Event{Kind: BackoffRecovered, Changefeed: "default/other", Checkpoint: 101}
	expectViolation(t, run(t, count, ErrorStuckFails, restart(1), restart(2), other, restart(3)), "restart 3")

	timed := Config{ErrorStuckMs: 30 * 60_000}
	expectNone(t, run(t, timed, ErrorStuckFails, restart(0), restart(10_000), restart(30*60_000)))
	expectViolation(t, run(t, timed, ErrorStuckFails, restart(0), restart(10_000), restart(30*60_000+1)), "past the budget of 1800s")
	expectNone(t, run(t, timed, ErrorStuckFails, restart(0), Event{Kind: CoordinatorBootstrapped, Time: 20 * 60_000}, restart(20*60_000+1), restart(45*60_000)))
	// The zero Config checks nothing.
	expectNone(t, run(t, Config{}, ErrorStuckFails, restart(0), restart(1), restart(99*60_000)))
}
