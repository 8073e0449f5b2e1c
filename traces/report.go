package traces

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"cdcspec/spec"
)

// Coverage says which spec events the logs exercised, how often, and which
// properties the logs can speak to.
type Coverage struct {
	Events   map[string]int64 `json:"events"`   // spec event kind -> count
	Symptoms map[string]int64 `json:"symptoms"` // log-only symptom -> count
	Context  int64            `json:"context"`  // known TiCDC lines that carry no event
	// Recognised counts the records whose message the catalogue knows;
	// UnknownMessages are the most frequent messages it does not know
	// (top maxUnknownShown, most frequent first), so a user sees what the
	// checker ignored.
	Recognised      int64              `json:"recognised"`
	UnknownMessages []MessageCount     `json:"unknown_messages"`
	Properties      []PropertyCoverage `json:"properties"`

	kinds  [64]int64
	judged [64]int64 // kinds that name their changefeed (or need none)
	syms   [32]int64
	// the items of judged and syms without a timestamp of their own
	untimedJudged [64]int64
	untimedSyms   [32]int64
}

// MessageCount is a log message and how many records carry it.
type MessageCount struct {
	Message string `json:"message"`
	Count   int64  `json:"count"`
}

// maxUnknownShown bounds Coverage.UnknownMessages.
const maxUnknownShown = 50

