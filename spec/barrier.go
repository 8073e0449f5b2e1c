package spec

import (
	"fmt"
	"sort"
)

// The blocking DDL barrier (reference A.7; TiCDC maintainer/barrier.go,
// barrier_event.go, downstreamadapter/dispatcher/basic_dispatcher.go at
// HeadCommit). A blocking DDL or a syncpoint at commitTs T blocks the
// dispatchers of the tables it influences: each flushes its rows below T,
// reports WAITING and waits; the maintainer picks one writer (Write), which
// writes the DDL and reports DONE, then tells the others to Pass; each
// reports DONE and resumes.

// Influence types (heartbeatpb.InfluenceType), as carried by Event.Influence.
const (
	InfluenceNormal = "normal" // the listed tables (Event.Tables)
	InfluenceDB     = "db"     // every table of one schema, and the table trigger
	InfluenceAll    = "all"    // every table, and the table trigger
)

// Block stages (heartbeatpb.BlockStage), as carried by BlockStatusReported.State.
const (
	StageNone    = "NONE"
	StageWaiting = "WAITING"
	StageWriting = "WRITING"
	StageDone    = "DONE"
)

// Block actions (heartbeatpb.Action), as carried by BlockActionReceived.State.
const (
	ActionWrite = "write"
	ActionPass  = "pass"
)

// Barrier properties.
const (
	// DDLOrderedWithRows (safety): a blocking DDL at commitTs T is written
	// exactly once; only after every dispatcher of the tables it blocks has
	// flushed every row with commitTs < T; and no dispatcher of those tables,
	// nor of a table it creates or truncates, writes a row with commitTs > T
	// before the DDL is written.
	DDLOrderedWithRows Property = "ddl-ordered-with-rows"
	// BarrierEventuallyPasses (liveness): once faults stop, every blocked
	// dispatcher resumes.
	BarrierEventuallyPasses Property = "barrier-eventually-passes"
	// TableSetFollowsDDLs (liveness): after a drop or truncate no dispatcher
	// of the old table remains; after a create, recover or truncate the new
	// table's span is covered exactly once.
	TableSetFollowsDDLs Property = "table-set-follows-ddls"
)

// blockKey identifies a block event: TiCDC keys them by (commitTs, isSyncPoint).
type blockKey struct {
	ts   uint64
	sync bool
}

func keyOf(e Event) blockKey { return blockKey{e.Checkpoint, e.SyncPoint} }

func (k blockKey) String() string {
	if k.sync {
		return fmt.Sprintf("syncpoint at %d", k.ts)
	}
	return fmt.Sprintf("DDL at commitTs %d", k.ts)
}

// tableSet tracks the tables of each changefeed as the upstream's DDL
// history changes them: the tables at creation, TableCreated, and each
// DDLCommitted's Dropped and Added.
type tableSet map[string]map[int64]bool

func (ts tableSet) observe(e *Event) {
	switch e.Kind {
	case ChangefeedCreated:
		m := map[int64]bool{}
		for _, t := range e.Tables {
			m[t] = true
		}
		ts[e.Changefeed] = m
	case ChangefeedRemoved:
		delete(ts, e.Changefeed)
	case TableCreated:
		// Without a changefeed the upstream created it for every one.
		for cf, m := range ts {
			if e.Changefeed == "" || e.Changefeed == cf {
				m[e.Span.Table] = true
			}
		}
	case DDLCommitted:
		if m := ts[e.Changefeed]; m != nil {
			for _, t := range e.Dropped {
				delete(m, t)
			}
			for _, t := range e.Added {
				m[t] = true
			}
		}
	}
}

