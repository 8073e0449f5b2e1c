package spec

import "fmt"

// ---------------------------------------------------------------------------
// stopped-stays-stopped

// StoppedStaysStopped (safety): until a resume, a paused, failed, finished
// or removed changefeed keeps its state and, once its stop finished, gets no
// new dispatcher and no maintainer that schedules.
const StoppedStaysStopped Property = "stopped-stays-stopped"

// stoppedStaysStopped checks that a stopped changefeed stays stopped until
// a resume (C.2, C.3, C.4; coordinator/controller.go
// validateMaintainerNode and changefeed_db.go StopByChangefeedID at
// b813e76f9: a stopped changefeed has no node, so a late MaintainerStatus
// from its old maintainer is dropped before UpdateStatus could report it
// Normal):
//
//   - keeps its state: from the StateChanged that stops, fails, finishes
//     or removes it, no StateChanged turns it back to normal or warning
//     unless ChangefeedResumed or ChangefeedCreated came first (a late
//     status or bootstrap report must not revive it);
//   - once its stop finished (the stop operator's MaintainerOpFinished; a
//     new stop operator, e.g. a new coordinator's, reopens the window), no
//     DispatcherCreated, no MaintainerCreated other than a removal-only
//     maintainer (which only closes) and no MaintainerBootstrapped.
//
// Blind spot: a dispatcher or maintainer created while the stop is still in
// flight is allowed (the stop closes it; stop-closes-dispatchers judges that
// it did). A changefeed whose stop the stream never shows finishing (a log
// window that starts later) is judged for its state only.
type stoppedStaysStopped struct {
	cfs map[string]*stoppedFeed
}

type stoppedFeed struct {
	state  string // stopped, failed, finished or removed
	since  Event  // the event that stopped it
	closed bool   // the stop operator finished: nothing may be created
	done   Event  // the event that closed it
}

// NewStoppedStaysStopped returns the stopped-stays-stopped monitor.
func NewStoppedStaysStopped() Monitor {
	return &stoppedStaysStopped{cfs: map[string]*stoppedFeed{}}
}

func (m *stoppedStaysStopped) Property() Property { return StoppedStaysStopped }

// stoppedKinds are the kinds stoppedStaysStopped reads.
var stoppedKinds = []Kind{ChangefeedCreated, ChangefeedResumed, ChangefeedRemoved, StateChanged,
	MaintainerOpStarted, MaintainerOpFinished, DispatcherCreated, MaintainerCreated, MaintainerBootstrapped}

func stopsChangefeed(state string) bool {
	switch state {
	case StateStopped, StateFailed, StateFinished, StateRemoved:
		return true
	}
	return false
}

func (m *stoppedStaysStopped) Observe(e Event) []Violation {
	f := m.cfs[e.Changefeed]
	switch e.Kind {
	case ChangefeedCreated, ChangefeedResumed:
		delete(m.cfs, e.Changefeed)
	case ChangefeedRemoved:
		// The keys are deleted once the remove's stop finished.
		m.cfs[e.Changefeed] = &stoppedFeed{state: StateRemoved, since: e, closed: true, done: e}
	case StateChanged:
		switch {
		case stopsChangefeed(e.State) && f == nil:
			m.cfs[e.Changefeed] = &stoppedFeed{state: e.State, since: e}
		case stopsChangefeed(e.State):
			f.state = e.State
		case f != nil:
			return m.violation(e, f, fmt.Sprintf("its state went back to %s without a resume", e.State))
		}
	case MaintainerOpStarted:
		if f != nil && e.Op == OpStop {
			f.closed = false
		}
	case MaintainerOpFinished:
		if f != nil && e.Op == OpStop && e.Reason == "" {
			f.closed, f.done = true, e
		}
	case DispatcherCreated:
		if f != nil && f.closed {
			return m.violation(e, f, fmt.Sprintf("dispatcher %s was created on node %s", e.Dispatcher, e.Node))
		}
	case MaintainerCreated:
		if f != nil && f.closed && !e.RemovalOnly {
			return m.violation(e, f, fmt.Sprintf("a maintainer that schedules (not removal-only) was created on node %s", e.Node))
		}
	case MaintainerBootstrapped:
		if f != nil && f.closed {
			return m.violation(e, f, fmt.Sprintf("a maintainer bootstrapped on node %s", e.Node))
		}
	}
	return nil
}

func (m *stoppedStaysStopped) violation(e Event, f *stoppedFeed, what string) []Violation {
	ev := []Event{f.since}
	if f.closed && f.done.Kind != f.since.Kind {
		ev = append(ev, f.done)
	}
	return []Violation{{
		Property: StoppedStaysStopped, Changefeed: e.Changefeed, Node: e.Node, Span: e.Span, Epoch: e.Epoch,
		Message: fmt.Sprintf("a stopped changefeed must stay stopped until a resume, but after it was %s %s: %s",
			f.state, what, coords(e.Changefeed, e.Node, e.Span, e.Epoch, 0)),
		Evidence: append(ev, e),
	}}
}

func (m *stoppedStaysStopped) Finish() []Violation { return nil }
