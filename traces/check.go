package traces

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"cdcspec/spec"
)

// Severity grades a finding.
type Severity string

// Severities, strongest first. A Violation always carries the log lines
// that show it; a Suspect is a threshold crossed (a window, a duration) or a
// violation the lines cannot fully show; InsufficientEvidence says the log
// ends or lacks the lines needed to decide; Info is context (timeline).
const (
	Violation            Severity = "violation"
	Suspect              Severity = "suspect"
	InsufficientEvidence Severity = "insufficient-evidence"
	Info                 Severity = "info"
)

func (s Severity) rank() int {
	switch s {
	case Violation:
		return 0
	case Suspect:
		return 1
	case InsufficientEvidence:
		return 2
	}
	return 3
}

// Log-only finding names (the spec's property names are used as they are).
const (
	PropOperatorStuck   = "operator-stuck"
	PropCheckpointStuck = "checkpoint-stuck"
	PropBootstrapFailed = "bootstrap-failed"
	PropCaptureSuicide  = "capture-suicide"
	PropMembership      = "membership"
	PropInternalError   = "internal-error"
	PropSendFailed      = "message-send-failed"
	PropCapturePanic    = "capture-panic"
	PropImpossibleValue = "impossible-value"
	PropBarrierStuck    = "barrier-stuck"
)

// Evidence is one log line backing a finding, with what the report's
// timeline needs to place it: its time (Unix ms; 0 if unknown), the capture
// that logged it or that it names, and the dispatcher it names.
type Evidence struct {
	File       string `json:"file"`
	Line       int    `json:"line"`
	Text       string `json:"text"`
	Time       int64  `json:"time,omitempty"`
	Node       string `json:"node,omitempty"`
	Dispatcher string `json:"dispatcher,omitempty"`
	// Untimed: the line had no timestamp of its own (see spec.Source).
	Untimed bool `json:"untimed,omitempty"`
}

// Finding is one result of a check. Findings of one (property, changefeed,
// node, symptom) are aggregated into one: Count says how many there were,
// First and Last when, Message is the first one's (at the strongest
// severity seen), Evidence the first maxEvidence lines.
type Finding struct {
	Property   string     `json:"property"`
	Severity   Severity   `json:"severity"`
	Changefeed string     `json:"changefeed"`
	Node       string     `json:"node,omitempty"`
	Symptom    string     `json:"symptom,omitempty"`
	Message    string     `json:"message"`
	Count      int64      `json:"count"`
	First      string     `json:"first,omitempty"`
	Last       string     `json:"last,omitempty"`
	Evidence   []Evidence `json:"evidence"`
	// Next says where to look next (nil for Info findings).
	Next *NextStep `json:"next,omitempty"`
	time int64
	last int64
	// untimedDowngrade: judgeUntimed lowered the severity.
	untimedDowngrade bool
	// ownDuration: the finding's duration is one TiCDC wrote in the line
	// (ownDurationSyms), not one measured between timestamps.
	ownDuration bool
}

// Time returns the finding's first time in Unix ms (0 if unknown).
func (f *Finding) Time() int64 { return f.time }

// LastTime returns the finding's last time in Unix ms (0 if unknown): for a
// finding about a silence (no backoff line, an operator that never
// finished), where the silence was last seen.
func (f *Finding) LastTime() int64 { return f.last }

// maxEvidence caps the evidence lines kept per aggregated finding.
const maxEvidence = 12

// Options tune the checker. The zero value means the defaults.
type Options struct {
	// ErrorWindow: an error re-reported for this long with no backoff line
	// is dropped (error-never-dropped). Default 60 s.
	ErrorWindow time.Duration
	// ErrorMinReports: how many maintainer reports the spec's rule needs
	// for a violation (default 2; fewer over the window is a suspicion).
	ErrorMinReports int
	// StuckAfter: an operator running, a checkpoint not moving or a failed
	// bootstrap not retried successfully for this long is suspect.
	// Default 5 min.
	StuckAfter time.Duration
	// Timeline collects each changefeed's incident timeline for the HTML
	// report (bounded; see TimelineEvent).
	Timeline bool
	// Skew tolerates clock skew between captures' logs: a violation that a
	// line within Skew would explain is downgraded or dropped. Default 2 s.
	Skew time.Duration
	// ErrorStuckDuration is the changefeeds' changefeed-error-stuck-duration
	// for error-stuck-fails (a restart later than this after the first of
	// its streak). 0: the property is not checked (the log does not say it).
	ErrorStuckDuration time.Duration
}

func (o Options) withDefaults() Options {
	if o.ErrorWindow <= 0 {
		o.ErrorWindow = 60 * time.Second
	}
	if o.ErrorMinReports <= 0 {
		o.ErrorMinReports = 2
	}
	if o.StuckAfter <= 0 {
		o.StuckAfter = 5 * time.Minute
	}
	if o.Skew <= 0 {
		o.Skew = 2 * time.Second
	}
	return o
}

// Checker runs the spec monitors and the log-only monitors over items in
// time order. Its memory is the monitors' state: per changefeed, per live
// dispatcher and operator, and bounded evidence lists; not the log's length.
type Checker struct {
	opt      Options
	window   int64 // ms
	stuck    int64
	skew     int64
	spec     *spec.Checker
	findings []Finding
	pending  []pendingFinding

	lastTime int64
	cfNames  map[string]string // bare name -> keyspace/name
	// the last changefeed spellings normalize resolved (most items name
	// the changefeed of the item before): a full name already in cfNames,
	// a bare name and the full name cfNames gave it
	cfLastFull, cfLastBare, cfLastBareFull string
	nodeSeen                               map[string]bool // nodes that logged a line of their own

	errEp       map[string]*errEpisode
	stillRun    map[cfOp]*stuckOp
	openOps     map[opRef]*Item
	redo        map[string]*stuckOp
	blocked     map[string]*stuckOp
	cpSame      map[string]*cpRun
	cpView      map[string]*Item // last coordinator-view checkpoint per changefeed
	bootFail    map[string]*Item
	bootFailErr map[string]bool           // bootFail's failure carried an error
	ignored     map[string][]ignoredTable // changefeed -> #6202 markers
	recentSNF   map[string][]Item         // changefeed -> recent SpanNotFound items
	lastLost    map[int]*Item             // input -> last session-lost line
	membership  []Evidence
	memberSeen  map[string]bool
	memberN     int
	left        map[string]bool
	joined      map[string]bool
	aborted     map[string]bool  // changefeed -> its move operator was aborted
	opStart     map[string]int64 // changefeed -> when its coordinator operator started
	leftAt      map[string]int64 // node -> when it left
	lastHandled map[string]int64 // changefeed -> last backoff line
	cpStored    map[string]bool  // changefeeds with a stored-checkpoint line
	statusSeen  map[string]bool  // changefeeds with a coordinator status line (DEBUG)
	// errHandling and live are the spec's own definitions of a handled
	// error and of a live dispatcher, fed with every item.
	errHandling *spec.ErrorHandling
	live        *spec.LiveDispatchers
	untracked   int // operators not tracked (maxTracked reached)

	// aggregation: (property, changefeed, node, symptom) -> index in findings
	agg map[aggKey]int
	// removalOnly: per changefeed, a removal-only maintainer whose line
	// does not name its node (TiCDC does not log it; a combined log has no
	// single own node), open until it closes or a maintainer bootstraps.
	removalOnly map[string]*Item
	barriers    map[cfOp]*stuckOp   // (changefeed, commitTs) -> unresolved block event
	blockWait   map[string]*waitRun // dispatcher -> WAITING block status re-sent
	bar         barrierState        // the barrier's other log-only state (barrier.go)
	timeline    timeline

	Coverage Coverage
}

