package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"cdcspec/model"
	"cdcspec/proptest"
)

// TestReplayImpl replays the recorded model counterexample of
// stuck-after-upstream-failure (proptest/testdata/model) through replayImpl
// and expects the implementation to show the same violation.
func TestReplayImpl(t *testing.T) {
	t.Setenv("CDCSPEC_ARTIFACTS", t.TempDir())
	raw, err := os.ReadFile("../../proptest/testdata/model/stuck-after-upstream-failure.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg, acts, prop, bugs, err := proptest.ParseCounterexample(raw)
	if err != nil {
		t.Fatal(err)
	}
	ce := &model.Counterexample{Property: prop}
	for _, a := range acts {
		ce.Steps = append(ce.Steps, model.TraceStep{Action: a})
	}
	var out bytes.Buffer
	ok, err := replayImpl(cfg, ce, bugs, &out)
	if err != nil {
		t.Fatal(err)
	}
	if !ok || !strings.Contains(out.String(), "the implementation shows the same violation: checkpoint-advances-after-heal") {
		t.Fatalf("replay did not reproduce:\n%s", out.String())
	}
	if _, err := replayImpl(cfg, nil, bugs, &out); err == nil {
		t.Fatal("nil counterexample: want an error")
	}
}
