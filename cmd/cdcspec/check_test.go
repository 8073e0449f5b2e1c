package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/model"
	"cdcspec/spec"
)

func runCheckCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestCheckFindsBugJSON: a catalogued bug exits 1 and the JSON names the
// property, the steps and the actions, which replay on the model.
func TestCheckFindsBugJSON(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCheckCmd("check", "--config", "upstream-outage", "--bug", "stuck-after-upstream-failure", "--format", "json", "--artifacts", dir)
	if code != exitViolation {
		t.Fatalf("exit %d, want %d; stderr %s", code, exitViolation, errs)
	}
	var j checkJSON
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if j.Result != "violation" || j.Violation == nil || j.Violation.Property != string(spec.CheckpointAdvancesAfterHeal) {
		t.Fatalf("got %+v", j)
	}
	if len(j.Violation.Steps) == 0 || j.Violation.Steps[0].Actor == "" || len(j.Properties) != len(spec.Properties()) {
		t.Fatalf("incomplete violation: %+v", j.Violation)
	}
	if len(j.Bugs) != 1 || j.Bugs[0] != "stuck-after-upstream-failure" || j.DistinctStates == 0 || j.Artifacts != dir {
		t.Fatalf("bad header: %+v", j)
	}
	// The exported actions replay.
	var acts []model.Action
	for _, s := range j.Violation.Steps {
		acts = append(acts, s.Action)
	}
	cfg, _ := model.Standard("upstream-outage")
	cfg.Bugs = spec.BugSet(0).With(spec.BugStuckAfterUpstreamFailure)
	var real []model.Action
	for _, a := range acts {
		if a.Kind != 0 {
			real = append(real, a)
		}
	}
	if _, _, err := model.Replay(cfg, real); err != nil {
		t.Fatalf("replay: %v", err)
	}
}

// TestCheckText: the text output reports the numbers and the story.
func TestCheckText(t *testing.T) {
	code, out, _ := runCheckCmd("check", "--bug", "add-accepts-unbootstrapped-maintainer", "--artifacts", t.TempDir())
	if code != exitViolation {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, want := range []string{"distinct states", "states/s", "running-maintainer-bootstrapped", "violated", "1. coordinator"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestCheckUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"check", "--bug", "no-such-bug"},
		{"check", "--config", "no-such-config"},
		{"check", "--format", "xml"},
		{"check", "--nodes", "9"},
		{"check", "--without", "no-such-feature"},
		{"check", "extra"},
		{"check", "--nodes", "x"},
		{"check", "--memory", "lots"},
		{"check", "--memory", "10MB"},
		{"check", "--time", "0s"},
		{"check", "--time", "1s", "--simulate"},
		{"check", "--max-moves", "1"},
		{"check", "--moves", "--max-moves", "8"},
		{"check", "--delay-bound", "-1"},
		{"check", "--delay-bound", "63"},
		{"check", "--delay-bound", "2", "--simulate"},
		{"check", "--delay-budget", "0s"},
		{"check", "--delay-budget", "1m", "--time", "1m"},
	} {
		if code, _, errs := runCheckCmd(args...); code != exitUsage || errs == "" {
			t.Errorf("%v: exit %d, stderr %q; want %d and a message", args, code, errs, exitUsage)
		}
	}
}

func TestCheckIncomplete(t *testing.T) {
	code, out, _ := runCheckCmd("check", "--max-states", "1000", "--format", "json")
	if code != exitIncomplete {
		t.Fatalf("exit %d, want %d\n%s", code, exitIncomplete, out)
	}
	var j checkJSON
	if err := json.Unmarshal([]byte(out), &j); err != nil || j.Result != "incomplete" {
		t.Fatalf("%v %+v", err, j)
	}
	if j.DistinctStates != 1000 {
		t.Errorf("--max-states 1000 stopped at %d states, want exactly 1000", j.DistinctStates)
	}
	if j.Collision <= 0 || j.Collision > 1e-9 {
		t.Errorf("collision probability %g for 1000 states", j.Collision)
	}
}

// TestCheckDelayBound: --delay-bound 2 on the default configuration is
// complete up to 2 delays (exit 0, the JSON and the text say so and where
// the bound comes from), a bound the configuration never reaches is an
// exhaustive search with the states of the unbounded one (without
// crashes, safety only: 338 k states). TestCheckStatedBound covers
// --delay-bound 0.
func TestCheckDelayBound(t *testing.T) {
	code, out, errs := runCheckCmd("check", "--delay-bound", "2", "--format", "json")
	require.Equal(t, exitOK, code, errs)
	var j checkJSON
	require.NoError(t, json.Unmarshal([]byte(out), &j))
	assert.Equal(t, "complete-up-to-delays", j.Result)
	assert.Equal(t, "--delay-bound", j.DelayOrigin)
	assert.Equal(t, "delay-bound k=2", j.Reduction)
	require.NotNil(t, j.CompleteUpToDelays)
	assert.Equal(t, 2, *j.CompleteUpToDelays)
	require.NotNil(t, j.Config.DelayBound)
	assert.Positive(t, j.DelayPruned)
	code, out, errs = runCheckCmd("check", "--delay-bound", "2")
	require.Equal(t, exitOK, code, errs)
	assert.Regexp(t, `(?m)^result complete up to 2 delays \(--delay-bound\)$`, out)

	args := []string{"check", "--crashes", "0", "--liveness=false", "--format", "json"}
	code, out, errs = runCheckCmd(append(args, "--delay-bound", "62")...)
	require.Equal(t, exitOK, code, errs)
	var full checkJSON
	require.NoError(t, json.Unmarshal([]byte(out), &full))
	assert.Equal(t, "ok", full.Result, "a bound that cuts nothing is an exhaustive search")
	code, out, errs = runCheckCmd(args...)
	require.Equal(t, exitOK, code, errs)
	var plain checkJSON
	require.NoError(t, json.Unmarshal([]byte(out), &plain))
	assert.Equal(t, "none", plain.Reduction)
	assert.Nil(t, plain.CompleteUpToDelays)
	assert.Equal(t, plain.DistinctStates, full.DistinctStates, "a bound that cuts nothing explores every state")
}