// maxTracked bounds the operators tracked at once, so that operators whose
// "operator finished" line is missing cannot make memory grow with the
// log; operators beyond it are counted in untracked.
const maxTracked = 100_000

type pendingFinding struct {
	f        Finding
	deadline int64
	// settle is called with every later item until the deadline; it may
	// change the finding and returns true to drop it.
	settle func(f *Finding, it *Item) (drop bool)
}

type errEpisode struct {
	first       Item // first maintainer report (or DM error if none)
	firstDM     *Item
	last        Item
	reports     int
	dmErrors    int
	specMsg     string
	specViolate bool
	// origins are the nodes whose dispatcher managers raised the error;
	// once all of them are gone nothing re-sends it. anyOrigin: a line did
	// not name its node, so the episode never ends that way.
	origins   map[string]bool
	anyOrigin bool
}

// ignoredTable is #6202's marker: a new maintainer ignored a working
// dispatcher of a table at bootstrap. live are the table's dispatchers the
// logs showed alive then; the ignored one is among them unless the logs miss
// its creation line.
type ignoredTable struct {
	it   Item
	live []string
}

type stuckOp struct {
	first, last Item
	n           int
	maxDur      int64
}

type cpRun struct {
	first, last Item
	n           int
}

// NewChecker returns a Checker with the given options.
func NewChecker(opt Options) *Checker {
	opt = opt.withDefaults()
	c := &Checker{
		opt:    opt,
		window: opt.ErrorWindow.Milliseconds(),
		stuck:  opt.StuckAfter.Milliseconds(),
		skew:   opt.Skew.Milliseconds(),
		spec: spec.NewChecker(spec.Config{
			ErrorWindow:     opt.ErrorWindow.Milliseconds(),
			ErrorMinReports: opt.ErrorMinReports,
			ErrorStuckMs:    opt.ErrorStuckDuration.Milliseconds(),
		}),
		cfNames:     map[string]string{},
		nodeSeen:    map[string]bool{},
		errEp:       map[string]*errEpisode{},
		stillRun:    map[cfOp]*stuckOp{},
		openOps:     map[opRef]*Item{},
		redo:        map[string]*stuckOp{},
		blocked:     map[string]*stuckOp{},
		cpSame:      map[string]*cpRun{},
		cpView:      map[string]*Item{},
		bootFail:    map[string]*Item{},
		bootFailErr: map[string]bool{},
		ignored:     map[string][]ignoredTable{},
		recentSNF:   map[string][]Item{},
		lastLost:    map[int]*Item{},
		memberSeen:  map[string]bool{},
		left:        map[string]bool{},
		joined:      map[string]bool{},
		aborted:     map[string]bool{},
		opStart:     map[string]int64{},
		leftAt:      map[string]int64{},
		lastHandled: map[string]int64{},
		cpStored:    map[string]bool{},
		statusSeen:  map[string]bool{},
		errHandling: spec.NewErrorHandling(),
		live:        spec.NewLiveDispatchers(),
		Coverage:    newCoverage(),
		agg:         map[aggKey]int{},
		removalOnly: map[string]*Item{},
		barriers:    map[cfOp]*stuckOp{},
		blockWait:   map[string]*waitRun{},
		timeline:    timeline{on: opt.Timeline},
	}
	return c
}

func ev(it *Item) Evidence { return evidenceOf(&it.Event) }

func evOf(e spec.Event) (Evidence, bool) {
	if e.Source.File == "" {
		return Evidence{}, false
	}
	return evidenceOf(&e), true
}

func evidenceOf(e *spec.Event) Evidence {
	node := e.Node
	if e.Origin != "" && e.Kind == spec.DispatcherErrorReported {
		node = e.Origin // the capture whose dispatcher raised it
	}
	return Evidence{File: e.Source.File, Line: e.Source.Line, Text: e.Source.Text, Time: e.Time, Node: node, Dispatcher: e.Dispatcher, Untimed: e.Source.Untimed}
}

func fmtTime(ms int64) string {
	if ms == 0 {
		return "?"
	}
	return time.UnixMilli(ms).UTC().Format("2006/01/02 15:04:05.000")
}

func fmtTimeOrEmpty(ms int64) string {
	if ms == 0 {
		return ""
	}
	return fmtTime(ms)
}

func fmtDur(ms int64) string {
	return (time.Duration(ms) * time.Millisecond).String()
}

// normalize gives every changefeed one spelling: TiCDC logs some lines with
// "keyspace/name" and others with the bare name.
func (c *Checker) normalize(e *spec.Event) {
	cf := e.Changefeed
	if cf == "" || sameString(cf, c.cfLastFull) {
		return
	}
	if sameString(cf, c.cfLastBare) {
		e.Changefeed = c.cfLastBareFull
		return
	}
	if i := strings.LastIndexByte(cf, '/'); i >= 0 {
		name := cf[i+1:]
		if _, ok := c.cfNames[name]; !ok {
			c.cfNames[name] = cf
		}
		c.cfLastFull = cf // cfNames only grows: name stays resolved
		return
	}
	if full, ok := c.cfNames[cf]; ok {
		e.Changefeed = full
		c.cfLastBare, c.cfLastBareFull = cf, full
	}
}

// sameString is a == b, cheaper when they differ: changefeed names of one
// cluster mostly differ in their last byte ("cf-1", "cf-2").
func sameString(a, b string) bool {
	return len(a) == len(b) && (len(a) == 0 || a[len(a)-1] == b[len(b)-1]) && a == b
}

// aggKey is what findings are aggregated by.
type aggKey struct{ prop, cf, node, sym string }

// bump aggregates one more occurrence into an existing finding of the key
// without building its message; false if there is none yet.
func (c *Checker) bump(prop, cf, node, sym string, it *Item) bool {
	i, ok := c.agg[aggKey{prop, cf, node, sym}]
	if !ok {
		return false
	}
	g := &c.findings[i]
	g.Count++
	if t := it.Event.Time; t > g.last {
		g.last = t
	}
	if len(g.Evidence) < maxEvidence {
		if e := ev(it); !slices.Contains(g.Evidence, e) {
			g.Evidence = append(g.Evidence, e)
		}
	}
	return true
}

