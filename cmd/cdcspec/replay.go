package main

import (
	"fmt"
	"io"

	"cdcspec/model"
	"cdcspec/proptest"
)

// replayImpl is `cdcspec check ... --replay-impl`: it takes the model's
// counterexample, drives the implementation's deterministic simulation
// through the same environment (DDLs, upstream stall and resume, crashes,
// sink errors; message-level steps approximated with targeted drop, dup and
// delay rules, the rest left to the simulation's scheduler over a few seeds;
// see proptest/replay.go for the mapping) and reports whether the
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
func replayImpl(cfg model.Config, ce *model.Counterexample, bugs []string, w io.Writer) (bool, error) {
	if ce == nil {
		return false, fmt.Errorf("replay-impl: the model found no counterexample to replay")
	}
	res, err := proptest.ReplayModel(cfg, ce.Actions(), ce.Property, bugs, proptest.ReplayOptions{})
	if err != nil {
		return false, fmt.Errorf("replay-impl: %v", err)
	}
	fmt.Fprintf(w, "\n== replay on the implementation (impl/sim) ==\n%s", res.Report())
	if res.Reproduced {
		dir, err := proptest.WriteArtifacts("replay-impl-"+string(ce.Property), res.Story,
			"go run ./cmd/cdcspec check --replay-impl ... (or CDCSPEC_STORY=<dir>/story.json go test ./proptest -run TestReplayStory -v)")
		if err == nil {
			fmt.Fprintf(w, "implementation artifacts: %s\n", dir)
		}
	}
	return res.Reproduced, nil
}
