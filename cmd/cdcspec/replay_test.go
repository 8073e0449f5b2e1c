package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cdcspec/model"
	"cdcspec/refinement"
)

// TestReplayImpl replays the recorded model counterexample of
// stuck-after-upstream-failure (refinement/testdata/model) through replayImpl
// and expects the implementation to show the same violation.
func TestReplayImpl(t *testing.T) {
	t.Setenv("CDCSPEC_ARTIFACTS", t.TempDir())
	raw, err := os.ReadFile("../../refinement/testdata/model/stuck-after-upstream-failure.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg, acts, prop, bugs, err := refinement.ParseCounterexample(raw)
	if err != nil {
		t.Fatal(err)
	}
	ce := &model.Counterexample{Property: prop}
	for _, a := range acts {
		ce.Steps = append(ce.Steps, model.TraceStep{Action: a})
	}
	var out bytes.Buffer
	dir := t.TempDir()
	ok, err := replayImpl(cfg, ce, bugs, dir, &out)
	if err != nil {
		t.Fatal(err)
	}
	if !ok || !strings.Contains(out.String(), "the implementation shows the same violation: checkpoint-advances-after-heal") {
		t.Fatalf("replay did not reproduce:\n%s", out.String())
	}
	// The replay's artifacts are in the check's --artifacts directory.
	want := filepath.Join(dir, "replay-impl-checkpoint-advances-after-heal")
	if !strings.Contains(out.String(), "implementation artifacts: "+want) {
		t.Fatalf("artifacts not reported in %s:\n%s", want, out.String())
	}
	if _, err := os.Stat(filepath.Join(want, "story.json")); err != nil {
		t.Fatalf("no story.json in the --artifacts directory: %v", err)
	}
	if _, err := replayImpl(cfg, nil, bugs, dir, &out); err == nil {
		t.Fatal("nil counterexample: want an error")
	}
}