// add records a finding, aggregated with the earlier ones of its
// (property, changefeed, node, symptom): memory grows with the number of
// distinct keys, not with the log.
func (c *Checker) add(f Finding) {
	if f.last < f.time {
		f.last = f.time
	}
	key := aggKey{f.Property, f.Changefeed, f.Node, f.Symptom}
	i, ok := c.agg[key]
	if !ok {
		f.Count = 1
		if len(f.Evidence) > maxEvidence {
			f.Evidence = f.Evidence[:maxEvidence]
		}
		c.agg[key] = len(c.findings)
		c.findings = append(c.findings, f)
		return
	}
	g := &c.findings[i]
	g.Count++
	if f.Severity.rank() < g.Severity.rank() {
		g.Severity, g.Message = f.Severity, f.Message
	}
	if f.time != 0 && (g.time == 0 || f.time < g.time) {
		g.time = f.time
	}
	if f.last > g.last {
		g.last = f.last
	}
	for _, e := range f.Evidence {
		if len(g.Evidence) >= maxEvidence {
			break
		}
		if !slices.Contains(g.Evidence, e) {
			g.Evidence = append(g.Evidence, e)
		}
	}
}

// Observe feeds one item. Items must come in time order (as mergeInputs
// delivers them).
func (c *Checker) Observe(it *Item) {
	e := &it.Event
	c.normalize(e)
	if e.Time > c.lastTime {
		c.lastTime = e.Time
	}
	if e.Node != "" && isOwnNode[e.Kind] {
		c.nodeSeen[e.Node] = true
	}
	c.Coverage.count(it)
	c.settlePending(it)

	switch e.Kind {
	case spec.CheckpointStored:
		c.cpStored[e.Changefeed] = true
	case spec.StatusReceived:
		c.statusSeen[e.Changefeed] = true
	}
	c.markUnsuccessfulOp(it)
	if e.Kind != spec.KindUnknown {
		for _, v := range c.spec.Observe(*e) {
			c.specViolation(v, it)
		}
	}
	c.observeErrors(it)
	c.observeOperators(it)
	c.observeCheckpoints(it)
	c.observeBootstrap(it)
	c.observeDispatchers(it)
	c.observeCapture(it)
	c.observeSymptoms(it)
	c.observeBarriers(it)
	c.timeline.observe(it)
	if e.Kind != spec.KindUnknown {
		// a symptom-only item changes no dispatcher's life
		c.live.Observe(e)
	}
}

func (c *Checker) settlePending(it *Item) {
	if len(c.pending) == 0 {
		return
	}
	kept := c.pending[:0]
	for _, p := range c.pending {
		if it.Event.Time > p.deadline {
			c.add(p.f)
			continue
		}
		if p.settle != nil && p.settle(&p.f, it) {
			continue
		}
		kept = append(kept, p)
	}
	c.pending = kept
}

// markUnsuccessfulOp sets Reason on a coordinator "operator finished" line
// that TiCDC logs the same whether the operator succeeded or not: an add or
// move whose destination left since it started was canceled, a move after
// "move maintainer operator aborted" was aborted (spec: such an operator
// marks nothing replicating). cdcspec's impl logs these with no dest.
func (c *Checker) markUnsuccessfulOp(it *Item) {
	e := &it.Event
	switch {
	case e.Kind == spec.MaintainerOpStarted:
		delete(c.aborted, e.Changefeed)
		c.opStart[e.Changefeed] = e.Time
	case it.Msg == "move maintainer operator aborted, mark changefeed absent" && e.Changefeed != "":
		c.aborted[e.Changefeed] = true
	case e.Kind == spec.NodeLeft || e.Kind == spec.CaptureSuicide:
		if e.Node != "" {
			c.leftAt[e.Node] = e.Time
		}
	case e.Kind == spec.MaintainerOpFinished && e.Reason == "":
		if c.aborted[e.Changefeed] {
			e.Reason = "aborted"
		} else if t, ok := c.leftAt[e.Node]; ok && e.Node != "" && t >= c.opStart[e.Changefeed] {
			e.Reason = "canceled"
		}
		delete(c.aborted, e.Changefeed)
		delete(c.opStart, e.Changefeed)
	}
}

// findingFromViolation converts a spec violation; with no evidence line it
// can only be a suspicion.
func findingFromViolation(v spec.Violation) Finding {
	f := Finding{Property: string(v.Property), Severity: Violation, Changefeed: v.Changefeed, Node: v.Node, Message: v.Message}
	seen := map[Evidence]bool{}
	for _, e := range v.Evidence {
		if x, ok := evOf(e); ok && !seen[x] {
			seen[x] = true
			f.Evidence = append(f.Evidence, x)
		}
		if f.time == 0 || (e.Time != 0 && e.Time < f.time) {
			f.time = e.Time
		}
	}
	if len(f.Evidence) == 0 {
		f.Severity = Suspect
		f.Message += " (no log line shows it: the events carry no source)"
	}
	return f
}

