package server

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"cdcspec/impl/core"
	"cdcspec/impl/upstream"
	"cdcspec/runtime/etcdmeta"
	"cdcspec/runtime/kafkasink"
	"cdcspec/spec"
)

// The runtime's synthetic upstream must be the same in every capture
// process and in the `cdcspec run` driver (which checks the topic against
// it). It is therefore a pure function of a configuration and of a few
// shared facts kept in etcd under UpstreamPrefix:
//
//	/cdcspec/upstream/config         UpstreamConfig JSON (seed, rates, genesis)
//	/cdcspec/upstream/table/<id>     {"table":<id>,"create_ts":<ts>} (CREATE TABLE DDLs)
//	/cdcspec/upstream/stall          {"ts":<ts>} while the upstream is stalled
//	/cdcspec/upstream/block/<ts>     {"kind":..,"tables":[..],"commit_ts":<ts>} (blocking DDLs)
//
// Timestamps are wall-clock milliseconds (impl's ts unit); the Kafka
// messages carry them as TiDB TSOs (ms << 18). The resolved ts is
// now - LagMs (frozen at the stall ts while stalled). Row changes are
// derived per (table, ms) from the seed: RowsPerSec per table on average,
// keys drawn from Keys keys per table, each change an UPDATE whose value
// names its table, ts and slot, so any process can recompute any range.
const (
	UpstreamPrefix    = "/cdcspec/upstream/"
	upstreamConfigKey = UpstreamPrefix + "config"
	upstreamTablePfx  = UpstreamPrefix + "table/"
	upstreamStallKey  = UpstreamPrefix + "stall"
	upstreamBlockPfx  = UpstreamPrefix + "block/"
)

// UpstreamConfig is the shared upstream description.
type UpstreamConfig struct {
	Seed       uint64  `json:"seed"`
	Tables     int     `json:"tables"`       // tables 1..Tables exist from the beginning
	RowsPerSec float64 `json:"rows_per_sec"` // per table
	Keys       int     `json:"keys"`         // distinct primary keys per table
	LagMs      int64   `json:"lag_ms"`       // resolved ts = now - LagMs
	GenesisMs  int64   `json:"genesis_ms"`   // no row change at or before this ts
}

// WithDefaults fills zero fields.
func (c UpstreamConfig) WithDefaults() UpstreamConfig {
	if c.Tables == 0 {
		c.Tables = 4
	}
	if c.Keys == 0 {
		c.Keys = 1024
	}
	if c.LagMs == 0 {
		c.LagMs = 200
	}
	if c.GenesisMs == 0 {
		c.GenesisMs = time.Now().UnixMilli()
	}
	return c
}

type tableRec struct {
	Table    int64  `json:"table"`
	CreateTs uint64 `json:"create_ts"`
}

type blockRec struct {
	Kind     string  `json:"kind"`
	Tables   []int64 `json:"tables"`
	CommitTs uint64  `json:"commit_ts"`
}

type stallRec struct {
	Ts uint64 `json:"ts"`
}

// Upstream implements core.Upstream over the shared description. It is
// safe for concurrent use.
type Upstream struct {
	cfg UpstreamConfig
	now func() int64

	// puller, when set, gives each table span's resolved ts (the
	// capture's kv-client over the TiKV stores, runtime/tikv); without it
	// every span is resolved to the upstream resolved ts.
	puller Puller

	mu       sync.RWMutex
	tables   map[int64]uint64  // id -> create ts (0: from the beginning)
	stallTs  uint64            // 0: not stalled
	resolved uint64            // last resolved ts handed out (monotonic)
	blocks   []core.BlockEvent // blocking DDLs, ascending by commit ts
}

// NewUpstream returns an upstream with the initial tables only.
func NewUpstream(cfg UpstreamConfig) *Upstream {
	cfg = cfg.WithDefaults()
	u := &Upstream{cfg: cfg, now: func() int64 { return time.Now().UnixMilli() }, tables: map[int64]uint64{}}
	for i := 1; i <= cfg.Tables; i++ {
		u.tables[int64(i)] = 0
	}
	return u
}

// Config returns the configuration.
func (u *Upstream) Config() UpstreamConfig { return u.cfg }

// PublishUpstream writes cfg to etcd (the run driver does, once).
func PublishUpstream(ctx context.Context, c *etcdmeta.Client, cfg UpstreamConfig) (UpstreamConfig, error) {
	cfg = cfg.WithDefaults()
	b, _ := json.Marshal(cfg)
	if _, err := c.Put(ctx, upstreamConfigKey, b); err != nil {
		return cfg, fmt.Errorf("publishing upstream config: %w", err)
	}
	return cfg, nil
}

