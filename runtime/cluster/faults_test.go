package cluster

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/spec"
)

// TestInjectorsCoverTheVocabulary: every fault of the vocabulary has an
// injector or is listed in UnsupportedFaults with a reason, never both;
// every scenario and the default schedule name only what cdcspec run
// injects.
func TestInjectorsCoverTheVocabulary(t *testing.T) {
	require.NoError(t, spec.CheckUnsupported("cdcspec run", UnsupportedFaults))
	for _, f := range spec.Faults() {
		_, unsupported := UnsupportedFaults[f]
		_, injected := faultInjectors[f]
		assert.NotEqual(t, unsupported, injected, "%s must be exactly one of: injected, listed in UnsupportedFaults", f)
	}
	for a := range actionInjectors {
		assert.True(t, a.Known(), "action %s is no domain action of spec", a)
	}
	_, err := Schedule(DefaultFaults, 60)
	require.NoError(t, err)
	for _, name := range []string{"seed-5709", "seed-3411", "seed-6202", "seed-5401", "seed-5083", "seed-3952"} {
		steps, _, err := Scenario(name)
		require.NoError(t, err)
		for _, st := range steps {
			assert.NoError(t, st.check(), "%s: %s", name, st.Name())
		}
	}
}

func TestParseStep(t *testing.T) {
	st, err := ParseStep("kill-capture")
	require.NoError(t, err)
	assert.Equal(t, spec.FaultKillCapture, st.Fault)
	st, err = ParseStep("move-table")
	require.NoError(t, err)
	assert.Equal(t, spec.ActionMoveTable, st.Action)

	_, err = ParseStep("kill")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown fault "kill" (known: kill-capture, kill-maintainer-capture, `)
	assert.Contains(t, err.Error(), "pause-changefeed")
	_, err = ParseStep("partition")
	assert.ErrorContains(t, err, "fault partition: cdcspec run cannot inject it: every capture runs on one host's loopback")
	_, err = ParseStep("create-changefeed")
	assert.ErrorContains(t, err, `unknown fault "create-changefeed"`)

	steps, err := Schedule([]string{"sink-error", "stall-upstream", "create-table"}, 40)
	require.NoError(t, err)
	require.Len(t, steps, 3)
	assert.Equal(t, []string{"sink-error", "stall-upstream", "create-table"}, []string{steps[0].Name(), steps[1].Name(), steps[2].Name()})
	assert.Equal(t, []int64{10, 20, 30}, []int64{int64(steps[0].At), int64(steps[1].At), int64(steps[2].At)})
}
