package core

import (
	"slices"

	"cdcspec/spec"
)

// The interfaces below are everything outside the control plane. impl/sim
// provides deterministic in-memory implementations (sim.MemStore,
// sim.MemSink, sim.Network, the virtual clock, seeded randomness); the real
// runtime provides etcd, Kafka and TCP ones. Components never call Transport,
// MetaStore or Sink directly: they return Effects, and the runtime calls
// these. Clock is only read by the logger; Rand and Upstream are read by
// components (both are deterministic in simulation).

// Transport sends a message to a node. Non-blocking; may drop.
type Transport interface {
	Send(env Envelope) error
}

// KV is one stored key.
type KV struct {
	Key       string
	Value     []byte
	CreateRev int64
	ModRev    int64
	Lease     int64
}

// MetaStore has etcd semantics: a global revision, mod/create revisions per
// key, atomic compare-and-swap txns, and leases that delete their keys when
// they expire (capture sessions).
type MetaStore interface {
	Get(key string) (KV, bool)
	GetPrefix(prefix string) []KV
	Txn(t MetaTxn) MetaResult
	Grant(ttlMs int64) (lease int64)
	PutWithLease(key string, value []byte, lease int64) (rev int64, err error)
	KeepAlive(lease int64) error
	Revoke(lease int64)
	Revision() int64
}

// Sink is the downstream of one changefeed (Kafka, MySQL, storage).
type Sink interface {
	// Write applies a SinkWrite; the result is delivered later.
	Write(w SinkWrite) SinkResult
}

// Clock gives the current time in ms (virtual in simulation).
type Clock interface {
	NowMs() int64
}

// Rand is the injected randomness (jitter, IDs).
type Rand interface {
	Uint64() uint64
	// Float64 returns a number in [0, 1).
	Float64() float64
}

// Upstream is the read side of the synthetic (or real) upstream: the
// per-span resolved ts a puller has reached, and the versioned schema.
type Upstream interface {
	// ResolvedTs is the resolved ts a dispatcher of span (started at startTs)
	// can see now. 0 means nothing is resolved yet.
	ResolvedTs(span spec.Span, startTs uint64) uint64
	// TablesAt lists the tables that exist at ts, ascending.
	TablesAt(ts uint64) []int64
	// TableCreateTs is the commit ts of the table's CREATE TABLE (0 when the
	// table existed from the beginning), and whether the table exists at all.
	TableCreateTs(table int64) (uint64, bool)
	// DDLsBetween lists CREATE TABLE DDLs with from < commitTs <= to,
	// ascending by commitTs.
	DDLsBetween(from, to uint64) []DDL
}

// DefaultSchemaID is the schema (database) of every table of an Upstream
// that is not a SchemaSource: one schema holds every table, which is what a
// DB-influence block event of such an upstream covers.
const DefaultSchemaID int64 = 1

// SchemaSource is an Upstream that knows each table's schema (database) ID,
// the SchemaID of TiCDC's commonEvent.Table: the maintainer's span
// controller indexes its spans by it (span_controller.go schemaTasks at
// b813e76f9). An Upstream that is not one puts every table in
// DefaultSchemaID.
type SchemaSource interface {
	// TableSchemaID is the schema the table belongs to.
	TableSchemaID(table int64) int64
}

// TableSchemaID is the table's schema in up: up's answer if it is a
// SchemaSource, DefaultSchemaID otherwise.
func TableSchemaID(up Upstream, table int64) int64 {
	if ss, ok := up.(SchemaSource); ok {
		return ss.TableSchemaID(table)
	}
	return DefaultSchemaID
}

// BlockEventSource is the upstream's history of blocking DDLs and
// syncpoints (the schema store's DDL events that carry a BlockedTables):
// an Upstream that has none need not implement it.
type BlockEventSource interface {
	// BlockEventsBetween lists block events with from < CommitTs <= to,
	// ascending by CommitTs.
	BlockEventsBetween(from, to uint64) []BlockEvent
}

// BlockEvent is a blocking DDL or a syncpoint at CommitTs. A normal DDL
// blocks BlockTables (0 is the table trigger); a DB or All one blocks every
// table of the schema (the simulation has one) and the trigger.
type BlockEvent struct {
	CommitTs    uint64
	IsSyncPoint bool
	Influence   string // spec.InfluenceNormal, InfluenceDB, InfluenceAll
	BlockTables []int64
	NeedDropped []int64
	NeedAdded   []int64
	Query       string
}

// Blocks reports whether the event blocks the dispatcher of table t (0:
// the table trigger).
func (e *BlockEvent) Blocks(t int64) bool {
	if e.Influence != spec.InfluenceNormal {
		return true
	}
	return slices.Contains(e.BlockTables, t)
}

// DDL is a CREATE TABLE in the upstream.
type DDL struct {
	CommitTs uint64
	Table    int64
}

// SortedKeys returns a map's keys in ascending order: components iterate maps
// through it so that every run (and every simulation log) is deterministic.
func SortedKeys[K ~string, V any](m map[K]V) []K {
	ks := make([]K, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