// LoadUpstream reads the shared upstream from etcd and returns it with
// the revision of the read (follow it with Follow(rev+1)).
func LoadUpstream(ctx context.Context, c *etcdmeta.Client) (*Upstream, int64, error) {
	kvs, rev, err := c.GetPrefix(ctx, UpstreamPrefix)
	if err != nil {
		return nil, 0, fmt.Errorf("reading %s: %w", UpstreamPrefix, err)
	}
	var u *Upstream
	for _, kv := range kvs {
		if kv.Key == upstreamConfigKey {
			var cfg UpstreamConfig
			if err := json.Unmarshal(kv.Value, &cfg); err != nil {
				return nil, 0, fmt.Errorf("bad upstream config at %s: %w", kv.Key, err)
			}
			u = NewUpstream(cfg)
		}
	}
	if u == nil {
		return nil, 0, fmt.Errorf("no upstream config at %s (start the cluster with `cdcspec run`, or write it first)", upstreamConfigKey)
	}
	for _, kv := range kvs {
		u.apply(etcdmeta.WatchEvent{Type: etcdmeta.EventPut, KV: kv})
	}
	return u, rev, nil
}

// Follow applies changes under UpstreamPrefix from revision fromRev until
// ctx ends.
func (u *Upstream) Follow(ctx context.Context, c *etcdmeta.Client, fromRev int64) {
	for {
		ch := c.Watch(ctx, UpstreamPrefix, fromRev)
		for ev := range ch {
			if ev.Err != nil {
				break
			}
			u.apply(ev)
			fromRev = ev.KV.ModRevision + 1
		}
		if ctx.Err() != nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (u *Upstream) apply(ev etcdmeta.WatchEvent) {
	u.mu.Lock()
	defer u.mu.Unlock()
	switch {
	case strings.HasPrefix(ev.KV.Key, upstreamTablePfx):
		if ev.Type != etcdmeta.EventPut {
			return
		}
		var t tableRec
		if err := json.Unmarshal(ev.KV.Value, &t); err == nil && t.Table > 0 {
			u.tables[t.Table] = t.CreateTs
		}
	case strings.HasPrefix(ev.KV.Key, upstreamBlockPfx):
		var b blockRec
		if ev.Type != etcdmeta.EventPut || json.Unmarshal(ev.KV.Value, &b) != nil || b.CommitTs == 0 {
			return
		}
		i, found := slices.BinarySearchFunc(u.blocks, b.CommitTs, func(e core.BlockEvent, ts uint64) int { return cmp.Compare(e.CommitTs, ts) })
		if !found {
			u.blocks = slices.Insert(u.blocks, i, upstream.BlockEventOf(b.Kind, b.Tables, b.CommitTs))
		}
	case ev.KV.Key == upstreamStallKey:
		if ev.Type == etcdmeta.EventDelete {
			u.stallTs = 0
			return
		}
		var s stallRec
		if err := json.Unmarshal(ev.KV.Value, &s); err == nil {
			u.stallTs = s.Ts
		}
	}
}

// CreateTable commits a CREATE TABLE in the shared upstream: the next
// table ID, at a commit ts far enough in the future (1.5 s) that every
// capture sees the DDL before its resolved ts reaches it.
func CreateTable(ctx context.Context, c *etcdmeta.Client) (int64, uint64, error) {
	kvs, _, err := c.GetPrefix(ctx, UpstreamPrefix)
	if err != nil {
		return 0, 0, err
	}
	var cfg UpstreamConfig
	maxID := int64(0)
	for _, kv := range kvs {
		if kv.Key == upstreamConfigKey {
			_ = json.Unmarshal(kv.Value, &cfg)
		}
		if strings.HasPrefix(kv.Key, upstreamTablePfx) {
			id, _ := strconv.ParseInt(strings.TrimPrefix(kv.Key, upstreamTablePfx), 10, 64)
			maxID = max(maxID, id)
		}
	}
	id := max(maxID, int64(cfg.Tables)) + 1
	ts := uint64(time.Now().UnixMilli() + 1500)
	b, _ := json.Marshal(tableRec{Table: id, CreateTs: ts})
	ok, _, err := c.CAS(ctx, []etcdmeta.Cond{{Key: upstreamTablePfx + strconv.FormatInt(id, 10), ModRevision: 0}},
		[]etcdmeta.Op{{Key: upstreamTablePfx + strconv.FormatInt(id, 10), Value: b}})
	if err != nil {
		return 0, 0, err
	}
	if !ok {
		return 0, 0, fmt.Errorf("table %d was created concurrently", id)
	}
	return id, ts, nil
}

// RuntimeBlockDDLKinds are the blocking DDL kinds (impl/upstream's) the
// runtime's upstream commits. Drop and truncate are not among them: they
// change the table set, which the runtime's upstream (and its TiKV stores)
// keep fixed but for CREATE TABLE.
var RuntimeBlockDDLKinds = []string{upstream.DDLNormal, upstream.DDLRename, upstream.DDLDB, upstream.DDLSyncPoint}

// CommitBlockDDL commits a blocking DDL of the kind in the shared upstream,
// on tables drawn with rnd from the existing ones, at a commit ts far
// enough in the future (1.5 s) that every capture sees it before its
// resolved ts reaches it, and above every DDL so far.
func CommitBlockDDL(ctx context.Context, c *etcdmeta.Client, kind string, rnd *rand.Rand) (core.BlockEvent, error) {
	if !slices.Contains(RuntimeBlockDDLKinds, kind) {
		return core.BlockEvent{}, fmt.Errorf("blocking DDL kind %q is not one the runtime commits (known: %s)", kind, strings.Join(RuntimeBlockDDLKinds, ", "))
	}
	kvs, _, err := c.GetPrefix(ctx, UpstreamPrefix)
	if err != nil {
		return core.BlockEvent{}, err
	}
	var cfg UpstreamConfig
	ts := uint64(time.Now().UnixMilli() + 1500)
	for _, kv := range kvs {
		if kv.Key == upstreamConfigKey {
			_ = json.Unmarshal(kv.Value, &cfg)
		}
	}
	var tables []int64
	for i := 1; i <= cfg.Tables; i++ {
		tables = append(tables, int64(i))
	}
	for _, kv := range kvs {
		switch {
		case strings.HasPrefix(kv.Key, upstreamTablePfx):
			var t tableRec
			if json.Unmarshal(kv.Value, &t) == nil {
				ts = max(ts, t.CreateTs+1)
				if t.CreateTs < uint64(time.Now().UnixMilli()) {
					tables = append(tables, t.Table)
				}
			}
		case strings.HasPrefix(kv.Key, upstreamBlockPfx):
			var b blockRec
			if json.Unmarshal(kv.Value, &b) == nil {
				ts = max(ts, b.CommitTs+1)
			}
		}
	}
	n := upstream.BlockDDLKinds[kind]
	if len(tables) < n {
		return core.BlockEvent{}, fmt.Errorf("blocking DDL %q needs %d tables, the upstream has %d", kind, n, len(tables))
	}
	rnd.Shuffle(len(tables), func(i, j int) { tables[i], tables[j] = tables[j], tables[i] })
	tables = tables[:n]
	slices.Sort(tables)
	key := upstreamBlockPfx + strconv.FormatUint(ts, 10)
	b, _ := json.Marshal(blockRec{Kind: kind, Tables: tables, CommitTs: ts})
	ok, _, err := c.CAS(ctx, []etcdmeta.Cond{{Key: key, ModRevision: 0}}, []etcdmeta.Op{{Key: key, Value: b}})
	if err != nil {
		return core.BlockEvent{}, err
	}
	if !ok {
		return core.BlockEvent{}, fmt.Errorf("a blocking DDL at commit-ts %d was committed concurrently", spec.TSO(ts))
	}
	return upstream.BlockEventOf(kind, tables, ts), nil
}

// BlockEventsBetween implements core.BlockEventSource.
func (u *Upstream) BlockEventsBetween(from, to uint64) []core.BlockEvent {
	u.mu.RLock()
	defer u.mu.RUnlock()
	var out []core.BlockEvent
	for _, b := range u.blocks {
		if b.CommitTs > from && b.CommitTs <= to {
			out = append(out, b)
		}
	}
	return out
}

// BlockEvents is the upstream's whole blocking DDL history.
func (u *Upstream) BlockEvents() []core.BlockEvent {
	return u.BlockEventsBetween(0, ^uint64(0))
}

// SetStall stalls (on) or resumes (off) the shared upstream.
func SetStall(ctx context.Context, c *etcdmeta.Client, on bool, lagMs int64) error {
	if !on {
		_, _, err := c.Delete(ctx, upstreamStallKey)
		return err
	}
	b, _ := json.Marshal(stallRec{Ts: uint64(time.Now().UnixMilli() - lagMs)})
	_, err := c.Put(ctx, upstreamStallKey, b)
	return err
}

// GlobalResolvedTs is the upstream resolved ts now.
func (u *Upstream) GlobalResolvedTs() uint64 {
	r := uint64(u.now() - u.cfg.LagMs)
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.stallTs != 0 && r > u.stallTs {
		r = u.stallTs
	}
	if r < u.resolved {
		r = u.resolved
	}
	u.resolved = r
	return r
}

// Puller is a source of per-span resolved ts (runtime/tikv's kv-client).
type Puller interface {
	ResolvedTs(span spec.Span, startTs uint64) uint64
}

// SetPuller makes table spans resolve through p (set before use); the
// table trigger's span keeps the upstream resolved ts (the schema store's
// DDL puller is not modelled).
func (u *Upstream) SetPuller(p Puller) { u.puller = p }

// ResolvedTs implements core.Upstream.
func (u *Upstream) ResolvedTs(span spec.Span, startTs uint64) uint64 {
	if span.Table != 0 {
		u.mu.RLock()
		_, ok := u.tables[span.Table]
		u.mu.RUnlock()
		if !ok {
			return 0
		}
		if u.puller != nil {
			return u.puller.ResolvedTs(span, startTs)
		}
	}
	return u.GlobalResolvedTs()
}

// TablesAt implements core.Upstream.
func (u *Upstream) TablesAt(ts uint64) []int64 {
	u.mu.RLock()
	defer u.mu.RUnlock()
	var out []int64
	for id, c := range u.tables {
		if c <= ts {
			out = append(out, id)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// TableCreateTs implements core.Upstream.
func (u *Upstream) TableCreateTs(table int64) (uint64, bool) {
	u.mu.RLock()
	defer u.mu.RUnlock()
	c, ok := u.tables[table]
	return c, ok
}

// DDLsBetween implements core.Upstream.
func (u *Upstream) DDLsBetween(from, to uint64) []core.DDL {
	u.mu.RLock()
	defer u.mu.RUnlock()
	var out []core.DDL
	for id, c := range u.tables {
		if c > 0 && c > from && c <= to {
			out = append(out, core.DDL{CommitTs: c, Table: id})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].CommitTs != out[j].CommitTs {
			return out[i].CommitTs < out[j].CommitTs
		}
		return out[i].Table < out[j].Table
	})
	return out
}

// --- row changes ---

func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

const keySpace = 208827064576 // 26^8

// KeyName is the primary key of key slot idx: 8 lower-case letters (the
// key alphabet impl's span splitting uses), spread over the key space by a
// bijection so that splits divide the keys.
func KeyName(idx int) string {
	v := (uint64(idx)*2654435761 + 12345) % keySpace
	b := make([]byte, 8)
	for i := 7; i >= 0; i-- {
		b[i] = 'a' + byte(v%26)
		v /= 26
	}
	return string(b)
}

// TableName is the upstream table name of table id.
func TableName(id int64) string { return "t" + strconv.FormatInt(id, 10) }

// rowsAt is the number of row changes of table at ms ts.
func (u *Upstream) rowsAt(table int64, ts uint64) (int, uint64) {
	h := mix(u.cfg.Seed ^ mix(uint64(table)*0x100000001b3^ts))
	perMs := u.cfg.RowsPerSec / 1000
	n := int(math.Floor(perMs))
	if frac := perMs - float64(n); frac > 0 && float64(h>>11)/(1<<53) < frac {
		n++
	}
	if n > u.cfg.Keys {
		n = u.cfg.Keys
	}
	return n, h
}

func inSpan(s spec.Span, key string) bool {
	return key >= s.Start && (s.End == "" || key < s.End)
}

// Rows returns the row changes of span with from < ts <= to (ms), in
// commit-ts order, as Kafka rows (TSO commit ts).
func (u *Upstream) Rows(span spec.Span, from, to uint64, dispatcher string, fn func(kafkasink.Row)) {
	if span.Table == 0 || u.cfg.RowsPerSec <= 0 {
		return
	}
	u.mu.RLock()
	createTs, ok := u.tables[span.Table]
	u.mu.RUnlock()
	if !ok {
		return
	}
	lo := max(from, createTs, uint64(u.cfg.GenesisMs))
	name := TableName(span.Table)
	for ts := lo + 1; ts <= to; ts++ {
		n, h := u.rowsAt(span.Table, ts)
		for i := 0; i < n; i++ {
			slot := int((h>>20)%uint64(u.cfg.Keys)+uint64(i)) % u.cfg.Keys
			key := KeyName(slot)
			if !inSpan(span, key) {
				continue
			}
			fn(kafkasink.Row{Dispatcher: dispatcher, Table: name, Key: key, CommitTs: spec.TSO(ts), Op: kafkasink.OpUpdate,
				Value: name + "-" + strconv.FormatUint(ts, 10) + "-" + strconv.Itoa(i)})
		}
	}
}

// Source is the datacheck source of every row change of every table with
// from < ts <= to (ms).
func (u *Upstream) Source(from, to uint64) RowSource { return RowSource{u: u, from: from, to: to} }

// RowSource implements datacheck.Source.
type RowSource struct {
	u        *Upstream
	from, to uint64
}

// ForEach calls fn for every row change.
func (s RowSource) ForEach(fn func(kafkasink.Row) error) error {
	var err error
	for _, t := range s.u.TablesAt(^uint64(0)) {
		s.u.Rows(spec.WholeTable(t), s.from, s.to, "", func(r kafkasink.Row) {
			if err == nil {
				err = fn(r)
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}
