package spec

import "testing"

// An operator left running at quiescence is a violation; one that finished,
// was canceled or aborted, or died with its coordinator is not.
func TestMaintainerOperatorsFinish(t *testing.T) {
	add := Event{Kind: MaintainerOpStarted, Changefeed: cf, Op: OpAdd, Node: "n1", Epoch: 2}
	addDone := Event{Kind: MaintainerOpFinished, Changefeed: cf, Op: OpAdd, Node: "n1", Epoch: 2}
	canceled := addDone
	canceled.Reason = "canceled"
	stop := Event{Kind: MaintainerOpStarted, Changefeed: cf, Op: OpStop, Node: "n0", Epoch: 2}
	stopDone := Event{Kind: MaintainerOpFinished, Changefeed: cf, Op: OpStop, Node: "n0", Epoch: 2}
	boot := Event{Kind: CoordinatorBootstrapped, Node: "n0"}
	healed := Event{Kind: FaultsHealed}
	quiet := Event{Kind: Quiesced}

	expectViolation(t, run(t, Config{}, MaintainerOperatorsFinish, created(1), add, healed, quiet), "the add maintainer operator to node n1 (epoch 2) is still running")
	expectNone(t, run(t, Config{}, MaintainerOperatorsFinish, created(1), add, addDone, healed, quiet))
	expectNone(t, run(t, Config{}, MaintainerOperatorsFinish, created(1), add, canceled, healed, quiet))
	// a stop that replaces a running add is the pending one
	expectViolation(t, run(t, Config{}, MaintainerOperatorsFinish, created(1), add, stop, healed, quiet), "the stop maintainer operator to node n0")
	expectNone(t, run(t, Config{}, MaintainerOperatorsFinish, created(1), add, stop, stopDone, healed, quiet))
	// the old coordinator's operator died with it; the new one's stop counts
	expectNone(t, run(t, Config{}, MaintainerOperatorsFinish, created(1), add, boot, healed, quiet))
	expectViolation(t, run(t, Config{}, MaintainerOperatorsFinish, created(1), add, boot, stop, healed, quiet), "the stop maintainer operator")
	// not judged before quiescence
	expectNone(t, run(t, Config{}, MaintainerOperatorsFinish, created(1), add))
}
