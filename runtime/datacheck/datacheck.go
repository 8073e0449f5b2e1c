// Package datacheck proves from the outside that a changefeed's Kafka topic
// holds what the upstream produced.
//
// An independent consumer (franz-go's kgo, not the sarama producer under
// test) reads the topic from the start up to the end offsets taken when the
// check begins, decodes every message (kafkasink's canal-json format, see
// runtime/kafkasink/FORMAT.md), and compares it with the upstream's row
// changes and the changefeed's final checkpoint:
//
//   - lost: a produced row change with commit ts <= final checkpoint that
//     was never delivered. The checkpoint promises everything at or below it
//     is in the sink, so this is data loss. Rows above the checkpoint may be
//     missing (they are counted in beyond_checkpoint when delivered).
//   - out_of_order: per key (schema, table, primary key), the LAST
//     deliveries of its changes, in partition-offset order, must be in
//     commit-ts order; each change whose last delivery follows the last
//     delivery of a higher commit ts of the same key counts once. A
//     consumer that applies every message in order then ends each key at
//     its newest change and sees every change's final application in
//     order. Why last and not first: after a produce failure, a later
//     change of a key can be in Kafka while an earlier one is not (sarama
//     fails a batch and sends the next); the checkpoint stays below the
//     failed change, and the restart replays both, in order (6, then 5, 6).
//     That is TiCDC's at-least-once contract, not disorder. A true reorder
//     (1, 3, 2) or a stale replay after the newest change (5, 6, 5) is
//     caught.
//   - duplicates: deliveries of an already delivered row change (allowed:
//     the sink is at-least-once; counted for the report).
//   - extra: a delivered message that is not a produced row change, or
//     whose type/value differ from the produced one.
//   - malformed: a message that does not decode.
//   - split_keys: a key whose changes landed in more than one partition
//     (per-key order is then undefined; the partitioner broke).
//   - ddl_order_violations: the blocking DDLs of the upstream's history
//     (Analyzer.SetDDLs) against the DDL messages in the topic; see
//     BlockDDL for the rule.
//
// The identity of a row change is (schema, table, key, commit ts). Report.OK
// is true when lost, out_of_order, extra, malformed, split_keys and
// ddl_order_violations are all 0.
//
// Blind spots: the check sees only what is in the topic when it starts, and
// it cannot tell a change delivered by the right dispatcher from one
// delivered by a stale one; it judges content and order only.
package datacheck

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"

	"cdcspec/runtime/kafkasink"
)

// Source is the upstream's set of row changes. Rows is a []kafkasink.Row
// adapter; a synthetic upstream can implement Source without materialising
// a slice.
type Source interface {
	// ForEach calls fn for every produced row change, in any order. A row
	// change may be reported more than once if it is identical each time.
	ForEach(fn func(r kafkasink.Row) error) error
}

// Rows is a Source over a slice.
type Rows []kafkasink.Row

