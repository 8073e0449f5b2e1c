package spec

import (
	"fmt"
	"sort"
	"strings"
)

// Property is the stable name of a guarantee. Names are part of cdcspec's
// interface: CLI output, JSON, test names and the bug catalogue use them.
type Property string

// Safety properties.
const (
	ErrorNeverDropped             Property = "error-never-dropped"
	CheckpointMonotonic           Property = "checkpoint-monotonic"
	CheckpointNotPastUnflushed    Property = "checkpoint-not-past-unflushed"
	AtMostOneDispatcherPerSpan    Property = "at-most-one-dispatcher-per-span"
	RunningMaintainerBootstrapped Property = "running-maintainer-bootstrapped"
	SingleMaintainerGeneration    Property = "single-maintainer-generation"
	HandoffKeepsCheckpoint        Property = "handoff-keeps-checkpoint"
	ErrorStuckFails               Property = "error-stuck-fails"
)

// Liveness properties: judged when a driver emits Quiesced after FaultsHealed
// (faults stopped, then fair scheduling ran the system to quiescence).
const (
	EverySpanReplicated         Property = "every-span-replicated"
	CheckpointAdvancesAfterHeal Property = "checkpoint-advances-after-heal"
	// StopClosesDispatchers: spec/stopcloses.go.
	StopClosesDispatchers Property = "stop-closes-dispatchers"
)

// Class separates safety (a finite prefix shows the violation) from liveness
// (judged only at quiescence after faults heal).
type Class string

const (
	Safety   Class = "safety"
	Liveness Class = "liveness"
)

// Info describes a property for docs, CLI listings and reports.
type Info struct {
	Name      Property
	Class     Class
	Guarantee string // one sentence
	Source    string // protocol reference section and TiCDC issues
}

// PropertyDef is one row of the property table: everything cdcspec knows
// about a property in one place. The model registers its predicate per
// property (model/props.go, model/liveness.go; a completeness test there
// fails when a property has neither a predicate nor a written reason).
type PropertyDef struct {
	Info
	// New returns a fresh monitor of the property.
	New func(Config) Monitor
	// Kinds are the kinds the monitor reads (nil: every kind): Checker
	// calls its Observe only with these. A monitor's set is the kinds its
	// Observe switches on plus those of the bookkeeping it feeds every
	// event (spec/kinds.go); when an Observe starts reading another kind,
	// its set must name it (TestCheckerRoutesByKind compares routed and
	// unrouted checkers on random streams of every kind).
	Kinds []Kind
	// Logs says when the trace checker judges the property on logs.
	Logs LogNeeds
}

// LogNeeds says which events a log must carry for the trace checker to
// judge a property, and what is missing otherwise.
type LogNeeds struct {
	// Kinds: the property is judged when any of them was logged.
	Kinds []Kind
	// Also: kinds that must all be present too for Kinds to count (a
	// liveness property judged at a marker).
	Also []Kind
	// Blind says what a log that does not judge the property lacks.
	Blind string
}

