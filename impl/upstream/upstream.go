// Package upstream is the synthetic upstream (TiKV + schema store + the
// puller's kv client), deterministic from a seed: per table, row changes
// at seeded commit timestamps and a resolved ts, a versioned schema with
// CREATE TABLE DDLs, and failures: the whole upstream can stall (all TiKV
// down) and recover, like seed 004 (tiflow #9595).
//
// Timestamps are virtual milliseconds (a TSO without the logical part).
//
// The puller path models tiflow's kv client per table: one region, served
// by a store stream generation made of a region worker and a receiver. The
// bug stuck-after-upstream-failure (tiflow #9595, introduced by #9519) moves
// evictAllRegions from receiveFromStream's defer (after both goroutines
// exit) into the worker's defer: a region re-requested on the old stream
// while its receiver still runs gets its first response after the worker is
// gone, becomes active in a dead worker, is never evicted, keeps its range
// lock, and its resolved ts freezes forever. See spec/SPEC.md "Seed 004".
package upstream

import (
	"fmt"
	"math/rand/v2"
	"sort"

	"go.uber.org/zap"

	"cdcspec/impl/core"
	"cdcspec/impl/logging"
	"cdcspec/spec"
)

// Config of the synthetic upstream.
type Config struct {
	// LagMs: resolved ts = now - LagMs while the upstream is up.
	LagMs int64
	// RowGapMs: mean gap between two row changes of one table.
	RowGapMs int64
	// RecoveryMs: after a stall ends, region leaders move for this long and
	// regions see NotLeader errors.
	RecoveryMs int64
}

func (c Config) withDefaults() Config {
	if c.LagMs == 0 {
		c.LagMs = 100
	}
	if c.RowGapMs == 0 {
		c.RowGapMs = 300
	}
	if c.RecoveryMs == 0 {
		c.RecoveryMs = 5000
	}
	return c
}

type regionLoc uint8

const (
	regionQueued regionLoc = iota
	regionPending
	regionActive
)

type stream struct {
	gen             int
	workerRunning   bool
	receiverRunning bool
	cancelled       bool
}

// puller is one table's kv-client state (one region).
type puller struct {
	loc    regionLoc
	gen    int
	rts    uint64
	stream *stream // the store stream generation the region was requested on
	cur    *stream // the store's current stream (reused while its receiver runs)
	nextID int
}

type table struct {
	id       int64
	createTs uint64
	// dropTs is the commit ts of the DDL that dropped the table (0: none):
	// the table has rows below it only and exists before it only.
	dropTs  uint64
	nextRow uint64
	p       puller
}

// Upstream implements core.Upstream.
type Upstream struct {
	cfg  Config
	rng  *rand.Rand
	bugs *spec.BugSet
	lg   *logging.Logger

	now        int64
	resolved   uint64
	stalled    bool
	recovering int64 // recovery window end
	tables     map[int64]*table
	order      []int64
	ddls       []core.DDL
	blocks     []core.BlockEvent
	nextTable  int64
	// Feeds returns the changefeeds that are owed row changes (DataWritten).
	Feeds func() []string
}

// New returns an upstream with tables 1..n existing from the start.
func New(seed uint64, n int, now int64, cfg Config, bugs *spec.BugSet, lg *logging.Logger) *Upstream {
	cfg = cfg.withDefaults()
	u := &Upstream{cfg: cfg, rng: rand.New(rand.NewPCG(seed, 0x75707374)), bugs: bugs, lg: lg, now: now,
		tables: map[int64]*table{}, nextTable: 1}
	u.resolved = uint64(now - cfg.LagMs)
	for i := 0; i < n; i++ {
		u.addTable(0)
	}
	return u
}

func (u *Upstream) addTable(createTs uint64) *table {
	t := &table{id: u.nextTable, createTs: createTs}
	u.nextTable++
	start := createTs
	if start < u.resolved {
		start = u.resolved
	}
	t.nextRow = start + 1 + uint64(u.rng.Int64N(2*u.cfg.RowGapMs))
	t.p.rts = start
	u.tables[t.id] = t
	u.order = append(u.order, t.id)
	return t
}

