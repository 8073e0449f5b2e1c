package model

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/search"
	"cdcspec/spec"
)

var long = flag.Bool("long", false, "run the full-size checks (every standard configuration exhaustively)")

// TestBugCatalogue: every catalogued bug has a model switch and a standard
// configuration.
func TestBugCatalogue(t *testing.T) {
	if err := CheckBugCatalogue(); err != nil {
		t.Fatal(err)
	}
	for _, b := range spec.Bugs() {
		if b.ModelGap != "" {
			continue
		}
		if _, ok := Standard(BugConfig(b.Name)); !ok {
			t.Errorf("bug %s: configuration %q is not a standard configuration", b.Name, BugConfig(b.Name))
		}
	}
}

func prefixLen(ce *Counterexample) int {
	n := 0
	for _, s := range ce.Steps {
		if !s.Fair {
			n++
		}
	}
	return n
}

// quickStates bounds each bug's search and its fixed run in the default
// tier (make test). A bug whose search needs more is found by make
// test-long (-long), where the fixed run goes to 20,000,000 states.
const quickStates = 250000

// TestBugsFound: with each catalogued bug switched on, the checker finds a
// violation of the bug's property in the bug's configuration; the
// counterexample replays, exports to JSON and back, and the spec monitors
// judge its events the same way; with the bug off, the same configuration
// has no violation up to the same depth (plus two steps).
func TestBugsFound(t *testing.T) {
	for _, b := range spec.Bugs() {
		t.Run(b.Name, func(t *testing.T) {
			cfg, _ := Standard(BugConfig(b.Name))
			if b.ModelGap != "" {
				t.Skipf("the model cannot express %s yet: %s", b.Name, b.ModelGap)
			}
			cfg.Bugs = spec.BugSet(0).With(b.ID)
			if cfg.MaintMoves > 0 && !*long {
				// 1,400,058 states (about 35 s of CPU, 1.7 GB): too much for
				// the package's share of make test; TestScenarios replays its
				// counterexample (testdata/bug_move-final-stopped-rejected.txt)
				// and make bugs runs the search.
				t.Skip("maintainer-move's search runs with -long")
			}
			if b.ID == spec.BugRemoveOperatorPassesCheckpoint && !*long {
				// 2,188,835 states to the violation at depth 24 (about 35 s
				// of CPU), then the fixed run to depth 26: too much for
				// make test; TestScenarios replays its counterexample
				// (testdata/bug_remove-operator-passes-checkpoint.txt) and
				// make bugs runs the search.
				t.Skip("move-failover's search for this entry runs with -long")
			}
			if cfg.Barrier == "drop" && !*long {
				// The unreduced search to the violation is about 270,000
				// states deep in the barrier (about 10 s of CPU): too much
				// for the package's share of make test; make bugs runs it
				// within the configuration's stated delay bound.
				t.Skip("barrier-drop-failover's search runs with -long")
			}
			var bounds search.Bounds
			if raceEnabled {
				bounds.MaxStates = 150000 // the race detector is ~10x slower
			} else if !*long && cfg.Walks == 0 {
				bounds.MaxStates = quickStates
			}
			var r Result
			var err error
			walks := search.Walks{Seed: 1, Count: cfg.Walks, Depth: cfg.WalkDepth}
			if cfg.Walks > 0 {
				// Too big for exhaustive search: the configuration's random
				// walks, as `cdcspec check` runs them.
				if raceEnabled {
					t.Skip("random walks of a big configuration: too slow under -race")
				}
				r, err = Simulate(cfg, bounds, walks)
			} else {
				r, err = Check(cfg, bounds, nil)
			}
			require.NoError(t, err)
			if raceEnabled && r.Outcome == search.BoundReached {
				t.Skipf("bug %s needs more than %d states: too slow under -race", b.Name, bounds.MaxStates)
			}
			if !*long && r.Outcome == search.BoundReached {
				// The default tier still fails if the bug stops breaking
				// its property: TestScenarios replays the committed
				// counterexample with the bug (a VIOLATION line) and with
				// the fix (none).
				require.FileExists(t, filepath.Join("testdata", "bug_"+b.Name+".txt"), "bug %s: a search over %d states needs its counterexample replayed in the default tier", b.Name, quickStates)
				t.Skipf("bug %s needs more than %d states: its search runs with -long (make test-long); TestScenarios replays testdata/bug_%s.txt", b.Name, quickStates, b.Name)
			}
			require.Equal(t, search.Violation, r.Outcome, "bug %s in config %s (%s): want a violation of %s", b.Name, cfg.Name, r.Reason, b.PropertyInModel())
			require.NotNil(t, r.Violation)
			ce := r.Violation
			if ce.Property != b.PropertyInModel() {
				t.Fatalf("bug %s: violated %s, want %s\n%s", b.Name, ce.Property, b.PropertyInModel(), ce.Story())
			}
			// The actions replay to the same final state, also through JSON.
			data, err := json.Marshal(ce.Actions())
			if err != nil {
				t.Fatal(err)
			}
			var acts []Action
			if err := json.Unmarshal(data, &acts); err != nil {
				t.Fatal(err)
			}
			states, _, err := Replay(cfg, acts)
			if err != nil {
				t.Fatalf("replay: %v", err)
			}
			if states[len(states)-1] != ce.Final {
				t.Fatalf("replay ends in a different state")
			}
			// The spec monitors see the same violation in the events. The
			// error-never-dropped monitor judges a dropped error only at the
			// next accepted status, which the counterexample does not reach.
			if b.PropertyInModel() != spec.ErrorNeverDropped {
				found := false
				for _, v := range monitorsAgree(&cfg, ce) {
					found = found || v.Property == b.PropertyInModel()
				}
				if !found {
					t.Errorf("bug %s: the spec monitors do not report %s on the counterexample's events\n%s", b.Name, b.PropertyInModel(), ce.Story())
				}
			}
			t.Logf("%s: %s in %d steps (%d before faults heal), %d states, %.2fs", b.Name, ce.Property, len(ce.Steps), prefixLen(ce), r.Distinct, r.Seconds)
			if raceEnabled && !*long {
				return // the fixed run is the slow part; covered without -race
			}
			fixed := cfg
			fixed.Bugs = 0
			if cfg.Walks > 0 {
				if cfg.Barrier == "truncate" && !*long {
					// 20,000 walks of barrier-truncate (about 7 s of CPU):
					// the package's share of make test is spent; the fixed
					// half of testdata/bug_new-table-scheduled-at-selection.txt
					// replays the story, and make test-long runs the walks.
					t.Log("barrier-truncate's fixed walks run with -long")
					return
				}
				rf, err := Simulate(fixed, search.Bounds{}, walks)
				require.NoError(t, err)
				if rf.Outcome == search.Violation {
					t.Fatalf("fixed model, config %s, the same random walks: %s\n%s", fixed.Name, rf.Violation.Property, rf.Violation.Story())
				}
				return
			}
			fb := search.Bounds{MaxDepth: prefixLen(ce) + 2}
			if cfg.Barrier != "" || cfg.MaintMoves > 0 {
				fb.MaxStates = 400000 // the barrier and maintainer-move configurations are millions of states deep there
			}
			if *long {
				fb = search.Bounds{MaxStates: 20000000} // regressed-checkpoint does not complete in minutes
			} else if fb.MaxStates == 0 || fb.MaxStates > quickStates {
				fb.MaxStates = quickStates
			}
			rf, err := Check(fixed, fb, nil)
			require.NoError(t, err)
			if rf.Outcome == search.Violation {
				t.Fatalf("fixed model, config %s up to depth %d: %s\n%s", fixed.Name, fb.MaxDepth, rf.Violation.Property, rf.Violation.Story())
			}
		})
	}
}