// propertyTable is the one list of properties, in their stable order.
var propertyTable = []PropertyDef{
	{
		Info: Info{ErrorNeverDropped, Safety, "every retryable error that reaches the coordinator while the checkpoint is stuck reaches the backoff, and every fast-fail error fails the changefeed", "D.S4; pingcap/ticdc#5709 (fixed by #5779), #5246 (fixed by #5424)"},
		New:  NewErrorNeverDropped,
		// errorNeverDropped with another kind only makes the changefeed's
		// empty state, which its next event of a read kind makes the same.
		Kinds: kindSet(handlingKinds, []Kind{StatusReceived, StatusIgnored, DispatcherErrorReported}),
		Logs:  LogNeeds{Kinds: []Kind{DispatcherErrorReported, SinkError, StatusReceived}, Blind: "no dispatcher error was logged"},
	},
	{
		Info:  Info{CheckpointMonotonic, Safety, "the stored changefeed checkpoint never goes down, except when resume overwrites it", "D.S1"},
		New:   func(Config) Monitor { return NewCheckpointMonotonic() },
		Kinds: []Kind{ChangefeedCreated, ChangefeedResumed, ChangefeedRemoved, CheckpointStored},
		Logs:  LogNeeds{Kinds: []Kind{CheckpointStored, BackoffErrorSeen, BackoffStarted}, Blind: "the stored checkpoint is logged only at DEBUG (and by backoff lines)"},
	},
	{
		Info:  Info{CheckpointNotPastUnflushed, Safety, "the stored checkpoint never passes a row change the sink has not acknowledged", "D.S2; #5401, #2943, #3846, #4703"},
		New:   func(Config) Monitor { return NewCheckpointNotPastUnflushed() },
		Kinds: []Kind{ChangefeedCreated, ChangefeedResumed, ChangefeedRemoved, DataWritten, DataFlushed, CheckpointStored},
		Logs:  LogNeeds{Kinds: []Kind{DataWritten}, Blind: "production logs have no per-row lines; judged only on cdcspec's own runs"},
	},
	{
		Info:  Info{AtMostOneDispatcherPerSpan, Safety, "at most one live dispatcher replicates any key of a table span, across all nodes", "D.S3; #6202, #5083, #4077, #4874"},
		New:   func(Config) Monitor { return NewAtMostOneDispatcherPerSpan() },
		Kinds: dispatcherKinds,
		Logs:  LogNeeds{Kinds: []Kind{DispatcherCreated, WorkingTableIgnored, SpanNotFound}, Blind: "no dispatcher creation lines"},
	},
	{
		Info:  Info{RunningMaintainerBootstrapped, Safety, "a changefeed is marked replicating on a node only if a bootstrapped, non-removal-only maintainer of the current epoch runs there", "D.S5; #3952 (fixed by #3976), #4115"},
		New:   func(Config) Monitor { return NewRunningMaintainerBootstrapped() },
		Kinds: kindSet(maintainerKinds, []Kind{MaintainerOpFinished}),
		Logs:  LogNeeds{Kinds: []Kind{MaintainerOpFinished}, Blind: "no coordinator \"operator finished\" lines"},
	},
	{
		Info:  Info{SingleMaintainerGeneration, Safety, "at most one bootstrapped maintainer of a changefeed runs on live nodes at a time", "D.S6; #5083, #5179"},
		New:   func(Config) Monitor { return NewSingleMaintainerGeneration() },
		Kinds: maintainerKinds,
		Logs:  LogNeeds{Kinds: []Kind{MaintainerBootstrapped}, Blind: "no \"changefeed maintainer bootstrapped\" lines"},
	},
	{
		Info:  Info{HandoffKeepsCheckpoint, Safety, "a maintainer move starts the target maintainer at or above the checkpoint of the origin's final Stopped report that reached the coordinator", "C.6; #6283 (fixed by #6280)"},
		New:   func(Config) Monitor { return NewHandoffKeepsCheckpoint() },
		Kinds: []Kind{MaintainerOpStarted, StatusReceived, NodeLeft, MaintainerCreated},
		Logs:  LogNeeds{Kinds: []Kind{MaintainerOpStarted}, Also: []Kind{StatusReceived, MaintainerCreated}, Blind: "needs a maintainer move with the origin's final status and the target's creation (the status at DEBUG)"},
	},
	{
		Info: Info{ErrorStuckFails, Safety, "a changefeed whose errors persist without checkpoint progress fails once the backoff's budget (changefeed-error-stuck-duration) is spent instead of being restarted again; the budget restarts at a coordinator's bootstrap, as at TiCDC HEAD", "A.2 step 6; coordinator/changefeed/backoff.go HandleError; #921 (fixed by #938)"},
		New:  NewErrorStuckFails,
		Logs: LogNeeds{Kinds: []Kind{BackoffStarted}, Blind: "no backoff lines"},
	},
	{
		Info:  Info{StoppedStaysStopped, Safety, "until a resume, a paused, failed, finished or removed changefeed keeps its state (no late status or bootstrap report turns it back to normal) and, once its stop finished, gets no new dispatcher and no maintainer that schedules", "C.2, C.3, C.4; coordinator/controller.go validateMaintainerNode, coordinator/changefeed/changefeed_db.go StopByChangefeedID; pingcap/ticdc#396 (a stopped changefeed loses its node)"},
		New:   func(Config) Monitor { return NewStoppedStaysStopped() },
		Kinds: stoppedKinds,
		Logs:  LogNeeds{Kinds: []Kind{StateChanged}, Blind: "no changefeed state change was logged (\"changefeed status changed\"; a pause logs none)"},
	},
	{
		Info:  Info{EverySpanReplicated, Liveness, "once faults stop, every table of a running changefeed is covered by exactly one working dispatcher", "D.L1; #3411 (fixed by #3691), #4763, #3126"},
		New:   func(Config) Monitor { return NewEverySpanReplicated() },
		Kinds: kindSet(dispatcherKinds, feedKinds, []Kind{Quiesced}),
		Logs:  LogNeeds{Kinds: []Kind{Quiesced}, Blind: "needs a quiescence marker; production logs never quiesce"},
	},
	{
		Info:  Info{CheckpointAdvancesAfterHeal, Liveness, "once faults stop, the stored checkpoint of a running changefeed passes the upstream resolved ts seen at heal time", "D.L2; tiflow#9595, #5709, #3952"},
		New:   func(Config) Monitor { return NewCheckpointAdvancesAfterHeal() },
		Kinds: kindSet(feedKinds, []Kind{FaultsHealed, Quiesced}),
		Logs:  LogNeeds{Kinds: []Kind{FaultsHealed}, Blind: "needs a heal marker; see checkpoint-stuck instead"},
	},
	{
		Info: Info{DDLOrderedWithRows, Safety, "a blocking DDL at commitTs T is written exactly once, only after every dispatcher of the tables it blocks has flushed every row with commitTs < T, and no dispatcher of those tables, nor of a table the DDL creates or truncates, writes a row with commitTs > T before the DDL is written", "A.7; #3799 (fixed by #3802), #3443; issue 26 (created and truncated tables)"},
		New:  func(Config) Monitor { return NewDDLOrderedWithRows() },
		Kinds: kindSet(dispatcherKinds, tableSetKinds, []Kind{DDLCommitted, ChangefeedCreated, ChangefeedResumed,
			ChangefeedRemoved, DataWritten, DataFlushed, DDLWritten}),
		Logs: LogNeeds{Kinds: []Kind{DDLWritten}, Also: []Kind{DDLCommitted}, Blind: "needs the upstream's DDL history and the DDLs written (cdcspec's own lines; rows at DEBUG); TiCDC's logs cannot show it"},
	},
	{
		Info:  Info{BarrierEventuallyPasses, Liveness, "once faults stop, every blocked dispatcher resumes", "A.7; #3974 (fixed by #3970), #5150"},
		New:   func(Config) Monitor { return NewBarrierEventuallyPasses() },
		Kinds: kindSet(dispatcherKinds, feedKinds, []Kind{FaultsHealed, DispatcherCreated, BlockStatusReported, Quiesced}),
		Logs:  LogNeeds{Kinds: []Kind{BlockStatusReported}, Also: []Kind{Quiesced}, Blind: "needs block-status lines (cdcspec's own) and a quiescence marker; see barrier-stuck instead"},
	},
	{
		Info: Info{StopClosesDispatchers, Liveness, "once faults stop, a stopped, failed or removed changefeed has no live dispatcher on any node", "C.2, C.4, A.4 (a cascade close is Stopped only when every node ACKed)"},
		New:  func(Config) Monitor { return NewStopClosesDispatchers() },
		Logs: LogNeeds{Kinds: []Kind{Quiesced}, Blind: "needs a quiescence marker; production logs never quiesce"},
	},
	{
		Info:  Info{MaintainerOperatorsFinish, Liveness, "once faults stop, every maintainer operator the coordinator runs (add, move, stop) finishes", "A.2, C.6; coordinator/operator/operator_controller.go (an operator holds its changefeed until IsFinished)"},
		New:   func(Config) Monitor { return NewMaintainerOperatorsFinish() },
		Kinds: opFinishKinds,
		Logs:  LogNeeds{Kinds: []Kind{Quiesced}, Also: []Kind{MaintainerOpStarted}, Blind: "needs a quiescence marker; production logs never quiesce (see operator-stuck instead)"},
	},
	{
		Info:  Info{TableSetFollowsDDLs, Liveness, "after a drop or truncate no dispatcher of the old table remains; after a create, recover or truncate the new table's span is covered exactly once", "A.7; #3443, #6202"},
		New:   func(Config) Monitor { return NewTableSetFollowsDDLs() },
		Kinds: kindSet(dispatcherKinds, feedKinds, []Kind{ChangefeedRemoved, DDLCommitted, FaultsHealed, Quiesced}),
		Logs:  LogNeeds{Kinds: []Kind{DDLCommitted}, Also: []Kind{Quiesced}, Blind: "needs the upstream's DDL history and a quiescence marker, or the maintainer's \"add new table\"/\"remove table\" lines (their order)"},
	},
}

