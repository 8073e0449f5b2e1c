package model

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cdcspec/search"
	"cdcspec/spec"
)

// dslAction renders an action as a scenario-file line (see scenario_test.go).
func dslAction(s *State, a Action) string {
	node := func(n uint8) string { return fmt.Sprintf("n%d", n) }
	ep := func(id uint8) string {
		if id == coordSlot {
			return "coordinator"
		}
		return node(slotOf(id))
	}
	tableOf := func(id uint8) string {
		if d := s.disp(id); d != nil {
			return keyText(spanKey(d.Table, d.Part))
		}
		return "t?"
	}
	switch a.Kind {
	case ACrash, ADetect, ARestart, ACoordSchedule, AMaintTick, AMaintCleanup, ADMTick, ADMComplete, ACoordMove:
		return a.Kind.String() + " " + node(a.Node)
	case ASinkError, ADispClosed, AFastFail:
		return a.Kind.String() + " " + tableOf(a.Arg)
	case AMaintApplyWM:
		return fmt.Sprintf("%s %s %s", a.Kind, node(a.Node), node(a.Arg))
	case AResume:
		if a.Arg != 0 {
			return fmt.Sprintf("%s checkpoint=%d", a.Kind, a.Arg)
		}
	case AMaintSchedule, AMaintMove:
		return fmt.Sprintf("%s %s %s %s", a.Kind, node(a.Node), keyText(a.Arg), node(a.Arg2))
	case ASplit:
		return fmt.Sprintf("%s %s %s %s %s", a.Kind, node(a.Node), keyText(a.Arg), splitModeNames[a.Arg2&3], node(a.Arg2>>2))
	case AMerge, AMergePostFinish:
		return fmt.Sprintf("%s %s t%d", a.Kind, node(a.Node), a.Arg)
	case AOpPostFinish:
		return fmt.Sprintf("%s %s %s", a.Kind, node(a.Node), keyText(a.Arg))
	case ADeliver, ADrop, ADuplicate:
		return fmt.Sprintf("%s %s %s %s", a.Kind, ep(a.Msg.Src), ep(a.Msg.Dst), msgNames[a.Msg.Kind])
	}
	return a.Kind.String()
}

// TestGenerateScenarioSkeletons writes scenario files from the catalogued
// bugs' counterexamples (GEN_SCENARIOS=1, or GEN_SCENARIOS=NAME for one entry; then run TestScenarios -rewrite).
func TestGenerateScenarioSkeletons(t *testing.T) {
	if os.Getenv("GEN_SCENARIOS") == "" {
		t.Skip("set GEN_SCENARIOS=1 to regenerate testdata skeletons")
	}
	only := os.Getenv("GEN_SCENARIOS") // "1": every entry; else one entry's name
	for _, b := range spec.Bugs() {
		if only != "1" && only != b.Name {
			continue
		}
		cfg, _ := Standard(BugConfig(b.Name))
		if b.ModelGap != "" {
			continue
		}
		cfg.Bugs = spec.BugSet(0).With(b.ID)
		var r Result
		var err error
		// As `cdcspec check --bug NAME` runs it: random walks only for a
		// configuration without a stated delay bound.
		if cfg.Walks > 0 && cfg.DelayBound == 0 {
			r, err = Simulate(cfg, search.Bounds{}, search.Walks{Seed: 1, Count: cfg.Walks, Depth: cfg.WalkDepth})
		} else {
			r, err = Check(cfg, cfg.StatedBounds(search.Bounds{Workers: 1}), nil)
		}
		if err != nil || r.Violation == nil {
			t.Fatalf("%s: no violation", b.Name)
		}
		s := Init(&cfg)
		var lines []string
		fair := false
		for _, st := range r.Violation.Steps {
			if st.Fair {
				fair = true
				if st.Action.Kind == aNone {
					continue
				}
				if livenessClass(b.PropertyInModel()) {
					continue
				}
			}
			lines = append(lines, dslAction(&s, st.Action))
			step(&cfg, &s, st.Action, nil)
		}
		var f strings.Builder
		fmt.Fprintf(&f, "# %s (%s): %s\n#\n# %s\n\n", b.Name, b.Issue, b.PropertyInModel(), b.Story)
		for _, mode := range []string{"bug", "fixed"} {
			if mode == "bug" {
				fmt.Fprintf(&f, "# With the bug switched on.\nnew config=%s bug=%s\n----\n\ndo\n%s\n----\n\n", cfg.Name, b.Name, strings.Join(lines, "\n"))
			} else {
				// The fix may take a step the bug's story needs out of reach
				// (a status it holds back): the fixed run keeps the longest
				// prefix the fixed model can take, and says so.
				fixed := cfg
				fixed.Bugs = 0
				fs := Init(&fixed)
				n := 0
				for _, l := range lines {
					a, err := parseAction(&fs, l)
					if err != nil || !enabled(&fixed, &fs, a) {
						break
					}
					step(&fixed, &fs, a, nil)
					n++
				}
				what := "The same steps with the fix."
				if n < len(lines) {
					what = fmt.Sprintf("The same steps with the fix, up to step %d: the fix does not take step %d (%s).", n, n+1, lines[n])
				}
				fmt.Fprintf(&f, "# %s\nnew config=%s\n----\n\ndo\n%s\n----\n\n", what, cfg.Name, strings.Join(lines[:n], "\n"))
			}
			if fair && livenessClass(b.PropertyInModel()) {
				f.WriteString("fair\n----\n\n")
			}
		}
		path := filepath.Join("testdata", "bug_"+b.Name+".txt")
		if err := os.WriteFile(path, []byte(f.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func livenessClass(p spec.Property) bool {
	in, _ := spec.PropertyInfo(p)
	return in.Class == spec.Liveness
}
