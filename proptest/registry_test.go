package proptest

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"cdcspec/impl/core"
	"cdcspec/model"
)

// TestRegistryDrawsAndNames: targeted rules draw every registered message
// type but the notDrawn ones, and every model kind maps to the type that
// carries it.
func TestRegistryDrawsAndNames(t *testing.T) {
	drawn := map[string]bool{}
	for _, n := range MessageTypes {
		drawn[n] = true
	}
	for _, k := range core.MessageKinds() {
		assert.Equal(t, notDrawn[k.Name] == "", drawn[k.Name], "%s: drawn by targeted rules unless notDrawn says why", k.Name)
	}
	for n := range notDrawn {
		_, ok := core.KindNamed(n)
		assert.True(t, ok, "notDrawn names %s, which is not a registered message type", n)
	}
	for _, mk := range model.MessageKindNames() {
		k, ok := core.KindOfModel(mk)
		if assert.True(t, ok, "model kind %s has no implementation type", mk) {
			assert.Equal(t, k.Name, implMsgType(mk), "implMsgType(%s)", mk)
		}
	}
	assert.Equal(t, "MaintainerHeartbeat", implMsgType("MaintainerStatus"))
	assert.Equal(t, "HeartBeatResponse", implMsgType("HeartBeatResponse(action)"))
}