func (c *Coverage) setUnknown(u *unknownMessages) {
	c.UnknownMessages = c.UnknownMessages[:0]
	for k, v := range u.m {
		c.UnknownMessages = append(c.UnknownMessages, MessageCount{Message: evidenceText([]byte(k)), Count: *v})
	}
	sort.Slice(c.UnknownMessages, func(i, j int) bool {
		a, b := c.UnknownMessages[i], c.UnknownMessages[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Message < b.Message
	})
	if len(c.UnknownMessages) > maxUnknownShown {
		c.UnknownMessages = c.UnknownMessages[:maxUnknownShown]
	}
	if c.UnknownMessages == nil {
		c.UnknownMessages = []MessageCount{}
	}
}

// clusterKinds are judged without a changefeed.
var clusterKinds = map[spec.Kind]bool{spec.NodeJoined: true, spec.NodeLeft: true, spec.CaptureSuicide: true,
	spec.UpstreamStalled: true, spec.UpstreamResumed: true, spec.FaultsHealed: true, spec.Quiesced: true, spec.TableCreated: true}

// isClusterKind is clusterKinds as a table (read for every item).
var isClusterKind = kindTable(clusterKinds)

// PropertyCoverage says whether a property could be judged on these logs.
type PropertyCoverage struct {
	Property string `json:"property"`
	Judged   bool   `json:"judged"`
	Basis    string `json:"basis"`
	// Untimed counts the records without a timestamp that this property,
	// which measures time (timeWindows), was not judged on.
	Untimed int64 `json:"untimed,omitempty"`
}

// timeWindows names, for each property judged by a window or a duration,
// the flag that sets it. Such a property is not judged on records without a
// timestamp: their time is only the line before's, so a window measured to
// or from them means nothing (a trace of untimed records must not pass it
// silently). The other properties are judged on the records' order, which
// an untimed record keeps: its position in its file.
// ownDurationSyms are the symptoms whose lines carry the duration they
// report ("timeSinceCreated", "lastFlushTime"): judged without timestamps.
var ownDurationSyms = map[Symptom]bool{SymOperatorStillRunning: true, SymRedoMetaStuck: true}

var timeWindows = map[string]string{
	string(spec.ErrorNeverDropped): "--error-window",
	string(spec.ErrorStuckFails):   "--error-stuck-duration",
	PropOperatorStuck:              "--stuck-after",
	PropCheckpointStuck:            "--stuck-after",
	PropBootstrapFailed:            "--stuck-after",
	PropBarrierStuck:               "--stuck-after",
}

func newCoverage() Coverage { return Coverage{} }

func (c *Coverage) count(it *Item) {
	if k := int(it.Event.Kind); k < len(c.kinds) {
		c.kinds[k]++
		if it.Event.Changefeed != "" || isClusterKind[it.Event.Kind] {
			c.judged[k]++
			if it.noTime {
				c.untimedJudged[k]++
			}
		}
	}
	if s := int(it.Sym); s < len(c.syms) {
		c.syms[s]++
		if it.noTime && !ownDurationSyms[it.Sym] {
			c.untimedSyms[s]++
		}
	}
}

// logNeed says when a property is judged on logs: the event kinds (any
// of) it is judged on, the symptoms that also count, and what is missing
// otherwise.
type logNeed struct {
	prop  string
	kinds []spec.Kind
	syms  []Symptom
	blind string
	// also: kinds that must all be present too for kinds to count (a
	// liveness property judged at a marker); symptoms count regardless.
	also []spec.Kind
}

// needs lists the spec properties (their rows' LogNeeds, in the table's
// order, with the symptoms of specSyms) and then the trace checker's own.
var needs = func() []logNeed {
	var out []logNeed
	for _, d := range spec.PropertyTable() {
		out = append(out, logNeed{string(d.Name), d.Logs.Kinds, specSyms[d.Name], d.Logs.Blind, d.Logs.Also})
	}
	return append(out,
		logNeed{PropOperatorStuck, []spec.Kind{spec.MaintainerOpStarted, spec.DispatcherOpStarted}, []Symptom{SymOperatorStillRunning}, "no operator lines", nil},
		logNeed{PropCheckpointStuck, []spec.Kind{spec.BackoffErrorSeen, spec.BackoffStarted, spec.CheckpointStored}, []Symptom{SymRedoMetaStuck, SymCheckpointBlocked}, "no line carries the changefeed checkpoint", nil},
		logNeed{PropBootstrapFailed, []spec.Kind{spec.MaintainerBootstrapFailed, spec.MaintainerBootstrapped}, []Symptom{SymPanic}, "no bootstrap lines", nil},
		logNeed{PropCaptureSuicide, []spec.Kind{spec.CaptureSuicide}, []Symptom{SymSessionLost}, "no capture exit", nil},
		logNeed{PropBarrierStuck, []spec.Kind{spec.BlockStatusReported}, []Symptom{SymBarrierCreated, SymBarrierStuck, SymBlockWaiting}, "no block event or block-status lines", nil},
	)
}()

// specSyms are the trace symptoms that judge a spec property besides its
// events.
var specSyms = map[spec.Property][]Symptom{
	spec.TableSetFollowsDDLs: {SymDDLScheduled},
}

func (c *Coverage) finish() {
	c.Events = map[string]int64{}
	for _, k := range spec.Kinds() {
		if int(k) < len(c.kinds) && c.kinds[k] > 0 {
			c.Events[k.String()] = c.kinds[k]
		}
	}
	c.Symptoms = map[string]int64{}
	for s := SymOperatorStillRunning; int(s) < len(symNames); s++ {
		if c.syms[s] > 0 {
			c.Symptoms[s.String()] = c.syms[s]
		}
	}
	c.Context = c.syms[SymContext]
	c.Properties = c.Properties[:0]
	for _, n := range needs {
		// a property that measures time counts only the timed records
		window, timed := timeWindows[n.prop]
		var untimed int64
		kindN := func(k spec.Kind) int64 {
			if timed {
				untimed += c.untimedJudged[k]
				return c.judged[k] - c.untimedJudged[k]
			}
			return c.judged[k]
		}
		var parts []string
		for _, k := range n.kinds {
			if m := kindN(k); m > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", m, k))
			}
		}
		for _, k := range n.also {
			if m := kindN(k); len(parts) > 0 && m == 0 {
				parts = nil
			} else if len(parts) > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", m, k))
			}
		}
		for _, s := range n.syms {
			m := c.syms[s]
			if timed {
				untimed += c.untimedSyms[s]
				m -= c.untimedSyms[s]
			}
			if m > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", m, s))
			}
		}
		pc := PropertyCoverage{Property: n.prop, Judged: len(parts) > 0, Untimed: untimed}
		switch {
		case pc.Judged && untimed > 0:
			pc.Basis = strings.Join(parts, ", ") + fmt.Sprintf("; not on %d record(s) without a timestamp (it measures %s)", untimed, window)
		case pc.Judged:
			pc.Basis = strings.Join(parts, ", ")
		case untimed > 0:
			pc.Basis = fmt.Sprintf("not judged: its %d record(s) have no timestamp, and it measures %s", untimed, window)
		default:
			pc.Basis = "not judged: " + n.blind
		}
		c.Properties = append(c.Properties, pc)
	}
}

