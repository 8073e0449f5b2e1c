package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"cdcspec/spec"
	"cdcspec/traces"
)

// Colours, one per meaning, shared by both pages.
const (
	colBootstrapped = "#2e8b57" // a bootstrapped maintainer
	colStarting     = "#9bb7a6" // a maintainer not (yet) bootstrapped
	colRemovalOnly  = "#d08a2e" // a removal-only maintainer
	colOperator     = "#4a74b5"
	colOpOpen       = "#a9bfe0"
	colError        = "#c62828"
	colBackoff      = "#f2c14e"
	colCheckpoint   = "#6a3d9a"
	colViolation    = "#b3001b"
	colSuspect      = "#e08a00"
	colOther        = "#7b8794"
)

const (
	chartW   = 1180
	labelW   = 190
	laneH    = 26
	cpH      = 90
	marginR  = 20
	axisH    = 22
	plotW    = chartW - labelW - marginR
	maxNodes = 12
)

// TraceHTML writes the incident report of a trace check: the findings, then
// per changefeed a timeline across captures (one lane per capture with the
// maintainer's placement and the errors its dispatchers raised, a lane of
// coordinator operators as bars, the backoff, the findings marked with
// links to their evidence, and the checkpoint as a line), then coverage and
// parse statistics. rep must have been run with Options.Timeline.
func TraceHTML(w io.Writer, rep *traces.Report, title string) error {
	writeHead(w, title)
	v := rep.Verdict()
	fmt.Fprintf(w, "<div class=\"verdict %s\" id=\"verdict\">%s</div>\n", v.Result, esc(v.String()))
	fmt.Fprintf(w, "<h1>%s</h1>\n", esc(title))
	s := rep.Stats
	var names []string
	for _, in := range rep.Inputs {
		names = append(names, in.Name)
	}
	fmt.Fprintf(w, `<div class="sub">%d input(s): %s &middot; %d lines, %d records (%d recognised), %d unparsed</div>`+"\n",
		len(rep.Inputs), esc(strings.Join(names, ", ")), s.Lines, s.Records, rep.Coverage.Recognised, s.Unparsed)
	writeLegend(w)

	// findings summary
	fmt.Fprintf(w, "<h2>Findings (%d)</h2>\n", len(rep.Findings))
	if len(rep.Findings) == 0 {
		io.WriteString(w, "<p>No findings.</p>\n")
	} else {
		io.WriteString(w, "<table><tr><th>#</th><th>property</th><th>severity</th><th>changefeed</th><th>count</th><th>first</th></tr>\n")
		for i, f := range rep.Findings {
			fmt.Fprintf(w, `<tr><td><a href="#f%d">F%d</a></td><td>%s</td><td class="%s">%s</td><td>%s</td><td>%d</td><td>%s</td></tr>`+"\n",
				i+1, i+1, esc(f.Property), f.Severity, f.Severity, esc(orDash(f.Changefeed)), f.Count, esc(f.First))
		}
		io.WriteString(w, "</table>\n")
	}

	// timelines
	byCf := map[string][]traces.TimelineEvent{}
	for _, e := range rep.Timeline {
		byCf[e.Changefeed] = append(byCf[e.Changefeed], e)
	}
	findingsOf := map[string][]int{}
	for i, f := range rep.Findings {
		findingsOf[f.Changefeed] = append(findingsOf[f.Changefeed], i)
	}
	cfs := sortedKeys(byCf)
	for cf := range findingsOf {
		if _, ok := byCf[cf]; !ok && cf != "" {
			cfs = append(cfs, cf)
		}
	}
	sort.Strings(cfs)
	for _, cf := range cfs {
		if cf == "" {
			continue
		}
		fmt.Fprintf(w, `<h2 id="cf-%s">Changefeed %s</h2>`+"\n", esc(cf), esc(cf))
		writeTimeline(w, cf, byCf[cf], rep.Findings, findingsOf[cf])
	}
	// findings of no changefeed (a capture's exit, membership) get the
	// cluster's own timeline
	if len(findingsOf[""]) > 0 {
		io.WriteString(w, `<h2 id="cluster">Cluster (findings of no changefeed)</h2>`+"\n")
		writeTimeline(w, "", byCf[""], rep.Findings, findingsOf[""])
	}
	if rep.TimelineDropped > 0 {
		fmt.Fprintf(w, "<p class=\"sub\">%d timeline event(s) beyond the report's bounds are not drawn.</p>\n", rep.TimelineDropped)
	}

	// findings with evidence
	if len(rep.Findings) > 0 {
		io.WriteString(w, "<h2>Evidence</h2>\n")
	}
	for i, f := range rep.Findings {
		fmt.Fprintf(w, `<div class="finding %s" id="f%d"><b>F%d %s</b> <span class="%s">%s</span> &middot; changefeed %s`,
			f.Severity, i+1, i+1, esc(f.Property), f.Severity, strings.ToUpper(string(f.Severity)), esc(orDash(f.Changefeed)))
		if f.Count > 1 {
			fmt.Fprintf(w, " &middot; %d times, %s to %s", f.Count, esc(f.First), esc(f.Last))
		}
		fmt.Fprintf(w, "<div>%s</div>\n", esc(f.Message))
		for _, e := range f.Evidence {
			fmt.Fprintf(w, "<div class=\"ev\">%s:%d  %s</div>\n", esc(e.File), e.Line, esc(e.Text))
		}
		if n := f.Next; n != nil {
			fmt.Fprintf(w, "<div class=\"next\"><b>look at:</b> %s<br><b>check:</b> %s", esc(n.Component), esc(n.Check))
			if len(n.Bugs) > 0 {
				fmt.Fprintf(w, "<br><b>known bugs with this property:</b> %s", esc(strings.Join(n.Bugs, "; ")))
			}
			io.WriteString(w, "</div>\n")
		}
		io.WriteString(w, "</div>\n")
	}

	// coverage
	io.WriteString(w, "<h2>Coverage</h2>\n<table><tr><th>property</th><th>judged</th><th>basis</th></tr>\n")
	for _, p := range rep.Coverage.Properties {
		j := "no"
		if p.Judged {
			j = "yes"
		}
		fmt.Fprintf(w, "<tr><td>%s</td><td>%s</td><td>%s</td></tr>\n", esc(p.Property), j, esc(p.Basis))
	}
	io.WriteString(w, "</table>\n")
	if len(rep.Coverage.UnknownMessages) > 0 {
		io.WriteString(w, "<p>Most frequent messages the catalogue does not know:</p><table><tr><th>message</th><th>records</th></tr>\n")
		for _, m := range rep.Coverage.UnknownMessages[:min(10, len(rep.Coverage.UnknownMessages))] {
			fmt.Fprintf(w, "<tr><td>%s</td><td>%d</td></tr>\n", esc(m.Message), m.Count)
		}
		io.WriteString(w, "</table>\n")
	}
	_, err := io.WriteString(w, "</body></html>\n")
	return err
}