// TestPinnedStateCounts pins the number of distinct states of each standard
// configuration (explored to a depth bound; -long: completely), so an edit
// that quietly changes the explored space fails here. Update the numbers
// only with an explanation of why the space changed. Last change: the
// network follows TiCDC's message center (net.go): a maintainer's bootstrap
// and close requests, schedule requests and ACKs land in different queues of
// the dispatcher node and may be handled in either order (default complete:
// 504,872 -> 1,119,506 states). Then (2026-12-01): a late watermark of a
// node already removed is ignored (checkpointTsByCapture is keyed by node
// ID, and the calculation reads the current nodes' IDs only), so the
// configurations with a crash lose the states that differed only in a dead
// slot's unread watermark (default at depth 18: 285,331 -> 278,271).
func TestPinnedStateCounts(t *testing.T) {
	pins := []struct {
		config string
		depth  int
		want   int64
	}{
		{"default", 18, 278271},
		{"regressed-checkpoint", 16, 198954},
		{"ddl-failover", 18, 264660},
		{"new-table", 17, 280578},
		{"move-failover", 16, 163464},
		{"upstream-outage", 12, 63041},
		{"sink-error", 16, 137292},
		// lifecycle.go (2026-12-01). coordinator-failover (16.8 M
		// states) and failover-warning (over 63 M) are too big to pin.
		{"fast-fail", 18, 325624},
		// 244,237 before the closed-epoch tombstone (DM.ClosedEpoch,
		// 2026-12-03), 244,503 before a closed maintainer reported its
		// Stopped status once (Maint.StopReported, 2026-12-03: HEAD's
		// manager reports it in the tick that deletes it; the states
		// that differed only in a repeated Stopped report in flight go).
		{"lifecycle", 14, 243952},
		// movemaintainer.go (2026-12-01); 147,540 before Maint.StopReported.
		{"maintainer-move", 16, 146688},
	}
	full := map[string]int64{
		"default": 995140,
	}
	for _, p := range pins {
		t.Run(p.config, func(t *testing.T) {
			cfg, _ := Standard(p.config)
			b := search.Bounds{SafetyOnly: true, MaxDepth: p.depth}
			if raceEnabled {
				b.MaxDepth = p.depth - 4
			}
			if *long {
				if n, ok := full[p.config]; ok {
					b.MaxDepth = 0
					p.want = n
				} else {
					t.Skip("no full pin")
				}
			} else if raceEnabled {
				t.Skip("pins are for the non-race build")
			}
			r, err := Check(cfg, b, nil)
			require.NoError(t, err)
			if r.Outcome == search.Violation {
				t.Fatalf("%s: %s\n%s", p.config, r.Violation.Property, r.Violation.Story())
			}
			assert.Equal(t, p.want, r.Distinct, "%s depth %d: distinct states", p.config, b.MaxDepth)
		})
	}
}