// PropertyTable returns the property table, in the stable order.
func PropertyTable() []PropertyDef { return propertyTable }

// Properties lists every property in a stable order.
func Properties() []Info {
	out := make([]Info, len(propertyTable))
	for i := range propertyTable {
		out[i] = propertyTable[i].Info
	}
	return out
}

// propertyDef returns a property's row.
func propertyDef(p Property) (*PropertyDef, bool) {
	for i := range propertyTable {
		if propertyTable[i].Name == p {
			return &propertyTable[i], true
		}
	}
	return nil, false
}

// PropertyInfo returns the Info of a property name.
func PropertyInfo(p Property) (Info, bool) {
	if d, ok := propertyDef(p); ok {
		return d.Info, true
	}
	return Info{}, false
}

// Violation is a broken guarantee with its coordinates and evidence.
type Violation struct {
	Property   Property
	Changefeed string
	Node       string
	Span       Span
	Epoch      uint64
	Ts         uint64
	// Message is the guarantee plus the coordinates, in TiCDC's terms.
	Message string
	// Evidence are the events that show the violation, oldest first. Each
	// carries its Source (file and line) when the stream came from a log.
	Evidence []Event
}

func (v Violation) String() string {
	return string(v.Property) + ": " + v.Message
}

// Monitor checks one property over an event stream. Observe is called for
// every event in order; Finish once at the end of the stream. A Monitor is
// not safe for concurrent use.
type Monitor interface {
	Property() Property
	Observe(e Event) []Violation
	Finish() []Violation
}