func (ts tableSet) sorted(cf string) []int64 {
	out := make([]int64, 0, len(ts[cf]))
	for t := range ts[cf] {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// BlockedTables returns the table spans (never the trigger, table 0) a
// block event blocks, given the tables that exist just before it: the listed
// ones for a normal DDL, every table for DB and all (the model and the
// simulation have one schema).
func BlockedTables(e Event, existing []int64) []int64 {
	if e.Influence == InfluenceNormal || (e.Influence == "" && !e.SyncPoint) {
		var out []int64
		for _, t := range e.Tables {
			if t != 0 {
				out = append(out, t)
			}
		}
		return out
	}
	return append([]int64(nil), existing...)
}

// ---------------------------------------------------------------------------
// ddl-ordered-with-rows

type pendingDDL struct {
	committed Event
	blocked   []int64
	written   *Event
	// writer is the writing dispatcher's incarnation (nil when it was not
	// live): a dispatcher ID created again on the node is a new one.
	writer *liveDispatcher
}

type ddlFeed struct {
	start uint64
	ddls  map[blockKey]*pendingDDL
	rows  map[int64][]Event // per table, rows not yet acknowledged by the sink
	// old are the dispatchers live when the changefeed resumed: they belong
	// to the run before, which may have written the DDLs the resumed run
	// replays, so their late flushes are not judged against the replay.
	old map[*liveDispatcher]bool
}

// ddlOrderedWithRows checks DDLOrderedWithRows. The tables a DDL creates
// (DDLCommitted.Added: a create, a recover, the new ID of a truncate) count
// as blocked for the rows above it: none of their rows may reach the sink
// before the DDL is written (their rows start above it; that none is lost
// across it is checkpoint-not-past-unflushed's gap rule, which tracks a
// table from its creation). Allowance: a DDL written
// again after its first writer stopped running (removed by a move, its
// manager closed, its node gone) is not a violation: the writer's DONE may
// have been lost with it, and TiCDC then has the span's next dispatcher
// write it again (at least once); the model's ghost DDLTwice is the same
// rule. It knows a block event from
// DDLCommitted (the upstream's history); a DDLWritten it cannot match is not
// judged. Rows are DataWritten (Span.Start is the row key) and
// DataFlushed acknowledges every row of its span at or below its
// Checkpoint, as in checkpoint-not-past-unflushed. Block events at or below
// the changefeed's start (or resumed) checkpoint are not owed.
// Blind spot: needs DataWritten/DataFlushed, which only cdcspec's own runs
// emit; production logs cannot show this property.
type ddlOrderedWithRows struct {
	tables tableSet
	cf     map[string]*ddlFeed
	d      *dispatchers
}

// NewDDLOrderedWithRows returns the ddl-ordered-with-rows monitor.
func NewDDLOrderedWithRows() Monitor {
	return &ddlOrderedWithRows{tables: tableSet{}, cf: map[string]*ddlFeed{}, d: newDispatchers()}
}

func (m *ddlOrderedWithRows) Property() Property { return DDLOrderedWithRows }

func (m *ddlOrderedWithRows) get(cf string) *ddlFeed {
	f := m.cf[cf]
	if f == nil {
		f = &ddlFeed{ddls: map[blockKey]*pendingDDL{}, rows: map[int64][]Event{}}
		m.cf[cf] = f
	}
	return f
}

func (m *ddlOrderedWithRows) Observe(e Event) []Violation {
	m.d.observe(&e)
	if e.Kind == DDLCommitted {
		// The blocked set is taken before the DDL changes the table set.
		f := m.get(e.Changefeed)
		if e.Checkpoint > f.start {
			f.ddls[keyOf(e)] = &pendingDDL{committed: e, blocked: BlockedTables(e, m.tables.sorted(e.Changefeed))}
		}
	}
	m.tables.observe(&e)
	switch e.Kind {
	case ChangefeedCreated, ChangefeedResumed:
		f := m.get(e.Changefeed)
		f.start = e.Checkpoint
		f.old = map[*liveDispatcher]bool{}
		for _, ld := range m.d.cf[e.Changefeed] {
			f.old[ld] = true
		}
		for k := range f.ddls {
			if k.ts <= e.Checkpoint {
				delete(f.ddls, k)
			} else {
				f.ddls[k].written = nil // replayed from the new checkpoint
			}
		}
		dropRowsThrough(f.rows, e.Checkpoint)
	case ChangefeedRemoved:
		delete(m.cf, e.Changefeed)
	case DataWritten:
		f := m.get(e.Changefeed)
		if e.Checkpoint > f.start {
			f.rows[e.Span.Table] = append(f.rows[e.Span.Table], e)
		}
	case DataFlushed:
		return m.flushed(e)
	case DDLWritten:
		return m.written(e)
	}
	return nil
}

// flushed acknowledges rows; a row above an unwritten block event that
// blocks its table is a violation.
func (m *ddlOrderedWithRows) flushed(e Event) []Violation {
	f := m.cf[e.Changefeed]
	if f == nil {
		return nil
	}
	rows := f.rows[e.Span.Table]
	kept := rows[:0]
	var acked []Event
	for _, r := range rows {
		if r.Checkpoint <= e.Checkpoint && spanHasKey(e.Span, r.Span.Start) {
			acked = append(acked, r)
			continue
		}
		kept = append(kept, r)
	}
	f.rows[e.Span.Table] = kept
	if ld := m.d.lookup(e.Changefeed, e.Node, e.Dispatcher); e.Dispatcher != "" && ld != nil && f.old[ld] {
		return nil
	}
	for _, k := range sortedKeysOf(f.ddls) {
		d := f.ddls[k]
		created := hasTable(d.committed.Added, e.Span.Table)
		if d.written != nil || !(hasTable(d.blocked, e.Span.Table) || created) {
			continue
		}
		what := "no row above a blocking DDL may be written before the DDL"
		if created {
			what = "no row of a table a DDL creates or truncates may be written before the DDL"
		}
		for _, r := range acked {
			if r.Checkpoint > k.ts {
				return []Violation{{
					Property: DDLOrderedWithRows, Changefeed: e.Changefeed, Node: e.Node, Span: e.Span, Ts: k.ts,
					Message: fmt.Sprintf("%s, but dispatcher %s flushed the row of table %d at commitTs %d while the %s (%s) was not written: %s",
						what, e.Dispatcher, e.Span.Table, r.Checkpoint, k, describeDDL(d.committed), coords(e.Changefeed, e.Node, e.Span, 0, k.ts)),
					Evidence: []Event{d.committed, r, e},
				}}
			}
		}
	}
	return nil
}

// written judges a DDLWritten: exactly once, after every row below it.
func (m *ddlOrderedWithRows) written(e Event) []Violation {
	f := m.cf[e.Changefeed]
	if f == nil {
		return nil
	}
	k := keyOf(e)
	d := f.ddls[k]
	if d == nil {
		return nil
	}
	if d.written != nil && (d.writer == nil || m.d.lookup(e.Changefeed, d.written.Node, d.written.Dispatcher) != d.writer) {
		// At-least-once across a writer that stopped: its DONE may not have
		// been accepted (it moved, or its node died), and the barrier asks
		// the span's next dispatcher (or the same ID's next incarnation) to
		// write again.
		w := e
		d.written = &w
		d.writer = m.d.lookup(e.Changefeed, e.Node, e.Dispatcher)
		return nil
	}
	if d.written != nil {
		return []Violation{{
			Property: DDLOrderedWithRows, Changefeed: e.Changefeed, Node: e.Node, Ts: k.ts,
			Message: fmt.Sprintf("a blocking DDL must be written exactly once, but the %s (%s) was written by dispatcher %s on node %s and again by dispatcher %s on node %s: %s",
				k, describeDDL(d.committed), d.written.Dispatcher, d.written.Node, e.Dispatcher, e.Node, coords(e.Changefeed, "", Span{}, 0, k.ts)) + "; the first writer still runs",
			Evidence: []Event{d.committed, *d.written, e},
		}}
	}
	w := e
	d.written = &w
	d.writer = m.d.lookup(e.Changefeed, e.Node, e.Dispatcher)
	for _, t := range d.blocked {
		for _, r := range f.rows[t] {
			if r.Checkpoint < k.ts {
				return []Violation{{
					Property: DDLOrderedWithRows, Changefeed: e.Changefeed, Node: e.Node, Span: WholeTable(t), Ts: k.ts,
					Message: fmt.Sprintf("a blocking DDL must be written only after every row below it, but the %s (%s) was written while the row of table %d at commitTs %d was not flushed: %s",
						k, describeDDL(d.committed), t, r.Checkpoint, coords(e.Changefeed, e.Node, WholeTable(t), 0, k.ts)),
					Evidence: []Event{d.committed, r, e},
				}}
			}
		}
	}
	return nil
}

func (m *ddlOrderedWithRows) Finish() []Violation { return nil }

func describeDDL(e Event) string {
	what := e.Reason
	if what == "" {
		what = "DDL"
		if e.SyncPoint {
			what = "syncpoint"
		}
	}
	inf := e.Influence
	if inf == "" {
		inf = InfluenceNormal
	}
	s := what + ", influence " + inf
	if inf == InfluenceNormal && len(e.Tables) > 0 {
		s += ", blocks tables " + JoinTables(e.Tables)
	}
	return s
}

func hasTable(ts []int64, t int64) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

func sortedKeysOf[V any](m map[blockKey]V) []blockKey {
	out := make([]blockKey, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].ts != out[j].ts {
			return out[i].ts < out[j].ts
		}
		return !out[i].sync && out[j].sync
	})
	return out
}

