package spec

import "fmt"

// ---------------------------------------------------------------------------
// handoff-keeps-checkpoint

// handoffKeepsCheckpoint checks that a maintainer move hands the origin's
// progress to the target (C.6; pingcap/ticdc#6283, fixed by #6280): once
// the origin's final Stopped report, which ends the move's non-cascade
// remove, has reached the coordinator, the maintainer the move creates (the
// move's epoch, on the target or on the origin it fell back to) starts at or
// above that report's checkpoint. Before #6280 the report carried the
// origin's (older) epoch and was dropped as stale, so the target started
// from the stored checkpoint and replayed what the origin had already
// flushed.
//
// The move is tracked from its MaintainerOpStarted (Op move: Origin, and
// Epoch the move's new epoch) until another coordinator operator starts.
// The first Stopped status received from the origin is the final report; a
// NodeLeft of the origin before it ends the remove without one (nothing to
// hand over). A status the coordinator never received (lost, or sent to a
// coordinator that failed over) obliges nothing.
type handoffKeepsCheckpoint struct {
	moves map[string]*handoffMove // by changefeed
}

type handoffMove struct {
	started  Event
	removing bool  // the origin's final report has not arrived yet
	final    Event // the origin's final report (Kind 0: none)
}

// NewHandoffKeepsCheckpoint returns the handoff-keeps-checkpoint monitor.
func NewHandoffKeepsCheckpoint() Monitor {
	return &handoffKeepsCheckpoint{moves: map[string]*handoffMove{}}
}

func (m *handoffKeepsCheckpoint) Property() Property { return HandoffKeepsCheckpoint }

func (m *handoffKeepsCheckpoint) Observe(e Event) []Violation {
	switch e.Kind {
	case MaintainerOpStarted:
		if e.Op == OpMove {
			m.moves[e.Changefeed] = &handoffMove{started: e, removing: true}
		} else {
			delete(m.moves, e.Changefeed)
		}
	case StatusReceived:
		if mv := m.moves[e.Changefeed]; mv != nil && mv.removing && e.Node == mv.started.Origin && e.State == MaintainerStopped {
			mv.removing, mv.final = false, e
		}
	case NodeLeft:
		for _, mv := range m.moves {
			if mv.removing && mv.started.Origin == e.Node {
				mv.removing = false
			}
		}
	case MaintainerCreated:
		mv := m.moves[e.Changefeed]
		if mv == nil || e.RemovalOnly || e.Epoch != mv.started.Epoch || mv.final.Kind == 0 || e.Checkpoint >= mv.final.Checkpoint {
			return nil
		}
		return []Violation{{
			Property: HandoffKeepsCheckpoint, Changefeed: e.Changefeed, Node: e.Node, Epoch: e.Epoch, Ts: e.Checkpoint,
			Message: fmt.Sprintf("a maintainer move must hand the origin's checkpoint to the target, but the origin %s reported Stopped at checkpoint %d (epoch %d) and the move's maintainer on %s starts at %d: %s",
				mv.started.Origin, mv.final.Checkpoint, mv.final.Epoch, e.Node, e.Checkpoint, coords(e.Changefeed, e.Node, Span{}, e.Epoch, e.Checkpoint)),
			Evidence: []Event{mv.started, mv.final, e},
		}}
	}
	return nil
}

func (m *handoffKeepsCheckpoint) Finish() []Violation { return nil }