// Config tunes the monitors. The zero value is valid; the model sets
// ErrorStuckRestarts and the simulation ErrorStuckMs.
type Config struct {
	// ErrorWindow enables error-never-dropped's maintainer-side rule, for
	// logs that have no coordinator status lines: errors reported by the
	// maintainer ("dispatcher report an error") for at least ErrorWindow ms
	// with at least ErrorMinReports reports and no backoff line in between
	// are a violation. 0 disables the rule.
	ErrorWindow     int64
	ErrorMinReports int
	// ErrorStuckRestarts and ErrorStuckMs are the backoff's budget for
	// error-stuck-fails: restarts per streak without checkpoint progress
	// (the model's abstraction of changefeed-error-stuck-duration) and the
	// duration in ms (the simulation's virtual clock). 0 disables a rule.
	ErrorStuckRestarts int
	ErrorStuckMs       int64
}

// NewMonitors returns one fresh monitor per property, in Properties() order.
func NewMonitors(cfg Config) []Monitor {
	out := make([]Monitor, len(propertyTable))
	for i := range propertyTable {
		out[i] = propertyTable[i].New(cfg)
	}
	return out
}

// Checker runs a set of monitors over a stream.
type Checker struct {
	Monitors   []Monitor
	Violations []Violation

	// byKind lists, per kind, the monitors that read it, in Monitors
	// order (see routedKinds), for routed: Monitors when byKind was built
	// (Monitors may be replaced or appended to, not changed in place).
	byKind [kindCount][]Monitor
	routed []Monitor
	// seq numbers the events fed (see dispatchers.seq).
	seq uint64
}

