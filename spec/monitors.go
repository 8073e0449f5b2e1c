package spec

import (
	"fmt"
	"sort"
)

// ---------------------------------------------------------------------------
// error-never-dropped

// errorNeverDropped checks that every retryable error reaching the
// coordinator while the checkpoint is stuck reaches the backoff (D.S4,
// pingcap/ticdc#5709).
//
// Coordinator rule (model, simulation, real runtime): an accepted
// StatusReceived carrying Err must be followed, before the next accepted
// status of the same changefeed, by an event showing the error was handled
// (ErrorHandling.Handled: the backoff saw it, the state left normal, or the
// coordinator needs no backoff for it by design). A second accepted status
// arriving while the first error is unhandled means the first one was
// dropped silently.
//
// Fast-fail rule (#5246, fixed by #5424): an accepted StatusReceived whose
// Err carries a fast-fail code (IsFastFailError) must be followed, before
// the next accepted status, by StateChanged to failed (or the changefeed
// stopping, being removed, resumed or re-created). Checkpoint progress and
// a BootstrapDone toggle do not handle it: Backoff.checkFailedStatus runs
// before both. A changefeed already failed needs nothing more.
//
// Maintainer rule (production logs, which have no coordinator status line):
// with Config.ErrorWindow > 0, DispatcherErrorReported events of one
// changefeed spanning at least ErrorWindow ms, at least ErrorMinReports of
// them, with no handling event in between, are a violation. An episode
// whose first report came from the maintainer on node N restarts when the
// coordinator drops a status of N (StatusIgnored: stale epoch, node
// mismatch, controller.go:610-623 at b813e76f9): that maintainer is not the
// coordinator's current one (a move's origin still removing), its reports
// cannot reach the backoff, and the current maintainer re-reports the error
// once it bootstraps (impl chaos seed 8: 65 s of an origin's reports, then
// the new maintainer's first report reached the backoff in 200 ms).
//
// Blind spots: errors the DM never sent (only its first error is kept), errors
// dropped before the maintainer bootstrapped, and, with the maintainer rule,
// drops shorter than the window, reports of the current maintainer counted
// in an episode that a stale maintainer on another node began (they restart
// with it while that stale maintainer's statuses are dropped), and, in a
// combined log whose report lines name no node, no restart at all.
type errorNeverDropped struct {
	cfg      Config
	handling *ErrorHandling
	cf       map[string]*errState
}

type errState struct {
	pending  *Event // accepted error status not yet shown handled
	fast     *Event // accepted fast-fail error status not yet shown failed
	failed   bool   // the changefeed is failed (StateChanged to failed)
	first    *Event // first maintainer-side report since the last handling event
	reports  int    // maintainer-side reports since the last handling event
	reported bool   // this episode was already reported by the maintainer rule
}

// NewErrorNeverDropped returns the error-never-dropped monitor.
func NewErrorNeverDropped(cfg Config) Monitor {
	if cfg.ErrorMinReports <= 0 {
		cfg.ErrorMinReports = 2
	}
	return &errorNeverDropped{cfg: cfg, handling: NewErrorHandling(), cf: map[string]*errState{}}
}

// ErrorHandling is error-never-dropped's one definition of "the pending
// retryable error of a changefeed was handled". The monitor and the log-only
// error episodes of traces/ both ask it, so the two cannot drift apart.
type ErrorHandling struct {
	stored map[string]uint64 // changefeed -> last stored checkpoint (or the create/resume baseline)
}

// NewErrorHandling returns an ErrorHandling that has seen no event.
func NewErrorHandling() *ErrorHandling { return &ErrorHandling{stored: map[string]uint64{}} }

// Handled observes e (call it for every event, in stream order) and reports
// whether e shows that a pending retryable error of e.Changefeed was handled:
//
//   - it reached the backoff: BackoffErrorSeen, BackoffStarted, BackoffGaveUp,
//     or BackoffIgnored (the backoff saw it while the changefeed was already
//     restarting and chose to ignore it);
//   - the changefeed left the normal state: StateChanged to warning, failed,
//     stopped or removed;
//   - by design the coordinator needs no backoff for it: BootstrapDoneChanged
//     (Changefeed.UpdateStatus returns Normal before the backoff when
//     BootstrapDone flips), or progress: Backoff.CheckStatus ignores the
//     errors of a status whose checkpoint passed its baseline
//     (coordinator/changefeed/backoff.go at b813e76f9; the property is about
//     errors "while the checkpoint is stuck"), shown by BackoffRecovered or
//     a CheckpointStored above the last stored checkpoint. Progress only
//     past a baseline that lags the stored checkpoint is not handling: that
//     is the catalogue entry toggle-keeps-baseline;
//   - the changefeed's life restarted: ChangefeedCreated, ChangefeedResumed
//     (resume drops the old owner's errors, Changefeed.GetStatusForResume),
//     ChangefeedRemoved (nothing is left to retry).
//
// Production logs carry CheckpointStored only at DEBUG; without those lines
// progress is invisible, and an error ignored because of it looks unhandled.
func (h *ErrorHandling) Handled(e *Event) bool {
	if e.Changefeed == "" {
		return false
	}
	switch e.Kind {
	case BackoffErrorSeen, BackoffIgnored, BackoffGaveUp, BackoffStarted, BootstrapDoneChanged, BackoffRecovered:
		return true
	case StateChanged:
		return e.State == StateWarning || e.State == StateFailed || e.State == StateStopped || e.State == StateRemoved
	case ChangefeedCreated, ChangefeedResumed:
		h.stored[e.Changefeed] = e.Checkpoint
		return true
	case ChangefeedRemoved:
		delete(h.stored, e.Changefeed)
		return true
	case CheckpointStored:
		advanced := e.Checkpoint > h.stored[e.Changefeed]
		h.stored[e.Changefeed] = e.Checkpoint
		return advanced
	}
	return false
}

