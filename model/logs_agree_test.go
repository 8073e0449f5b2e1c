package model

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"cdcspec/impl/logging"
	"cdcspec/spec"
	"cdcspec/traces"
)

// logBase is the wall-clock time of step 0 in rendered logs; a model step
// lasts logStep.
var logBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const logStep = time.Second

// renderLog writes the events that have a canonical line at or above level
// through impl/logging, the logger impl's components use (spec.LogLines:
// file, level, message, field keys, in TiCDC's unified format), all in one
// file (one clock). It returns the log and the events it shows, with Time
// in Unix ms as traces reads them.
func renderLog(t testing.TB, evs []spec.Event, level zapcore.Level) (string, []spec.Event) {
	lines := map[spec.Kind]spec.LogLine{}
	for _, l := range spec.LogLines() {
		if _, dup := lines[l.Kind]; !dup {
			lines[l.Kind] = l
		}
	}
	var b bytes.Buffer
	clock := &stepClock{}
	lg := logging.New(&b, clock, level.String())
	var shown []spec.Event
	for _, e := range evs {
		ll, ok := lines[e.Kind]
		if !ok {
			t.Fatalf("event kind %s has no canonical line", e.Kind)
		}
		var lv zapcore.Level
		if err := lv.UnmarshalText([]byte(strings.ToLower(ll.Level))); err != nil {
			t.Fatal(err)
		}
		if lv < level {
			continue
		}
		var extra []zap.Field
		switch e.Kind {
		case spec.MaintainerOpStarted, spec.MaintainerOpFinished:
			extra = append(extra, logging.Role("coordinator"))
		case spec.DispatcherOpStarted, spec.DispatcherOpFinished:
			extra = append(extra, logging.Role("maintainer"))
		}
		clock.ms = logBase.Add(time.Duration(e.Time) * logStep).UnixMilli()
		e.Time = clock.ms
		if e.NextRetry != 0 {
			e.NextRetry = logBase.Add(time.Duration(e.NextRetry) * logStep).UnixMilli()
		}
		lg.Event(nil, e, extra...)
		shown = append(shown, e)
	}
	return b.String(), shown
}

// stepClock is the logger's clock: the time of the event being logged.
type stepClock struct{ ms int64 }

func (c *stepClock) NowMs() int64 { return c.ms }

// traceLog runs the trace checker over one in-memory log.
func traceLog(t testing.TB, text string, opt traces.Options) *traces.Report {
	in := traces.Input{Name: "model.log", Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(text)), nil }}
	rep, err := traces.Run([]traces.Input{in}, opt)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func severityOf(fs []traces.Finding, sev traces.Severity) bool {
	for _, f := range fs {
		if f.Severity == sev {
			return true
		}
	}
	return false
}

// debugOnly are the properties whose facts production logs carry only at
// DEBUG (cdcspec's own coordinator status, stored-checkpoint, row and flush
// lines): an INFO log cannot show their violations.
var debugOnly = map[spec.Property]string{
	spec.ErrorNeverDropped:          "the coordinator rule needs the status lines",
	spec.CheckpointMonotonic:        "the stored checkpoint is logged at DEBUG",
	spec.CheckpointNotPastUnflushed: "rows and sink flushes are logged at DEBUG",
	spec.HandoffKeepsCheckpoint:     "the origin's final report is a coordinator status line, logged at DEBUG",
	spec.DDLOrderedWithRows:         "rows and sink flushes are logged at DEBUG (a DDL written twice shows at INFO)",
}

// logAgreeStats counts, per property and level, the logs in which the
// monitor saw a violation and what traces made of it.
type logAgreeStats struct {
	logs     int
	violated map[string]int // "level property" -> logs with a monitor violation that traces reported as a violation
	allowed  map[string]int // "level property allowance" -> logs
}