// nextDDLTs is the commit ts of the next DDL: not yet resolved, and above
// every DDL so far (one DDL per ts).
func (u *Upstream) nextDDLTs() uint64 {
	ts := uint64(u.now)
	if ts <= u.resolved {
		ts = u.resolved + 1
	}
	for _, d := range u.ddls {
		if d.CommitTs >= ts {
			ts = d.CommitTs + 1
		}
	}
	for _, b := range u.blocks {
		if b.CommitTs >= ts {
			ts = b.CommitTs + 1
		}
	}
	return ts
}

// CreateTable commits a CREATE TABLE at the next ts (not yet resolved) and
// returns the table ID and commit ts.
func (u *Upstream) CreateTable(out *core.Effects) (int64, uint64) {
	ts := u.nextDDLTs()
	t := u.addTable(ts)
	u.ddls = append(u.ddls, core.DDL{CommitTs: ts, Table: t.id})
	u.lg.Event(out, spec.Event{Kind: spec.TableCreated, Span: spec.WholeTable(t.id), Checkpoint: ts})
	return t.id, ts
}

// Blocking DDL kinds for CommitBlockDDL (the model's Config.Barrier values).
const (
	DDLNormal    = "normal"    // ALTER TABLE on a partitioned table whose partitions are t1, t2: blocks both, not the trigger
	DDLDrop      = "drop"      // DROP TABLE t: blocks t and the trigger, drops t
	DDLTruncate  = "truncate"  // TRUNCATE TABLE t: drops t, adds a new table
	DDLRename    = "rename"    // RENAME TABLES t1, t2: blocks both and the trigger
	DDLDB        = "db"        // a database-level DDL: DB influence
	DDLSyncPoint = "syncpoint" // a syncpoint: All influence
)

// BlockDDLKinds lists CommitBlockDDL's kinds and how many tables each names.
var BlockDDLKinds = map[string]int{DDLNormal: 2, DDLDrop: 1, DDLTruncate: 1, DDLRename: 2, DDLDB: 0, DDLSyncPoint: 0}

// CommitBlockDDL commits a blocking DDL (or a syncpoint) of the kind at the
// next ts on the named tables, which must exist, and emits DDLCommitted
// for every changefeed. It returns the event.
func (u *Upstream) CommitBlockDDL(kind string, tables []int64, out *core.Effects) (core.BlockEvent, error) {
	n, ok := BlockDDLKinds[kind]
	if !ok {
		return core.BlockEvent{}, fmt.Errorf("unknown blocking DDL kind %q (known: normal, drop, truncate, rename, db, syncpoint)", kind)
	}
	if len(tables) != n {
		return core.BlockEvent{}, fmt.Errorf("blocking DDL %q names %d tables, got %d", kind, n, len(tables))
	}
	ts := u.nextDDLTs()
	for _, t := range tables {
		if tb := u.tables[t]; tb == nil || tb.createTs > ts || tb.dropTs != 0 {
			return core.BlockEvent{}, fmt.Errorf("blocking DDL %q: table %d does not exist", kind, t)
		}
	}
	ev := BlockEventOf(kind, tables, ts)
	for _, t := range ev.NeedDropped {
		u.tables[t].dropTs = ts
	}
	if kind == DDLTruncate {
		ev.NeedAdded = []int64{u.addTable(ts).id}
	}
	u.blocks = append(u.blocks, ev)
	var feeds []string
	if u.Feeds != nil {
		feeds = u.Feeds()
	}
	for _, cf := range feeds {
		u.lg.Event(out, DDLCommittedEvent(cf, ev))
	}
	return ev, nil
}

