package datacheck

import (
	"cmp"
	"fmt"
	"slices"

	"cdcspec/runtime/kafkasink"
)

// BlockDDL is one blocking DDL of the upstream's history, as the DDL
// ordering check needs it.
//
// The rule (TiCDC's Kafka sink: the barrier's writer writes the DDL to
// every partition only after every dispatcher of the blocked tables
// flushed its rows below CommitTs, and those dispatchers write nothing at
// or above CommitTs until the DDL is acknowledged), per partition, judged
// on FIRST deliveries:
//
//   - ddl_missing: a DDL with CommitTs <= the final checkpoint is in every
//     partition at least once (duplicates are fine: at least once).
//   - ddl_order: a row change of a blocked table with commit ts below
//     CommitTs is first delivered before the DDL's first copy in its
//     partition; one at or above CommitTs is first delivered after it.
//     (TiDB writes no row of a blocked table at the DDL's own commit ts;
//     the synthetic upstream does, and its dispatchers write those rows
//     after the DDL, as rows above it.)
//   - ddl_unknown: a DDL message whose commit ts is not in the history.
//
// Replays: a restart re-sends from the checkpoint, so rows below the DDL,
// the DDL itself and rows above it may all appear again after the DDL's
// first copy; a re-delivery of a change already delivered is a duplicate
// and is not judged. A change first delivered on the wrong side of the
// DDL's first copy cannot come from a replay: a replayed change was
// delivered before, and the first write of each side respects the
// barrier. Blind spot: order is judged within a partition only (rows of
// one key share a partition; the DDL is in all of them).
type BlockDDL struct {
	CommitTs uint64   // TSO
	Tables   []string // blocked tables' names; nil: every table (DB or All influence)
	Query    string
}

func (d *BlockDDL) blocks(table string) bool {
	return d.Tables == nil || slices.Contains(d.Tables, table)
}

// SetDDLs gives the analyzer the upstream's blocking DDL history and the
// topic's partition count (every partition 0..partitions-1 must carry each
// DDL at or below the checkpoint; partitions seen in records count too).
// Call it before Add.
func (a *Analyzer) SetDDLs(ddls []BlockDDL, partitions int32) {
	a.ddls = slices.Clone(ddls)
	slices.SortFunc(a.ddls, func(x, y BlockDDL) int { return cmp.Compare(x.CommitTs, y.CommitTs) })
	a.partitions = partitions
}

func (a *Analyzer) seen(p int32) map[uint64]bool {
	if a.ddlSeen == nil {
		a.ddlSeen = map[int32]map[uint64]bool{}
	}
	m := a.ddlSeen[p]
	if m == nil {
		m = map[uint64]bool{}
		a.ddlSeen[p] = m
	}
	return m
}

func (a *Analyzer) findDDL(ts uint64) *BlockDDL {
	i, ok := slices.BinarySearchFunc(a.ddls, ts, func(d BlockDDL, t uint64) int { return cmp.Compare(d.CommitTs, t) })
	if !ok {
		return nil
	}
	return &a.ddls[i]
}

func (a *Analyzer) ddlViolation(e Example) {
	a.rep.DDLOrderViolations++
	a.add(e)
}

// addDDL records a DDL message.
func (a *Analyzer) addDDL(rec Record, d *kafkasink.DDL) {
	a.rep.DDLs++
	a.seen(rec.Partition)[d.CommitTs] = true
	if a.findDDL(d.CommitTs) == nil {
		a.ddlViolation(Example{Kind: "ddl_unknown", CommitTs: d.CommitTs, Partition: rec.Partition, Offset: rec.Offset,
			Detail: fmt.Sprintf("DDL %q is not in the upstream's history", d.Query)})
	}
}

// checkRowAgainstDDLs judges a row change's first delivery (ex names it).
func (a *Analyzer) checkRowAgainstDDLs(p int32, ex Example) {
	if len(a.ddls) == 0 {
		return
	}
	seen := a.seen(p)
	for i := range a.ddls {
		d := &a.ddls[i]
		if !d.blocks(ex.Table) {
			continue
		}
		switch {
		case ex.CommitTs < d.CommitTs && seen[d.CommitTs]:
			ex.Kind, ex.Detail = "ddl_order", fmt.Sprintf("row below the DDL at commit ts %d (%s) first delivered after the DDL", d.CommitTs, d.Query)
			a.ddlViolation(ex)
		case ex.CommitTs >= d.CommitTs && !seen[d.CommitTs]:
			ex.Kind, ex.Detail = "ddl_order", fmt.Sprintf("row at or above the DDL at commit ts %d (%s) first delivered before the DDL", d.CommitTs, d.Query)
			a.ddlViolation(ex)
		}
	}
}

// finishDDLs counts the DDLs at or below the checkpoint missing from a
// partition.
func (a *Analyzer) finishDDLs() {
	parts := map[int32]bool{}
	for p := int32(0); p < a.partitions; p++ {
		parts[p] = true
	}
	for p := range a.lastOff {
		parts[p] = true
	}
	for p := range a.ddlSeen {
		parts[p] = true
	}
	ps := make([]int32, 0, len(parts))
	for p := range parts {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	for _, d := range a.ddls {
		if d.CommitTs > a.rep.FinalCheckpointTs {
			continue
		}
		for _, p := range ps {
			if !a.seen(p)[d.CommitTs] {
				a.ddlViolation(Example{Kind: "ddl_missing", CommitTs: d.CommitTs, Partition: p, Offset: -1,
					Detail: fmt.Sprintf("DDL %q at or below checkpoint %d never delivered to the partition", d.Query, a.rep.FinalCheckpointTs)})
			}
		}
	}
}