func (c *Checker) specViolation(v spec.Violation, it *Item) {
	// The settle closures below outlive the call; it points into a parse
	// chunk that mergeInputs reuses once consumed (see fn's contract there).
	held := *it
	it = &held
	f := findingFromViolation(v)
	switch v.Property {
	case spec.ErrorNeverDropped:
		if ep := c.errEp[v.Changefeed]; ep != nil {
			ep.specViolate = true
			ep.specMsg = v.Message
			return
		}
		c.add(f)
	case spec.AtMostOneDispatcherPerSpan:
		var other spec.Event
		if len(v.Evidence) > 0 {
			other = v.Evidence[0]
		}
		// #6202's marker for the same table explains the duplicate.
		if list := c.ignored[v.Changefeed]; len(list) > 0 {
			kept := list[:0]
			for _, ig := range list {
				if ig.it.Event.Span.Table == it.Event.Span.Table {
					f.Evidence = append([]Evidence{ev(&ig.it)}, f.Evidence...)
					f.Message += fmt.Sprintf("; the new maintainer had ignored a working dispatcher of table %d at bootstrap (\"found a working table that is not in initial table map\", #6202)", ig.it.Event.Span.Table)
					continue
				}
				kept = append(kept, ig)
			}
			c.ignored[v.Changefeed] = kept
		}
		for _, s := range c.recentSNF[v.Changefeed] {
			f.Evidence = append(f.Evidence, ev(&s))
		}
		c.pending = append(c.pending, pendingFinding{f: f, deadline: it.Event.Time + c.skew,
			settle: func(f *Finding, x *Item) bool {
				xe := &x.Event
				if xe.Changefeed != v.Changefeed || f.Severity != Violation {
					return false
				}
				if x.file != it.file && ((xe.Kind == spec.DispatcherRemoved && xe.Dispatcher == other.Dispatcher) ||
					(xe.Kind == spec.DispatcherManagerClosed && xe.Node == other.Node && other.Node != "")) {
					f.Severity = Suspect
					f.Message += fmt.Sprintf("; but dispatcher %s was removed %s later, within the clock-skew tolerance %s between captures' logs",
						other.Dispatcher, fmtDur(xe.Time-it.Event.Time), fmtDur(c.skew))
					f.Evidence = append(f.Evidence, ev(x))
				}
				if xe.Kind == spec.SpanNotFound {
					f.Evidence = append(f.Evidence, ev(x))
				}
				return false
			}})
	case spec.RunningMaintainerBootstrapped:
		if ro := c.removalOnly[v.Changefeed]; len(v.Evidence) <= 1 && ro != nil && ro.Event.Time <= it.Event.Time {
			// #3952 in a log that does not say where the removal-only
			// maintainer runs: it is the only maintainer of the changefeed
			// that can have reported Working without bootstrapping.
			f.Severity = Suspect
			f.Message += fmt.Sprintf("; a removal-only maintainer of the changefeed (\"changefeed maintainer started\" with checkpointTs=1, which never bootstraps) started at %s and had not closed, and no maintainer bootstrapped since; its line does not name its capture (several captures' lines in one log), so it is most likely the maintainer the operator saw Working (#3952)",
				fmtTime(ro.Event.Time))
			f.Evidence = append([]Evidence{ev(ro)}, f.Evidence...)
		} else if len(v.Evidence) <= 1 {
			// "no maintainer runs there": an absence in the logs.
			if c.nodeSeen[v.Node] {
				f.Severity = Suspect
				f.Message += "; the log of that node has no \"changefeed maintainer started\" line for it"
			} else {
				f.Severity = InsufficientEvidence
				f.Message += "; the logs contain no line of node " + v.Node + ", so its maintainer cannot be seen"
			}
		}
		c.pending = append(c.pending, pendingFinding{f: f, deadline: it.Event.Time + c.skew,
			settle: func(f *Finding, x *Item) bool {
				xe := &x.Event
				// Lines of one capture share a clock: no tolerance there.
				if xe.Kind == spec.MaintainerBootstrapped && xe.Changefeed == v.Changefeed && xe.Node == v.Node &&
					x.file != it.file && f.Severity == Violation {
					f.Severity = Suspect
					f.Message += fmt.Sprintf("; but the maintainer logged \"changefeed maintainer bootstrapped\" %s later in another capture's log, within the clock-skew tolerance %s",
						fmtDur(xe.Time-it.Event.Time), fmtDur(c.skew))
					f.Evidence = append(f.Evidence, ev(x))
				}
				return false
			}})
	case spec.CheckpointAdvancesAfterHeal:
		if !c.cpStored[v.Changefeed] && !c.statusSeen[v.Changefeed] {
			// The stored checkpoint is logged only at DEBUG: without those
			// lines the monitor judged the creation/resume baseline. (With
			// the coordinator's DEBUG status lines present, a missing
			// stored-checkpoint line means none was stored.)
			f.Severity = InsufficientEvidence
			f.Message += "; but this log has no stored-checkpoint line for the changefeed (TiCDC logs it only at DEBUG), so the checkpoint may well have advanced"
		}
		c.add(f)
	default:
		c.add(f)
	}
}

// ---------------------------------------------------------------------------
// log-only symptoms: internal errors, failed sends, panics, impossible
// values, discarded errors, removal-only maintainers of unknown node.

func (c *Checker) observeSymptoms(it *Item) {
	e := &it.Event
	switch e.Kind {
	case spec.MaintainerCreated:
		if e.RemovalOnly && e.Node == "" {
			x := *it
			c.removalOnly[e.Changefeed] = &x
		}
	case spec.MaintainerBootstrapped, spec.ChangefeedRemoved:
		delete(c.removalOnly, e.Changefeed)
	case spec.MaintainerClosed:
		if e.Node == "" && e.Checkpoint == 1 {
			delete(c.removalOnly, e.Changefeed)
		}
	}
	if it.impossible != "" && !c.bump(PropImpossibleValue, e.Changefeed, e.Node, it.Msg, it) {
		c.add(Finding{Property: PropImpossibleValue, Severity: Suspect, Changefeed: e.Changefeed, Node: e.Node, Symptom: it.Msg, time: e.Time,
			Message: fmt.Sprintf("a checkpoint or start ts is a TSO (neither 0 nor MaxUint64 nor -1), but %q reports %s (the #4703 and #4845 class: a changefeed or dispatcher started or checkpointed at an impossible ts)",
				it.Msg, it.impossible),
			Evidence: []Evidence{ev(it)}})
	}
	switch it.Sym {
	case SymInternalError, SymSendFailed, SymErrorDiscarded, SymImpossibleValue, SymPanic:
		if c.bump(symptomProp[it.Sym], e.Changefeed, e.Node, it.Msg, it) {
			return
		}
	default:
		return // (most items: no finding to build)
	}
	var f Finding
	switch it.Sym {
	case SymInternalError:
		f = Finding{Property: PropInternalError, Severity: Suspect,
			Message: fmt.Sprintf("TiCDC logged %q, an error its code treats as a state it should not reach or an internal step that failed%s", it.Msg, errSuffix(e.Err))}
	case SymSendFailed:
		f = Finding{Property: PropSendFailed, Severity: Info,
			Message: fmt.Sprintf("a control message was not sent or received (%q%s); the protocol re-sends it, but a long run of these delays every decision that needs it", it.Msg, errSuffix(e.Err))}
	case SymErrorDiscarded:
		f = Finding{Property: string(spec.ErrorNeverDropped), Severity: Suspect,
			Message: "every error must reach the backoff, but a dispatcher discarded an error because its error channel was full (\"error channel is full, discard error\"); unless an earlier error of the changefeed reaches the backoff, this one is lost" + errSuffix(e.Err)}
	case SymImpossibleValue:
		f = Finding{Property: PropImpossibleValue, Severity: Suspect,
			Message: fmt.Sprintf("TiCDC rejected an impossible timestamp: %q (the #4703 and #4845 class)", it.Msg)}
	case SymPanic:
		if strings.HasPrefix(it.caller, "maintainer") && it.Msg != "" {
			return // bootstrap-failed (observeBootstrap)
		}
		if it.Msg == "" {
			return
		}
		f = Finding{Property: PropCapturePanic, Severity: Suspect,
			Message: fmt.Sprintf("TiCDC panicked (%s %q in %s): the capture exits and its dispatchers and maintainers are rescheduled", it.Level, it.Msg, it.caller)}
	default:
		return
	}
	f.Changefeed, f.Node, f.Symptom, f.time = e.Changefeed, e.Node, it.Msg, e.Time
	f.Evidence = []Evidence{ev(it)}
	c.add(f)
}

// symptomProp is the finding each aggregated symptom feeds.
var symptomProp = map[Symptom]string{
	SymInternalError: PropInternalError, SymSendFailed: PropSendFailed, SymErrorDiscarded: string(spec.ErrorNeverDropped),
	SymImpossibleValue: PropImpossibleValue, SymPanic: PropCapturePanic,
}

func errSuffix(err string) string {
	if err == "" {
		return ""
	}
	if len(err) > 160 {
		err = err[:160] + "…"
	}
	return fmt.Sprintf(", error %q", err)
}

// ---------------------------------------------------------------------------
// error-never-dropped: episodes of a changefeed's error, graded by window.