// Stored returns the last stored checkpoint of cf that Handled observed.
func (h *ErrorHandling) Stored(cf string) uint64 { return h.stored[cf] }

func (m *errorNeverDropped) Property() Property { return ErrorNeverDropped }

func (m *errorNeverDropped) state(cf string) *errState {
	s := m.cf[cf]
	if s == nil {
		s = &errState{}
		m.cf[cf] = s
	}
	return s
}

func (m *errorNeverDropped) handled(s *errState) {
	s.pending = nil
	s.first = nil
	s.reports = 0
	s.reported = false
}

func (m *errorNeverDropped) Observe(e Event) []Violation {
	if e.Changefeed == "" {
		return nil
	}
	s := m.state(e.Changefeed)
	if m.handling.Handled(&e) {
		m.handled(s)
	}
	switch e.Kind {
	case StateChanged:
		s.failed = e.State == StateFailed
		if e.State != StateNormal && e.State != StateWarning {
			s.fast = nil
		}
	case ChangefeedCreated, ChangefeedResumed, ChangefeedRemoved:
		s.failed, s.fast = false, nil
	case StatusIgnored:
		if s.first != nil && s.first.Node != "" && s.first.Node == e.Node {
			// The maintainer whose reports began this episode is stale
			// (see the maintainer rule): its episode restarts.
			s.first, s.reports, s.reported = nil, 0, false
		}
	case StatusReceived:
		if !e.Accepted {
			return nil
		}
		var out []Violation
		if s.fast != nil && !s.failed {
			p := *s.fast
			out = append(out, Violation{
				Property: ErrorNeverDropped, Changefeed: e.Changefeed, Node: p.Node, Epoch: p.Epoch, Ts: p.Checkpoint,
				Message: fmt.Sprintf("a fast-fail error must fail the changefeed at once, but the coordinator accepted the status carrying it and the changefeed did not fail: %s; status checkpoint %d, stored checkpoint %d, error %q",
					coords(e.Changefeed, p.Node, Span{}, p.Epoch, 0), p.Checkpoint, m.handling.Stored(e.Changefeed), p.Err),
				Evidence: []Event{p, e},
			})
			s.fast = nil
			s.pending = nil // one violation for the one status
		}
		if IsFastFailError(e.Err) && !s.failed {
			cp := e
			s.fast = &cp
		}
		if s.pending != nil {
			p := *s.pending
			out = append(out, Violation{
				Property: ErrorNeverDropped, Changefeed: e.Changefeed, Node: p.Node, Epoch: p.Epoch, Ts: p.Checkpoint,
				Message: fmt.Sprintf("a retryable error must reach the backoff while the checkpoint is stuck, but the coordinator dropped it silently: %s; status checkpoint %d, stored checkpoint %d, error %q",
					coords(e.Changefeed, p.Node, Span{}, p.Epoch, 0), p.Checkpoint, m.handling.Stored(e.Changefeed), p.Err),
				Evidence: []Event{p, e},
			})
			s.pending = nil
		}
		if e.Err != "" {
			cp := e
			s.pending = &cp
		}
		return out
	case DispatcherErrorReported:
		if m.cfg.ErrorWindow <= 0 || s.reported {
			return nil
		}
		s.reports++
		if s.first == nil {
			f := e
			s.first = &f
		}
		first := *s.first
		if s.reports >= m.cfg.ErrorMinReports && e.Time-first.Time >= m.cfg.ErrorWindow {
			v := Violation{
				Property: ErrorNeverDropped, Changefeed: e.Changefeed, Node: first.Origin,
				Message: fmt.Sprintf("a retryable error must reach the backoff, but the maintainer reported it %d times over %s with no backoff line (no \"changefeed maintainer report an error\", no warning state): %s; error %q",
					s.reports, fmtMillis(e.Time-first.Time), coords(e.Changefeed, first.Origin, Span{}, 0, 0), first.Err),
				Evidence: []Event{first, e},
			}
			s.reported = true // once per episode, until a handling event
			return []Violation{v}
		}
	}
	return nil
}

