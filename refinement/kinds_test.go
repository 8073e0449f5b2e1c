package refinement

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"cdcspec/impl/core"
)

// TestModelKindsFollowRegistry: the Tracker matches a delivery against the
// model kinds its type carries (the registry), less the untracked ones,
// which must be model kinds.
func TestModelKindsFollowRegistry(t *testing.T) {
	for mk, why := range untracked {
		_, ok := core.KindOfModel(mk) // the registry's model kinds are the model's (TestRegistryMatchesModelKinds)
		assert.True(t, ok, "untracked names %q (%s), which is no model kind", mk, why)
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
