package rangechecker

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// TableSpanRangeChecker is table_span_range_checker.go's: one
// SpanCoverageChecker per table, over the table's whole key range; covered
// when every table is.
type TableSpanRangeChecker struct {
	// tableSpans: one checker per table the event blocks, fixed at build.
	tableSpans map[int64]*SpanCoverageChecker
	covered    bool // MarkCovered since the last Reset
}

// NewTableSpanRangeChecker builds the checker of tables, each over
// TableIDToComparableSpan (table_span_range_checker.go:33-43).
func NewTableSpanRangeChecker(tables []int64) *TableSpanRangeChecker {
	rc := &TableSpanRangeChecker{tableSpans: make(map[int64]*SpanCoverageChecker, len(tables))}
	for _, t := range tables {
		start, end := TableIDToComparableSpan(t)
		rc.tableSpans[t] = NewTableSpanCoverageChecker(start, end)
	}
	return rc
}

// AddSubRange adds [start, end) to table tableID's checker; a table the
// checker was not built for is ignored (table_span_range_checker.go:46-50).
func (rc *TableSpanRangeChecker) AddSubRange(tableID int64, start, end []byte) {
	if sc, ok := rc.tableSpans[tableID]; ok {
		sc.AddSubRange(start, end)
	}
}

// IsFullyCovered: marked covered, or every table's key range is covered.
func (rc *TableSpanRangeChecker) IsFullyCovered() bool {
	if rc.covered {
		return true
	}
	for _, sc := range rc.tableSpans {
		if !sc.IsFullyCovered() {
			return false
		}
	}
	return true
}

// Reset empties every table's checker and clears the covered mark.
func (rc *TableSpanRangeChecker) Reset() {
	for _, sc := range rc.tableSpans {
		sc.Reset()
	}
	rc.covered = false
}

// MarkCovered makes the checker covered until the next Reset.
func (rc *TableSpanRangeChecker) MarkCovered() { rc.covered = true }

// Detail lists the uncovered tables in HEAD's format
// (table_span_range_checker.go:77-86), in table order.
func (rc *TableSpanRangeChecker) Detail() string {
	var b strings.Builder
	b.WriteString("uncovered tables: ")
	for _, t := range rc.TableIDs() {
		if !rc.tableSpans[t].IsFullyCovered() {
			fmt.Fprintf(&b, "%d,\n", t)
		}
	}
	return b.String()
}

// TableIDs are the tables the checker was built for, in order.
func (rc *TableSpanRangeChecker) TableIDs() []int64 {
	out := make([]int64, 0, len(rc.tableSpans))
	for t := range rc.tableSpans {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Table is table tableID's checker (nil if the checker was not built for
// it); HEAD's tests read rc.tableSpans[tableID].
func (rc *TableSpanRangeChecker) Table(tableID int64) *SpanCoverageChecker {
	return rc.tableSpans[tableID]
}

// SpanCoverageChecker is table_span_range_checker.go's: whether the
// reported sub-ranges cover [start, end). HEAD keeps them in a B-tree of
// merged ranges; here a sorted slice of disjoint ranges, each union of
// overlapping or touching reports merged into one.
type SpanCoverageChecker struct {
	start, end []byte
	// ranges: sorted by start, pairwise disjoint and not touching.
	ranges []keyRange
	// covered is set by a whole-table report (nil start and end) or
	// MarkCovered: the table was removed, nothing more is owed.
	covered bool
}

type keyRange struct{ start, end []byte }

// NewTableSpanCoverageChecker builds the checker of [start, end).
func NewTableSpanCoverageChecker(start, end []byte) *SpanCoverageChecker {
	return &SpanCoverageChecker{start: start, end: end}
}

// AddSubRange records [start, end), merged with every recorded range it
// overlaps or touches (table_span_range_checker.go:107-157); nil start and
// end mark the table done.
func (rc *SpanCoverageChecker) AddSubRange(start, end []byte) {
	if start == nil && end == nil {
		rc.covered = true
		return
	}
	merged := keyRange{start: start, end: end}
	kept := rc.ranges[:0:0]
	for _, r := range rc.ranges {
		if bytes.Compare(r.end, merged.start) < 0 || bytes.Compare(r.start, merged.end) > 0 {
			kept = append(kept, r)
			continue
		}
		if bytes.Compare(r.start, merged.start) < 0 {
			merged.start = r.start
		}
		if bytes.Compare(r.end, merged.end) > 0 {
			merged.end = r.end
		}
	}
	i := sort.Search(len(kept), func(i int) bool { return bytes.Compare(kept[i].start, merged.start) > 0 })
	kept = append(kept, keyRange{})
	copy(kept[i+1:], kept[i:])
	kept[i] = merged
	rc.ranges = kept
}

// IsFullyCovered walks the ranges from start: covered when they reach end
// with no gap. As HEAD's walk (table_span_range_checker.go:160-182) it
// needs the last range to end exactly at end: a sub-range that runs past
// end leaves the checker uncovered (the barrier only reports spans inside
// their table, which never do).
func (rc *SpanCoverageChecker) IsFullyCovered() bool {
	if rc.covered {
		return true
	}
	cur := rc.start
	for _, r := range rc.ranges {
		if bytes.Compare(r.end, cur) <= 0 {
			continue
		}
		if bytes.Compare(cur, r.start) < 0 {
			return false // a gap
		}
		cur = r.end
		if bytes.Compare(cur, rc.end) >= 0 {
			break
		}
	}
	return len(rc.ranges) > 0 && bytes.Equal(cur, rc.end)
}

// Reset forgets every range and the covered mark.
func (rc *SpanCoverageChecker) Reset() {
	rc.ranges = nil
	rc.covered = false
}

// MarkCovered makes the checker covered until the next Reset.
func (rc *SpanCoverageChecker) MarkCovered() { rc.covered = true }

// Len is the number of merged ranges held (HEAD's tests read tree.Len()).
func (rc *SpanCoverageChecker) Len() int { return len(rc.ranges) }

// Ranges are the merged ranges held, in order, as [start, end) pairs.
func (rc *SpanCoverageChecker) Ranges() [][2][]byte {
	out := make([][2][]byte, len(rc.ranges))
	for i, r := range rc.ranges {
		out[i] = [2][]byte{r.start, r.end}
	}
	return out
}
