package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/spec"
)

// TestFaultActionsAreTheVocabulary: every fault of the vocabulary is the
// name of exactly one model action, or listed in UnsupportedFaults with the
// reason; every action that spends a fault budget is a fault.
func TestFaultActionsAreTheVocabulary(t *testing.T) {
	require.NoError(t, spec.CheckUnsupported("model", UnsupportedFaults))
	actions := map[spec.Fault][]ActKind{}
	for k := ActKind(1); k < actKinds; k++ {
		if f, ok := k.Fault(); ok {
			actions[f] = append(actions[f], k)
			assert.Equal(t, string(f), k.String(), "a fault action is named by its fault")
		}
		if k.IsFault() {
			_, ok := k.Fault()
			assert.True(t, ok, "%s spends a fault budget but is no fault of the vocabulary", k)
		}
	}
	for _, f := range spec.Faults() {
		_, unsupported := UnsupportedFaults[f]
		if unsupported {
			assert.Empty(t, actions[f], "%s is an action and listed as unsupported", f)
			continue
		}
		assert.Len(t, actions[f], 1, "%s: want exactly one model action", f)
	}
}
