package spec

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestErrorHandlingDefinition pins error-never-dropped's one definition of a
// handled error, which the monitor and traces' log-only episodes share.
func TestErrorHandlingDefinition(t *testing.T) {
	type step struct {
		e    Event
		want bool
	}
	ev := func(k Kind) Event { return Event{Kind: k, Changefeed: cf} }
	state := func(s string) Event { return Event{Kind: StateChanged, Changefeed: cf, State: s} }
	cases := map[string][]step{
		"backoff": {{ev(BackoffErrorSeen), true}, {ev(BackoffStarted), true}, {ev(BackoffGaveUp), true}, {ev(BackoffIgnored), true}},
		"state":   {{state(StateWarning), true}, {state(StateFailed), true}, {state(StateStopped), true}, {state(StateRemoved), true}, {state(StateNormal), false}, {state(StateFinished), false}},
		"by design": {
			{Event{Kind: BootstrapDoneChanged, Changefeed: cf, BootstrapDone: true}, true},
			{Event{Kind: BackoffRecovered, Changefeed: cf, Checkpoint: 5}, true},
		},
		// Progress is a stored checkpoint above the last one; the baseline is
		// the create or resume checkpoint.
		"progress": {
			{created(1), true}, {stored(100), false}, {stored(150), true}, {stored(150), false}, {stored(120), false},
			{Event{Kind: ChangefeedResumed, Changefeed: cf, Checkpoint: 90}, true}, {stored(95), true},
			{ev(ChangefeedRemoved), true}, {stored(1), true},
		},
		"unrelated":     {{status("n1", 100, "boom"), false}, {ev(DispatcherErrorReported), false}, {ev(SinkError), false}, {ev(MaintainerClosed), false}},
		"no changefeed": {{Event{Kind: BackoffErrorSeen}, false}},
	}
	for name, steps := range cases {
		t.Run(name, func(t *testing.T) {
			h := NewErrorHandling()
			for i, s := range steps {
				assert.Equal(t, s.want, h.Handled(&s.e), "step %d: %s", i, s.e)
			}
		})
	}
	h := NewErrorHandling()
	c, st := created(1), stored(150)
	h.Handled(&c)
	h.Handled(&st)
	assert.Equal(t, uint64(150), h.Stored(cf))
}

// HEAD's backoff baseline lags the stored checkpoint after a BootstrapDone
// flip (catalogue entry toggle-keeps-baseline): the next status's error is
// taken for progress and ignored with nothing to show for it, which the
// monitor reports as a drop; progress that moves the stored checkpoint, or
// a recovery, is handling.
func TestErrorNeverDroppedBaselineLag(t *testing.T) {
	flip := Event{Kind: BootstrapDoneChanged, Changefeed: cf, BootstrapDone: true}
	withErr := status("n0", 150, "boom")
	expectViolation(t, run(t, Config{}, ErrorNeverDropped,
		created(1), status("n0", 200, ""), stored(200), flip,
		withErr, status("n0", 200, "")), "dropped it silently")
	expectNone(t, run(t, Config{}, ErrorNeverDropped,
		created(1), status("n0", 200, ""), stored(200), flip,
		withErr, stored(210), status("n0", 210, "")))
	expectNone(t, run(t, Config{}, ErrorNeverDropped,
		created(1), withErr, Event{Kind: BackoffRecovered, Changefeed: cf, Checkpoint: 200}, status("n0", 200, "")))
}

// A status sent before its maintainer's node crashed may finish the add
// before the cluster sees the node leave: not judged, as in the model.
func TestRunningMaintainerBootstrappedCrashedNode(t *testing.T) {
	started := Event{Kind: MaintainerCreated, Changefeed: cf, Node: "n1", Epoch: 2}
	booted := Event{Kind: MaintainerBootstrapped, Changefeed: cf, Node: "n1", Epoch: 2}
	finished := Event{Kind: MaintainerOpFinished, Changefeed: cf, Op: OpAdd, Node: "n1", Epoch: 2}
	suicide := Event{Kind: CaptureSuicide, Node: "n1"}
	expectNone(t, run(t, Config{}, RunningMaintainerBootstrapped, started, booted, suicide, finished))
	// Without the crash the same finish with no bootstrap is a violation...
	expectViolation(t, run(t, Config{}, RunningMaintainerBootstrapped, started, finished), "never bootstrapped")
	// ... and once the node is seen leaving, a finish there is judged again.
	expectViolation(t, run(t, Config{}, RunningMaintainerBootstrapped, started, booted, suicide, Event{Kind: NodeLeft, Node: "n1"}, finished),
		"no maintainer runs there")
}

func TestLiveDispatchers(t *testing.T) {
	l := NewLiveDispatchers()
	observe := func(e Event) { l.Observe(&e) }
	for _, e := range []Event{
		disp(DispatcherCreated, "n2", "d2", WholeTable(1)),
		disp(DispatcherCreated, "n1", "d1", WholeTable(1)),
		disp(DispatcherCreated, "n1", "d3", WholeTable(2)),
	} {
		observe(e)
	}
	assert.Equal(t, []string{"n1/d1", "n2/d2"}, l.OfTable(cf, 1))
	assert.True(t, l.Live(cf, "n1/d3"))
	observe(disp(DispatcherRemoved, "n2", "d2", Span{}))
	assert.Equal(t, []string{"n1/d1"}, l.OfTable(cf, 1))
	observe(Event{Kind: DispatcherManagerClosed, Changefeed: cf, Node: "n1"})
	assert.Empty(t, l.OfTable(cf, 1))
	assert.False(t, l.Live(cf, "n1/d3"))
	observe(disp(DispatcherCreated, "n3", "d4", WholeTable(1)))
	observe(Event{Kind: NodeLeft, Node: "n3"})
	assert.Empty(t, l.OfTable(cf, 1))
}

// TestDispatcherKeyOnStack: the stack-built key the tracker looks up and
// deletes with is dispatcherKey's, and finds what add stored under it.
func TestDispatcherKeyOnStack(t *testing.T) {
	d := newDispatchers()
	for _, nid := range [][2]string{{"n1", "7564853129434582188.7564853128766596409"}, {"", ""}, {"a/b", "c"}, {strings.Repeat("n", 200), "d"}} {
		if got, want := string(appendDispatcherKey(nil, nid[0], nid[1])), dispatcherKey(nid[0], nid[1]); got != want {
			t.Fatalf("appendDispatcherKey(%q, %q) = %q, want %q", nid[0], nid[1], got, want)
		}
		ld := &liveDispatcher{created: Event{Changefeed: "cf", Node: nid[0], Dispatcher: nid[1]}, key: dispatcherKey(nid[0], nid[1])}
		d.add("cf", ld.key, ld)
		if d.lookup("cf", nid[0], nid[1]) != ld {
			t.Fatalf("lookup(%q, %q) does not find the dispatcher added", nid[0], nid[1])
		}
	}
}