// ---------------------------------------------------------------------------
// barrier-eventually-passes

// barrierEventuallyPasses checks BarrierEventuallyPasses: at Quiesced after
// FaultsHealed, no live dispatcher of a running changefeed is still blocked:
// its last block status is WAITING (or it got Write and reported nothing
// since) for an event it never reported DONE. A dispatcher that is removed,
// whose manager closed or whose node left is not blocked any more.
// Blind spot: needs the quiescence marker; on production logs traces judges
// a stuck barrier by its symptoms ("barrier event is not resolved").
type barrierEventuallyPasses struct {
	d       *dispatchers
	f       feeds
	blocked map[string]map[string]Event // changefeed -> node/dispatcher -> WAITING status
	healed  bool
}

// NewBarrierEventuallyPasses returns the barrier-eventually-passes monitor.
func NewBarrierEventuallyPasses() Monitor {
	return &barrierEventuallyPasses{d: newDispatchers(), f: newFeeds(), blocked: map[string]map[string]Event{}}
}

func (m *barrierEventuallyPasses) Property() Property { return BarrierEventuallyPasses }

func (m *barrierEventuallyPasses) Observe(e Event) []Violation {
	m.d.observe(&e)
	m.f.observe(&e)
	switch e.Kind {
	case FaultsHealed:
		m.healed = true
	case DispatcherCreated:
		// A new incarnation (a span moved back to a node keeps its
		// dispatcher ID) has not blocked yet.
		if b := m.blocked[e.Changefeed]; len(b) > 0 {
			var buf [128]byte
			delete(b, string(appendDispatcherKey(buf[:0], e.Node, e.Dispatcher)))
		}
	case BlockStatusReported:
		key := dispatcherKey(e.Node, e.Dispatcher)
		switch e.State {
		case StageWaiting:
			b := m.blocked[e.Changefeed]
			if b == nil {
				b = map[string]Event{}
				m.blocked[e.Changefeed] = b
			}
			b[key] = e
		case StageDone:
			if w, ok := m.blocked[e.Changefeed][key]; ok && keyOf(w) == keyOf(e) {
				delete(m.blocked[e.Changefeed], key)
			}
		}
	case Quiesced:
		if !m.healed {
			return nil
		}
		var out []Violation
		for _, cf := range m.f.running() {
			b := m.blocked[cf]
			for _, key := range sortedKeys(b) {
				w := b[key]
				if !m.d.live(cf, key) {
					delete(b, key)
					continue
				}
				out = append(out, Violation{
					Property: BarrierEventuallyPasses, Changefeed: cf, Node: w.Node, Span: w.Span, Ts: w.Checkpoint,
					Message: fmt.Sprintf("every blocked dispatcher must eventually resume, but after faults healed and the cluster quiesced dispatcher %s on node %s is still blocked at the %s (it reported WAITING and never DONE): %s",
						w.Dispatcher, w.Node, keyOf(w), coords(cf, w.Node, w.Span, 0, w.Checkpoint)),
					Evidence: []Event{w, e},
				})
			}
		}
		return out
	}
	return nil
}