func (m *errorNeverDropped) Finish() []Violation { return nil }

func fmtMillis(ms int64) string {
	if ms%1000 == 0 {
		return fmt.Sprintf("%ds", ms/1000)
	}
	return fmt.Sprintf("%.3fs", float64(ms)/1000)
}

// ---------------------------------------------------------------------------
// checkpoint-monotonic

// checkpointMonotonic checks that the stored changefeed checkpoint never goes
// down (D.S1). ChangefeedResumed and ChangefeedCreated set a new baseline:
// resume may overwrite the checkpoint with a lower one on purpose.
// Blind spot: production logs carry the stored checkpoint only at DEBUG.
type checkpointMonotonic struct {
	last map[string]Event
}

// NewCheckpointMonotonic returns the checkpoint-monotonic monitor.
func NewCheckpointMonotonic() Monitor { return &checkpointMonotonic{last: map[string]Event{}} }

func (m *checkpointMonotonic) Property() Property { return CheckpointMonotonic }

func (m *checkpointMonotonic) Observe(e Event) []Violation {
	switch e.Kind {
	case ChangefeedCreated, ChangefeedResumed:
		m.last[e.Changefeed] = e
	case ChangefeedRemoved:
		delete(m.last, e.Changefeed)
	case CheckpointStored:
		prev, ok := m.last[e.Changefeed]
		m.last[e.Changefeed] = e
		if ok && e.Checkpoint < prev.Checkpoint {
			return []Violation{{
				Property: CheckpointMonotonic, Changefeed: e.Changefeed, Ts: e.Checkpoint,
				Message: fmt.Sprintf("the stored checkpoint must never go down, but it went from %d to %d: %s",
					prev.Checkpoint, e.Checkpoint, coords(e.Changefeed, "", Span{}, 0, 0)),
				Evidence: []Event{prev, e},
			}}
		}
	}
	return nil
}

func (m *checkpointMonotonic) Finish() []Violation { return nil }

// ---------------------------------------------------------------------------
// checkpoint-not-past-unflushed

// checkpointNotPastUnflushed checks that the stored checkpoint never passes a
// row change the sink has not acknowledged (D.S2; #5401, #2943, #3846,
// #4703). Rows are DataWritten events (Span.Start is the row key); a
// DataFlushed event acknowledges every row of its span with commitTs <= its
// Checkpoint. Rows at or below the changefeed's start checkpoint are not
// owed. Memory grows with the number of unflushed rows only.
// Blind spot: needs DataWritten/DataFlushed, which only cdcspec's own
// implementation and model emit; production logs cannot show this property.
type checkpointNotPastUnflushed struct {
	cf map[string]*unflushed
}

type unflushed struct {
	start uint64
	rows  map[int64][]Event // per table, unflushed rows in arrival order
}

// NewCheckpointNotPastUnflushed returns the checkpoint-not-past-unflushed monitor.
func NewCheckpointNotPastUnflushed() Monitor {
	return &checkpointNotPastUnflushed{cf: map[string]*unflushed{}}
}

func (m *checkpointNotPastUnflushed) Property() Property { return CheckpointNotPastUnflushed }

func (m *checkpointNotPastUnflushed) get(cf string) *unflushed {
	u := m.cf[cf]
	if u == nil {
		u = &unflushed{rows: map[int64][]Event{}}
		m.cf[cf] = u
	}
	return u
}

func spanHasKey(s Span, key string) bool {
	return key >= s.Start && (s.End == "" || key < s.End)
}

// dropRowsThrough forgets the rows with commit ts <= ts of every table: a
// changefeed replays from ts, so they are no longer owed.
func dropRowsThrough(rows map[int64][]Event, ts uint64) {
	for t, rs := range rows {
		kept := rs[:0]
		for _, r := range rs {
			if r.Checkpoint > ts {
				kept = append(kept, r)
			}
		}
		rows[t] = kept
	}
}