func (c *Checker) observeErrors(it *Item) {
	e := &it.Event
	handled := c.errHandling.Handled(e)
	if e.Kind == spec.NodeLeft || e.Kind == spec.CaptureSuicide {
		c.errorSourceGone(e.Node, it)
	}
	if e.Changefeed == "" {
		return
	}
	ep := c.errEp[e.Changefeed]
	switch {
	case e.Kind == spec.DispatcherErrorReported || e.Kind == spec.SinkError:
		if ep == nil {
			ep = &errEpisode{first: *it, origins: map[string]bool{}}
			c.errEp[e.Changefeed] = ep
		}
		origin := e.Origin
		if e.Kind == spec.SinkError {
			origin = e.Node
			ep.dmErrors++
			if ep.firstDM == nil {
				x := *it
				ep.firstDM = &x
			}
		} else {
			if ep.reports == 0 {
				ep.first = *it
			}
			ep.reports++
			ep.last = *it
		}
		if origin == "" {
			ep.anyOrigin = true
		} else {
			ep.origins[origin] = true
		}
	case handled:
		// Progress (a stored checkpoint that advanced, the backoff's
		// progress) handles the error without putting the changefeed in
		// the backoff.
		if e.Kind != spec.CheckpointStored && e.Kind != spec.BackoffRecovered {
			c.lastHandled[e.Changefeed] = e.Time
		}
		if ep != nil {
			delete(c.errEp, e.Changefeed)
			if ep.specViolate {
				c.closeEpisode(e.Changefeed, ep, it, false)
			}
		}
	case ep != nil && (e.Kind == spec.DispatcherManagerClosed || it.Sym == SymDispatcherManagerClosing || e.Kind == spec.MaintainerClosed):
		c.endEpisode(e.Changefeed, ep, it)
	}
}

// errorSourceGone ends the episodes whose every error source was on node:
// its dispatcher manager died with it, so nothing re-sends the error.
func (c *Checker) errorSourceGone(node string, it *Item) {
	if node == "" {
		return
	}
	for _, cf := range sortedKeysOf(c.errEp) {
		ep := c.errEp[cf]
		if !ep.origins[node] {
			continue
		}
		delete(ep.origins, node)
		if len(ep.origins) == 0 && !ep.anyOrigin {
			c.endEpisode(cf, ep, it)
		}
	}
}

// endEpisode closes an episode whose error will not be re-sent: its
// dispatcher manager or maintainer closed, or its node is gone.
func (c *Checker) endEpisode(cf string, ep *errEpisode, it *Item) {
	delete(c.errEp, cf)
	if t, ok := c.lastHandled[cf]; ok && !ep.specViolate && ep.first.Event.Time-t <= c.window {
		// The changefeed was already in the backoff (an earlier error
		// reached it); this close is the stop the backoff ordered, and
		// errors raised meanwhile need no backoff of their own.
		return
	}
	c.closeEpisode(cf, ep, it, false)
}

// closeEpisode grades an error episode that no backoff line handled. end is
// the line that ended it (the DM closing, the maintainer closing), or nil at
// the end of the logs.
func (c *Checker) closeEpisode(cf string, ep *errEpisode, end *Item, atEOF bool) {
	start := ep.first.Event.Time
	if ep.firstDM != nil && ep.firstDM.Event.Time < start {
		start = ep.firstDM.Event.Time
	}
	endTime := c.lastTime
	if end != nil {
		endTime = end.Event.Time
	}
	dur := endTime - start
	f := Finding{Property: string(spec.ErrorNeverDropped), Changefeed: cf, time: start}
	if ep.firstDM != nil {
		f.Evidence = append(f.Evidence, ev(ep.firstDM))
	}
	if ep.reports > 0 {
		f.Evidence = append(f.Evidence, ev(&ep.first))
		if ep.reports > 1 {
			f.Evidence = append(f.Evidence, ev(&ep.last))
		}
	}
	if end != nil {
		f.Evidence = append(f.Evidence, ev(end))
	}
	errText := ep.first.Event.Err
	if len(errText) > 160 {
		errText = errText[:160] + "…"
	}
	counts := fmt.Sprintf("the maintainer logged \"dispatcher report an error\" %d time(s)", ep.reports)
	if ep.reports > 1 {
		counts += fmt.Sprintf(" (%d re-sends) between %s and %s", ep.reports-1, fmtTime(ep.first.Event.Time), fmtTime(ep.last.Event.Time))
	} else if ep.reports == 1 {
		counts += " at " + fmtTime(ep.first.Event.Time)
	}
	if ep.dmErrors > 0 {
		counts += fmt.Sprintf(", the dispatcher manager logged \"Event Dispatcher Manager Meets Error\" %d time(s)", ep.dmErrors)
	}
	absence := fmt.Sprintf("no backoff line for the changefeed (\"changefeed maintainer report an error\", \"changefeed meets an error, will be stopped\", a state change to warning or failed) between %s and %s",
		fmtTime(start), fmtTime(endTime))
	ending := "the logs end"
	if end != nil {
		ending = fmt.Sprintf("%q at %s", end.Msg, fmtTime(endTime))
	}
	switch {
	case ep.specViolate:
		f.Severity = Violation
		f.Message = fmt.Sprintf("%s; %s; %s (error %q)", ep.specMsg, counts, absence, errText)
	case ep.reports == 0:
		f.Severity = Suspect
		if dur < c.window {
			f.Severity = InsufficientEvidence
		}
		f.Message = fmt.Sprintf("a sink error reached the dispatcher manager but no maintainer ever reported it and it never reached the backoff within %s (the maintainer drops errors before it bootstraps; or its log is missing): %s; %s; %s; error %q",
			fmtDur(dur), counts, absence, ending, errText)
	case dur >= c.window:
		f.Severity = Suspect
		f.Message = fmt.Sprintf("a retryable dispatcher error must reach the backoff, but it did not for %s, past the %s window: %s; %s; no state change was logged before %s (error %q). The logs show too few re-reports (%d, need %d) to prove every re-send was dropped",
			fmtDur(dur), fmtDur(c.window), counts, absence, ending, errText, ep.reports, c.opt.ErrorMinReports)
	default:
		f.Severity = InsufficientEvidence
		f.Message = fmt.Sprintf("a dispatcher error has not reached the backoff, but %s only %s after it, within the %s window: %s; error %q",
			ending, fmtDur(dur), fmtDur(c.window), counts, errText)
	}
	c.add(f)
}

// ---------------------------------------------------------------------------
// operator-stuck

// opRef keys an open operator: its role ('c' the coordinator's, 'm' a
// maintainer's), changefeed and dispatcher.
type opRef struct {
	role           byte
	cf, dispatcher string
}

// String is the key as "role|changefeed|dispatcher": finishing walks the
// open operators in this order.
func (k opRef) String() string { return string(k.role) + "|" + k.cf + "|" + k.dispatcher }

func opKey(e *spec.Event) opRef {
	role := byte('m')
	if e.Kind == spec.MaintainerOpStarted || e.Kind == spec.MaintainerOpFinished {
		role = 'c'
	}
	return opRef{role, e.Changefeed, e.Dispatcher}
}

// cfOp keys what the checker tracks per changefeed and item OpID (a
// still-running operator, an unresolved block event): a struct, so that
// an item's lookup concatenates and allocates nothing.
type cfOp struct{ cf, op string }