// ForEach implements Source.
func (rs Rows) ForEach(fn func(kafkasink.Row) error) error {
	for _, r := range rs {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// Record is one consumed Kafka message.
type Record struct {
	Partition int32
	Offset    int64
	Value     []byte
}

// Example is one finding, with coordinates.
type Example struct {
	Kind      string `json:"kind"` // lost, out_of_order, duplicate, extra, malformed, split_key, ddl_order, ddl_missing, ddl_unknown
	Schema    string `json:"schema,omitempty"`
	Table     string `json:"table,omitempty"`
	Key       string `json:"key,omitempty"`
	CommitTs  uint64 `json:"commit_ts,omitempty"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"` // -1 when not delivered
	Detail    string `json:"detail"`
}

func (e Example) String() string {
	s := e.Kind + ": "
	if e.Table != "" {
		s += e.Schema + "." + e.Table + " key " + strconv.Quote(e.Key) + " commit ts " + strconv.FormatUint(e.CommitTs, 10) + " "
	}
	if e.Offset >= 0 {
		s += fmt.Sprintf("at partition %d offset %d ", e.Partition, e.Offset)
	}
	return s + e.Detail
}

// Report is the result of a check. Field names follow `cdcspec run
// --format json`.
type Report struct {
	Topic             string `json:"topic,omitempty"`
	FinalCheckpointTs uint64 `json:"final_checkpoint_ts"`
	// Produced counts distinct produced row changes with commit ts <= the
	// final checkpoint (the ones that must be delivered).
	Produced int `json:"produced"`
	// Delivered counts consumed messages (all of them, duplicates included).
	Delivered        int `json:"delivered"`
	Lost             int `json:"lost"`
	OutOfOrder       int `json:"out_of_order"`
	Duplicates       int `json:"duplicates"`
	Extra            int `json:"extra"`
	Malformed        int `json:"malformed"`
	SplitKeys        int `json:"split_keys"`
	BeyondCheckpoint int `json:"beyond_checkpoint"` // distinct delivered changes above the checkpoint
	// FirstDeliveryRegressions (informational, not a failure) counts first
	// deliveries of a change below a commit ts already delivered for its
	// key: the "6, 5, 6" pattern of a failed produce replayed after a
	// restart. Non-zero with out_of_order 0 means order was restored by
	// the replay.
	FirstDeliveryRegressions int `json:"first_delivery_regressions"`
	// DDLs counts consumed DDL messages (every copy, in every partition).
	DDLs int `json:"ddls"`
	// DDLOrderViolations counts breaches of BlockDDL's rule: a row on the
	// wrong side of a DDL (ddl_order), a DDL at or below the checkpoint
	// missing from a partition (ddl_missing), a DDL message that is not in
	// the upstream's history (ddl_unknown).
	DDLOrderViolations int `json:"ddl_order_violations"`
	// Examples holds up to MaxExamples findings per kind.
	Examples []Example `json:"examples"`
}

// OK reports whether nothing was lost, reordered, extra, malformed or split.
func (r *Report) OK() bool {
	return r.Lost == 0 && r.OutOfOrder == 0 && r.Extra == 0 && r.Malformed == 0 && r.SplitKeys == 0 && r.DDLOrderViolations == 0
}

// String is a one-line summary.
func (r *Report) String() string {
	verdict := "OK"
	if !r.OK() {
		verdict = "FAILED"
	}
	return fmt.Sprintf("datacheck %s: produced=%d delivered=%d lost=%d out_of_order=%d duplicates=%d extra=%d malformed=%d split_keys=%d beyond_checkpoint=%d first_delivery_regressions=%d ddls=%d ddl_order_violations=%d final_checkpoint_ts=%d",
		verdict, r.Produced, r.Delivered, r.Lost, r.OutOfOrder, r.Duplicates, r.Extra, r.Malformed, r.SplitKeys, r.BeyondCheckpoint, r.FirstDeliveryRegressions,
		r.DDLs, r.DDLOrderViolations, r.FinalCheckpointTs)
}

// MaxExamples bounds Report.Examples per kind.
const MaxExamples = 5

type keyID struct{ schema, table, key string }

type changeID struct {
	keyID
	ts uint64
}

// keyState is what the check keeps per key (schema, table, primary key),
// as parallel arrays over the key's produced changes in commit-ts order
// (17 bytes per change; no message and no value is kept): the commit ts,
// a 32-bit hash of the content, the offset of the last delivery and the
// delivery count (saturating at 255; Report.Duplicates counts exactly).
// Besides: the partition its deliveries landed in and the highest commit
// ts delivered so far.
type keyState struct {
	id       keyID
	ts       []uint64
	hash     []uint32
	lastOff  []uint32
	hits     []uint8
	part     int32
	seen     bool // a delivery landed (part is set)
	maxFirst uint64
}

// find returns the index of the change at ts (-1: none).
func (k *keyState) find(ts uint64) int {
	if i, ok := slices.BinarySearch(k.ts, ts); ok {
		return i
	}
	return -1
}

// contentHash is a 32-bit FNV-1a hash of a change's operation and values
// (a corrupted delivery passes unnoticed with probability 2^-32).
func contentHash(op kafkasink.Op, value, oldValue string) uint32 {
	h := fnv.New32a()
	h.Write([]byte{byte(op)})
	h.Write([]byte(value))
	if op == kafkasink.OpUpdate {
		h.Write([]byte{0})
		h.Write([]byte(oldValue))
	}
	return h.Sum32()
}

// Analyzer checks a topic incrementally, so a long run's messages need not
// be held in memory: Add every record, in offset order within each
// partition (partitions may interleave), then Finish. It keeps compact
// per-key state (keyState: 17 bytes per produced row change, plus the key
// strings once per key), never a message: ten million row changes take
// about 170 MB.
type Analyzer struct {
	rep      Report
	keys     map[keyID]*keyState
	lastOff  map[int32]int64
	counts   map[string]int
	finished bool
	// ddls: the upstream's blocking DDLs, ascending by commit ts;
	// ddlSeen[partition][commitTs]: the DDL was delivered in the partition.
	ddls       []BlockDDL
	ddlSeen    map[int32]map[uint64]bool
	partitions int32
}

// NewAnalyzer loads the produced row changes; it reads src twice (to size
// each key's arrays, then to fill them), so src must yield the same rows
// each time. It fails only on bad input: two different produced changes
// with the same identity, or a produced row without table, key or commit
// ts.
func NewAnalyzer(src Source, finalCheckpoint uint64) (*Analyzer, error) {
	a := &Analyzer{
		rep:     Report{FinalCheckpointTs: finalCheckpoint},
		keys:    map[keyID]*keyState{},
		lastOff: map[int32]int64{},
		counts:  map[string]int{},
	}
	counts := map[keyID]int{}
	i := 0
	err := src.ForEach(func(r kafkasink.Row) error {
		i++
		if r.Table == "" || r.Key == "" || r.CommitTs == 0 {
			return fmt.Errorf("datacheck: produced row #%d (table %q, key %q, commit ts %d) lacks table, key or commit ts", i, r.Table, r.Key, r.CommitTs)
		}
		counts[keyID{r.SchemaOrDefault(), r.Table, r.Key}]++
		return nil
	})
	if err != nil {
		return nil, err
	}
	type pending struct {
		ts   uint64
		hash uint32
	}
	byKey := map[keyID][]pending{}
	for id, n := range counts {
		byKey[id] = make([]pending, 0, n)
	}
	counts = nil
	err = src.ForEach(func(r kafkasink.Row) error {
		id := keyID{r.SchemaOrDefault(), r.Table, r.Key}
		ps, ok := byKey[id]
		if !ok || len(ps) == cap(ps) {
			return errors.New("datacheck: the source yielded different rows on its second read")
		}
		byKey[id] = append(ps, pending{r.CommitTs, contentHash(r.Op, r.Value, r.OldValue)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	for id, ps := range byKey {
		// Sources usually yield a key's changes in commit-ts order; sort
		// anyway, then drop identical repeats and refuse conflicting ones.
		slices.SortStableFunc(ps, func(x, y pending) int { return cmp.Compare(x.ts, y.ts) })
		k := &keyState{id: id}
		n := 0
		for j, p := range ps {
			if j > 0 && ps[j-1].ts == p.ts {
				if ps[j-1].hash != p.hash {
					return nil, fmt.Errorf("datacheck: %s.%s key %q commit ts %d produced twice with different content", id.schema, id.table, id.key, p.ts)
				}
				continue
			}
			n++
		}
		k.ts, k.hash, k.lastOff, k.hits = make([]uint64, 0, n), make([]uint32, 0, n), make([]uint32, n), make([]uint8, n)
		for j, p := range ps {
			if j > 0 && ps[j-1].ts == p.ts {
				continue
			}
			k.ts = append(k.ts, p.ts)
			k.hash = append(k.hash, p.hash)
			if p.ts <= finalCheckpoint {
				a.rep.Produced++
			}
		}
		a.keys[id] = k
		delete(byKey, id)
	}
	return a, nil
}

func (a *Analyzer) add(e Example) {
	if a.counts[e.Kind] < MaxExamples {
		a.rep.Examples = append(a.rep.Examples, e)
	}
	a.counts[e.Kind]++
}

// Add checks one consumed record. Records of one partition must come in
// increasing offset order (below 2^32); Add returns an error otherwise (and
// for use after Finish).
func (a *Analyzer) Add(rec Record) error {
	if a.finished {
		return errors.New("datacheck: Analyzer.Add after Finish")
	}
	if last, ok := a.lastOff[rec.Partition]; ok && rec.Offset <= last {
		return fmt.Errorf("datacheck: partition %d offset %d added after offset %d", rec.Partition, rec.Offset, last)
	}
	if rec.Offset < 0 || rec.Offset > math.MaxUint32 {
		return fmt.Errorf("datacheck: partition %d offset %d is outside [0, 2^32)", rec.Partition, rec.Offset)
	}
	a.lastOff[rec.Partition] = rec.Offset
	a.rep.Delivered++
	rp, ddl, err := kafkasink.DecodeAny(rec.Value)
	if err != nil {
		a.rep.Malformed++
		a.add(Example{Kind: "malformed", Partition: rec.Partition, Offset: rec.Offset, Detail: err.Error()})
		return nil
	}
	if ddl != nil {
		a.addDDL(rec, ddl)
		return nil
	}
	r := *rp
	id := changeID{keyID{r.SchemaOrDefault(), r.Table, r.Key}, r.CommitTs}
	ex := Example{Schema: id.schema, Table: id.table, Key: id.key, CommitTs: id.ts, Partition: rec.Partition, Offset: rec.Offset}
	k := a.keys[id.keyID]
	i := -1
	if k != nil {
		if k.seen && k.part != rec.Partition {
			a.rep.SplitKeys++
			ex.Kind, ex.Detail = "split_key", fmt.Sprintf("key already seen in partition %d", k.part)
			a.add(ex)
		} else if !k.seen {
			k.seen, k.part = true, rec.Partition
		}
		i = k.find(id.ts)
	}
	if i < 0 {
		a.rep.Extra++
		ex.Kind, ex.Detail = "extra", fmt.Sprintf("%s %q was never produced", r.Op, r.Value)
		a.add(ex)
		return nil
	}
	if k.hash[i] != contentHash(r.Op, r.Value, r.OldValue) {
		a.rep.Extra++
		ex.Kind, ex.Detail = "extra", fmt.Sprintf("delivered %s %q (old %q) differs from the produced change", r.Op, r.Value, r.OldValue)
		a.add(ex)
		return nil
	}
	if k.hits[i] < math.MaxUint8 {
		k.hits[i]++
	}
	k.lastOff[i] = uint32(rec.Offset)
	if k.hits[i] > 1 {
		a.rep.Duplicates++
		ex.Kind, ex.Detail = "duplicate", fmt.Sprintf("delivery #%d", k.hits[i])
		a.add(ex)
		return nil
	}
	if id.ts > a.rep.FinalCheckpointTs {
		a.rep.BeyondCheckpoint++
	}
	if id.ts < k.maxFirst {
		a.rep.FirstDeliveryRegressions++
	} else {
		k.maxFirst = id.ts
	}
	a.checkRowAgainstDDLs(rec.Partition, ex)
	return nil
}

// Finish computes order violations and losses and returns the report.
func (a *Analyzer) Finish() Report {
	if a.finished {
		return a.rep
	}
	a.finished = true
	keys := make([]*keyState, 0, len(a.keys))
	for _, k := range a.keys {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y *keyState) int {
		return cmp.Or(cmp.Compare(x.id.schema, y.id.schema), cmp.Compare(x.id.table, y.id.table), cmp.Compare(x.id.key, y.id.key))
	})
	var lost []Example
	var delivered []int
	for _, k := range keys {
		// Per-key order: the LAST deliveries of a key's changes must be in
		// commit-ts order (see the package doc for why not the first
		// ones). A key's deliveries share one partition (split_keys
		// counts those that do not), so offset order is delivery order.
		delivered = delivered[:0]
		for i, ts := range k.ts {
			if k.hits[i] > 0 {
				delivered = append(delivered, i)
			} else if ts <= a.rep.FinalCheckpointTs {
				a.rep.Lost++
				if len(lost) >= 4*MaxExamples { // keep the earliest few only
					lost = earliest(lost)
				}
				lost = append(lost, Example{Kind: "lost", Schema: k.id.schema, Table: k.id.table, Key: k.id.key, CommitTs: ts, Offset: -1,
					Detail: fmt.Sprintf("row change at or below checkpoint %d never delivered", a.rep.FinalCheckpointTs)})
			}
		}
		slices.SortFunc(delivered, func(x, y int) int { return cmp.Compare(k.lastOff[x], k.lastOff[y]) })
		m := -1
		for _, i := range delivered {
			if m >= 0 && k.ts[i] < k.ts[m] {
				a.rep.OutOfOrder++
				a.add(Example{Kind: "out_of_order", Schema: k.id.schema, Table: k.id.table, Key: k.id.key, CommitTs: k.ts[i],
					Partition: k.part, Offset: int64(k.lastOff[i]),
					Detail: fmt.Sprintf("last delivered after the last delivery of commit ts %d of the same key (partition %d offset %d)", k.ts[m], k.part, k.lastOff[m])})
				continue
			}
			m = i
		}
	}
	a.rep.Examples = append(a.rep.Examples, earliest(lost)...)
	a.finishDDLs()
	return a.rep
}

// earliest returns the MaxExamples earliest of lost (commit ts, then key).
func earliest(lost []Example) []Example {
	slices.SortFunc(lost, func(x, y Example) int {
		return cmp.Or(cmp.Compare(x.CommitTs, y.CommitTs), cmp.Compare(x.Schema, y.Schema), cmp.Compare(x.Table, y.Table), cmp.Compare(x.Key, y.Key))
	})
	return lost[:min(len(lost), MaxExamples)]
}

// Analyze compares delivered records (in any order; they are sorted by
// partition and offset) with the produced row changes. It returns an error
// only for bad input (see NewAnalyzer).
func Analyze(src Source, finalCheckpoint uint64, delivered []Record) (Report, error) {
	a, err := NewAnalyzer(src, finalCheckpoint)
	if err != nil {
		return Report{}, err
	}
	sorted := slices.Clone(delivered)
	slices.SortFunc(sorted, func(x, y Record) int {
		return cmp.Or(cmp.Compare(x.Partition, y.Partition), cmp.Compare(x.Offset, y.Offset))
	})
	for _, rec := range sorted {
		if err := a.Add(rec); err != nil {
			return Report{}, err
		}
	}
	return a.Finish(), nil
}