func (m *checkpointNotPastUnflushed) Observe(e Event) []Violation {
	switch e.Kind {
	case ChangefeedCreated, ChangefeedResumed:
		u := m.get(e.Changefeed)
		u.start = e.Checkpoint
		// Resume with an overwritten checkpoint replays from there; rows
		// below it are no longer owed.
		dropRowsThrough(u.rows, e.Checkpoint)
	case ChangefeedRemoved:
		delete(m.cf, e.Changefeed)
	case DataWritten:
		u := m.get(e.Changefeed)
		if e.Checkpoint <= u.start {
			return nil
		}
		u.rows[e.Span.Table] = append(u.rows[e.Span.Table], e)
	case DataFlushed:
		u := m.cf[e.Changefeed]
		if u == nil {
			return nil
		}
		rows := u.rows[e.Span.Table]
		kept := rows[:0]
		for _, r := range rows {
			if r.Checkpoint <= e.Checkpoint && spanHasKey(e.Span, r.Span.Start) {
				continue
			}
			kept = append(kept, r)
		}
		u.rows[e.Span.Table] = kept
	case CheckpointStored:
		u := m.cf[e.Changefeed]
		if u == nil {
			return nil
		}
		var worst *Event
		for _, t := range sortedTables(u.rows) {
			for i := range u.rows[t] {
				r := &u.rows[t][i]
				if r.Checkpoint <= e.Checkpoint && (worst == nil || r.Checkpoint < worst.Checkpoint) {
					worst = r
				}
			}
		}
		if worst != nil {
			w := *worst
			return []Violation{{
				Property: CheckpointNotPastUnflushed, Changefeed: e.Changefeed, Span: w.Span, Ts: e.Checkpoint,
				Message: fmt.Sprintf("the checkpoint must never pass unflushed data, but checkpoint %d was stored while the row of table %d at commitTs %d (key %q) was not acknowledged by the sink: %s",
					e.Checkpoint, w.Span.Table, w.Checkpoint, w.Span.Start, coords(e.Changefeed, "", Span{}, 0, 0)),
				Evidence: []Event{w, e},
			}}
		}
	}
	return nil
}