// TestDefaultComplete: the default configuration is explored completely,
// liveness included, and every property holds.
func TestDefaultComplete(t *testing.T) {
	if raceEnabled {
		t.Skip("too slow under -race; the non-race build covers it")
	}
	cfg, _ := Standard("default")
	r, err := Check(cfg, search.Bounds{}, nil)
	require.NoError(t, err)
	if r.Outcome != search.OK {
		msg := r.Reason
		if r.Violation != nil {
			msg = r.Violation.Story()
		}
		t.Fatalf("default: %s %s", r.Outcome, msg)
	}
	t.Logf("default: %d states, depth %d, %.1fs, %.0f states/s", r.Distinct, r.Depth, r.Seconds, r.StatesPerSecond())
}

// TestStepIsPure: Step does not change its input, and the same action on the
// same state gives the same result.
func TestStepIsPure(t *testing.T) {
	cfg, _ := Standard("default")
	s := Init(&cfg)
	for i := 0; i < 60; i++ {
		acts := Actions(cfg, s)
		if len(acts) == 0 {
			break
		}
		a := acts[(i*7)%len(acts)]
		before := s
		n1, e1 := Step(cfg, s, a)
		n2, e2 := Step(cfg, s, a)
		if s != before {
			t.Fatalf("Step changed its input")
		}
		if n1 != n2 || len(e1) != len(e2) {
			t.Fatalf("Step is not deterministic for %s", a)
		}
		s = n1
	}
}

// TestSimulateFindsBug: random walks find a shallow bug.
func TestSimulateFindsBug(t *testing.T) {
	cfg, _ := Standard("default")
	cfg.Bugs = spec.BugSet(0).With(spec.BugAddAcceptsUnbootstrappedMaintainer)
	r, err := Simulate(cfg, search.Bounds{}, search.Walks{Seed: 1, Count: 200, Depth: 30})
	require.NoError(t, err)
	require.Equal(t, search.Violation, r.Outcome)
	assert.Equal(t, spec.RunningMaintainerBootstrapped, r.Violation.Property)
}

func BenchmarkCheckDefault(b *testing.B) {
	cfg, _ := Standard("default")
	var r Result
	for i := 0; i < b.N; i++ {
		r, _ = Check(cfg, search.Bounds{}, nil)
	}
	b.ReportMetric(r.StatesPerSecond(), "states/s")
	b.ReportMetric(float64(r.Distinct), "states")
}

func BenchmarkCheckDefaultSafety(b *testing.B) {
	cfg, _ := Standard("default")
	var r Result
	for i := 0; i < b.N; i++ {
		r, _ = Check(cfg, search.Bounds{SafetyOnly: true}, nil)
	}
	b.ReportMetric(r.StatesPerSecond(), "states/s")
	b.ReportMetric(float64(r.Distinct), "states")
}
