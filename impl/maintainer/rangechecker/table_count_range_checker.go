package rangechecker

import (
	"sort"
	"strconv"
	"strings"
)

// TableIDRangeChecker is table_count_range_checker.go's: covered once as
// many distinct tables reported as the checker was built for. It is right
// only while every table is one span, which is why HEAD builds it only when
// tables cannot be split (barrier_event.go:150-164).
type TableIDRangeChecker struct {
	needCount int
	tableIDs  []int64
	// reportedMap: the tables that reported since the last Reset, any
	// table (HEAD counts a table outside tableIDs too).
	reportedMap map[int64]struct{}
	covered     bool // MarkCovered since the last Reset
}

// NewTableCountChecker builds the checker of tableIDs
// (table_count_range_checker.go:31-39).
func NewTableCountChecker(tableIDs []int64) *TableIDRangeChecker {
	return &TableIDRangeChecker{needCount: len(tableIDs), tableIDs: tableIDs, reportedMap: make(map[int64]struct{}, len(tableIDs))}
}

// AddSubRange records that table tableID reported; the keys are not read.
func (rc *TableIDRangeChecker) AddSubRange(tableID int64, _, _ []byte) {
	rc.reportedMap[tableID] = struct{}{}
}

// IsFullyCovered: marked covered, or at least needCount tables reported.
func (rc *TableIDRangeChecker) IsFullyCovered() bool {
	return rc.covered || len(rc.reportedMap) >= rc.needCount
}

// Reset forgets the reported tables and the covered mark.
func (rc *TableIDRangeChecker) Reset() {
	rc.reportedMap = make(map[int64]struct{}, rc.needCount)
	rc.covered = false
}

// MarkCovered makes the checker covered until the next Reset.
func (rc *TableIDRangeChecker) MarkCovered() { rc.covered = true }

// Detail is HEAD's "reported count: R, require count: N[, uncovered
// tables: ...]" (table_count_range_checker.go:57-77).
func (rc *TableIDRangeChecker) Detail() string {
	var b strings.Builder
	b.WriteString("reported count: ")
	b.WriteString(strconv.Itoa(len(rc.reportedMap)))
	b.WriteString(", require count: ")
	b.WriteString(strconv.Itoa(rc.needCount))
	var uncovered []string
	for _, t := range rc.tableIDs {
		if _, ok := rc.reportedMap[t]; !ok {
			uncovered = append(uncovered, strconv.FormatInt(t, 10))
		}
	}
	if len(uncovered) > 0 {
		b.WriteString(", uncovered tables: ")
		b.WriteString(strings.Join(uncovered, ", "))
	}
	return b.String()
}

// NeedCount is how many tables must report (HEAD's tests read needCount).
func (rc *TableIDRangeChecker) NeedCount() int { return rc.needCount }

// Reported are the tables that reported since the last Reset, in order
// (HEAD's tests read reportedMap).
func (rc *TableIDRangeChecker) Reported() []int64 {
	out := make([]int64, 0, len(rc.reportedMap))
	for t := range rc.reportedMap {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