// compareLog renders one stream at one level, runs traces over it, and
// checks traces' verdicts against the spec monitors. It returns the
// disagreements.
func compareLog(t testing.TB, st *logAgreeStats, evs []spec.Event, level zapcore.Level) []string {
	window := time.Minute
	opt := traces.Options{ErrorWindow: window, ErrorMinReports: 2}
	cfg := spec.Config{ErrorWindow: window.Milliseconds(), ErrorMinReports: 2}
	_, all := renderLog(t, evs, zapcore.DebugLevel)
	text, shown := renderLog(t, evs, level)
	full := spec.ByProperty(spec.Check(cfg, all))
	ref := spec.ByProperty(spec.Check(cfg, shown))
	rep := traceLog(t, text, opt)
	found := map[spec.Property][]traces.Finding{}
	for _, f := range rep.Findings {
		found[spec.Property(f.Property)] = append(found[spec.Property(f.Property)], f)
	}
	coordDebug := false // the log has the coordinator's DEBUG status lines
	for _, e := range shown {
		coordDebug = coordDebug || e.Kind == spec.StatusReceived || e.Kind == spec.CheckpointStored
	}
	st.logs++
	var problems []string
	lv := level.String()
	for _, in := range spec.Properties() {
		p := in.Name
		traceV := severityOf(found[p], traces.Violation)
		switch {
		case len(ref[p]) > 0 && traceV:
			st.violated[lv+" "+string(p)]++
		case len(ref[p]) > 0 && p == spec.CheckpointAdvancesAfterHeal && !coordDebug && severityOf(found[p], traces.InsufficientEvidence):
			// Allowance: without the coordinator's DEBUG lines the monitor
			// judged the creation baseline; traces says it cannot tell.
			st.allowed[lv+" "+string(p)+" stored checkpoint not logged"]++
		case len(ref[p]) > 0 && p == spec.RunningMaintainerBootstrapped && len(ref[p][0].Evidence) <= 1 &&
			(severityOf(found[p], traces.Suspect) || severityOf(found[p], traces.InsufficientEvidence)):
			// Allowance: "no maintainer runs there" is an absence of lines,
			// which a log cannot prove.
			st.allowed[lv+" "+string(p)+" absence of a maintainer line"]++
		case len(ref[p]) > 0:
			problems = append(problems, fmt.Sprintf("%s log: the monitor reports %s, traces does not (findings %+v): %s", lv, p, found[p], ref[p][0].Message))
		case traceV:
			problems = append(problems, fmt.Sprintf("%s log: traces reports a %s violation the monitor does not: %+v", lv, p, found[p]))
		}
		// The log loses only what its level does not show.
		if len(full[p]) > 0 && len(ref[p]) == 0 {
			if why, ok := debugOnly[p]; ok && level > zapcore.DebugLevel {
				st.allowed[fmt.Sprintf("%s %s DEBUG-only: %s; traces' own symptom: %s", lv, p, why, strongest(found[p]))]++
			} else {
				problems = append(problems, fmt.Sprintf("%s log: the monitor sees %s on the events but not on the log's lines", lv, p))
			}
		}
		// Log-only symptoms never accuse a run the monitor finds clean.
		if len(full[p]) == 0 && severityOf(found[p], traces.Suspect) {
			problems = append(problems, fmt.Sprintf("%s log: traces suspects %s, the monitor finds none on the events: %+v", lv, p, found[p]))
		}
	}
	if len(problems) > 0 {
		problems = append(problems, "the log:\n"+text)
	}
	return problems
}

// strongest is the strongest severity among fs ("none" if empty).
func strongest(fs []traces.Finding) string {
	for _, sev := range []traces.Severity{traces.Violation, traces.Suspect, traces.InsufficientEvidence, traces.Info} {
		if severityOf(fs, sev) {
			return string(sev)
		}
	}
	return "none"
}

func newLogAgreeStats() *logAgreeStats {
	return &logAgreeStats{violated: map[string]int{}, allowed: map[string]int{}}
}

