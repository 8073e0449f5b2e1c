package rangechecker

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"cdcspec/spec"
)

var (
	_ RangeChecker = (*TableSpanRangeChecker)(nil)
	_ RangeChecker = (*TableIDRangeChecker)(nil)
)

// TestTableKeysKeepOrder: a table's comparable range is non-empty, lies
// before the next table's, and holds its spans' keys in their order.
func TestTableKeysKeepOrder(t *testing.T) {
	for _, id := range []int64{-1, 0, 1, 255, 256, 1 << 40} {
		s, e := TableIDToComparableSpan(id)
		require.Len(t, s, 18, "table %d", id)
		require.Negative(t, bytes.Compare(s, e), "table %d", id)
		ns, _ := TableIDToComparableSpan(id + 1)
		require.LessOrEqual(t, bytes.Compare(e, ns), 0, "table %d ends after table %d starts", id, id+1)
		prev := s
		for _, sp := range []spec.Span{{Table: id, Start: "", End: "a"}, {Table: id, Start: "a", End: "b"}, {Table: id, Start: "b"}} {
			ks, ke := SpanKeys(sp)
			require.Equal(t, prev, ks, "span %s starts where the last ended", sp)
			require.Negative(t, bytes.Compare(ks, ke), "span %s", sp)
			prev = ke
		}
		require.Equal(t, e, prev, "the last span ends at the table's end")
	}
}

// TestSpanCoverageMergesAndFindsGaps: overlapping and touching ranges
// merge, a gap stays uncovered, a range past the end does not cover.
func TestSpanCoverageMergesAndFindsGaps(t *testing.T) {
	rc := NewTableSpanCoverageChecker([]byte{0x10}, []byte{0x50})
	rc.AddSubRange([]byte{0x30}, []byte{0x50})
	rc.AddSubRange([]byte{0x10}, []byte{0x20})
	require.Equal(t, 2, rc.Len())
	require.False(t, rc.IsFullyCovered())
	rc.AddSubRange([]byte{0x18}, []byte{0x30})
	require.Equal(t, 1, rc.Len())
	require.True(t, rc.IsFullyCovered())

	over := NewTableSpanCoverageChecker([]byte{0x10}, []byte{0x50})
	over.AddSubRange([]byte{0x10}, []byte{0x60})
	require.False(t, over.IsFullyCovered(), "HEAD needs the walk to end exactly at end")
	over.AddSubRange(nil, nil)
	require.True(t, over.IsFullyCovered(), "a whole-table report covers")
	over.Reset()
	require.False(t, over.IsFullyCovered())
	require.Zero(t, over.Len())
}

// TestCheckersMarkCoveredUntilReset: MarkCovered holds until Reset, and
// the count checker's Detail names the tables still missing.
func TestCheckersMarkCoveredUntilReset(t *testing.T) {
	for _, rc := range []RangeChecker{NewTableSpanRangeChecker([]int64{1, 2}), NewTableCountChecker([]int64{1, 2})} {
		require.False(t, rc.IsFullyCovered())
		rc.MarkCovered()
		require.True(t, rc.IsFullyCovered())
		rc.Reset()
		require.False(t, rc.IsFullyCovered())
	}
	tc := NewTableCountChecker([]int64{1, 2, 101})
	tc.AddSubRange(2, nil, nil)
	require.Equal(t, "reported count: 1, require count: 3, uncovered tables: 1, 101", tc.Detail())
	sc := NewTableSpanRangeChecker([]int64{1, 2})
	s, e := TableIDToComparableSpan(2)
	sc.AddSubRange(2, s, e)
	require.Equal(t, "uncovered tables: 1,\n", sc.Detail())
}
