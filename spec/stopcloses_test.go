package spec

import "testing"

// A pause whose cascade close missed a node: the maintainer closed, the
// stop finished, and a dispatcher on n1 still runs at quiescence.
func TestStopClosesDispatchers(t *testing.T) {
	t1 := WholeTable(1)
	paused := Event{Kind: StateChanged, Changefeed: cf, State: StateStopped}
	q := Event{Kind: Quiesced, Changefeed: cf}
	d0 := disp(DispatcherCreated, "n0", "d2", t1)
	trig := disp(DispatcherCreated, "n1", "d1", WholeTable(0))
	expectViolation(t, run(t, Config{}, StopClosesDispatchers, created(1), trig, d0, paused,
		Event{Kind: DispatcherManagerClosed, Changefeed: cf, Node: "n0"}, q), "stopped changefeed still has 1 live dispatcher(s), first d1 on node n1")
	// Every manager closed, or the node died: nothing left.
	expectNone(t, run(t, Config{}, StopClosesDispatchers, created(1), trig, d0, paused,
		Event{Kind: DispatcherManagerClosed, Changefeed: cf, Node: "n0"}, Event{Kind: CaptureSuicide, Node: "n1"}, q))
	// A running changefeed, or one resumed before quiescence, is not judged.
	expectNone(t, run(t, Config{}, StopClosesDispatchers, created(1), trig, d0, q))
	expectNone(t, run(t, Config{}, StopClosesDispatchers, created(1), trig, d0, paused,
		Event{Kind: ChangefeedResumed, Changefeed: cf, Checkpoint: 100}, q))
	// A warning is running; failed and removed are judged, and the removal
	// of the keys does not close the dispatchers.
	warn := paused
	warn.State = StateWarning
	expectNone(t, run(t, Config{}, StopClosesDispatchers, created(1), d0, warn, q))
	failed := paused
	failed.State = StateFailed
	expectViolation(t, run(t, Config{}, StopClosesDispatchers, created(1), d0, failed, q), "the failed changefeed")
	removed := paused
	removed.State = StateRemoved
	expectViolation(t, run(t, Config{}, StopClosesDispatchers, created(1), d0, removed,
		Event{Kind: ChangefeedRemoved, Changefeed: cf}, q), "the removed changefeed")
	expectNone(t, run(t, Config{}, StopClosesDispatchers, created(1), d0, removed,
		disp(DispatcherRemoved, "n0", "d2", t1), Event{Kind: ChangefeedRemoved, Changefeed: cf}, q))
}