// String is the key as "changefeed|OpID": finishing walks the keys in
// this order.
func (k cfOp) String() string { return k.cf + "|" + k.op }

// sortedKeysBy returns m's keys in the order of their String.
func sortedKeysBy[K interface {
	comparable
	String() string
}, V any](m map[K]V) []K {
	type keyed struct {
		s string
		k K
	}
	all := make([]keyed, 0, len(m))
	for k := range m {
		all = append(all, keyed{k.String(), k})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].s < all[j].s })
	keys := make([]K, len(all))
	for i := range all {
		keys[i] = all[i].k
	}
	return keys
}

func (c *Checker) observeOperators(it *Item) {
	e := &it.Event
	switch {
	case it.Sym == SymOperatorStillRunning:
		k := cfOp{e.Changefeed, it.OpID}
		s := c.stillRun[k]
		if s == nil && len(c.stillRun) >= maxTracked {
			c.untracked++
			return
		}
		if s == nil {
			s = &stuckOp{first: *it}
			c.stillRun[k] = s
		}
		s.last = *it
		s.n++
		if it.Dur > s.maxDur {
			s.maxDur = it.Dur
		}
	case e.Kind == spec.MaintainerOpStarted || e.Kind == spec.DispatcherOpStarted:
		if len(c.openOps) >= maxTracked {
			c.untracked++
			return
		}
		x := *it
		c.openOps[opKey(e)] = &x
	case e.Kind == spec.MaintainerOpFinished || e.Kind == spec.DispatcherOpFinished:
		delete(c.openOps, opKey(e))
		delete(c.stillRun, cfOp{e.Changefeed, it.OpID})
	case e.Kind == spec.MaintainerClosed || e.Kind == spec.ChangefeedRemoved:
		// the maintainer and its operators are gone
		for k, op := range c.openOps {
			if op.Event.Changefeed == e.Changefeed && k.role == 'm' {
				delete(c.openOps, k)
			}
		}
	}
}

func (c *Checker) finishOperators() {
	if c.untracked > 0 {
		c.add(Finding{Property: PropOperatorStuck, Severity: InsufficientEvidence,
			Message: fmt.Sprintf("%d operator line(s) were not tracked: more than %d operators were open at once (their \"operator finished\" lines may be missing)", c.untracked, maxTracked)})
	}
	for _, k := range sortedKeysBy(c.stillRun) {
		s := c.stillRun[k]
		if s.maxDur < c.stuck {
			continue
		}
		f := Finding{Property: PropOperatorStuck, Severity: Suspect, Changefeed: s.first.Event.Changefeed, time: s.first.Event.Time, ownDuration: true,
			Message: fmt.Sprintf("an operator must finish, but TiCDC reported %q still in the running queue %d time(s), %s after it was created (threshold %s), last at %s",
				s.first.Event.Reason, s.n, fmtDur(s.maxDur), fmtDur(c.stuck), fmtTime(s.last.Event.Time))}
		for _, k := range []opRef{{'m', s.first.Event.Changefeed, s.first.OpID}, {'c', s.first.Event.Changefeed, ""}} {
			if op := c.openOps[k]; op != nil && (k.role == 'm' || s.first.OpID == op.Event.Changefeed || strings.Contains(s.first.Event.Reason, "maintainer operator")) {
				f.Evidence = append(f.Evidence, ev(op))
				delete(c.openOps, k)
				break
			}
		}
		f.Evidence = append(f.Evidence, ev(&s.first))
		if s.n > 1 {
			f.Evidence = append(f.Evidence, ev(&s.last))
		}
		c.add(f)
	}
	for _, k := range sortedKeysBy(c.openOps) {
		op := c.openOps[k]
		age := c.lastTime - op.Event.Time
		if age < c.stuck {
			continue
		}
		what := string(op.Event.Op) + " maintainer operator"
		if op.Event.Kind == spec.DispatcherOpStarted {
			what = fmt.Sprintf("%s dispatcher operator for dispatcher %s", op.Event.Op, op.Event.Dispatcher)
		}
		c.add(Finding{Property: PropOperatorStuck, Severity: Suspect, Changefeed: op.Event.Changefeed, time: op.Event.Time,
			Message: fmt.Sprintf("an operator must finish, but the %s added to the running queue at %s has no \"operator finished\" line in the %s the logs continue after it (threshold %s)",
				what, fmtTime(op.Event.Time), fmtDur(age), fmtDur(c.stuck)),
			Evidence: []Evidence{ev(op)}})
	}
}

// ---------------------------------------------------------------------------
// checkpoint-stuck and the coordinator's view of checkpoint-monotonic

func (c *Checker) observeCheckpoints(it *Item) {
	e := &it.Event
	cf := e.Changefeed
	switch it.Sym {
	case SymRedoMetaStuck:
		s := c.redo[cf]
		if s == nil {
			s = &stuckOp{first: *it}
			c.redo[cf] = s
		}
		s.last, s.n = *it, s.n+1
		if it.Dur > s.maxDur {
			s.maxDur = it.Dur
		}
	case SymCheckpointBlocked:
		s := c.blocked[cf]
		if s == nil {
			s = &stuckOp{first: *it}
			c.blocked[cf] = s
		}
		s.last, s.n = *it, s.n+1
	}
	switch e.Kind {
	case spec.ChangefeedResumed, spec.ChangefeedCreated, spec.ChangefeedRemoved:
		delete(c.cpView, cf)
		c.endCpRun(cf)
	case spec.BackoffErrorSeen, spec.BackoffStarted, spec.BackoffGaveUp, spec.BackoffRecovered, spec.CheckpointStored:
		if cf == "" || e.Checkpoint == 0 {
			return
		}
		if prev := c.cpView[cf]; prev != nil && e.Kind != spec.CheckpointStored && e.Checkpoint < prev.Event.Checkpoint {
			c.add(Finding{Property: string(spec.CheckpointMonotonic), Severity: Suspect, Changefeed: cf, time: e.Time,
				Message: fmt.Sprintf("the stored checkpoint must never go down, but the coordinator's backoff lines show it at %d, then %d (no resume in between); these lines carry the coordinator's in-memory checkpoint, the persisted one is logged only at DEBUG",
					prev.Event.Checkpoint, e.Checkpoint),
				Evidence: []Evidence{ev(prev), ev(it)}})
		}
		x := *it
		c.cpView[cf] = &x
		r := c.cpSame[cf]
		if r != nil && r.first.Event.Checkpoint != e.Checkpoint {
			c.endCpRun(cf)
			r = nil
		}
		if r == nil {
			c.cpSame[cf] = &cpRun{first: *it, last: *it, n: 1}
		} else {
			r.last, r.n = *it, r.n+1
		}
	}
	if it.Sym == SymNone && e.Kind == spec.BackoffRecovered {
		delete(c.blocked, cf)
	}
}

