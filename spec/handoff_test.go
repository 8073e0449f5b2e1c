package spec

import "testing"

// The #6283 story: checkpoint 100 at epoch 1; the move bumps the epoch to 2;
// the origin reports Stopped at 200 with epoch 1; the target starts at 100.
func TestHandoffKeepsCheckpoint(t *testing.T) {
	move := Event{Kind: MaintainerOpStarted, Changefeed: cf, Op: OpMove, Node: "n2", Origin: "n1", Epoch: 2}
	final := Event{Kind: StatusReceived, Changefeed: cf, Node: "n1", Epoch: 1, Checkpoint: 200, BootstrapDone: true, State: MaintainerStopped}
	target := func(node string, epoch, ck uint64) Event {
		return Event{Kind: MaintainerCreated, Changefeed: cf, Node: node, Epoch: epoch, Checkpoint: ck}
	}
	expectViolation(t, run(t, Config{}, HandoffKeepsCheckpoint, move, final, target("n2", 2, 100)), "origin n1 reported Stopped at checkpoint 200")
	// Fell back to the origin: the move's epoch is judged on any node.
	expectViolation(t, run(t, Config{}, HandoffKeepsCheckpoint, move, final, target("n1", 2, 100)), "starts at 100")
	expectNone(t, run(t, Config{}, HandoffKeepsCheckpoint, move, final, target("n2", 2, 200)))
	// A Working report of the origin is not its final one.
	working := final
	working.State = MaintainerWorking
	expectNone(t, run(t, Config{}, HandoffKeepsCheckpoint, move, working, target("n2", 2, 100)))
	// The origin left before its final report: nothing to hand over, and a
	// later copy of a report is not the final one.
	expectNone(t, run(t, Config{}, HandoffKeepsCheckpoint, move, Event{Kind: NodeLeft, Node: "n1"}, final, target("n2", 2, 100)))
	// Another maintainer generation, or another operator, is not judged.
	expectNone(t, run(t, Config{}, HandoffKeepsCheckpoint, move, final, target("n2", 3, 100)))
	stop := Event{Kind: MaintainerOpStarted, Changefeed: cf, Op: OpStop, Node: "n2", Epoch: 2}
	expectNone(t, run(t, Config{}, HandoffKeepsCheckpoint, move, final, stop, target("n2", 2, 100)))
	removalOnly := target("n2", 2, 1)
	removalOnly.RemovalOnly = true
	expectNone(t, run(t, Config{}, HandoffKeepsCheckpoint, move, final, removalOnly))
}
