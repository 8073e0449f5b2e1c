package spec

import "testing"

// A pause, then a late status: the stopped changefeed must not come back to
// normal; once the stop finished nothing may be created; a resume ends it.
func TestStoppedStaysStopped(t *testing.T) {
	t1 := WholeTable(1)
	paused := Event{Kind: StateChanged, Changefeed: cf, State: StateStopped}
	normal := Event{Kind: StateChanged, Changefeed: cf, State: StateNormal}
	stopStarted := Event{Kind: MaintainerOpStarted, Changefeed: cf, Op: OpStop, Node: "n0", Epoch: 2}
	stopDone := Event{Kind: MaintainerOpFinished, Changefeed: cf, Op: OpStop, Node: "n0", Epoch: 2}
	resumed := Event{Kind: ChangefeedResumed, Changefeed: cf, Checkpoint: 100}
	maint := Event{Kind: MaintainerCreated, Changefeed: cf, Node: "n1", Epoch: 2}
	d := disp(DispatcherCreated, "n1", "d3", t1)

	// keeps its state: a late BootstrapDone status reports normal
	expectViolation(t, run(t, Config{}, StoppedStaysStopped, created(1), paused, stopStarted, normal), "after it was stopped its state went back to normal without a resume")
	failed := paused
	failed.State = StateFailed
	warn := normal
	warn.State = StateWarning
	expectViolation(t, run(t, Config{}, StoppedStaysStopped, created(1), failed, stopStarted, stopDone, warn), "after it was failed its state went back to warning")
	expectNone(t, run(t, Config{}, StoppedStaysStopped, created(1), paused, stopStarted, stopDone, resumed, normal))
	expectNone(t, run(t, Config{}, StoppedStaysStopped, created(1), warn, normal))

	// no new dispatcher or scheduling maintainer once the stop finished
	expectViolation(t, run(t, Config{}, StoppedStaysStopped, created(1), paused, stopStarted, stopDone, d), "dispatcher d3 was created on node n1")
	expectViolation(t, run(t, Config{}, StoppedStaysStopped, created(1), paused, stopStarted, stopDone, maint), "a maintainer that schedules (not removal-only) was created on node n1")
	boot := Event{Kind: MaintainerBootstrapped, Changefeed: cf, Node: "n1", Epoch: 2}
	expectViolation(t, run(t, Config{}, StoppedStaysStopped, created(1), paused, stopStarted, stopDone, boot), "a maintainer bootstrapped on node n1")
	removalOnly := maint
	removalOnly.RemovalOnly = true
	expectNone(t, run(t, Config{}, StoppedStaysStopped, created(1), paused, stopStarted, stopDone, removalOnly))
	// while the stop is in flight the stop closes what is created
	expectNone(t, run(t, Config{}, StoppedStaysStopped, created(1), paused, stopStarted, d, maint))
	// a new coordinator's stop reopens the window
	expectNone(t, run(t, Config{}, StoppedStaysStopped, created(1), paused, stopStarted, stopDone, stopStarted, d))
	// after a remove's keys are deleted nothing may be created
	removed := Event{Kind: ChangefeedRemoved, Changefeed: cf}
	expectViolation(t, run(t, Config{}, StoppedStaysStopped, created(1), removed, d), "after it was removed dispatcher d3")
	// a resume, or a running changefeed, is not judged
	expectNone(t, run(t, Config{}, StoppedStaysStopped, created(1), paused, stopStarted, stopDone, resumed, d, maint, normal))
	expectNone(t, run(t, Config{}, StoppedStaysStopped, created(1), d, maint, normal))
}