func (c *Checker) endCpRun(cf string) {
	r := c.cpSame[cf]
	if r == nil {
		return
	}
	delete(c.cpSame, cf)
	d := r.last.Event.Time - r.first.Event.Time
	if r.n < 2 || d < c.stuck {
		return
	}
	c.add(Finding{Property: PropCheckpointStuck, Severity: Suspect, Changefeed: cf, time: r.first.Event.Time,
		Message: fmt.Sprintf("the checkpoint must advance, but %d coordinator lines over %s (threshold %s) all carry checkpoint %d (physical time %s)",
			r.n, fmtDur(d), fmtDur(c.stuck), r.first.Event.Checkpoint, fmtTime(int64(r.first.Event.Checkpoint>>18))),
		Evidence: []Evidence{ev(&r.first), ev(&r.last)}})
}

func (c *Checker) finishCheckpoints() {
	for _, cf := range sortedKeysOf(c.cpSame) {
		c.endCpRun(cf)
	}
	for _, cf := range sortedKeysOf(c.redo) {
		s := c.redo[cf]
		sev := Suspect
		f := Finding{Property: PropCheckpointStuck, Severity: sev, Changefeed: cf, time: s.first.Event.Time, ownDuration: true,
			Message: fmt.Sprintf("the checkpoint must advance once faults heal, but TiCDC itself reported the redo meta unchanged %d time(s), for up to %s (\"owner may be stuck\", tiflow#9595); checkpoint %d",
				s.n, fmtDur(s.maxDur), s.last.Event.Checkpoint)}
		f.Evidence = append(f.Evidence, ev(&s.first))
		if s.n > 1 {
			f.Evidence = append(f.Evidence, ev(&s.last))
		}
		c.add(f)
	}
	for _, cf := range sortedKeysOf(c.blocked) {
		s := c.blocked[cf]
		d := s.last.Event.Time - s.first.Event.Time
		if d < c.stuck {
			continue
		}
		c.add(Finding{Property: PropCheckpointStuck, Severity: Suspect, Changefeed: cf, time: s.first.Event.Time,
			Message: fmt.Sprintf("the checkpoint must advance, but the maintainer logged that it cannot advance it %d time(s) over %s (threshold %s)",
				s.n, fmtDur(d), fmtDur(c.stuck)),
			Evidence: []Evidence{ev(&s.first), ev(&s.last)}})
	}
}

// ---------------------------------------------------------------------------
// bootstrap-failed

func (c *Checker) observeBootstrap(it *Item) {
	e := &it.Event
	switch {
	case e.Kind == spec.MaintainerBootstrapFailed || it.Sym == SymBootstrapFailure || strings.Contains(e.Err, errInitTableTrigger):
		withErr := e.Err != "" || it.Level >= LevelError
		if it.Sym == SymBootstrapFailure {
			e.Err = strings.TrimPrefix(it.Msg+": "+e.Err, ": ")
		}
		if c.bootFail[e.Changefeed] == nil {
			x := *it
			c.bootFail[e.Changefeed] = &x
			c.bootFailErr[e.Changefeed] = withErr
		}
	case e.Kind == spec.MaintainerBootstrapped:
		if b := c.bootFail[e.Changefeed]; b != nil {
			delete(c.bootFail, e.Changefeed)
			delete(c.bootFailErr, e.Changefeed)
			c.add(Finding{Property: PropBootstrapFailed, Severity: Info, Changefeed: e.Changefeed, time: b.Event.Time,
				Message:  fmt.Sprintf("a maintainer bootstrap failed at %s and a later bootstrap succeeded %s after it", fmtTime(b.Event.Time), fmtDur(e.Time-b.Event.Time)),
				Evidence: []Evidence{ev(b), ev(it)}})
		}
	case it.Sym == SymPanic && (it.Msg == "" || strings.HasPrefix(it.caller, "maintainer")):
		c.add(Finding{Property: PropBootstrapFailed, Severity: Suspect, Changefeed: e.Changefeed, time: e.Time,
			Message:  fmt.Sprintf("a maintainer panicked (%s); a maintainer that panics during bootstrap never becomes working", it.Level),
			Evidence: []Evidence{ev(it)}})
	}
}

// errInitTableTrigger is TiCDC's error for a table trigger dispatcher that
// could not be created or initialised during a dispatcher manager's
// bootstrap: a record carrying it is a bootstrap failure, whatever its
// message.
const errInitTableTrigger = "ErrChangefeedInitTableTriggerDispatcherFailed"

func (c *Checker) finishBootstrap() {
	for _, cf := range sortedKeysOf(c.bootFail) {
		b := c.bootFail[cf]
		after := c.lastTime - b.Event.Time
		f := Finding{Property: PropBootstrapFailed, Changefeed: cf, time: b.Event.Time, Evidence: []Evidence{ev(b)}}
		if after >= c.stuck {
			f.Severity = Suspect
			f.Message = fmt.Sprintf("a maintainer bootstrap failed (error %q) and no later \"changefeed maintainer bootstrapped\" line follows in the %s the logs continue (threshold %s); the changefeed has no working maintainer",
				b.Event.Err, fmtDur(after), fmtDur(c.stuck))
		} else if c.bootFailErr[cf] {
			// TiCDC failed the bootstrap with an error: the changefeed has
			// no working maintainer until a retry succeeds, and none
			// did in the logs (issue 30)
			f.Severity = Suspect
			f.ownDuration = true // judged on the error, not on --stuck-after
			f.Message = fmt.Sprintf("a maintainer bootstrap failed with an error (%q) and no later \"changefeed maintainer bootstrapped\" line follows; the logs end %s later, before --stuck-after (%s), so a retry may still succeed",
				b.Event.Err, fmtDur(after), fmtDur(c.stuck))
		} else {
			f.Severity = InsufficientEvidence
			f.Message = fmt.Sprintf("a maintainer bootstrap failed (error %q); the logs end %s later, too soon to tell whether a retry succeeded", b.Event.Err, fmtDur(after))
		}
		c.add(f)
	}
}

// ---------------------------------------------------------------------------
// at-most-one-dispatcher-per-span: log-only symptoms

