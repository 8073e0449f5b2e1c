package traces

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cdcspec/spec"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata/*.golden from the current output")

// runFixture checks one fixture (a file, or a directory = one capture per
// file) and returns the report.
func runFixture(t *testing.T, path string) *Report {
	t.Helper()
	ins, err := ExpandInputs([]string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(ins, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep.Seconds = 0
	return rep
}

// TestGolden: every fixture in testdata/ has its expected report in
// <fixture>.golden (regenerate with -rewrite).
func TestGolden(t *testing.T) {
	fixtures, _ := filepath.Glob("testdata/*.log")
	fixtures = append(fixtures, "testdata/healthy")
	for _, fx := range fixtures {
		t.Run(filepath.Base(fx), func(t *testing.T) {
			rep := runFixture(t, fx)
			var buf bytes.Buffer
			rep.WriteText(&buf)
			golden := strings.TrimSuffix(fx, ".log") + ".golden"
			if *rewrite {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -rewrite to create it)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("%s differs from %s (run with -rewrite to accept):\n%s", fx, golden, buf.String())
			}
		})
	}
}

func findingsOf(rep *Report, prop string) []Finding {
	var out []Finding
	for _, f := range rep.Findings {
		if f.Property == prop {
			out = append(out, f)
		}
	}
	return out
}

// TestSeed5709ErrorNeverDropped: the #5709 excerpt has one dispatcher error
// line, no backoff line for its changefeed, and the DM closing 30 minutes
// later (the manual restart): error-never-dropped, suspect (one report only,
// so the re-sends are not in the excerpt), with the error line as evidence
// and the absence of backoff lines stated.
func TestSeed5709ErrorNeverDropped(t *testing.T) {
	rep := runFixture(t, "testdata/seed000_5709.log")
	fs := findingsOf(rep, string(spec.ErrorNeverDropped))
	if len(fs) != 1 {
		t.Fatalf("want 1 error-never-dropped finding, got %+v", rep.Findings)
	}
	f := fs[0]
	if f.Severity != Suspect || f.Changefeed != "default/<changefeed>" {
		t.Fatalf("finding %+v", f)
	}
	hasErrLine := false
	for _, e := range f.Evidence {
		hasErrLine = hasErrLine || strings.Contains(e.Text, `["dispatcher report an error"]`) && e.Line == 21
	}
	if !hasErrLine {
		t.Errorf("evidence lacks the dispatcher error line: %+v", f.Evidence)
	}
	if !strings.Contains(f.Message, "no backoff line") || !strings.Contains(f.Message, "changefeed meets an error, will be stopped") {
		t.Errorf("message does not state the missing backoff lines: %s", f.Message)
	}
	if rep.Violations() != 0 {
		t.Errorf("an excerpt with a single report must not be a violation")
	}
}

// TestSeed3952ErrorReachesBackoff: in the #3952 excerpt the same error
// reaches the backoff within milliseconds (lines pasted newest first, with a
// viewer prefix and a lost '['), so error-never-dropped stays silent.
func TestSeed3952ErrorReachesBackoff(t *testing.T) {
	rep := runFixture(t, "testdata/seed001_3952.log")
	if fs := findingsOf(rep, string(spec.ErrorNeverDropped)); len(fs) != 0 {
		t.Fatalf("unexpected error-never-dropped: %+v", fs)
	}
	if rep.Stats.Records != 4 || rep.Stats.Unparsed != 0 {
		t.Fatalf("parse stats %+v", rep.Stats)
	}
	for _, k := range []string{"sink-error", "dispatcher-error-reported", "backoff-error-seen", "backoff-started"} {
		if rep.Coverage.Events[k] != 1 {
			t.Errorf("coverage %s = %d, want 1", k, rep.Coverage.Events[k])
		}
	}
}

// TestHealthyNoFindingsAboveInfo: normal operation (create, add maintainer,
// bootstrap, dispatcher creation, a balance move across two captures' logs,
// an INFO line that merely carries an error= field, a sidecar's line) has
// nothing above info.
func TestHealthyNoFindingsAboveInfo(t *testing.T) {
	rep := runFixture(t, "testdata/healthy")
	for _, f := range rep.Findings {
		if f.Severity != Info {
			t.Errorf("healthy log produced %s %s: %s", f.Severity, f.Property, f.Message)
		}
	}
	if rep.Coverage.Events["dispatcher-created"] != 4 || rep.Coverage.Events["maintainer-op-finished"] != 1 {
		t.Errorf("coverage %+v", rep.Coverage.Events)
	}
	if rep.Stats.Unparsed != 1 {
		t.Errorf("unparsed = %d, want 1 (the sidecar line)", rep.Stats.Unparsed)
	}
}

// TestPlantedBugsAreCaught: each planted fixture reproduces a catalogued
// bug's log symptom; the named property must flag it at the given severity.
func TestPlantedBugsAreCaught(t *testing.T) {
	cases := []struct {
		fixture, prop string
		sev           Severity
	}{
		{"planted_error_resends.log", string(spec.ErrorNeverDropped), Violation},                 // #5709 with its re-sends
		{"planted_removal_only_add.log", string(spec.RunningMaintainerBootstrapped), Violation},  // #3952
		{"planted_duplicate_dispatcher.log", string(spec.AtMostOneDispatcherPerSpan), Violation}, // #6202
		{"planted_operator_stuck.log", PropOperatorStuck, Suspect},
		{"planted_bootstrap_failed.log", PropBootstrapFailed, Suspect},
		{"seed004_9595.log", PropCheckpointStuck, Suspect}, // tiflow#9595
		// the barrier: TiCDC HEAD's lines (a block event unresolved and a
		// WAITING status re-sent past --stuck-after; DDL table changes
		// scheduled out of commitTs order, #3443), and excerpts of cdcspec's
		// simulation with a planted barrier bug (its scenarios
		// barrier_db_after_create_bug, #3799, and barrier_move_writer_bug,
		// #3974, logged at DEBUG)
		{"planted_barrier_stuck.log", PropBarrierStuck, Suspect},
		{"planted_ddl_scheduled_out_of_order.log", string(spec.TableSetFollowsDDLs), Suspect},
		{"planted_ddl_before_rows.log", string(spec.DDLOrderedWithRows), Violation},
		// the simulation's barrier_truncate_bug (#3443): the truncated
		// table's new ID flushes rows above the TRUNCATE before it is written
		{"planted_truncate_rows_before_ddl.log", string(spec.DDLOrderedWithRows), Violation},
		{"planted_writer_not_passed.log", string(spec.BarrierEventuallyPasses), Violation},
	}
	for _, c := range cases {
		t.Run(c.fixture, func(t *testing.T) {
			rep := runFixture(t, "testdata/"+c.fixture)
			fs := findingsOf(rep, c.prop)
			if len(fs) == 0 || fs[0].Severity != c.sev {
				t.Fatalf("want %s %s, got %+v", c.sev, c.prop, rep.Findings)
			}
			if len(fs[0].Evidence) == 0 {
				t.Fatalf("finding without evidence: %+v", fs[0])
			}
			for _, f := range rep.Findings {
				if f.Severity == Violation && len(f.Evidence) == 0 {
					t.Errorf("violation without evidence: %+v", f)
				}
			}
		})
	}
}

// TestErrorWindowGrades: the same single report is insufficient evidence
// when the log ends inside the window.
func TestErrorWindowGrades(t *testing.T) {
	log := `[2026/07/22 16:30:15.758 +00:00] [ERROR] [maintainer.go:799] ["dispatcher report an error"] [changefeedID=default/cf] [sourceNode=n2] [error="boom"]
[2026/07/22 16:30:20.000 +00:00] [INFO] [maintainer.go:621] ["maintainer node changed"] [changefeedID=default/cf] [addedCount=0] [removedCount=0]
`
	rep, err := Run([]Input{stringInput("w.log", log)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fs := findingsOf(rep, string(spec.ErrorNeverDropped))
	if len(fs) != 1 || fs[0].Severity != InsufficientEvidence {
		t.Fatalf("got %+v", rep.Findings)
	}
}

func stringInput(name, text string) Input {
	return Input{Name: name, Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(text)), nil }}
}
