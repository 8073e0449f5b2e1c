package refinement

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"cdcspec/impl/core"
	"cdcspec/model"
)

// TestModelKindsFollowRegistry: the Tracker matches a delivery against the
// model kinds its type carries (the registry), less the untracked ones,
// which must be model kinds.
func TestModelKindsFollowRegistry(t *testing.T) {
	kinds := map[string]bool{}
	for _, n := range model.MessageKindNames() {
		kinds[n] = true
	}
	for mk, why := range untracked {
		assert.True(t, kinds[mk], "untracked names %q (%s), which is no model kind", mk, why)
	}
	for m, want := range map[core.Message][]string{
		&core.MaintainerHeartbeat{}:         {"MaintainerStatus"},
		&core.HeartBeatRequest{}:            {"HeartBeatRequest(watermark)", "HeartBeatRequest(status)", "HeartBeatRequest(err)"},
		&core.BlockStatusRequest{}:          {"BlockStatusRequest(NONE)"},
		&core.HeartBeatResponse{}:           {"HeartBeatResponse(ACK)"},
		&core.CoordinatorBootstrapRequest{}: nil,
		&core.ScheduleDispatcherRequest{}:   {"ScheduleDispatcherRequest"},
		&core.MergeDispatcherRequest{}:      {"MergeDispatcherRequest"},
	} {
		assert.Equal(t, want, modelKinds(m), "%s", m.TypeName())
	}
}