// TestCheckStatedBound: --config NAME searches within the configuration's
// stated delay bound, exits 0 when that completes, and says so, naming
// the configuration; --delay-bound 0 asks for the unbounded search.
func TestCheckStatedBound(t *testing.T) {
	cfg, ok := model.Standard("new-table")
	require.True(t, ok)
	require.GreaterOrEqual(t, cfg.DelayBound, model.MinStatedDelayBound)
	code, out, errs := runCheckCmd("check", "--config", "new-table", "--ts", "2", "--liveness=false")
	require.Equal(t, exitOK, code, errs)
	assert.Regexp(t, fmt.Sprintf(`(?m)^result complete up to %d delays \(stated bound of configuration new-table\)$`, cfg.DelayBound), out)
	code, out, errs = runCheckCmd("check", "--config", "new-table", "--ts", "2", "--liveness=false", "--max-states", "500", "--delay-bound", "0")
	require.Equal(t, exitIncomplete, code, errs)
	assert.Regexp(t, `(?m)^result incomplete \(`, out)
	assert.NotContains(t, out, "reduction: delay-bound")
}

// TestCheckDelayBoundWalksConfig: a configuration that names random walks
// (too big for the exhaustive search) is searched exhaustively within a
// delay bound.
func TestCheckDelayBoundWalksConfig(t *testing.T) {
	code, out, errs := runCheckCmd("check", "--config", "barrier-writer-move", "--delay-bound", "2", "--format", "json")
	require.Equal(t, exitOK, code, errs)
	var j checkJSON
	require.NoError(t, json.Unmarshal([]byte(out), &j))
	assert.Equal(t, "exhaustive", j.Config.Mode)
	require.NotNil(t, j.CompleteUpToDelays)
	assert.Equal(t, 2, *j.CompleteUpToDelays)
}

// TestCheckDelayBudget: --delay-budget deepens the bound until a
// catalogued bug shows, and reports every search it ran.
func TestCheckDelayBudget(t *testing.T) {
	code, out, errs := runCheckCmd("check", "--bug", "add-accepts-unbootstrapped-maintainer", "--delay-budget", "1m",
		"--format", "json", "--artifacts", t.TempDir())
	require.Equal(t, exitViolation, code, errs)
	var j checkJSON
	require.NoError(t, json.Unmarshal([]byte(out), &j))
	require.NotEmpty(t, j.DelayTries)
	last := j.DelayTries[len(j.DelayTries)-1]
	assert.Equal(t, "violation", last.Result)
	for _, try := range j.DelayTries[:len(j.DelayTries)-1] {
		assert.Equal(t, "incomplete", try.Result, "k=%d: complete up to k delays", try.K)
	}
	require.NotNil(t, j.Config.DelayBound)
	assert.Equal(t, last.K, *j.Config.DelayBound)
	assert.Equal(t, string(spec.RunningMaintainerBootstrapped), j.Violation.Property)
}

// TestCheckSwarm: --time runs a swarm; without a violation it exits 3
// with a coverage report, and it finds a shallow catalogued bug.
func TestCheckSwarm(t *testing.T) {
	code, out, _ := runCheckCmd("check", "--time", "2s", "--nodes", "3", "--format", "json")
	if code != exitIncomplete {
		t.Fatalf("exit %d, want %d\n%s", code, exitIncomplete, out)
	}
	var j checkJSON
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatal(err)
	}
	if j.Config.Mode != "swarm" || j.Coverage == nil || j.DistinctStates == 0 || j.Coverage.Walks == 0 ||
		len(j.Coverage.Actions) == 0 || j.Coverage.SafetyJudged == 0 || j.SymmetryGroup != 2 {
		t.Fatalf("swarm report: %+v %+v", j, j.Coverage)
	}
	code, out, _ = runCheckCmd("check", "--time", "1m", "--bug", "add-accepts-unbootstrapped-maintainer", "--artifacts", t.TempDir())
	if code != exitViolation || !strings.Contains(out, "running-maintainer-bootstrapped  violated") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

// TestCheckMemoryBudget: --memory runs within the budget and reports it.
func TestCheckMemoryBudget(t *testing.T) {
	code, out, _ := runCheckCmd("check", "--memory", "200MB", "--max-states", "20000", "--spill-dir", t.TempDir())
	if code != exitIncomplete || !strings.Contains(out, "memory: budget 200 MB") || !strings.Contains(out, "distinct states 20000,") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

func TestCheckOK(t *testing.T) {
	if raceEnabled {
		t.Skip("a complete run is slow under -race")
	}
	code, out, _ := runCheckCmd("check", "--crashes", "0")
	if code != exitOK || !strings.Contains(out, "result ok") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

func TestCheckSimulate(t *testing.T) {
	code, out, _ := runCheckCmd("check", "--simulate", "--seed", "3", "--walks", "50", "--bug", "add-accepts-unbootstrapped-maintainer", "--artifacts", t.TempDir())
	if code != exitViolation {
		t.Fatalf("exit %d\n%s", code, out)
	}
	code, _, _ = runCheckCmd("check", "--simulate", "--seed", "3", "--walks", "5")
	if code != exitIncomplete {
		t.Fatalf("random walks without a violation must exit %d, got %d", exitIncomplete, code)
	}
}
