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
//
// The identity of a row change is (schema, table, key, commit ts). Report.OK
// is true when lost, out_of_order, extra, malformed and split_keys are all 0.
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
	Kind      string `json:"kind"` // lost, out_of_order, duplicate, extra, malformed, split_key
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
	// Examples holds up to MaxExamples findings per kind.
	Examples []Example `json:"examples"`
}

// OK reports whether nothing was lost, reordered, extra, malformed or split.
func (r *Report) OK() bool {
	return r.Lost == 0 && r.OutOfOrder == 0 && r.Extra == 0 && r.Malformed == 0 && r.SplitKeys == 0
}

// String is a one-line summary.
func (r *Report) String() string {
	verdict := "OK"
	if !r.OK() {
		verdict = "FAILED"
	}
	return fmt.Sprintf("datacheck %s: produced=%d delivered=%d lost=%d out_of_order=%d duplicates=%d extra=%d malformed=%d split_keys=%d beyond_checkpoint=%d first_delivery_regressions=%d final_checkpoint_ts=%d",
		verdict, r.Produced, r.Delivered, r.Lost, r.OutOfOrder, r.Duplicates, r.Extra, r.Malformed, r.SplitKeys, r.BeyondCheckpoint, r.FirstDeliveryRegressions, r.FinalCheckpointTs)
}

// MaxExamples bounds Report.Examples per kind.
const MaxExamples = 5

type keyID struct{ schema, table, key string }

type changeID struct {
	keyID
	ts uint64
}

type produced struct {
	op   kafkasink.Op
	hash uint64 // of value (and old value for UPDATE); values are not kept
	hits int
	// last delivery: arrival sequence, partition, offset
	lastSeq       int
	lastPartition int32
	lastOffset    int64
}

func contentHash(op kafkasink.Op, value, oldValue string) uint64 {
	h := fnv.New64a()
	h.Write([]byte{byte(op)})
	h.Write([]byte(value))
	if op == kafkasink.OpUpdate {
		h.Write([]byte{0})
		h.Write([]byte(oldValue))
	}
	return h.Sum64()
}

// Analyzer checks a topic incrementally, so a long run's messages need not
// be held in memory: Add every record, in offset order within each
// partition (partitions may interleave), then Finish. Memory is about 100
// bytes plus the key strings per produced row change.
type Analyzer struct {
	rep       Report
	want      map[changeID]*produced
	changesOf map[keyID][]changeID
	maxFirst  map[keyID]uint64 // highest commit ts delivered so far per key
	partOf    map[keyID]int32
	lastOff   map[int32]int64
	counts    map[string]int
	seq       int
	finished  bool
}