// InputStats are one input's parse statistics.
type InputStats struct {
	Name  string `json:"name"`
	InDir bool   `json:"-"`
	ParseStats
}

// Report is the result of checking a set of logs.
type Report struct {
	Stats    ParseStats
	Inputs   []InputStats
	Findings []Finding
	Coverage Coverage
	Seconds  float64
	// Timeline is each changefeed's incident timeline (Options.Timeline),
	// in the order the checker saw it; TimelineDropped counts the events
	// left out past its bounds.
	Timeline        []TimelineEvent
	TimelineDropped int64
	// Repairs are the repairs made to damaged input, and what could not
	// be judged because of them.
	Repairs Repairs
}

// Repairs says how the input was damaged on its way (pasted into an issue
// or a chat), how the parser repaired it, and what the repairs left
// unjudged. The zero value: no repair.
type Repairs struct {
	FullWidthLines int64 `json:"full_width_lines"` // lines whose full-width punctuation was normalised
	UntimedRecords int64 `json:"untimed_records"`  // records without a timestamp: ordered by file position
	NoLevelRecords int64 `json:"no_level_records"` // records without a level
	WrappedRecords int64 `json:"wrapped_records"`  // records joined from several lines
	// NotJudged lists what the repairs left unjudged: the properties
	// that measure time not judged on untimed records, the findings
	// regraded because their evidence has no timestamp, and the levels
	// not known.
	NotJudged []string `json:"not_judged,omitempty"`
}

// Any reports whether a repair was made.
func (r Repairs) Any() bool {
	return r.FullWidthLines+r.UntimedRecords+r.NoLevelRecords+r.WrappedRecords > 0
}

func (r *Report) repairs() Repairs {
	s := r.Stats
	rp := Repairs{FullWidthLines: s.FullWidth, UntimedRecords: s.Records - s.Timed, NoLevelRecords: s.NoLevel, WrappedRecords: s.Wrapped}
	for _, p := range r.Coverage.Properties {
		if p.Untimed > 0 {
			rp.NotJudged = append(rp.NotJudged, fmt.Sprintf("%s on %d record(s) without a timestamp (it measures %s)", p.Property, p.Untimed, timeWindows[p.Property]))
		}
	}
	for _, f := range r.Findings {
		if f.untimedDowngrade {
			rp.NotJudged = append(rp.NotJudged, fmt.Sprintf("%s of changefeed %s graded %s: evidence lines without a timestamp", f.Property, orDash(f.Changefeed), f.Severity))
		}
	}
	if rp.NoLevelRecords > 0 {
		rp.NotJudged = append(rp.NotJudged, fmt.Sprintf("the level of %d record(s): a PANIC or FATAL among them is not reported as a panic", rp.NoLevelRecords))
	}
	return rp
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// minParsedShare is the share of an input's non-blank lines that must
// belong to log records; below it InputProblems warns.
const minParsedShare = 0.5

// InputProblems returns, per input, an error for an input in which no TiCDC
// log record was found (an empty file, a binary, another program's log: a
// run over it checked nothing), and a warning for an input of which fewer
// than half the non-blank lines parse. A file found in a directory argument
// with no record only gets a warning, unless no input has a record at all.
func (r *Report) InputProblems() (errs, warnings []string) {
	for _, in := range r.Inputs {
		if in.Records == 0 {
			msg := fmt.Sprintf("no TiCDC log record found in %s", in.Name)
			if in.InDir && r.Stats.Records > 0 {
				warnings = append(warnings, "warning: "+msg+" (a file of a directory argument; skipped)")
			} else {
				errs = append(errs, msg)
			}
			continue
		}
		nonBlank := in.Lines - in.Blank
		parsed := nonBlank - in.Unparsed
		if nonBlank > 0 && float64(parsed) < minParsedShare*float64(nonBlank) {
			warnings = append(warnings, fmt.Sprintf("warning: only %d of the %d non-blank lines of %s are TiCDC log records (%.0f%%); is it a TiCDC log?",
				parsed, nonBlank, in.Name, 100*float64(parsed)/float64(nonBlank)))
		}
	}
	return errs, warnings
}

// Violations counts the findings of severity Violation.
func (r *Report) Violations() int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == Violation {
			n++
		}
	}
	return n
}

