package model

import (
	"testing"

	"github.com/stretchr/testify/require"

	"cdcspec/search"
	"cdcspec/spec"
)

// TestSplitDoubleAddBreaksAtMostOne: the liveness goal that `cdcspec check
// --bug split-double-add` reports is the end of a safety violation: with
// liveness off the checker finds the second dispatcher of the same span as
// soon as it is created.
func TestSplitDoubleAddBreaksAtMostOne(t *testing.T) {
	cfg, ok := Standard(BugConfig("split-double-add"))
	require.True(t, ok)
	cfg.Bugs = spec.BugSet(0).With(spec.BugSplitDoubleAdd)
	r, err := Check(cfg, search.Bounds{SafetyOnly: true}, nil)
	require.NoError(t, err)
	require.Equal(t, search.Violation, r.Outcome, r.Reason)
	require.Equal(t, spec.AtMostOneDispatcherPerSpan, r.Violation.Property)
	require.Contains(t, r.Violation.Message, "span t1[")
}

// TestSplitParts: the halves of a table tile it and overlap the whole span
// only; a span key keeps a whole span's key equal to its table.
func TestSplitParts(t *testing.T) {
	require.Equal(t, uint8(2), spanKey(2, partWhole))
	for _, p := range []uint8{partWhole, partLeft, partRight} {
		k := spanKey(3, p)
		require.Equal(t, uint8(3), keyTable(k))
		require.Equal(t, p, keyPart(k))
	}
	require.True(t, partsOverlap(partWhole, partLeft))
	require.True(t, partsOverlap(partRight, partRight))
	require.False(t, partsOverlap(partLeft, partRight))
	l, r := partSpan(1, partLeft), partSpan(1, partRight)
	require.False(t, l.Overlaps(r))
	require.True(t, l.Overlaps(spec.WholeTable(1)) && r.Overlaps(spec.WholeTable(1)))
	require.Equal(t, l.End, r.Start, "the halves tile the table")
}