func writeLegend(w io.Writer) {
	io.WriteString(w, `<div class="legend sub">`)
	for _, l := range [][2]string{{colBootstrapped, "maintainer (bootstrapped)"}, {colStarting, "maintainer (not bootstrapped)"},
		{colRemovalOnly, "removal-only maintainer"}, {colOperator, "coordinator operator"}, {colError, "error"},
		{colBackoff, "backoff"}, {colCheckpoint, "checkpoint"}, {colViolation, "violation"}, {colSuspect, "suspect"}} {
		fmt.Fprintf(w, `<span><i class="sw" style="background:%s"></i>%s</span>`, l[0], esc(l[1]))
	}
	io.WriteString(w, "</div>\n")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writeTimeline draws one changefeed. Its window covers every timeline
// event, every evidence line of the changefeed's findings and the whole
// span each finding is about (a silence of 30 minutes is drawn as 30
// minutes); its lanes are the coordinator's, the backoff's, one per capture
// the events or the evidence name, one per dispatcher the evidence names,
// and the findings'. The sections are drawn in this order: lanes and time
// axis, the events (maintainers, operators, backoff, errors), the findings,
// the checkpoint line.
func writeTimeline(w io.Writer, cf string, evs []traces.TimelineEvent, all []traces.Finding, mine []int) {
	sc := timelineScopeOf(evs, all, mine)
	tl := newTimeline(sc)
	tl.drawAxis()
	d := &eventDrawer{tl: tl, maint: map[string]*openMaint{}}
	for i := range evs {
		d.event(evs[i])
	}
	d.finish()
	for _, i := range mine {
		tl.drawFinding(i, all[i])
	}
	tl.drawCheckpoints(d.cps, d.cpMin, d.cpMax)
	t0, t1, pad := tl.t0, tl.t1, tl.pad
	fmt.Fprintf(w, `<div class="sub window">window %s to %s UTC (%s)</div>`+"\n", fmtMs(t0+pad), fmtMs(t1 - pad)[11:], fmtSpan(t1-t0-2*pad))
	tl.s.attrs = fmt.Sprintf(`data-changefeed="%s" data-t0="%d" data-t1="%d"`, esc(cf), t0, t1)
	tl.s.write(w, "timeline")
}

// timelineScope is what one changefeed's timeline covers, before padding:
// the times [t0, t1] of its events and of its findings' evidence, the
// captures and the dispatchers they name.
type timelineScope struct {
	t0, t1  int64
	nodes   map[string]bool // every capture named
	evNodes map[string]bool // the captures the evidence names: their lanes are kept first
	disps   []dispLane      // the dispatchers the evidence names, at most maxNodes, in order of first mention
}

type dispLane struct{ id, node string }

func timelineScopeOf(evs []traces.TimelineEvent, all []traces.Finding, mine []int) timelineScope {
	sc := timelineScope{nodes: map[string]bool{}, evNodes: map[string]bool{}}
	span := func(t int64) {
		if t == 0 {
			return
		}
		if sc.t0 == 0 || t < sc.t0 {
			sc.t0 = t
		}
		if t > sc.t1 {
			sc.t1 = t
		}
	}
	for _, e := range evs {
		span(e.Time)
		if n := laneNode(e); n != "" {
			sc.nodes[n] = true
		}
	}
	dispSeen := map[string]bool{}
	for _, i := range mine {
		f := &all[i]
		span(f.Time())
		span(f.LastTime())
		for _, e := range f.Evidence {
			span(e.Time)
			if e.Node != "" {
				sc.nodes[e.Node] = true
				sc.evNodes[e.Node] = true
			}
			if e.Dispatcher != "" && !dispSeen[e.Dispatcher] {
				dispSeen[e.Dispatcher] = true
				sc.disps = append(sc.disps, dispLane{e.Dispatcher, e.Node})
			}
		}
	}
	if len(sc.disps) > maxNodes {
		sc.disps = sc.disps[:maxNodes]
	}
	return sc
}

// lanes lists the lane keys top to bottom: the coordinator's operators, the
// backoff, at most maxNodes captures (those the evidence names first, then
// sorted), the dispatchers, the findings.
func (sc timelineScope) lanes() []string {
	nodeList := sortedKeys(sc.nodes)
	if len(nodeList) > maxNodes {
		sort.SliceStable(nodeList, func(i, j int) bool { return sc.evNodes[nodeList[i]] && !sc.evNodes[nodeList[j]] })
		nodeList = nodeList[:maxNodes]
		sort.Strings(nodeList)
	}
	lanes := append([]string{"coordinator operators", "backoff"}, nodeList...)
	for _, d := range sc.disps {
		lanes = append(lanes, dispKey(d.id))
	}
	return append(lanes, "findings")
}

// timeline is one changefeed's chart while it is drawn: the padded window
// [t0, t1] (pad on each side), the top of each lane and of the checkpoint
// chart, and the SVG.
type timeline struct {
	s           *svg
	t0, t1, pad int64
	nodes       map[string]bool // the captures named (a lane key that is one is a capture's)
	laneY       map[string]float64
	cpTop       float64
}

// newTimeline pads the scope's window and draws the lanes.
func newTimeline(sc timelineScope) *timeline {
	tl := &timeline{s: &svg{w: chartW}, t0: sc.t0, t1: sc.t1, nodes: sc.nodes, laneY: map[string]float64{}}
	if tl.t1 <= tl.t0 {
		tl.t1 = tl.t0 + 1000
	}
	tl.pad = (tl.t1 - tl.t0) / 50
	tl.t0 -= tl.pad
	tl.t1 += tl.pad
	s := tl.s
	y := float64(axisH)
	for _, l := range sc.lanes() {
		tl.laneY[l] = y
		label, key := l, l
		switch {
		case tl.nodes[l]:
			label, key = "capture "+shortNode(l), "capture:"+l
		case strings.HasPrefix(l, dispPrefix):
			id := strings.TrimPrefix(l, dispPrefix)
			label, key = "dispatcher "+shortNode(id), "dispatcher:"+id
		}
		s.rect(float64(labelW), y+2, float64(plotW), laneH-4, "#f6f8fa", "", fmt.Sprintf(`class="lane" data-lane="%s"`, esc(key)))
		s.text(float64(labelW-8), y+laneH/2+4, "end", "lbl", label)
		y += laneH
	}
	tl.cpTop = y + 8
	y += cpH + 16
	s.h = int(y) + 4
	return tl
}

// x is the horizontal position of time t (ms).
func (tl *timeline) x(t int64) float64 {
	return float64(labelW) + float64(t-tl.t0)*float64(plotW)/float64(tl.t1-tl.t0)
}

// end is the end of the unpadded window: where what is still open is cut.
func (tl *timeline) end() int64 { return tl.t1 - tl.pad }

// drawAxis draws the time axis: six ticks with their times, the date.
func (tl *timeline) drawAxis() {
	s, t0, t1 := tl.s, tl.t0, tl.t1
	for i := 0; i <= 5; i++ {
		t := t0 + (t1-t0)*int64(i)/5
		xx := tl.x(t)
		s.line(xx, axisH-4, xx, tl.cpTop+cpH, "#e1e5ea", 1, "")
		anchor := map[int]string{0: "start", 5: "end"}[i]
		if anchor == "" {
			anchor = "middle"
		}
		s.text(xx, 12, anchor, "", fmtMs(t)[11:])
	}
	s.text(float64(labelW-8), 12, "end", "lbl", fmtMs(t0)[:10]+" UTC")
}

// openMaint is a maintainer drawn once it closes.
type openMaint struct {
	t           int64
	bootstrapAt int64
	removal     bool
	ev          traces.TimelineEvent
}

// eventDrawer draws the timeline events in order: a maintainer's bar, an
// operator's bar and a backoff's bar when they end (or at the window's end),
// error dots at once; it gathers the checkpoints the events carry.
type eventDrawer struct {
	tl           *timeline
	maint        map[string]*openMaint // by capture
	opStart      *traces.TimelineEvent
	backoffAt    int64
	cps          [][2]float64 // (time, checkpoint)
	cpMin, cpMax uint64
}

func (d *eventDrawer) event(e traces.TimelineEvent) {
	tl := d.tl
	s, x := tl.s, tl.x
	n := laneNode(e)
	switch e.Kind {
	case spec.MaintainerCreated.String():
		d.closeMaint(n, e.Time)
		d.maint[n] = &openMaint{t: e.Time, removal: e.RemovalOnly, ev: e}
	case spec.MaintainerBootstrapped.String():
		if m := d.maint[n]; m != nil {
			m.bootstrapAt = e.Time
		} else {
			d.maint[n] = &openMaint{t: e.Time, bootstrapAt: e.Time, ev: e}
		}
	case spec.MaintainerClosed.String():
		d.closeMaint(n, e.Time)
	case spec.NodeLeft.String(), spec.CaptureSuicide.String():
		d.closeMaint(e.Node, e.Time)
	case spec.MaintainerOpStarted.String():
		d.opStart = &e
	case spec.MaintainerOpFinished.String():
		d.opFinished(e)
	case spec.DispatcherErrorReported.String(), spec.SinkError.String(), spec.BackoffErrorSeen.String(), "bootstrap-failure", "internal-error", "panic":
		ln := n
		if e.Origin != "" {
			ln = e.Origin
		}
		if ly, ok := tl.laneY[ln]; ok {
			s.circle(x(e.Time), ly+laneH/2, 4, colError, fmt.Sprintf("%s %s\n%s\n%s:%d", e.Kind, fmtMs(e.Time), e.Err, e.Evidence.File, e.Evidence.Line))
		} else {
			ly := tl.laneY["backoff"]
			s.circle(x(e.Time), ly+laneH/2, 3, colError, fmt.Sprintf("%s %s\n%s", e.Kind, fmtMs(e.Time), e.Err))
		}
	case spec.BackoffStarted.String():
		if d.backoffAt == 0 {
			d.backoffAt = e.Time
		}
	case spec.BackoffRecovered.String(), spec.ChangefeedResumed.String():
		if d.backoffAt != 0 {
			ly := tl.laneY["backoff"]
			s.rect(x(d.backoffAt), ly+6, x(e.Time)-x(d.backoffAt), laneH-12, colBackoff, fmt.Sprintf("backoff %s to %s", fmtMs(d.backoffAt), fmtMs(e.Time)), "")
			d.backoffAt = 0
		}
	case spec.BackoffGaveUp.String():
		ly := tl.laneY["backoff"]
		s.rect(x(e.Time)-2, ly+2, 4, laneH-4, "#000", "the backoff gave up: the changefeed failed", "")
	}
	if e.Checkpoint > 1<<40 {
		if d.cpMin == 0 || e.Checkpoint < d.cpMin {
			d.cpMin = e.Checkpoint
		}
		if e.Checkpoint > d.cpMax {
			d.cpMax = e.Checkpoint
		}
		d.cps = append(d.cps, [2]float64{float64(e.Time), float64(e.Checkpoint)})
	}
}

// closeMaint draws capture n's open maintainer up to end: not bootstrapped,
// then bootstrapped, or removal-only.
func (d *eventDrawer) closeMaint(n string, end int64) {
	m := d.maint[n]
	if m == nil {
		return
	}
	delete(d.maint, n)
	ly, ok := d.tl.laneY[n]
	if !ok {
		return
	}
	s, x := d.tl.s, d.tl.x
	col, what := colStarting, "maintainer started, not bootstrapped"
	if m.removal {
		col, what = colRemovalOnly, "removal-only maintainer (checkpointTs=1, never bootstraps)"
	}
	title := fmt.Sprintf("%s on %s, %s to %s\n%s:%d", what, n, fmtMs(m.t), fmtMs(end), m.ev.Evidence.File, m.ev.Evidence.Line)
	if m.bootstrapAt > 0 && !m.removal {
		s.rect(x(m.t), ly+5, x(m.bootstrapAt)-x(m.t), laneH-10, colStarting, title, "")
		s.rect(x(m.bootstrapAt), ly+5, x(end)-x(m.bootstrapAt), laneH-10, colBootstrapped, fmt.Sprintf("bootstrapped maintainer on %s, %s to %s", n, fmtMs(m.bootstrapAt), fmtMs(end)), "")
	} else {
		s.rect(x(m.t), ly+5, x(end)-x(m.t), laneH-10, col, title, "")
	}
}

// opFinished draws the coordinator's operator that e finishes, from the
// operator start before it (or from e alone).
func (d *eventDrawer) opFinished(e traces.TimelineEvent) {
	s, x := d.tl.s, d.tl.x
	st := e.Time
	label := e.Op
	if d.opStart != nil {
		st = d.opStart.Time
		if label == "" {
			label = d.opStart.Op
		}
	}
	title := fmt.Sprintf("%s maintainer operator to %s, %s to %s", label, orDash(shortNode(e.Node)), fmtMs(st), fmtMs(e.Time))
	if e.Reason != "" {
		title += " (" + e.Reason + ")"
	}
	ly := d.tl.laneY["coordinator operators"]
	s.rect(x(st), ly+4, x(e.Time)-x(st), laneH-8, colOperator, title, "")
	if x(e.Time)-x(st) > 60 {
		s.text(x(st)+3, ly+laneH/2+4, "start", "", label+" → "+shortNode(e.Node))
	}
	d.opStart = nil
}

// finish draws what is still open at the window's end: maintainers, an
// operator, a backoff.
func (d *eventDrawer) finish() {
	tl := d.tl
	s, x, end := tl.s, tl.x, tl.end()
	for _, n := range sortedKeys(d.maint) {
		d.closeMaint(n, end)
	}
	if op := d.opStart; op != nil {
		ly := tl.laneY["coordinator operators"]
		s.rect(x(op.Time), ly+4, x(end)-x(op.Time), laneH-8, colOpOpen, fmt.Sprintf("%s maintainer operator to %s started %s, no \"operator finished\" line", op.Op, shortNode(op.Node), fmtMs(op.Time)), "")
	}
	if d.backoffAt != 0 {
		ly := tl.laneY["backoff"]
		s.rect(x(d.backoffAt), ly+6, x(end)-x(d.backoffAt), laneH-12, colBackoff, fmt.Sprintf("backoff from %s, not recovered in the logs", fmtMs(d.backoffAt)), "")
	}
}

// drawFinding draws finding i (F<i+1>): the span it is about, its evidence
// lines in the lanes of the dispatcher or capture they name, and a marker at
// its first time.
func (tl *timeline) drawFinding(i int, f traces.Finding) {
	s, x := tl.s, tl.x
	fy := tl.laneY["findings"]
	col := colOther
	switch f.Severity {
	case traces.Violation:
		col = colViolation
	case traces.Suspect:
		col = colSuspect
	}
	lo, hi := f.Time(), f.LastTime()
	for _, e := range f.Evidence {
		if e.Time == 0 {
			continue
		}
		if lo == 0 || e.Time < lo {
			lo = e.Time
		}
		hi = max(hi, e.Time)
	}
	if lo != 0 && hi > lo {
		title := fmt.Sprintf("F%d %s spans %s: %s to %s", i+1, f.Property, fmtSpan(hi-lo), fmtMs(lo), fmtMs(hi))
		s.rect(x(lo), fy+laneH-7, x(hi)-x(lo), 4, col, title,
			fmt.Sprintf(`class="fspan" data-finding="F%d" data-t0="%d" data-t1="%d" opacity="0.55"`, i+1, lo, hi))
		if x(hi)-x(lo) > 120 {
			s.text((x(lo)+x(hi))/2, fy+laneH/2+1, "middle", "", fmt.Sprintf("F%d: %s", i+1, fmtSpan(hi-lo)))
		}
	}
	tl.drawEvidence(i, f, col)
	t := f.Time()
	if t == 0 {
		t = lo
	}
	if t == 0 {
		return
	}
	xx := x(t)
	fmt.Fprintf(&s.b, `<a href="#f%d"><path d="M%.1f %.1f l6 12 h-12 z" fill="%s"><title>F%d %s %s: %s</title></path>`, i+1, xx, fy+6, col, i+1, f.Property, f.Severity, esc(f.Message))
	fmt.Fprintf(&s.b, `<text x="%.1f" y="%.1f" text-anchor="start">F%d</text></a>`, xx+8, fy+laneH/2+4, i+1)
	s.line(xx, float64(axisH), xx, fy+6, col, 1, `stroke-dasharray="3,3"`)
}

// drawEvidence marks finding i's evidence lines, each in the lane of the
// dispatcher or capture it names (else the findings'), and joins a lane's
// first and last mark with a dashed line.
func (tl *timeline) drawEvidence(i int, f traces.Finding, col string) {
	s, x := tl.s, tl.x
	lastX := map[string]float64{}
	firstX := map[string]float64{}
	var lanes []string // in order of first mark, so the page is the same each run
	for _, e := range f.Evidence {
		if e.Time == 0 {
			continue
		}
		lane := "findings"
		switch {
		case e.Dispatcher != "" && tl.laneY[dispKey(e.Dispatcher)] > 0:
			lane = dispKey(e.Dispatcher)
		case e.Node != "" && tl.laneY[e.Node] > 0:
			lane = e.Node
		}
		ly, xx := tl.laneY[lane], x(e.Time)
		if _, ok := firstX[lane]; !ok {
			firstX[lane] = xx
			lanes = append(lanes, lane)
		}
		lastX[lane] = xx
		fmt.Fprintf(&s.b, `<a href="#f%d"><path class="evmark" data-finding="F%d" data-t="%d" d="M%.1f %.1f l5 5 l-5 5 l-5 -5 z" fill="%s" stroke="#fff" stroke-width="0.8"><title>F%d evidence %s:%d at %s
%s</title></path></a>`,
			i+1, i+1, e.Time, xx, ly+laneH/2-5, col, i+1, esc(e.File), e.Line, fmtMs(e.Time), esc(e.Text))
	}
	for _, lane := range lanes {
		if a, b := firstX[lane], lastX[lane]; b-a > 10 && lane != "findings" {
			s.line(a, tl.laneY[lane]+laneH/2, b, tl.laneY[lane]+laneH/2, col, 1, `stroke-dasharray="2,2"`)
		}
	}
}

// drawCheckpoints draws the checkpoint chart below the lanes: the
// checkpoints' physical times against the events' times, between cpMin and
// cpMax.
func (tl *timeline) drawCheckpoints(cps [][2]float64, cpMin, cpMax uint64) {
	s, x, cpTop := tl.s, tl.x, tl.cpTop
	s.rect(float64(labelW), cpTop, float64(plotW), cpH, "#fbfaff", "", "")
	s.text(float64(labelW-8), cpTop+cpH/2, "end", "lbl", "checkpoint")
	if len(cps) == 0 {
		s.text(float64(labelW+4), cpTop+cpH/2, "start", "", "no line of this changefeed carries its checkpoint")
		return
	}
	lo, hi := float64(cpMin>>18), float64(cpMax>>18)
	if hi <= lo {
		hi = lo + 1
	}
	var pts []string
	for _, p := range cps {
		phys := float64(uint64(p[1]) >> 18)
		yy := cpTop + cpH - 6 - (phys-lo)*(cpH-12)/(hi-lo)
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(int64(p[0])), yy))
	}
	fmt.Fprintf(&s.b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`, strings.Join(pts, " "), colCheckpoint)
	for _, p := range strings.Fields(strings.Join(pts, " ")) {
		var px, py float64
		fmt.Sscanf(p, "%f,%f", &px, &py)
		s.circle(px, py, 2.5, colCheckpoint, "checkpoint")
	}
	s.text(float64(labelW+4), cpTop+12, "start", "", fmt.Sprintf("%d … %d (physical %s … %s)", cpMin, cpMax, fmtMs(int64(cpMin >> 18))[11:], fmtMs(int64(cpMax >> 18))[11:]))
}

// dispPrefix marks a dispatcher's lane key (a capture's key is its ID).
const dispPrefix = "\x00dispatcher "

func dispKey(id string) string { return dispPrefix + id }

// fmtSpan renders a duration of ms, rounded for a label.
func fmtSpan(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d >= time.Hour:
		return d.Round(time.Minute).String()
	case d >= time.Minute:
		return d.Round(time.Second).String()
	}
	return d.String()
}

// laneNode is the capture whose lane shows e.
func laneNode(e traces.TimelineEvent) string {
	switch e.Kind {
	case spec.MaintainerOpStarted.String(), spec.MaintainerOpFinished.String(), spec.BackoffStarted.String(),
		spec.BackoffRecovered.String(), spec.BackoffGaveUp.String(), spec.StateChanged.String(), spec.CheckpointStored.String(),
		spec.ChangefeedCreated.String(), spec.ChangefeedResumed.String(), spec.ChangefeedRemoved.String(), spec.BackoffErrorSeen.String():
		return ""
	case spec.MaintainerCreated.String(), spec.MaintainerBootstrapped.String(), spec.MaintainerClosed.String():
		if e.Node == "" {
			return "(node not logged)"
		}
	}
	if e.Origin != "" && e.Kind == spec.DispatcherErrorReported.String() {
		return e.Origin
	}
	return e.Node
}

// shortNode shortens a capture ID for labels: the first 8 characters of a
// UUID-like ID, the rest in full.
func shortNode(n string) string {
	if len(n) > 20 && strings.Count(n, "-") >= 4 {
		return n[:8] + "…" + n[len(n)-4:]
	}
	if len(n) > 28 {
		return n[:26] + "…"
	}
	return n
}