func sortedTables[V any](m map[int64]V) []int64 {
	ts := make([]int64, 0, len(m))
	for t := range m {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	return ts
}

func (m *checkpointNotPastUnflushed) Finish() []Violation { return nil }

// ---------------------------------------------------------------------------
// dispatcher bookkeeping shared by at-most-one-dispatcher-per-span and
// every-span-replicated

type liveDispatcher struct {
	created Event
	working bool
	key     string // dispatcherKey(created.Node, created.Dispatcher)
}

// dispatchers tracks the live dispatchers of every changefeed, across nodes.
// A dispatcher dies when it is removed, when its changefeed's dispatcher
// manager on its node closes, or when its node leaves or kills itself.
// Dispatchers are keyed by node and ID: a move keeps the dispatcher ID, so a
// delayed Create can make the same ID live on two nodes at once.
type dispatchers struct {
	cf map[string]map[string]*liveDispatcher // changefeed -> node+"/"+dispatcher ID -> state
	// byTable indexes the same dispatchers by changefeed and table, so the
	// overlap check costs the table's dispatchers, not the changefeed's.
	byTable map[string]map[int64]map[string]*liveDispatcher
	// seq is set when the monitors of one Checker share the tracker: the
	// number of the event the Checker is feeding. observe applies an event
	// once, for the first monitor that reads it; applied is its number and
	// last what it returned, which the other monitors get.
	seq     *uint64
	applied uint64
	last    *liveDispatcher
}

// dispatcherReader is implemented by the monitors that keep dispatchers;
// NewChecker gives them one shared tracker (every such monitor calls
// observe first in its Observe, with the same events: see kinds.go).
type dispatcherReader interface {
	dispatcherTracker() **dispatchers
}

func dispatcherKey(node, id string) string { return node + "/" + id }

// appendDispatcherKey appends dispatcherKey(node, id) to b: a key built in
// a stack buffer, for map lookups and deletes that then allocate nothing.
func appendDispatcherKey(b []byte, node, id string) []byte {
	return append(append(append(b, node...), '/'), id...)
}

// lookup is d.cf[cf][dispatcherKey(node, id)] without building the key on
// the heap (the tracker's most frequent operation).
func (d *dispatchers) lookup(cf, node, id string) *liveDispatcher {
	var buf [128]byte
	return d.cf[cf][string(appendDispatcherKey(buf[:0], node, id))]
}

func newDispatchers() *dispatchers {
	return &dispatchers{cf: map[string]map[string]*liveDispatcher{}, byTable: map[string]map[int64]map[string]*liveDispatcher{}}
}

func (d *dispatchers) add(cf, key string, ld *liveDispatcher) {
	if old := d.cf[cf][key]; old != nil {
		d.remove(cf, key)
	}
	m := d.cf[cf]
	if m == nil {
		m = map[string]*liveDispatcher{}
		d.cf[cf] = m
	}
	m[key] = ld
	bt := d.byTable[cf]
	if bt == nil {
		bt = map[int64]map[string]*liveDispatcher{}
		d.byTable[cf] = bt
	}
	tm := bt[ld.created.Span.Table]
	if tm == nil {
		tm = map[string]*liveDispatcher{}
		bt[ld.created.Span.Table] = tm
	}
	tm[key] = ld
}

func (d *dispatchers) remove(cf, key string) {
	ld := d.cf[cf][key]
	if ld == nil {
		return
	}
	delete(d.cf[cf], key)
	delete(d.byTable[cf][ld.created.Span.Table], key)
}

// observe updates the bookkeeping and returns the dispatcher the event
// concerns (nil if none). e is read, not kept (a pointer: every monitor
// that keeps dispatchers calls this for every event it reads, and an
// Event is large to copy).
func (d *dispatchers) observe(e *Event) *liveDispatcher {
	if d.seq == nil {
		return d.apply(e)
	}
	if d.applied != *d.seq {
		d.applied, d.last = *d.seq, d.apply(e)
	}
	return d.last
}

func (d *dispatchers) apply(e *Event) *liveDispatcher {
	switch e.Kind {
	case DispatcherCreated:
		ld := &liveDispatcher{created: *e, key: dispatcherKey(e.Node, e.Dispatcher)}
		d.add(e.Changefeed, ld.key, ld)
		return ld
	case DispatcherWorking:
		if ld := d.lookup(e.Changefeed, e.Node, e.Dispatcher); ld != nil {
			ld.working = true
			return ld
		}
	case DispatcherRemoved:
		if ld := d.lookup(e.Changefeed, e.Node, e.Dispatcher); ld != nil {
			d.remove(e.Changefeed, ld.key)
		}
	case DispatcherManagerClosed:
		for key, ld := range d.cf[e.Changefeed] {
			if ld.created.Node == e.Node {
				d.remove(e.Changefeed, key)
			}
		}
	case NodeLeft, CaptureSuicide:
		for cf, m := range d.cf {
			for key, ld := range m {
				if ld.created.Node == e.Node {
					d.remove(cf, key)
				}
			}
		}
	case ChangefeedRemoved:
		delete(d.cf, e.Changefeed)
		delete(d.byTable, e.Changefeed)
	}
	return nil
}

// LiveDispatchers is the one definition of a live dispatcher, shared by the
// monitors and traces' log-only checks: a dispatcher lives from
// DispatcherCreated until it is removed, its dispatcher manager on its node
// closes, its node leaves or kills itself, or its changefeed is removed.
type LiveDispatchers struct{ d *dispatchers }

// NewLiveDispatchers returns a tracker that has seen no event.
func NewLiveDispatchers() *LiveDispatchers { return &LiveDispatchers{d: newDispatchers()} }

// Observe updates the tracker with e (call it for every event, in order);
// e is read, not kept.
func (l *LiveDispatchers) Observe(e *Event) { l.d.observe(e) }

// OfTable returns the live dispatchers of table t of cf as "node/ID" keys,
// sorted.
func (l *LiveDispatchers) OfTable(cf string, t int64) []string {
	keys := make([]string, 0, len(l.d.byTable[cf][t]))
	for k := range l.d.byTable[cf][t] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Live reports whether the dispatcher with key "node/ID" (as OfTable
// returns it) of cf is live.
func (l *LiveDispatchers) Live(cf, key string) bool { return l.d.cf[cf][key] != nil }

// overlapping returns the live dispatchers of cf, other than self (a
// dispatcherKey), whose span overlaps span, sorted by node and ID.
func (d *dispatchers) overlapping(cf, self string, span Span) []*liveDispatcher {
	var out []*liveDispatcher
	for key, ld := range d.byTable[cf][span.Table] {
		if key != self && ld.created.Span.Overlaps(span) {
			out = append(out, ld)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return dispatcherKey(out[i].created.Node, out[i].created.Dispatcher) < dispatcherKey(out[j].created.Node, out[j].created.Dispatcher)
	})
	return out
}

// ---------------------------------------------------------------------------
// at-most-one-dispatcher-per-span

// atMostOneDispatcherPerSpan checks that at most one live dispatcher
// replicates any key of a table span, across all nodes (D.S3; #6202, #5083,
// #4077, #4874). A dispatcher is checked when it is created; a merge target
// (Merge) is created before its sources close, so it is checked when it
// becomes working. The table trigger (table 0) is not a table span.
// Blind spot: a dispatcher on a partitioned node that is still writing is
// counted dead only once the node is seen leaving.
type atMostOneDispatcherPerSpan struct {
	d *dispatchers
}

// NewAtMostOneDispatcherPerSpan returns the at-most-one-dispatcher-per-span monitor.
func NewAtMostOneDispatcherPerSpan() Monitor {
	return &atMostOneDispatcherPerSpan{d: newDispatchers()}
}

func (m *atMostOneDispatcherPerSpan) Property() Property { return AtMostOneDispatcherPerSpan }

func (m *atMostOneDispatcherPerSpan) Observe(e Event) []Violation {
	ld := m.d.observe(&e)
	if ld == nil || ld.created.Span.Table == 0 {
		return nil
	}
	check := (e.Kind == DispatcherCreated && !e.Merge) || (e.Kind == DispatcherWorking && ld.created.Merge)
	if !check {
		return nil
	}
	others := m.d.overlapping(e.Changefeed, ld.key, ld.created.Span)
	if len(others) == 0 {
		return nil
	}
	o := others[0].created
	return []Violation{{
		Property: AtMostOneDispatcherPerSpan, Changefeed: e.Changefeed, Node: ld.created.Node, Span: ld.created.Span,
		Message: fmt.Sprintf("at most one dispatcher may replicate a span, but dispatcher %s on node %s (span %s) overlaps live dispatcher %s on node %s (span %s): %s",
			e.Dispatcher, ld.created.Node, ld.created.Span, o.Dispatcher, o.Node, o.Span, coords(e.Changefeed, "", ld.created.Span, 0, 0)),
		Evidence: []Event{o, e},
	}}
}

func (m *atMostOneDispatcherPerSpan) Finish() []Violation { return nil }

// ---------------------------------------------------------------------------
// running-maintainer-bootstrapped

type maintainerInfo struct {
	created      Event
	bootstrapped bool
}

// maintainers tracks the live maintainer of every (changefeed, node).
type maintainers struct {
	m map[string]map[string]*maintainerInfo // changefeed -> node -> maintainer
	// crashed: nodes that committed suicide and were not seen leaving yet
	// (the coordinator still counts them as members).
	crashed map[string]bool
}

func newMaintainers() maintainers {
	return maintainers{m: map[string]map[string]*maintainerInfo{}, crashed: map[string]bool{}}
}

func (t *maintainers) observe(e *Event) {
	switch e.Kind {
	case MaintainerCreated:
		byNode := t.m[e.Changefeed]
		if byNode == nil {
			byNode = map[string]*maintainerInfo{}
			t.m[e.Changefeed] = byNode
		}
		byNode[e.Node] = &maintainerInfo{created: *e}
	case MaintainerBootstrapped:
		if mi := t.m[e.Changefeed][e.Node]; mi != nil {
			mi.bootstrapped = true
		}
	case MaintainerClosed:
		delete(t.m[e.Changefeed], e.Node)
	case NodeLeft, CaptureSuicide:
		for _, byNode := range t.m {
			delete(byNode, e.Node)
		}
		if e.Kind == CaptureSuicide {
			t.crashed[e.Node] = true
		} else {
			delete(t.crashed, e.Node)
		}
	}
}

// runningMaintainerBootstrapped checks that a changefeed is marked
// replicating on a node (an add or move maintainer operator finishes there)
// only if a bootstrapped, non-removal-only maintainer of the operator's epoch
// runs there (D.S5; #3952 fixed by #3976, #4115 fixed by #4114).
// Blind spots: in production logs the operator line may not carry the node;
// a status sent by an unbootstrapped maintainer whose node then crashed is
// not judged (the model's predicate has the same blind spot).
type runningMaintainerBootstrapped struct {
	t maintainers
}

// NewRunningMaintainerBootstrapped returns the running-maintainer-bootstrapped monitor.
func NewRunningMaintainerBootstrapped() Monitor {
	return &runningMaintainerBootstrapped{t: newMaintainers()}
}

func (m *runningMaintainerBootstrapped) Property() Property { return RunningMaintainerBootstrapped }

func (m *runningMaintainerBootstrapped) Observe(e Event) []Violation {
	m.t.observe(&e)
	// An operator that ended without success (Reason "canceled" or
	// "aborted": the destination left) marks nothing replicating. On a node
	// that committed suicide and was not seen leaving yet, the status that
	// finished the operator was sent before the crash: the coordinator cannot
	// know the node is gone and makes the changefeed absent once it sees the
	// node leave (coordinator/operator/operator_add.go OnNodeRemove at
	// b813e76f9); the maintainer it judged is gone, so it is not judged.
	if e.Kind != MaintainerOpFinished || (e.Op != OpAdd && e.Op != OpMove) || e.Node == "" || e.Reason != "" || m.t.crashed[e.Node] {
		return nil
	}
	mi := m.t.m[e.Changefeed][e.Node]
	var why string
	var ev []Event
	switch {
	case mi == nil:
		why = "no maintainer runs there"
	case mi.created.RemovalOnly:
		why = "the maintainer there is a removal-only maintainer, which never bootstraps"
		ev = append(ev, mi.created)
	case !mi.bootstrapped:
		why = "the maintainer there never bootstrapped"
		ev = append(ev, mi.created)
	case e.Epoch != 0 && mi.created.Epoch != 0 && e.Epoch != mi.created.Epoch:
		why = fmt.Sprintf("the maintainer there has epoch %d, not the operator's", mi.created.Epoch)
		ev = append(ev, mi.created)
	default:
		return nil
	}
	return []Violation{{
		Property: RunningMaintainerBootstrapped, Changefeed: e.Changefeed, Node: e.Node, Epoch: e.Epoch,
		Message: fmt.Sprintf("a running maintainer must be bootstrapped, but the %s maintainer operator finished and marked the changefeed replicating while %s: %s",
			e.Op, why, coords(e.Changefeed, e.Node, Span{}, e.Epoch, 0)),
		Evidence: append(ev, e),
	}}
}

func (m *runningMaintainerBootstrapped) Finish() []Violation { return nil }

// ---------------------------------------------------------------------------
// single-maintainer-generation

// singleMaintainerGeneration checks that at most one bootstrapped maintainer
// of a changefeed runs on live nodes at a time (D.S6; #5083, #5179). It is
// checked when a maintainer bootstraps. Removal-only maintainers never
// bootstrap and do not count.
// Blind spot: a maintainer on a node that stopped logging without a leave or
// suicide line is still counted as running.
type singleMaintainerGeneration struct {
	t maintainers
}

// NewSingleMaintainerGeneration returns the single-maintainer-generation monitor.
func NewSingleMaintainerGeneration() Monitor {
	return &singleMaintainerGeneration{t: newMaintainers()}
}

func (m *singleMaintainerGeneration) Property() Property { return SingleMaintainerGeneration }

func (m *singleMaintainerGeneration) Observe(e Event) []Violation {
	m.t.observe(&e)
	if e.Kind != MaintainerBootstrapped {
		return nil
	}
	byNode := m.t.m[e.Changefeed]
	for _, node := range sortedKeys(byNode) {
		mi := byNode[node]
		if node == e.Node || !mi.bootstrapped || mi.created.RemovalOnly {
			continue
		}
		return []Violation{{
			Property: SingleMaintainerGeneration, Changefeed: e.Changefeed, Node: e.Node, Epoch: e.Epoch,
			Message: fmt.Sprintf("one maintainer generation must own a changefeed at a time, but the maintainer on node %s (epoch %d) bootstrapped while the maintainer on node %s (epoch %d) still runs: %s",
				e.Node, e.Epoch, node, mi.created.Epoch, coords(e.Changefeed, e.Node, Span{}, e.Epoch, 0)),
			Evidence: []Event{mi.created, e},
		}}
	}
	return nil
}

func (m *singleMaintainerGeneration) Finish() []Violation { return nil }

// ---------------------------------------------------------------------------
// liveness bookkeeping

// feeds tracks which changefeeds run, their tables and stored checkpoints.
type feeds struct {
	state      map[string]string  // changefeed -> FeedState ("" before the first StateChanged means normal)
	tables     map[string][]int64 // changefeed -> tables it replicates
	checkpoint map[string]Event   // changefeed -> last CheckpointStored (or created/resumed)
	ddlTables  []int64            // tables created by DDL for every changefeed (TableCreated without Changefeed)
}

func newFeeds() feeds {
	return feeds{state: map[string]string{}, tables: map[string][]int64{}, checkpoint: map[string]Event{}}
}

func (f *feeds) observe(e *Event) {
	switch e.Kind {
	case ChangefeedCreated:
		f.state[e.Changefeed] = StateNormal
		f.tables[e.Changefeed] = append([]int64(nil), e.Tables...)
		f.checkpoint[e.Changefeed] = *e
	case ChangefeedResumed:
		f.state[e.Changefeed] = StateNormal
		f.checkpoint[e.Changefeed] = *e
	case ChangefeedRemoved:
		delete(f.state, e.Changefeed)
		delete(f.tables, e.Changefeed)
		delete(f.checkpoint, e.Changefeed)
	case StateChanged:
		if _, ok := f.state[e.Changefeed]; ok || e.Changefeed != "" {
			f.state[e.Changefeed] = e.State
		}
	case CheckpointStored:
		if prev, ok := f.checkpoint[e.Changefeed]; !ok || e.Checkpoint >= prev.Checkpoint {
			f.checkpoint[e.Changefeed] = *e
		}
	case DDLCommitted:
		// A dropped table is no longer owed a dispatcher; an added one is
		// (table-set-follows-ddls judges both).
		if ts, ok := f.tables[e.Changefeed]; ok {
			kept := ts[:0]
			for _, t := range ts {
				if !hasTable(e.Dropped, t) {
					kept = append(kept, t)
				}
			}
			for _, t := range e.Added {
				kept = appendUnique(kept, t)
			}
			f.tables[e.Changefeed] = kept
		}
	case TableCreated:
		if e.Changefeed == "" {
			f.ddlTables = append(f.ddlTables, e.Span.Table)
			for cf := range f.tables {
				f.tables[cf] = appendUnique(f.tables[cf], e.Span.Table)
			}
		} else {
			f.tables[e.Changefeed] = appendUnique(f.tables[e.Changefeed], e.Span.Table)
		}
	}
}

func appendUnique(ts []int64, t int64) []int64 {
	for _, x := range ts {
		if x == t {
			return ts
		}
	}
	return append(ts, t)
}

// running lists the changefeeds expected to make progress: known, in normal
// or warning state. Stopped, failed, finished and removed changefeeds are
// not expected to replicate.
func (f *feeds) running() []string {
	var out []string
	for _, cf := range sortedKeys(f.state) {
		if s := f.state[cf]; s == StateNormal || s == StateWarning || s == "" {
			out = append(out, cf)
		}
	}
	return out
}

// ---------------------------------------------------------------------------
// every-span-replicated

// everySpanReplicated checks that once faults stop, every table of a running
// changefeed is covered by exactly one working dispatcher: the working
// dispatchers' spans tile the table with no gap and no overlap (D.L1; #3411
// fixed by #3691, #4763, #3126). Judged at Quiesced.
// Blind spot: judged only where the stream has a Quiesced marker (model,
// simulation, runtime); production logs never quiesce.
type everySpanReplicated struct {
	d  *dispatchers
	f  feeds
	qs bool
}

// NewEverySpanReplicated returns the every-span-replicated monitor.
func NewEverySpanReplicated() Monitor {
	return &everySpanReplicated{d: newDispatchers(), f: newFeeds()}
}

func (m *everySpanReplicated) Property() Property { return EverySpanReplicated }

func (m *everySpanReplicated) Observe(e Event) []Violation {
	m.d.observe(&e)
	m.f.observe(&e)
	if e.Kind != Quiesced {
		return nil
	}
	var out []Violation
	for _, cf := range m.f.running() {
		tables := append([]int64(nil), m.f.tables[cf]...)
		sort.Slice(tables, func(i, j int) bool { return tables[i] < tables[j] })
		for _, t := range tables {
			if t == 0 {
				continue
			}
			if problem, ev := m.coverage(cf, t); problem != "" {
				out = append(out, Violation{
					Property: EverySpanReplicated, Changefeed: cf, Span: WholeTable(t),
					Message: fmt.Sprintf("every span must eventually be replicated, but after faults healed and the cluster quiesced table %d %s: %s",
						t, problem, coords(cf, "", WholeTable(t), 0, 0)),
					Evidence: append(ev, e),
				})
			}
		}
	}
	return out
}

// coverage returns "" if the working dispatchers of table t tile it exactly.
func (m *everySpanReplicated) coverage(cf string, t int64) (string, []Event) {
	var spans []Event
	for _, ld := range m.d.byTable[cf][t] {
		if ld.working {
			spans = append(spans, ld.created)
		}
	}
	if len(spans) == 0 {
		return "has no working dispatcher", nil
	}
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].Span.Start != spans[j].Span.Start {
			return spans[i].Span.Start < spans[j].Span.Start
		}
		return dispatcherKey(spans[i].Node, spans[i].Dispatcher) < dispatcherKey(spans[j].Node, spans[j].Dispatcher)
	})
	pos, toEnd := "", false // keys below pos are covered; toEnd: covered to the table's end
	for i, s := range spans {
		switch {
		case toEnd || s.Span.Start < pos:
			return fmt.Sprintf("has overlapping working dispatchers %s and %s", spans[i-1].Dispatcher, s.Dispatcher), spans
		case s.Span.Start > pos:
			return fmt.Sprintf("has no working dispatcher for keys [%q,%q)", pos, s.Span.Start), spans
		}
		if s.Span.End == "" {
			toEnd = true
		} else {
			pos = s.Span.End
		}
	}
	if !toEnd {
		return fmt.Sprintf("has no working dispatcher for keys from %q to the end", pos), spans
	}
	return "", nil
}

