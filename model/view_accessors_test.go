package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestViewAccessors: WorkingDispatchers and ActiveMaintainers read
// DispView's and MaintView's renderings back (refinement.ModelQuiescence
// relies on them instead of the model's encoding).
func TestViewAccessors(t *testing.T) {
	v := View{
		Maint: [MaxNodes]string{MaintView(false, true, false, false), MaintView(false, true, true, false), MaintView(true, true, false, false)},
		Disp: []string{
			DispView("n0", 0, PartWhole, "Initializing"),
			DispView("n0", 1, PartWhole, "Working"),
			DispView("n1", 2, PartLeft, "Working"),
			DispView("n2", 2, PartRight, "Working"),
			DispView("n2", 3, PartWhole, "Removing"),
			DispView("n1", 12, PartWhole, "Working"),
		},
	}
	for table, want := range map[int]int{0: 1, 1: 1, 2: 2, 3: 0, 12: 1, 4: 0} {
		assert.Equal(t, want, v.WorkingDispatchers(table), "table %d", table)
	}
	assert.Equal(t, 1, v.ActiveMaintainers())
	k, ok := MsgKind("MaintainerStatus")
	assert.True(t, ok)
	assert.Equal(t, "MaintainerStatus", Msg{Kind: k}.KindName())
	_, ok = MsgKind("NoSuchMessage")
	assert.False(t, ok)
}

// TestMessageAccessors: InFlight lists exactly the queued messages (the
// replay reads the network through it), SrcSlot is the sender's slot, and
// StatusReport is a maintainer's MaintainerStatus to the coordinator.
func TestMessageAccessors(t *testing.T) {
	cfg := Base()
	s := Init(&cfg)
	for len(s.InFlight()) == 0 {
		acts := Actions(cfg, s)
		if !assert.NotEmpty(t, acts, "no message is ever sent") {
			return
		}
		s, _ = Step(cfg, s, acts[0])
	}
	queued := 0
	for i := range s.Net {
		if s.Net[i].Kind != 0 {
			queued++
		}
	}
	assert.Len(t, s.InFlight(), queued)
	for _, m := range s.InFlight() {
		assert.NotEmpty(t, m.KindName())
		if !m.FromCoordinator() {
			assert.Equal(t, m.Src&3, m.SrcSlot(), "%s", m)
		}
	}
	st := s.StatusReport(1)
	assert.Equal(t, "MaintainerStatus", st.KindName())
	assert.True(t, st.ToCoordinator())
	assert.False(t, st.FromCoordinator())
	assert.Equal(t, uint8(1), st.SrcSlot())
	assert.Equal(t, s.Ident(1), st.Src)
}

// TestActionAccessors: SpanTable reads the table out of a span key (a split
// table's halves included) and SplitHasTargets the split mode, for the
// refinement Tracker's filters.
func TestActionAccessors(t *testing.T) {
	for _, part := range []uint8{partWhole, partLeft, partRight} {
		a := Action{Kind: AMaintMove, Arg: spanKey(2, part), Arg2: 1}
		assert.Equal(t, uint8(2), a.SpanTable(), "part %d", part)
	}
	assert.False(t, Action{Kind: ASplit, Arg: 1, Arg2: splitNoTargets}.SplitHasTargets())
	assert.True(t, Action{Kind: ASplit, Arg: 1, Arg2: splitAligned | 1<<2}.SplitHasTargets())
	assert.True(t, Action{Kind: ASplit, Arg: 1, Arg2: splitMismatch | 2<<2}.SplitHasTargets())
}
