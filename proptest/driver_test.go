package proptest

import (
	"strings"
	"testing"
)

// TestStoryDeterministic: a story replays to the same state and the same
// spec events (the simulation is a function of its seed and the steps).
func TestStoryDeterministic(t *testing.T) {
	story := Story{Setup: Setup{Seed: 3, Nodes: 3, Tables: 2}, Steps: []Step{
		{Op: OpCreateChangefeed, Feed: "cf1", Ms: 3000},
		{Op: OpCreateTable},
		{Op: OpKillCapture, Node: 2},
		{Op: OpAdvanceTime, Ms: 10_000},
		{Op: OpRestartCapture},
		{Op: OpSinkError, Feed: "cf1", Node: 1},
		{Op: OpAdvanceTime, Ms: 30_000},
	}}
	var logs [2]strings.Builder
	for i := range logs {
		d, f, err := Run(story, &logs[i], true)
		if err != nil {
			t.Fatal(err)
		}
		if f != nil {
			t.Fatalf("run %d: %s", i, f)
		}
		if d.Shadow.Stopped != "" {
			t.Fatalf("the shadow stopped following: %s", d.Shadow.Stopped)
		}
		if m, im := d.Shadow.ModelQuiescence(), ImplQuiescence(d); !m.Agrees(im) || !im.Covered || !im.OneMaint || !im.CkptReached {
			t.Fatalf("after quiescence: impl %s, model %s", im, m)
		}
	}
	if logs[0].String() != logs[1].String() || logs[0].Len() == 0 {
		t.Fatalf("two replays of one story logged differently (%d vs %d bytes)", logs[0].Len(), logs[1].Len())
	}
}

// TestStoryBadInput: bad stories are errors that say what is wrong.
func TestStoryBadInput(t *testing.T) {
	if _, err := UnmarshalStory([]byte(`{"setup":{"seed":1},"steps":[{"op":"x","bogus":1}]}`)); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Fatalf("unknown field: %v", err)
	}
	if _, _, err := Run(Story{Setup: Setup{Seed: 1, Nodes: 3, Tables: 2, Bugs: []string{"no-such-bug"}}}, nil, false); err == nil || !strings.Contains(err.Error(), "no-such-bug") {
		t.Fatalf("unknown bug: %v", err)
	}
	_, _, err := Run(Story{Setup: Setup{Seed: 1, Nodes: 3, Tables: 2}, Steps: []Step{{Op: OpPauseChangefeed, Feed: "cf9"}}}, nil, false)
	if err == nil || !strings.Contains(err.Error(), "cf9") {
		t.Fatalf("skipped step: %v", err)
	}
	_, _, err = Run(Story{Setup: Setup{Seed: 1, Nodes: 3, Tables: 2}, Steps: []Step{{Op: "explode"}}}, nil, false)
	if err == nil || !strings.Contains(err.Error(), "explode") {
		t.Fatalf("unknown op: %v", err)
	}
	if _, _, _, _, err := ParseCounterexample([]byte(`{"result":"ok","config":{}}`)); err == nil {
		t.Fatal("a result without violation must be an error")
	}
	if _, _, _, _, err := ParseCounterexample([]byte(`{`)); err == nil {
		t.Fatal("broken json must be an error")
	}
}

// TestStoryFindsPlantedBug: the shrunk no-epoch-fencing story from the
// gate, as data: with the bug on it violates at-most-one-dispatcher-per-span,
// with the fix on it is clean. The 600 ms after the move let the operator
// controller's polls send the move's Remove and, once the origin stopped,
// its Create (HEAD's controller sends at its polls, not when an operator
// is added).
func TestStoryFindsPlantedBug(t *testing.T) {
	steps := []Step{
		{Op: OpCreateChangefeed, Feed: "cf1", Ms: 3000},
		{Op: OpDelayMessages, MsgType: "ScheduleDispatcherRequest", To: 0, Count: 1, DelayMs: 30_000},
		{Op: OpMoveTable, Feed: "cf1", Table: 1, Node: 0},
		{Op: OpAdvanceTime, Ms: 600},
		{Op: OpKillMaintainer, Feed: "cf1"},
		{Op: OpAdvanceTime, Ms: 30_000},
	}
	su := Setup{Seed: 0, Nodes: 4, Tables: 3}
	_, f, err := Run(Story{Setup: su, Steps: steps}, nil, false)
	if err != nil || f != nil {
		t.Fatalf("fixes on: %v %v", err, f)
	}
	su.Bugs = []string{"no-epoch-fencing"}
	d, _, err := Run(Story{Setup: su, Steps: steps}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if d.Violated("at-most-one-dispatcher-per-span") == nil {
		t.Fatalf("no-epoch-fencing on: want at-most-one-dispatcher-per-span, got %v", d.Failures)
	}
}