func (m *everySpanReplicated) Finish() []Violation { return nil }

// ---------------------------------------------------------------------------
// checkpoint-advances-after-heal

// checkpointAdvancesAfterHeal checks that once faults stop, the stored
// checkpoint of every running changefeed reaches the upstream resolved ts
// recorded at heal time (FaultsHealed.Checkpoint) (D.L2; tiflow#9595, #5709,
// #3952). Judged at Quiesced.
// Blind spot: needs FaultsHealed and Quiesced markers; production logs have
// neither (traces uses its checkpoint-stuck symptom instead).
type checkpointAdvancesAfterHeal struct {
	f      feeds
	healed *Event
}

// NewCheckpointAdvancesAfterHeal returns the checkpoint-advances-after-heal monitor.
func NewCheckpointAdvancesAfterHeal() Monitor {
	return &checkpointAdvancesAfterHeal{f: newFeeds()}
}

func (m *checkpointAdvancesAfterHeal) Property() Property { return CheckpointAdvancesAfterHeal }

func (m *checkpointAdvancesAfterHeal) Observe(e Event) []Violation {
	m.f.observe(&e)
	switch e.Kind {
	case FaultsHealed:
		h := e
		m.healed = &h
	case Quiesced:
		if m.healed == nil {
			return nil
		}
		var out []Violation
		target := m.healed.Checkpoint
		for _, cf := range m.f.running() {
			cp := m.f.checkpoint[cf]
			if cp.Checkpoint < target {
				out = append(out, Violation{
					Property: CheckpointAdvancesAfterHeal, Changefeed: cf, Ts: cp.Checkpoint,
					Message: fmt.Sprintf("the checkpoint must advance once faults heal, but after the cluster quiesced the stored checkpoint is %d, below the upstream resolved ts %d at heal time (state %s): %s",
						cp.Checkpoint, target, stateOrNormal(m.f.state[cf]), coords(cf, "", Span{}, 0, 0)),
					Evidence: []Event{*m.healed, cp, e},
				})
			}
		}
		return out
	}
	return nil
}

func stateOrNormal(s string) string {
	if s == "" {
		return StateNormal
	}
	return s
}

func (m *checkpointAdvancesAfterHeal) Finish() []Violation { return nil }
