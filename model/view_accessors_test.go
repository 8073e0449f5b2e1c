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
