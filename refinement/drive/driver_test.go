package drive_test

import (
	"strings"
	"testing"

	"cdcspec/impl/sim"
	"cdcspec/refinement"
	"cdcspec/refinement/drive"
)

// TestStoryDeterministic: a story replays to the same state and the same
// spec events (the simulation is a function of its seed and the steps).
func TestStoryDeterministic(t *testing.T) {
	story := drive.Story{Setup: drive.Setup{Seed: 3, Nodes: 3, Tables: 2}, Steps: []drive.Step{
		{Op: drive.OpCreateChangefeed, Feed: "cf1", Ms: 3000},
		{Op: drive.OpCreateTable},
		{Op: drive.OpKillCapture, Node: 2},
		{Op: drive.OpAdvanceTime, Ms: 10_000},
		{Op: drive.OpRestartCapture},
		{Op: drive.OpSinkError, Feed: "cf1", Node: 1},
		{Op: drive.OpAdvanceTime, Ms: 30_000},
	}}
	var logs [2]strings.Builder
	for i := range logs {
		sh := refinement.NewShadow(story.Setup)
		d, f, err := drive.Run(story, &logs[i], sh)
		if err != nil {
			t.Fatal(err)
		}
		if f != nil {
			t.Fatalf("run %d: %s", i, f)
		}
		if sh.Stopped != "" {
			t.Fatalf("the shadow stopped following: %s", sh.Stopped)
		}
		if m, im := sh.ModelQuiescence(), refinement.ImplQuiescence(d.Sim, sim.CfID(refinement.ShadowFeed), d.HealTarget); !m.Agrees(im) || !im.Covered || !im.OneMaint || !im.CkptReached {
			t.Fatalf("after quiescence: impl %s, model %s", im, m)
		}
	}
	if logs[0].String() != logs[1].String() || logs[0].Len() == 0 {
		t.Fatalf("two replays of one story logged differently (%d vs %d bytes)", logs[0].Len(), logs[1].Len())
	}
}

// TestStoryBadInput: bad stories are errors that say what is wrong.
func TestStoryBadInput(t *testing.T) {
	if _, err := drive.UnmarshalStory([]byte(`{"setup":{"seed":1},"steps":[{"op":"x","bogus":1}]}`)); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Fatalf("unknown field: %v", err)
	}
	if _, _, err := drive.Run(drive.Story{Setup: drive.Setup{Seed: 1, Nodes: 3, Tables: 2, Bugs: []string{"no-such-bug"}}}, nil, nil); err == nil || !strings.Contains(err.Error(), "no-such-bug") {
		t.Fatalf("unknown bug: %v", err)
	}
	_, _, err := drive.Run(drive.Story{Setup: drive.Setup{Seed: 1, Nodes: 3, Tables: 2}, Steps: []drive.Step{{Op: drive.OpPauseChangefeed, Feed: "cf9"}}}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "cf9") {
		t.Fatalf("skipped step: %v", err)
	}
	_, _, err = drive.Run(drive.Story{Setup: drive.Setup{Seed: 1, Nodes: 3, Tables: 2}, Steps: []drive.Step{{Op: "explode"}}}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "explode") {
		t.Fatalf("unknown op: %v", err)
	}
}

// TestStoryFindsPlantedBug: the shrunk no-epoch-fencing story from the
// gate, as data: with the bug on it violates at-most-one-dispatcher-per-span,
// with the fix on it is clean. The 600 ms after the move let the operator
// controller's polls send the move's Remove and, once the origin stopped,
// its Create (HEAD's controller sends at its polls, not when an operator
// is added).
func TestStoryFindsPlantedBug(t *testing.T) {
	steps := []drive.Step{
		{Op: drive.OpCreateChangefeed, Feed: "cf1", Ms: 3000},
		{Op: drive.OpDelayMessages, MsgType: "ScheduleDispatcherRequest", To: 0, Count: 1, DelayMs: 30_000},
		{Op: drive.OpMoveTable, Feed: "cf1", Table: 1, Node: 0},
		{Op: drive.OpAdvanceTime, Ms: 600},
		{Op: drive.OpKillMaintainer, Feed: "cf1"},
		{Op: drive.OpAdvanceTime, Ms: 30_000},
	}
	su := drive.Setup{Seed: 0, Nodes: 4, Tables: 3}
	_, f, err := drive.Run(drive.Story{Setup: su, Steps: steps}, nil, nil)
	if err != nil || f != nil {
		t.Fatalf("fixes on: %v %v", err, f)
	}
	su.Bugs = []string{"no-epoch-fencing"}
	d, _, err := drive.Run(drive.Story{Setup: su, Steps: steps}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Violated("at-most-one-dispatcher-per-span") == nil {
		t.Fatalf("no-epoch-fencing on: want at-most-one-dispatcher-per-span, got %v", d.Failures)
	}
}