// BlockEventOf is the block event of a blocking DDL of the kind at ts on
// tables (CommitBlockDDL checked both); a truncate's added table is the
// caller's (NeedAdded is left empty). The runtime's upstream builds its
// events with it too.
func BlockEventOf(kind string, tables []int64, ts uint64) core.BlockEvent {
	ev := core.BlockEvent{CommitTs: ts, Influence: spec.InfluenceNormal}
	name := func(i int) string { return fmt.Sprintf("t%d", tables[i]) }
	switch kind {
	case DDLNormal:
		ev.BlockTables = []int64{tables[0], tables[1]}
		ev.Query = "alter table p add column c int (partitions " + name(0) + ", " + name(1) + ")"
	case DDLDrop, DDLTruncate:
		ev.BlockTables, ev.NeedDropped = []int64{0, tables[0]}, []int64{tables[0]}
		ev.Query = kind + " table " + name(0)
	case DDLRename:
		ev.BlockTables = []int64{0, tables[0], tables[1]}
		ev.Query = "rename tables " + name(0) + " to " + name(0) + "_new, " + name(1) + " to " + name(1) + "_new"
	case DDLDB:
		ev.Influence, ev.Query = spec.InfluenceDB, "alter database test charset utf8mb4"
	case DDLSyncPoint:
		ev.Influence, ev.IsSyncPoint, ev.Query = spec.InfluenceAll, true, "syncpoint"
	}
	return ev
}

// DDLCommittedEvent is the DDLCommitted event of ev for changefeed cf.
func DDLCommittedEvent(cf string, ev core.BlockEvent) spec.Event {
	e := spec.Event{Kind: spec.DDLCommitted, Changefeed: cf, Checkpoint: ev.CommitTs, Influence: ev.Influence, SyncPoint: ev.IsSyncPoint,
		Dropped: ev.NeedDropped, Added: ev.NeedAdded, Reason: ev.Query}
	if ev.Influence == spec.InfluenceNormal {
		e.Tables = ev.BlockTables
	}
	return e
}

// BlockEventsBetween implements core.BlockEventSource.
func (u *Upstream) BlockEventsBetween(from, to uint64) []core.BlockEvent {
	var out []core.BlockEvent
	for _, b := range u.blocks {
		if b.CommitTs > from && b.CommitTs <= to {
			out = append(out, b)
		}
	}
	return out
}

// Stall makes every TiKV unavailable: resolved ts stops, streams break.
func (u *Upstream) Stall(out *core.Effects) {
	if u.stalled {
		return
	}
	u.stalled = true
	u.lg.Event(out, spec.Event{Kind: spec.UpstreamStalled, Checkpoint: u.resolved})
}

// Resume brings TiKV back; region leaders move for RecoveryMs.
func (u *Upstream) Resume(out *core.Effects) {
	if !u.stalled {
		return
	}
	u.stalled = false
	u.recovering = u.now + u.cfg.RecoveryMs
	u.lg.Event(out, spec.Event{Kind: spec.UpstreamResumed, Checkpoint: u.resolved})
}

// Stalled reports whether the upstream is down.
func (u *Upstream) Stalled() bool { return u.stalled }

// GlobalResolvedTs is the upstream resolved ts (what a healthy puller sees).
func (u *Upstream) GlobalResolvedTs() uint64 { return u.resolved }

// Advance moves the upstream to now: resolved ts, rows, and one step of
// every table's puller.
func (u *Upstream) Advance(now int64, out *core.Effects) {
	u.now = now
	if !u.stalled {
		if r := uint64(now - u.cfg.LagMs); r > u.resolved {
			u.resolved = r
		}
	}
	var feeds []string
	if u.Feeds != nil {
		feeds = u.Feeds()
	}
	for _, id := range u.order {
		t := u.tables[id]
		for t.nextRow <= u.resolved && (t.dropTs == 0 || t.nextRow < t.dropTs) {
			if len(feeds) > 0 {
				key := rowKey(u.rng)
				for _, cf := range feeds {
					u.lg.Event(out, spec.Event{Kind: spec.DataWritten, Changefeed: cf, Span: spec.Span{Table: id, Start: key}, Checkpoint: t.nextRow})
				}
			}
			t.nextRow += 1 + uint64(u.rng.Int64N(2*u.cfg.RowGapMs))
		}
		u.stepPuller(t)
	}
}

func rowKey(r *rand.Rand) string {
	b := make([]byte, 8)
	for i := range b {
		b[i] = 'a' + byte(r.IntN(26))
	}
	return string(b)
}