// NewAnalyzer loads the produced row changes. It fails only on bad input:
// two different produced changes with the same identity, or a produced row
// without table, key or commit ts.
func NewAnalyzer(src Source, finalCheckpoint uint64) (*Analyzer, error) {
	a := &Analyzer{
		rep:       Report{FinalCheckpointTs: finalCheckpoint},
		want:      make(map[changeID]*produced),
		changesOf: map[keyID][]changeID{},
		maxFirst:  map[keyID]uint64{},
		partOf:    map[keyID]int32{},
		lastOff:   map[int32]int64{},
		counts:    map[string]int{},
	}
	i := 0
	err := src.ForEach(func(r kafkasink.Row) error {
		i++
		if r.Table == "" || r.Key == "" || r.CommitTs == 0 {
			return fmt.Errorf("datacheck: produced row #%d (table %q, key %q, commit ts %d) lacks table, key or commit ts", i, r.Table, r.Key, r.CommitTs)
		}
		id := changeID{keyID{r.SchemaOrDefault(), r.Table, r.Key}, r.CommitTs}
		p := &produced{op: r.Op, hash: contentHash(r.Op, r.Value, r.OldValue)}
		if old, ok := a.want[id]; ok {
			if old.op != p.op || old.hash != p.hash {
				return fmt.Errorf("datacheck: produced row #%d: %s.%s key %q commit ts %d produced twice with different content (the second is %s %q)",
					i, id.schema, id.table, id.key, id.ts, r.Op, r.Value)
			}
			return nil
		}
		a.want[id] = p
		if r.CommitTs <= finalCheckpoint {
			a.rep.Produced++
		}
		return nil
	})
	if err != nil {
		return nil, err
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
// increasing offset order; Add returns an error otherwise (and for use
// after Finish).
func (a *Analyzer) Add(rec Record) error {
	if a.finished {
		return errors.New("datacheck: Analyzer.Add after Finish")
	}
	if last, ok := a.lastOff[rec.Partition]; ok && rec.Offset <= last {
		return fmt.Errorf("datacheck: partition %d offset %d added after offset %d", rec.Partition, rec.Offset, last)
	}
	a.lastOff[rec.Partition] = rec.Offset
	a.seq++
	a.rep.Delivered++
	r, err := kafkasink.DecodeMessage(rec.Value)
	if err != nil {
		a.rep.Malformed++
		a.add(Example{Kind: "malformed", Partition: rec.Partition, Offset: rec.Offset, Detail: err.Error()})
		return nil
	}
	id := changeID{keyID{r.SchemaOrDefault(), r.Table, r.Key}, r.CommitTs}
	ex := Example{Schema: id.schema, Table: id.table, Key: id.key, CommitTs: id.ts, Partition: rec.Partition, Offset: rec.Offset}
	if p, seen := a.partOf[id.keyID]; seen && p != rec.Partition {
		a.rep.SplitKeys++
		ex.Kind, ex.Detail = "split_key", fmt.Sprintf("key already seen in partition %d", p)
		a.add(ex)
	} else if !seen {
		a.partOf[id.keyID] = rec.Partition
	}
	p, ok := a.want[id]
	if !ok {
		a.rep.Extra++
		ex.Kind, ex.Detail = "extra", fmt.Sprintf("%s %q was never produced", r.Op, r.Value)
		a.add(ex)
		return nil
	}
	if p.op != r.Op || p.hash != contentHash(r.Op, r.Value, r.OldValue) {
		a.rep.Extra++
		ex.Kind, ex.Detail = "extra", fmt.Sprintf("delivered %s %q (old %q) differs from the produced %s", r.Op, r.Value, r.OldValue, p.op)
		a.add(ex)
		return nil
	}
	p.hits++
	p.lastSeq, p.lastPartition, p.lastOffset = a.seq, rec.Partition, rec.Offset
	if p.hits > 1 {
		a.rep.Duplicates++
		ex.Kind, ex.Detail = "duplicate", fmt.Sprintf("delivery #%d", p.hits)
		a.add(ex)
		return nil
	}
	if id.ts > a.rep.FinalCheckpointTs {
		a.rep.BeyondCheckpoint++
	}
	a.changesOf[id.keyID] = append(a.changesOf[id.keyID], id)
	if m := a.maxFirst[id.keyID]; id.ts < m {
		a.rep.FirstDeliveryRegressions++
	} else {
		a.maxFirst[id.keyID] = id.ts
	}
	return nil
}

// Finish computes order violations and losses and returns the report.
func (a *Analyzer) Finish() Report {
	if a.finished {
		return a.rep
	}
	a.finished = true
	// Per-key order: the LAST deliveries of a key's changes must be in
	// commit-ts order (see the package doc for why not the first ones).
	keys := make([]keyID, 0, len(a.changesOf))
	for k := range a.changesOf {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y keyID) int {
		return cmp.Or(cmp.Compare(x.schema, y.schema), cmp.Compare(x.table, y.table), cmp.Compare(x.key, y.key))
	})
	for _, k := range keys {
		type last struct {
			seq int
			id  changeID
			p   *produced
		}
		ls := make([]last, len(a.changesOf[k]))
		for i, id := range a.changesOf[k] {
			p := a.want[id]
			ls[i] = last{p.lastSeq, id, p}
		}
		slices.SortFunc(ls, func(x, y last) int { return cmp.Compare(x.seq, y.seq) })
		var maxID changeID
		var m *produced
		for _, l := range ls {
			id, p := l.id, l.p
			if id.ts < maxID.ts {
				a.rep.OutOfOrder++
				a.add(Example{Kind: "out_of_order", Schema: id.schema, Table: id.table, Key: id.key, CommitTs: id.ts,
					Partition: p.lastPartition, Offset: p.lastOffset,
					Detail: fmt.Sprintf("last delivered after the last delivery of commit ts %d of the same key (partition %d offset %d)", maxID.ts, m.lastPartition, m.lastOffset)})
				continue
			}
			maxID, m = id, p
		}
	}

	var lost []Example
	for id, p := range a.want {
		if p.hits == 0 && id.ts <= a.rep.FinalCheckpointTs {
			lost = append(lost, Example{Kind: "lost", Schema: id.schema, Table: id.table, Key: id.key, CommitTs: id.ts, Offset: -1,
				Detail: fmt.Sprintf("%s at or below checkpoint %d never delivered", p.op, a.rep.FinalCheckpointTs)})
		}
	}
	a.rep.Lost = len(lost)
	slices.SortFunc(lost, func(x, y Example) int {
		return cmp.Or(cmp.Compare(x.CommitTs, y.CommitTs), cmp.Compare(x.Schema, y.Schema), cmp.Compare(x.Table, y.Table), cmp.Compare(x.Key, y.Key))
	})
	for _, e := range lost[:min(len(lost), MaxExamples)] {
		a.rep.Examples = append(a.rep.Examples, e)
	}
	return a.rep
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