func (c *Checker) observeDispatchers(it *Item) {
	e := &it.Event
	switch {
	case e.Kind == spec.WorkingTableIgnored:
		c.ignored[e.Changefeed] = append(c.ignored[e.Changefeed], ignoredTable{it: *it, live: c.live.OfTable(e.Changefeed, e.Span.Table)})
		if len(c.ignored[e.Changefeed]) > 64 {
			c.ignored[e.Changefeed] = c.ignored[e.Changefeed][1:]
		}
	case e.Kind == spec.SpanNotFound:
		l := append(c.recentSNF[e.Changefeed], *it)
		if len(l) > 4 {
			l = l[len(l)-4:]
		}
		c.recentSNF[e.Changefeed] = l
	case e.Kind == spec.DispatcherCreated && !e.Merge && e.Span.Table != 0:
		list := c.ignored[e.Changefeed]
		for i := range list {
			if list[i].it.Event.Span.Table != e.Span.Table {
				continue
			}
			if known := list[i].live; len(known) > 0 {
				// The logs showed the table's dispatchers when the maintainer
				// ignored one: the spec monitor judges the new dispatcher
				// against them exactly. If they are all gone, the marker is
				// spent.
				gone := true
				for _, k := range known {
					gone = gone && !c.live.Live(e.Changefeed, k)
				}
				if gone {
					c.ignored[e.Changefeed] = append(list[:i:i], list[i+1:]...)
				}
				break
			}
			ig := &list[i].it
			f := Finding{Property: string(spec.AtMostOneDispatcherPerSpan), Severity: Suspect, Changefeed: e.Changefeed, time: ig.Event.Time,
				Message: fmt.Sprintf("at most one dispatcher may replicate a span, but at %s the new maintainer ignored a working dispatcher of table %d at bootstrap (\"found a working table that is not in initial table map\", #6202) and at %s dispatcher %s was created for the same table on node %s; unless the ignored dispatcher was removed without a log line, two dispatchers replicate table %d",
					fmtTime(ig.Event.Time), e.Span.Table, fmtTime(e.Time), e.Dispatcher, orUnknown(e.Node), e.Span.Table),
				Evidence: []Evidence{ev(ig), ev(it)}}
			for _, s := range c.recentSNF[e.Changefeed] {
				f.Evidence = append(f.Evidence, ev(&s))
			}
			c.add(f)
			c.ignored[e.Changefeed] = append(list[:i:i], list[i+1:]...)
			break
		}
	case it.Sym == SymOverlapRemoved:
		c.add(Finding{Property: string(spec.AtMostOneDispatcherPerSpan), Severity: Suspect, Changefeed: e.Changefeed, time: e.Time,
			Message:  "at most one dispatcher may replicate a span, but a bootstrap found two overlapping dispatchers of one table and removed one (\"remove unexpected overlapping dispatcher reported during bootstrap\"); both were live until then",
			Evidence: []Evidence{ev(it)}})
	}
}

func (c *Checker) finishDispatchers() {
	for _, cf := range sortedKeysOf(c.ignored) {
		for i := range c.ignored[cf] {
			ig := &c.ignored[cf][i].it
			c.add(Finding{Property: string(spec.AtMostOneDispatcherPerSpan), Severity: Info, Changefeed: cf, time: ig.Event.Time,
				Message:  fmt.Sprintf("a new maintainer ignored a working dispatcher of table %d at bootstrap (#6202's marker); no second dispatcher for the table appears in the logs", ig.Event.Span.Table),
				Evidence: []Evidence{ev(ig)}})
		}
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

// ---------------------------------------------------------------------------
// capture suicide and membership (info: the timeline)

func (c *Checker) observeCapture(it *Item) {
	e := &it.Event
	switch {
	case it.Sym == SymSessionLost:
		x := *it
		c.lastLost[it.file] = &x
	case e.Kind == spec.CaptureSuicide:
		f := Finding{Property: PropCaptureSuicide, Severity: Info, time: e.Time,
			Message: fmt.Sprintf("capture %s exited at %s with error %q; its dispatchers and maintainers are gone and will be rescheduled", orUnknown(e.Node), fmtTime(e.Time), e.Err)}
		if l := c.lastLost[it.file]; l != nil && e.Time-l.Event.Time <= 60_000 {
			f.Evidence = append(f.Evidence, ev(l))
			f.Message += "; it lost its etcd session first"
		}
		f.Evidence = append(f.Evidence, ev(it))
		c.add(f)
	}
	if it.Sym == SymMembership || e.Kind == spec.NodeJoined || e.Kind == spec.NodeLeft {
		if e.Kind == spec.NodeLeft {
			c.left[e.Node] = true
		}
		if e.Kind == spec.NodeJoined {
			c.joined[e.Node] = true
		}
		x := ev(it)
		key := x.File + ":" + fmt.Sprint(x.Line)
		if !c.memberSeen[key] {
			c.memberN++
			if len(c.memberSeen) < 1024 {
				c.memberSeen[key] = true
			}
			if len(c.membership) < 20 {
				c.membership = append(c.membership, x)
			}
		}
	}
}

func (c *Checker) finishCapture() {
	if c.memberN == 0 {
		return
	}
	msg := fmt.Sprintf("%d membership line(s)", c.memberN)
	if len(c.left) > 0 {
		msg += "; nodes left: " + strings.Join(sortedKeysOf(c.left), ", ")
	}
	if len(c.joined) > 0 {
		msg += "; nodes joined: " + strings.Join(sortedKeysOf(c.joined), ", ")
	}
	if len(c.membership) < c.memberN {
		msg += fmt.Sprintf(" (first %d shown)", len(c.membership))
	}
	c.add(Finding{Property: PropMembership, Severity: Info, Message: msg, Evidence: c.membership})
}

// Finish ends the stream and returns every finding, strongest first, then
// by time.
func (c *Checker) Finish() []Finding {
	for _, p := range c.pending {
		c.add(p.f)
	}
	c.pending = nil
	for _, v := range c.spec.Finish() {
		c.add(findingFromViolation(v))
	}
	for _, cf := range sortedKeysOf(c.errEp) {
		c.closeEpisode(cf, c.errEp[cf], nil, true)
	}
	c.errEp = map[string]*errEpisode{}
	c.finishOperators()
	c.finishCheckpoints()
	c.finishBootstrap()
	c.finishDispatchers()
	c.finishCapture()
	c.finishBarriers()
	for i := range c.findings {
		f := &c.findings[i]
		judgeUntimed(f)
		if f.Count == 0 {
			f.Count = 1
		}
		f.First = fmtTimeOrEmpty(f.time)
		if f.last > f.time {
			f.Last = fmtTimeOrEmpty(f.last)
		}
	}
	sort.SliceStable(c.findings, func(i, j int) bool {
		a, b := c.findings[i], c.findings[j]
		if a.Severity.rank() != b.Severity.rank() {
			return a.Severity.rank() < b.Severity.rank()
		}
		return a.time < b.time
	})
	c.Coverage.finish()
	return c.findings
}

// judgeUntimed grades a finding whose evidence has lines without a
// timestamp (their time is the line before's): a property that measures
// time is not judged on them (insufficient-evidence, saying why), and a
// violation that
// rests on the order of lines of several captures' logs is at most a
// suspicion (that order is not known for them).
func judgeUntimed(f *Finding) {
	if f.Severity == Info || f.ownDuration {
		return
	}
	untimed, files := 0, map[string]bool{}
	for _, e := range f.Evidence {
		files[e.File] = true
		if e.Untimed {
			untimed++
		}
	}
	if untimed == 0 {
		return
	}
	if window, ok := timeWindows[f.Property]; ok {
		f.Severity = InsufficientEvidence
		f.Message += fmt.Sprintf("; not judged: %d of its evidence lines have no timestamp, and %s measures time (%s)", untimed, f.Property, window)
		f.untimedDowngrade = true
		return
	}
	if f.Severity == Violation && len(files) > 1 {
		f.Severity = Suspect
		f.Message += fmt.Sprintf("; %d of its evidence lines have no timestamp, so their order against the other captures' logs is not known", untimed)
		f.untimedDowngrade = true
	}
}

func sortedKeysOf[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
