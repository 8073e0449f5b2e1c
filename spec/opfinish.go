package spec

import "fmt"

// ---------------------------------------------------------------------------
// maintainer-operators-finish

// MaintainerOperatorsFinish (liveness): once faults stop, every maintainer
// operator the coordinator runs (add, move, stop) finishes.
const MaintainerOperatorsFinish Property = "maintainer-operators-finish"

// maintainerOperatorsFinish checks that once faults stop, no maintainer
// operator of the coordinator is left running (coordinator/operator/
// operator_controller.go at b813e76f9: an operator occupies its changefeed's
// slot until IsFinished, and while it runs the basic scheduler and the
// balancer skip the changefeed; an add whose Check never sees its
// destination bootstrapped keeps re-sending AddMaintainerRequest and leaves
// the changefeed scheduling, so it can be neither moved nor stopped by
// anything but a replacing operator). Judged at Quiesced, over the
// operators of the current coordinator:
//
//   - MaintainerOpStarted makes the changefeed's operator the pending one
//     (a stop that replaces a running add, as AddOperator's replacement
//     does, makes the stop pending);
//   - MaintainerOpFinished ends it, with or without success (a canceled add,
//     an aborted move);
//   - CoordinatorBootstrapped ends every operator started before it: the old
//     coordinator's operators died with it (the new one keeps only what it
//     starts itself, which the model emits after the bootstrap line).
//
// Blind spot: judged only where the stream has a Quiesced marker (model,
// simulation, runtime); production logs never quiesce (the log checker
// reports operator-stuck instead). A stop the simulation restarts at a
// coordinator's bootstrap is logged before "coordinator bootstrapped", as
// HEAD's finishBootstrap does, so the monitor does not see it pending.
type maintainerOperatorsFinish struct {
	pending map[string]Event // changefeed -> the MaintainerOpStarted of its running operator
}

// NewMaintainerOperatorsFinish returns the maintainer-operators-finish
// monitor.
func NewMaintainerOperatorsFinish() Monitor {
	return &maintainerOperatorsFinish{pending: map[string]Event{}}
}

func (m *maintainerOperatorsFinish) Property() Property { return MaintainerOperatorsFinish }

// opFinishKinds are the kinds maintainerOperatorsFinish reads.
var opFinishKinds = []Kind{MaintainerOpStarted, MaintainerOpFinished, CoordinatorBootstrapped, Quiesced}

func (m *maintainerOperatorsFinish) Observe(e Event) []Violation {
	switch e.Kind {
	case MaintainerOpStarted:
		m.pending[e.Changefeed] = e
	case MaintainerOpFinished:
		delete(m.pending, e.Changefeed)
	case CoordinatorBootstrapped:
		clear(m.pending)
	case Quiesced:
		var out []Violation
		for _, cf := range sortedKeys(m.pending) {
			op := m.pending[cf]
			node := op.Node
			out = append(out, Violation{
				Property: MaintainerOperatorsFinish, Changefeed: cf, Node: node, Epoch: op.Epoch,
				Message: fmt.Sprintf("every maintainer operator must finish once faults stop, but after faults healed and the cluster quiesced the %s maintainer operator to node %s (epoch %d) is still running: %s",
					op.Op, node, op.Epoch, coords(cf, node, Span{}, op.Epoch, 0)),
				Evidence: []Event{op, e},
			})
		}
		return out
	}
	return nil
}

func (m *maintainerOperatorsFinish) Finish() []Violation { return nil }