// stepPuller runs one step of the kv client of table t.
func (u *Upstream) stepPuller(t *table) {
	p := &t.p
	s := p.cur
	buggy := u.bugs != nil && u.bugs.Has(spec.BugStuckAfterUpstreamFailure)
	// Worker exit: all its regions errored (store down, or NotLeader while
	// leaders move after recovery).
	regionErr := u.stalled || (u.now < u.recovering && u.rng.IntN(5) == 0)
	if s != nil && s.workerRunning && p.loc == regionActive && p.stream == s && regionErr {
		s.workerRunning, s.cancelled = false, true
		if buggy {
			// #9519: evictAllRegions in regionWorker.run's defer, at once.
			u.evict(t, s)
		}
	}
	// Receiver exit: the stream is cancelled (or the store is down).
	if s != nil && s.receiverRunning && (s.cancelled || u.stalled) && u.rng.IntN(3) == 0 {
		s.receiverRunning = false
		if p.loc == regionPending && p.stream == s {
			p.loc, p.stream = regionQueued, nil // pendingRegions.takeAll
		}
		if s.workerRunning {
			// The worker exits after the receiver: both the buggy (worker
			// defer) and the fixed (after eg.Wait) eviction run.
			s.workerRunning, s.cancelled = false, true
			u.evict(t, s)
		} else if !buggy {
			// #9597: evictAllRegions after both goroutines exited.
			u.evict(t, s)
		}
	}
	if u.stalled {
		return
	}
	switch p.loc {
	case regionQueued:
		// requestRegionToStore: reuse the stream while its receiver runs.
		if s == nil || !s.receiverRunning {
			p.nextID++
			s = &stream{gen: p.nextID, workerRunning: true, receiverRunning: true}
			p.cur = s
		}
		p.loc, p.stream = regionPending, s
	case regionPending:
		if p.stream.receiverRunning && u.rng.IntN(2) == 0 {
			// First response: pending -> worker, no liveness check.
			p.loc = regionActive
		}
	case regionActive:
		if p.stream.workerRunning && u.resolved > p.rts {
			p.rts = u.resolved
		}
	}
}

// evict is evictAllRegions: the region, if active in s, fails and is queued.
func (u *Upstream) evict(t *table, s *stream) {
	p := &t.p
	if p.loc == regionActive && p.stream == s {
		p.loc = regionQueued
		p.stream = nil
		u.lg.Debug("region_worker.go", 801, "region evicted", zap.Int64("tableID", t.id), zap.Int("streamGen", s.gen))
	}
}

// --- core.Upstream ---

// ResolvedTs is the table puller's resolved ts (global for the trigger).
func (u *Upstream) ResolvedTs(span spec.Span, startTs uint64) uint64 {
	if span.Table == 0 {
		return u.resolved
	}
	t := u.tables[span.Table]
	if t == nil {
		return 0
	}
	return t.p.rts
}

// TablesAt lists tables that exist at ts.
func (u *Upstream) TablesAt(ts uint64) []int64 {
	var out []int64
	for _, id := range u.order {
		if t := u.tables[id]; t.createTs <= ts && (t.dropTs == 0 || ts < t.dropTs) {
			out = append(out, id)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// TableCreateTs is the table's CREATE TABLE commit ts.
func (u *Upstream) TableCreateTs(id int64) (uint64, bool) {
	t := u.tables[id]
	if t == nil {
		return 0, false
	}
	return t.createTs, true
}

// DDLsBetween lists CREATE TABLE DDLs with from < commitTs <= to.
func (u *Upstream) DDLsBetween(from, to uint64) []core.DDL {
	var out []core.DDL
	for _, d := range u.ddls {
		if d.CommitTs > from && d.CommitTs <= to {
			out = append(out, d)
		}
	}
	return out
}

// StuckTables lists tables whose puller region is active in a dead stream
// generation (the #9595 state): observability for scenarios.
func (u *Upstream) StuckTables() []int64 {
	var out []int64
	for _, id := range u.order {
		p := u.tables[id].p
		if p.loc == regionActive && p.stream != nil && !p.stream.workerRunning && !p.stream.receiverRunning {
			out = append(out, id)
		}
	}
	return out
}

// Tables lists every table.
func (u *Upstream) Tables() []int64 { return append([]int64(nil), u.order...) }