func (st *logAgreeStats) report() string {
	var rows []string
	for k, n := range st.violated {
		rows = append(rows, fmt.Sprintf("%6d logs: %s: a violation, reported as one", n, k))
	}
	for k, n := range st.allowed {
		rows = append(rows, fmt.Sprintf("%6d logs: %s (allowed)", n, k))
	}
	sort.Strings(rows)
	return fmt.Sprintf("%d logs\n%s", st.logs, strings.Join(rows, "\n"))
}

// TestLogChecksAgreeWithMonitors renders model walks (the same combinations
// as TestPredicatesAgreeWithMonitors) as TiCDC logs through spec.LogLines,
// once with every line (DEBUG) and once as production logs are kept (INFO),
// runs the trace checker, and compares its verdicts with the spec monitors:
//
//   - traces reports a violation of a property exactly when the monitor does
//     on the events the log shows, except two documented gradings: a
//     checkpoint-advances-after-heal judged without any of the coordinator's
//     DEBUG lines is "insufficient evidence" (the stored checkpoint is
//     logged only at DEBUG), and running-maintainer-bootstrapped's "no
//     maintainer runs there" is at most "suspect" (an absence of lines);
//   - the INFO log hides only the debugOnly properties;
//   - a log-only symptom (traces' own error episodes, the #6202 marker, the
//     coordinator's view of the checkpoint) is never "suspect" on a run the
//     monitor finds clean.
//
// All lines go to one file, so traces' tolerance of clock skew between
// captures' logs is not exercised here (traces/check_test.go covers it).
// checkpoint-stuck and operator-stuck are symptoms with no spec property.
func TestLogChecksAgreeWithMonitors(t *testing.T) {
	total := 600
	if *long {
		total = 12000
	}
	if raceEnabled {
		total = 150
	}
	st := newLogAgreeStats()
	failed := 0
	check := func(what string, evs []spec.Event) {
		for _, lvl := range []zapcore.Level{zapcore.DebugLevel, zapcore.InfoLevel} {
			if problems := compareLog(t, st, evs, lvl); len(problems) > 0 && failed < 3 {
				failed++
				t.Errorf("%s: traces and the spec monitors disagree:\n%s", what, strings.Join(problems, "\n"))
			}
		}
	}
	walks := walkCombos(agreeCombos(t), total, 0x1065, func(c *combo, w int, j *judge, live bool) {
		check(fmt.Sprintf("walk %d (config %s, bug %q, actions %s)", w, c.cfg.Name, c.bug, strings.Join(j.actions, "; ")), j.events)
	})
	// Every counterexample story, with its bug and with the fix.
	files, err := filepath.Glob(filepath.Join("testdata", "bug_*.txt"))
	require.NoError(t, err)
	for _, path := range files {
		for _, run := range storyRuns(t, path) {
			j := newJudge(&run.cfg)
			for _, a := range run.actions {
				j.do(a)
			}
			if !j.stopped {
				j.settle()
			}
			check(path+" ("+run.cfg.String()+")", j.events)
		}
	}
	t.Logf("%d walks and the counterexample stories:\n%s", walks, st.report())
	// Both directions were exercised on both levels for the properties a
	// log can show.
	for _, b := range modelBugs() {
		for _, lvl := range []zapcore.Level{zapcore.DebugLevel, zapcore.InfoLevel} {
			if _, hidden := debugOnly[b.PropertyInModel()]; hidden && lvl != zapcore.DebugLevel {
				continue
			}
			if b.PropertyInModel() == spec.CheckpointAdvancesAfterHeal && lvl != zapcore.DebugLevel {
				continue
			}
			assert.NotZero(t, st.violated[lvl.String()+" "+string(b.PropertyInModel())], "%s log: no walk showed a %s violation (broken by %s)", lvl, b.PropertyInModel(), b.Name)
		}
	}
}
