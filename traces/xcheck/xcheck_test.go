// Package xcheck cross-checks traces against cdcspec's own implementation:
// impl/sim runs (seed scenarios, chaos with and without catalogued bugs) log
// in TiCDC's format, and the log checker must agree with the online spec
// checker that watched the same run. It lives apart from traces so that
// traces' own tests never depend on impl/. TestImplChaosNoFalseViolations always
// runs; the slower cross-checks run with CDCSPEC_XCHECK=1.
package xcheck

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"cdcspec/impl/sim"
	"cdcspec/spec"
	. "cdcspec/traces"
)

// TestImplLogsXCheck runs cdcspec's own implementation (impl/sim) through
// seed #5709 with the bug switched on and off, logs in TiCDC's format at
// INFO, and checks the log with traces: the bug's log shows
// error-never-dropped, the fixed run's does not. Set CDCSPEC_XCHECK=1 to
// run it (it depends on impl/, which evolves separately).
func TestImplLogsXCheck(t *testing.T) {
	if os.Getenv("CDCSPEC_XCHECK") == "" {
		t.Skip("set CDCSPEC_XCHECK=1 to cross-check impl/'s logs")
	}
	for _, bug := range []bool{true, false} {
		var log bytes.Buffer
		cfg := sim.Config{Seed: 5, Nodes: 3, Tables: 6, Log: &log, LogLevel: "info"}
		cfg.Options.Legacy.RawWatermarkCheckpoint = true
		if bug {
			bugs, err := spec.ParseBugs([]string{"regressed-checkpoint-drops-error"})
			if err != nil {
				t.Fatal(err)
			}
			cfg.Options.Bugs = bugs
		}
		s := sim.New(cfg)
		if err := s.CreateChangefeed("cf1"); err != nil {
			t.Fatal(err)
		}
		s.RunFor(6000)
		caps := s.Captures()
		if err := s.KillCapture(caps[2]); err != nil {
			t.Fatal(err)
		}
		s.RunFor(10000)
		for _, n := range caps[:2] {
			if err := s.SinkError(sim.CfID("cf1"), n); err != nil {
				t.Fatal(err)
			}
		}
		s.RunFor(90000)
		path := t.TempDir() + "/impl.log"
		os.WriteFile(path, log.Bytes(), 0o644)
		ins, err := ExpandInputs([]string{path}, nil)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Run(ins, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := findingsOf(rep, string(spec.ErrorNeverDropped))
		var buf bytes.Buffer
		rep.WriteText(&buf)
		t.Logf("bug=%v:\n%s", bug, buf.String())
		if bug && (len(got) == 0 || got[0].Severity != Violation) {
			t.Errorf("bug on: want an error-never-dropped violation")
		}
		if !bug && len(got) != 0 {
			t.Errorf("bug off: unexpected %+v", got)
		}
		if rep.Stats.Unparsed != 0 {
			t.Errorf("impl log has %d unparsed lines", rep.Stats.Unparsed)
		}
	}
}

// TestImplChaosNoFalseViolations: on impl/'s chaos runs (random crashes,
// partitions, moves, sink errors) whose online spec checker found nothing,
// the log checker must not report a violation either, at INFO or DEBUG, and
// must parse every line. It runs in make test (40 seeds at two levels,
// about 5 s): a false finding here is a log line or a matcher that drifted.
func TestImplChaosNoFalseViolations(t *testing.T) {
	suspects := 0
	for seed := uint64(1); seed <= 40; seed++ {
		for _, level := range []string{"info", "debug"} {
			var log bytes.Buffer
			res := sim.RunChaos(sim.ChaosConfig{Seed: seed, Log: &log, LogLevel: level})
			if len(res.Violations) > 0 {
				continue
			}
			rep, err := Run([]Input{stringInput("chaos.log", log.String())}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Stats.Unparsed != 0 {
				t.Errorf("seed %d %s: %d unparsed lines, first at %v", seed, level, rep.Stats.Unparsed, rep.Stats.UnparsedAt)
			}
			for _, f := range rep.Findings {
				switch f.Severity {
				case Violation:
					t.Errorf("seed %d %s: false violation %s: %s\n%v", seed, level, f.Property, f.Message, f.Evidence)
				case Suspect:
					suspects++
					t.Logf("seed %d %s: suspect %s: %s", seed, level, f.Property, f.Message)
				}
			}
		}
	}
	t.Logf("%d suspect findings on clean runs", suspects)
}

// TestImplChaosBugsAgree: on chaos runs with a catalogued bug switched on,
// every property the online checker (over impl/'s event stream) found
// violated must also be found in impl/'s DEBUG log by traces.
func TestImplChaosBugsAgree(t *testing.T) {
	if os.Getenv("CDCSPEC_XCHECK") == "" {
		t.Skip("set CDCSPEC_XCHECK=1 to cross-check impl/'s logs")
	}
	for _, b := range spec.Bugs() {
		bugs, err := spec.ParseBugs([]string{b.Name})
		if err != nil {
			t.Fatal(err)
		}
		runs, agreed := 0, 0
		infoSeen := map[Severity]int{}
		for seed := uint64(1); seed <= 40; seed++ {
			var log bytes.Buffer
			cfg := sim.ChaosConfig{Seed: seed, Log: &log, LogLevel: "debug"}
			cfg.Options.Bugs = bugs
			res := sim.RunChaos(cfg)
			online := map[string]bool{}
			for _, v := range res.Sim.Violations() {
				online[string(v.Property)] = true
			}
			if len(online) == 0 {
				continue
			}
			runs++
			rep, err := Run([]Input{stringInput("chaos.log", log.String())}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			found := map[string]bool{}
			for _, f := range rep.Findings {
				if f.Severity == Violation {
					found[f.Property] = true
				}
			}
			ok := true
			for p := range online {
				if !found[p] {
					ok = false
					t.Errorf("bug %s seed %d: online checker found %s, traces did not (traces found %v)", b.Name, seed, p, found)
				}
			}
			for p := range found {
				if !online[p] {
					t.Errorf("bug %s seed %d: traces found %s, the online checker did not", b.Name, seed, p)
				}
			}
			if ok {
				agreed++
			}
			// The same run logged at INFO, as production logs are: what
			// can the checker still see? (reported, not asserted)
			var info bytes.Buffer
			cfg.Log, cfg.LogLevel = &info, "info"
			sim.RunChaos(cfg)
			irep, err := Run([]Input{stringInput("chaos-info.log", info.String())}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range irep.Findings {
				if online[f.Property] && f.Severity != Info {
					infoSeen[f.Severity]++
					break
				}
			}
		}
		t.Logf("bug %s: %d/%d violating runs found in the DEBUG log; at INFO: %v", b.Name, agreed, runs, infoSeen)
	}
}

func stringInput(name, text string) Input {
	return Input{Name: name, Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(text)), nil }}
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