// everyKind is implemented by a monitor that must be given every event
// although its property's row names Kinds (a test's unrouted wrapper).
type everyKind interface {
	everyKind()
}

// routedKinds returns the kinds a monitor reads, from its property's row,
// or false when it must be given every event: no row (a monitor outside the
// table), a row without Kinds, or everyKind. Observe with any other kind
// changes nothing and returns nothing, so Checker does not call it (a stream
// is mostly kinds a monitor ignores).
func routedKinds(m Monitor) ([]Kind, bool) {
	if _, ok := m.(everyKind); ok {
		return nil, false
	}
	d, ok := propertyDef(m.Property())
	if !ok || d.Kinds == nil {
		return nil, false
	}
	return d.Kinds, true
}

// kindSet is a monitor's kinds: its own and those of the bookkeeping it
// feeds every event (dispatcherKinds, feedKinds, ...).
func kindSet(sets ...[]Kind) []Kind {
	var out []Kind
	for _, s := range sets {
		out = append(out, s...)
	}
	return out
}

// NewChecker returns a Checker over NewMonitors(cfg). Its monitors that
// keep dispatchers share one tracker (dispatcherReader): the Checker feeds
// them the same events in the same order.
func NewChecker(cfg Config) *Checker {
	c := &Checker{Monitors: NewMonitors(cfg)}
	shared := newDispatchers()
	shared.seq = &c.seq
	for _, m := range c.Monitors {
		if dr, ok := m.(dispatcherReader); ok {
			*dr.dispatcherTracker() = shared
		}
	}
	return c
}

// route builds byKind for the current Monitors.
func (c *Checker) route() {
	c.routed = c.Monitors
	for k := range c.byKind {
		c.byKind[k] = nil
	}
	for _, m := range c.Monitors {
		kinds, ok := routedKinds(m)
		if !ok {
			for k := range c.byKind {
				c.byKind[k] = append(c.byKind[k], m)
			}
			continue
		}
		var seen [kindCount]bool
		for _, k := range kinds {
			if k < kindCount && !seen[k] {
				seen[k] = true
				c.byKind[k] = append(c.byKind[k], m)
			}
		}
	}
}

// Observe feeds one event to every monitor that reads its kind and returns
// the new violations.
func (c *Checker) Observe(e Event) []Violation {
	if len(c.routed) != len(c.Monitors) || (len(c.Monitors) > 0 && &c.routed[0] != &c.Monitors[0]) {
		c.route()
	}
	var ms []Monitor
	if e.Kind < kindCount {
		ms = c.byKind[e.Kind]
	} else {
		ms = c.Monitors
	}
	c.seq++
	var out []Violation
	for _, m := range ms {
		if v := m.Observe(e); len(v) > 0 {
			out = append(out, v...)
		}
	}
	c.Violations = append(c.Violations, out...)
	return out
}

// Finish ends the stream and returns the violations found at the end.
func (c *Checker) Finish() []Violation {
	var out []Violation
	for _, m := range c.Monitors {
		out = append(out, m.Finish()...)
	}
	c.Violations = append(c.Violations, out...)
	return out
}

// Check runs every property over a complete stream.
func Check(cfg Config, events []Event) []Violation {
	c := NewChecker(cfg)
	for _, e := range events {
		c.Observe(e)
	}
	c.Finish()
	return c.Violations
}

// ByProperty groups violations by property name, in a stable order.
func ByProperty(vs []Violation) map[Property][]Violation {
	out := map[Property][]Violation{}
	for _, v := range vs {
		out[v.Property] = append(out[v.Property], v)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func coords(cf, node string, span Span, epoch, ts uint64) string {
	var parts []string
	if cf != "" {
		parts = append(parts, "changefeed "+cf)
	}
	if node != "" {
		parts = append(parts, "node "+node)
	}
	if span != (Span{}) {
		parts = append(parts, "span "+span.String())
	}
	if epoch != 0 {
		parts = append(parts, fmt.Sprintf("epoch %d", epoch))
	}
	if ts != 0 {
		parts = append(parts, fmt.Sprintf("ts %d", ts))
	}
	return strings.Join(parts, ", ")
}