// Run checks the inputs. The error names the input that could not be read;
// findings from the other inputs are still in the report.
func Run(inputs []Input, opt Options) (*Report, error) {
	start := time.Now()
	c := NewChecker(opt)
	srcs, err := mergeInputs(inputs, c.Observe)
	rep := &Report{Findings: c.Finish(), Coverage: c.Coverage, Timeline: c.timeline.events, TimelineDropped: c.timeline.dropped}
	var unknown unknownMessages
	for _, s := range srcs {
		rep.Stats.Add(s.stats)
		unknown.merge(&s.unknown)
		rep.Inputs = append(rep.Inputs, InputStats{Name: s.name, InDir: s.in.InDir, ParseStats: s.stats})
	}
	rep.Coverage.Recognised = rep.Stats.Recognised
	rep.Coverage.Context += rep.Stats.Context
	rep.Coverage.setUnknown(&unknown)
	for i := range rep.Findings {
		rep.Findings[i].Next = nextStep(&rep.Findings[i])
	}
	rep.Repairs = rep.repairs()
	rep.Seconds = time.Since(start).Seconds()
	return rep, err
}

// ---------------------------------------------------------------------------
// output

// WriteText writes one block per finding, then the coverage summary and the
// parse statistics.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintln(w, r.Verdict())
	if len(r.Findings) == 0 {
		fmt.Fprintln(w, "no findings")
	}
	for _, f := range r.Findings {
		cf := f.Changefeed
		if cf == "" {
			cf = "-"
		}
		fmt.Fprintf(w, "%s  %s  changefeed %s\n", f.Property, strings.ToUpper(string(f.Severity)), cf)
		fmt.Fprintf(w, "  %s\n", f.Message)
		if f.Count > 1 {
			fmt.Fprintf(w, "  (%d times, %s to %s)\n", f.Count, orQ(f.First), orQ(f.Last))
		}
		for _, e := range f.Evidence {
			fmt.Fprintf(w, "    %s:%d  %s\n", e.File, e.Line, e.Text)
		}
		if n := f.Next; n != nil {
			fmt.Fprintf(w, "  look at: %s\n", n.Component)
			fmt.Fprintf(w, "  check: %s\n", n.Check)
			if len(n.Bugs) > 0 {
				fmt.Fprintf(w, "  known bugs with this property: %s\n", strings.Join(n.Bugs, "; "))
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "coverage:")
	kinds := sortedKeysOf(r.Coverage.Events)
	if len(kinds) == 0 {
		fmt.Fprintln(w, "  no spec event in the logs")
	} else {
		parts := make([]string, 0, len(kinds))
		for _, k := range kinds {
			parts = append(parts, fmt.Sprintf("%s=%d", k, r.Coverage.Events[k]))
		}
		fmt.Fprintf(w, "  events: %s\n", strings.Join(parts, " "))
	}
	if len(r.Coverage.Symptoms) > 0 {
		var parts []string
		for _, k := range sortedKeysOf(r.Coverage.Symptoms) {
			parts = append(parts, fmt.Sprintf("%s=%d", k, r.Coverage.Symptoms[k]))
		}
		fmt.Fprintf(w, "  symptoms: %s\n", strings.Join(parts, " "))
	}
	fmt.Fprintf(w, "  known context lines: %d\n", r.Coverage.Context)
	fmt.Fprintf(w, "  recognised records: %d of %d", r.Coverage.Recognised, r.Stats.Records)
	if n := len(r.Coverage.UnknownMessages); n > 0 {
		shown := min(n, 3)
		parts := make([]string, shown)
		for i, m := range r.Coverage.UnknownMessages[:shown] {
			parts[i] = fmt.Sprintf("%q x%d", m.Message, m.Count)
		}
		fmt.Fprintf(w, "; most frequent unknown: %s", strings.Join(parts, ", "))
	}
	fmt.Fprintln(w)
	for _, p := range r.Coverage.Properties {
		mark := "judged"
		if !p.Judged {
			mark = "------"
		}
		fmt.Fprintf(w, "  %-32s %s  %s\n", p.Property, mark, p.Basis)
	}
	s := r.Stats
	fmt.Fprintf(w, "parse: %d lines, %d records, %d unparsed, %d blank, %d truncated, %d bytes in %.3fs",
		s.Lines, s.Records, s.Unparsed, s.Blank, s.Truncated, s.Bytes, r.Seconds)
	if r.Seconds > 0 {
		fmt.Fprintf(w, " (%.1f MB/s)", float64(s.Bytes)/1e6/r.Seconds)
	}
	fmt.Fprintln(w)
	r.writeRepairs(w)
	for _, in := range r.Inputs {
		if in.Records == 0 && in.Lines > 0 {
			fmt.Fprintf(w, "  %s: no TiCDC log record found (is this a TiCDC log?)\n", in.Name)
		}
		if in.Jumps > 0 {
			fmt.Fprintf(w, "  %s: time goes back by more than %s %d time(s) (concatenated logs?); checked in file order from each jump\n", in.Name, fmtDur(reorderWindow), in.Jumps)
		}
		if len(in.UnparsedAt) > 0 {
			lines := make([]string, len(in.UnparsedAt))
			for i, l := range in.UnparsedAt {
				lines[i] = fmt.Sprint(l)
			}
			fmt.Fprintf(w, "  %s: %d unparsed line(s), first at line %s\n", in.Name, in.Unparsed, strings.Join(lines, ", "))
		}
	}
}

// writeRepairs writes the repairs made to damaged input, if any.
func (r *Report) writeRepairs(w io.Writer) {
	rp := r.Repairs
	if !rp.Any() {
		return
	}
	var parts []string
	for _, p := range []struct {
		n    int64
		what string
	}{
		{rp.FullWidthLines, "line(s) with full-width punctuation normalised"},
		{rp.UntimedRecords, "record(s) without a timestamp, ordered by file position"},
		{rp.NoLevelRecords, "record(s) without a level"},
		{rp.WrappedRecords, "record(s) joined from wrapped lines"},
	} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	fmt.Fprintf(w, "repairs: %s\n", strings.Join(parts, "; "))
	for _, n := range rp.NotJudged {
		fmt.Fprintf(w, "  not judged: %s\n", n)
	}
}

func orQ(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

type jsonReport struct {
	Verdict  Verdict      `json:"verdict"`
	Lines    int64        `json:"lines"`
	Parsed   int64        `json:"parsed"`
	Unparsed int64        `json:"unparsed"`
	Bytes    int64        `json:"bytes"`
	Seconds  float64      `json:"seconds"`
	Findings []Finding    `json:"findings"`
	Coverage Coverage     `json:"coverage"`
	Inputs   []jsonInput  `json:"inputs"`
	Parse    jsonParseExt `json:"parse"`
	Repairs  *Repairs     `json:"repairs,omitempty"`
}

type jsonInput struct {
	Name       string `json:"name"`
	Lines      int64  `json:"lines"`
	Records    int64  `json:"records"`
	Unparsed   int64  `json:"unparsed"`
	UnparsedAt []int  `json:"unparsed_at,omitempty"`
	Jumps      int64  `json:"time_jumps,omitempty"`
}

type jsonParseExt struct {
	Records   int64 `json:"records"`
	Blank     int64 `json:"blank"`
	Truncated int64 `json:"truncated"`
}

// WriteJSON writes the report as one JSON object. "parsed" counts the lines
// that belong to log records.
func (r *Report) WriteJSON(w io.Writer) error {
	s := r.Stats
	out := jsonReport{
		Verdict: r.Verdict(),
		Lines:   s.Lines, Parsed: s.Lines - s.Unparsed - s.Blank, Unparsed: s.Unparsed, Bytes: s.Bytes,
		Seconds: r.Seconds, Findings: r.Findings, Coverage: r.Coverage,
		Parse: jsonParseExt{Records: s.Records, Blank: s.Blank, Truncated: s.Truncated},
	}
	if out.Findings == nil {
		out.Findings = []Finding{}
	}
	if r.Repairs.Any() {
		out.Repairs = &r.Repairs
	}
	for i := range out.Findings {
		if out.Findings[i].Evidence == nil {
			out.Findings[i].Evidence = []Evidence{}
		}
	}
	for _, in := range r.Inputs {
		out.Inputs = append(out.Inputs, jsonInput{Name: in.Name, Lines: in.Lines, Records: in.Records, Unparsed: in.Unparsed, UnparsedAt: in.UnparsedAt, Jumps: in.Jumps})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// WriteJUnit writes one test case per property: a failure per violation,
// suspicions and the rest as system-out, unjudged properties as skipped.
func (r *Report) WriteJUnit(w io.Writer) error {
	byProp := map[string][]Finding{}
	for _, f := range r.Findings {
		byProp[f.Property] = append(byProp[f.Property], f)
	}
	v := r.Verdict()
	suite := junitSuite{Name: "cdcspec trace", Time: fmt.Sprintf("%.3f", r.Seconds),
		Properties: []junitProperty{{"verdict", v.Result}, {"verdict-line", v.String()}}}
	props := []string{}
	for _, p := range r.Coverage.Properties {
		props = append(props, p.Property)
	}
	for p := range byProp {
		found := false
		for _, q := range props {
			found = found || q == p
		}
		if !found {
			props = append(props, p)
		}
	}
	sort.Strings(props)
	for _, p := range props {
		c := junitCase{Name: p, Classname: "cdcspec.trace"}
		var fails, other []string
		for _, f := range byProp[p] {
			text := fmt.Sprintf("[%s] changefeed %s: %s", f.Severity, f.Changefeed, f.Message)
			for _, e := range f.Evidence {
				text += fmt.Sprintf("\n  %s:%d  %s", e.File, e.Line, e.Text)
			}
			if f.Severity == Violation {
				fails = append(fails, text)
			} else {
				other = append(other, text)
			}
		}
		if len(fails) > 0 {
			c.Failure = &junitFailure{Message: fmt.Sprintf("%d violation(s)", len(fails)), Type: "violation", Body: strings.Join(fails, "\n\n")}
			suite.Failures++
		}
		c.SystemOut = strings.Join(other, "\n\n")
		for _, pc := range r.Coverage.Properties {
			if pc.Property == p && !pc.Judged && len(byProp[p]) == 0 {
				c.Skipped = &junitSkipped{Message: pc.Basis}
				suite.Skipped++
			}
		}
		suite.Cases = append(suite.Cases, c)
	}
	if v.Result == VerdictNothingChecked {
		// a JUnit consumer gates on failures: a log that checked nothing
		// must not read as a passing suite
		suite.Cases = append(suite.Cases, junitCase{Name: "verdict", Classname: "cdcspec.trace",
			Failure: &junitFailure{Message: v.Why, Type: VerdictNothingChecked, Body: v.String()}})
		suite.Failures++
	}
	suite.Tests = len(suite.Cases)
	out := junitSuites{Name: "cdcspec", Tests: suite.Tests, Failures: suite.Failures, Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