func (m *barrierEventuallyPasses) Finish() []Violation { return nil }

func (d *dispatchers) live(cf, key string) bool { return d.cf[cf][key] != nil }

// ---------------------------------------------------------------------------
// table-set-follows-ddls

// tableSetFollowsDDLs checks TableSetFollowsDDLs at Quiesced after
// FaultsHealed, for every DDL at or below the upstream resolved ts at heal
// time: a table it dropped has no live dispatcher, a table it added has
// exactly one working dispatcher covering it.
// Blind spot: needs the quiescence marker.
type tableSetFollowsDDLs struct {
	d      *dispatchers
	f      feeds
	ddls   map[string][]Event
	healed *Event
}

// NewTableSetFollowsDDLs returns the table-set-follows-ddls monitor.
func NewTableSetFollowsDDLs() Monitor {
	return &tableSetFollowsDDLs{d: newDispatchers(), f: newFeeds(), ddls: map[string][]Event{}}
}

func (m *tableSetFollowsDDLs) Property() Property { return TableSetFollowsDDLs }

func (m *tableSetFollowsDDLs) Observe(e Event) []Violation {
	m.d.observe(&e)
	m.f.observe(&e)
	switch e.Kind {
	case ChangefeedRemoved:
		delete(m.ddls, e.Changefeed)
	case DDLCommitted:
		if len(e.Dropped) > 0 || len(e.Added) > 0 {
			m.ddls[e.Changefeed] = append(m.ddls[e.Changefeed], e)
		}
	case FaultsHealed:
		h := e
		m.healed = &h
	case Quiesced:
		if m.healed == nil {
			return nil
		}
		var out []Violation
		for _, cf := range m.f.running() {
			// A table dropped and later re-added (recover) is judged by its
			// last DDL only.
			last := map[int64]Event{}
			for _, d := range m.ddls[cf] {
				if d.Checkpoint > m.healed.Checkpoint {
					continue
				}
				for _, t := range d.Dropped {
					last[t] = d
				}
				for _, t := range d.Added {
					last[t] = d
				}
			}
			tables := make([]int64, 0, len(last))
			for t := range last {
				tables = append(tables, t)
			}
			sort.Slice(tables, func(i, j int) bool { return tables[i] < tables[j] })
			for _, t := range tables {
				d := last[t]
				if hasTable(d.Added, t) {
					if n := m.working(cf, t); n != 1 {
						out = append(out, Violation{
							Property: TableSetFollowsDDLs, Changefeed: cf, Span: WholeTable(t), Ts: d.Checkpoint,
							Message: fmt.Sprintf("a table a DDL adds must be covered exactly once, but after faults healed and the cluster quiesced table %d, added by the %s (%s), has %d working dispatchers: %s",
								t, keyOf(d), describeDDL(d), n, coords(cf, "", WholeTable(t), 0, d.Checkpoint)),
							Evidence: []Event{d, e},
						})
					}
					continue
				}
				if live := m.d.byTable[cf][t]; len(live) > 0 {
					keys := make([]string, 0, len(live))
					for k := range live {
						keys = append(keys, k)
					}
					sort.Strings(keys)
					ld := live[keys[0]]
					out = append(out, Violation{
						Property: TableSetFollowsDDLs, Changefeed: cf, Span: WholeTable(t), Ts: d.Checkpoint,
						Message: fmt.Sprintf("no dispatcher of a dropped table may remain, but after faults healed and the cluster quiesced dispatcher %s on node %s of table %d, dropped by the %s (%s), is live: %s",
							ld.created.Dispatcher, ld.created.Node, t, keyOf(d), describeDDL(d), coords(cf, ld.created.Node, WholeTable(t), 0, d.Checkpoint)),
						Evidence: []Event{d, ld.created, e},
					})
				}
			}
		}
		return out
	}
	return nil
}

func (m *tableSetFollowsDDLs) working(cf string, t int64) int {
	n := 0
	for _, ld := range m.d.byTable[cf][t] {
		if ld.working {
			n++
		}
	}
	return n
}

func (m *tableSetFollowsDDLs) Finish() []Violation { return nil }
