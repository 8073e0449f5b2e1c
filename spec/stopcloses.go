package spec

import (
	"fmt"
	"sort"
)

// ---------------------------------------------------------------------------
// stop-closes-dispatchers

// stopClosesDispatchers checks that once faults stop, a changefeed that is
// stopped (paused), failed or removed has no live dispatcher on any node (C.2, C.4, A.4: the stop is a cascade close, and
// the maintainer reports Stopped only when every node's dispatcher manager
// ACKed its MaintainerCloseRequest). A dispatcher that outlives the stop
// keeps writing to the sink of a paused changefeed, or leaks for good after
// a remove. Judged at Quiesced, over the changefeeds whose last state
// (StateChanged) is stopped, failed or removed; ChangefeedCreated and
// ChangefeedResumed make a changefeed running again. A dispatcher lives as
// LiveDispatchers defines it, except that ChangefeedRemoved does not end it:
// the keys are deleted, the dispatchers are what must be gone.
//
// Blind spot: judged only where the stream has a Quiesced marker (model,
// simulation, runtime); production logs never quiesce.
type stopClosesDispatchers struct {
	d       *dispatchers      // its own tracker: ChangefeedRemoved does not end a dispatcher here
	stopped map[string]string // changefeed -> stopped, failed or removed
}

// NewStopClosesDispatchers returns the stop-closes-dispatchers monitor.
func NewStopClosesDispatchers() Monitor {
	return &stopClosesDispatchers{d: newDispatchers(), stopped: map[string]string{}}
}

func (m *stopClosesDispatchers) Property() Property { return StopClosesDispatchers }

func (m *stopClosesDispatchers) Observe(e Event) []Violation {
	switch e.Kind {
	case ChangefeedRemoved:
		m.stopped[e.Changefeed] = StateRemoved
		return nil
	case ChangefeedCreated, ChangefeedResumed:
		delete(m.stopped, e.Changefeed)
	case StateChanged:
		switch e.State {
		case StateStopped, StateFailed, StateRemoved:
			m.stopped[e.Changefeed] = e.State
		default:
			delete(m.stopped, e.Changefeed)
		}
	case Quiesced:
		return m.judge(e)
	}
	m.d.observe(&e)
	return nil
}

func (m *stopClosesDispatchers) judge(q Event) []Violation {
	var out []Violation
	for _, cf := range sortedKeys(m.stopped) {
		live := make([]Event, 0, len(m.d.cf[cf]))
		for _, ld := range m.d.cf[cf] {
			live = append(live, ld.created)
		}
		if len(live) == 0 {
			continue
		}
		sort.Slice(live, func(i, j int) bool {
			return dispatcherKey(live[i].Node, live[i].Dispatcher) < dispatcherKey(live[j].Node, live[j].Dispatcher)
		})
		d := live[0]
		out = append(out, Violation{
			Property: StopClosesDispatchers, Changefeed: cf, Node: d.Node, Span: d.Span,
			Message: fmt.Sprintf("a stopped changefeed must close every dispatcher, but after faults healed and the cluster quiesced the %s changefeed still has %d live dispatcher(s), first %s on node %s (span %s): %s",
				m.stopped[cf], len(live), d.Dispatcher, d.Node, d.Span, coords(cf, d.Node, Span{}, 0, 0)),
			Evidence: append(live, q),
		})
	}
	return out
}

func (m *stopClosesDispatchers) Finish() []Violation { return nil }
