package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"cdcspec/model"
	"cdcspec/proptest"
	"cdcspec/refinement"
)

// replayImpl is `cdcspec check ... --replay-impl`: it takes the model's
// counterexample, drives the implementation's deterministic simulation
// through the same environment (DDLs, upstream stall and resume, crashes,
// sink errors; message-level steps approximated with targeted drop, dup and
// delay rules, the rest left to the simulation's scheduler over a few seeds;
// see refinement/replay.go for the mapping) and reports whether the
// implementation shows the same property violation. bugs are switched on in
// the implementation (pass the ones the model had on). It writes the report
// to w and returns whether the violation reproduced.
//
// check.go calls it after a violation was found:
//
//	if *replayImplFlag && res.Violation != nil {
//		ok, err := replayImpl(cfg, res.Violation, bugs, stdout)
//		...
//	}
//
// The replay's artifacts go to dir/replay-impl-PROPERTY when dir is set
// (the check's --artifacts directory), else where proptest keeps them.
func replayImpl(cfg model.Config, ce *model.Counterexample, bugs []string, dir string, w io.Writer) (bool, error) {
	if ce == nil {
		return false, fmt.Errorf("replay-impl: the model found no counterexample to replay")
	}
	res, err := refinement.ReplayModel(cfg, ce.Actions(), ce.Property, bugs, refinement.ReplayOptions{})
	if err != nil {
		return false, fmt.Errorf("replay-impl: %v", err)
	}
	fmt.Fprintf(w, "\n== replay on the implementation (impl/sim) ==\n%s", res.Report())
	if res.Reproduced {
		name := "replay-impl-" + string(ce.Property)
		out, err := proptest.WriteArtifacts(name, res.Story,
			"go run ./cmd/cdcspec check --replay-impl ... (or CDCSPEC_STORY=<dir>/story.json go test ./proptest -run TestReplayStory -v)")
		if err == nil && dir != "" {
			out, err = moveDir(out, filepath.Join(dir, name))
		}
		if err != nil {
			return res.Reproduced, fmt.Errorf("replay-impl: writing its artifacts: %v", err)
		}
		fmt.Fprintf(w, "implementation artifacts: %s\n", out)
	}
	return res.Reproduced, nil
}

// moveDir moves the flat directory from to to (renaming, or copying its
// files when the rename crosses file systems) and returns to.
func moveDir(from, to string) (string, error) {
	if err := os.Rename(from, to); err == nil {
		return to, nil
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		return "", err
	}
	ents, err := os.ReadDir(from)
	if err != nil {
		return "", err
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			return "", err
		}
	}
	return to, os.RemoveAll(from)
}
