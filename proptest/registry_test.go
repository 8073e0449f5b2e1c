package proptest

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"cdcspec/impl/core"
)

// TestRegistryDraws: targeted rules draw every registered message type but
// the notDrawn ones (refinement's TestImplMsgType checks that every model
// kind maps to the type that carries it).
func TestRegistryDraws(t *testing.T) {
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
}
