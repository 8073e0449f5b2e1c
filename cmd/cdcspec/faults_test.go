package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/spec"
)

// TestFaultsCommand: `cdcspec faults` lists every fault of the vocabulary
// with each driver's answer, and every fault is injected by some driver (a
// name no driver injects does not belong in the vocabulary).
func TestFaultsCommand(t *testing.T) {
	code, out, stderr := runCmd("faults", "--format", "json")
	require.Equal(t, exitOK, code, stderr)
	var got []faultJSON
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Len(t, got, len(spec.Faults()))
	for i, f := range spec.Faults() {
		assert.Equal(t, string(f), got[i].Name)
		assert.Len(t, got[i].Drivers, len(faultDrivers), f)
		injected := false
		for _, why := range got[i].Drivers {
			injected = injected || why == ""
		}
		assert.True(t, injected, "no driver injects %s", f)
	}
	code, out, _ = runCmd("faults")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "kill-capture ")
	assert.Contains(t, out, "partition, run: every capture runs on one host's loopback")
}

// TestSimFaultsFlag: bad -faults names exit 2 and say why.
func TestSimFaultsFlag(t *testing.T) {
	for _, c := range []struct{ arg, want string }{
		{"kill", `-faults: unknown fault "kill" (known: kill-capture, `},
		{"kill-capture,heal", "-faults: heal: RunChaos does not draw it"},
	} {
		code, _, stderr := runCmd("sim", "-faults", c.arg)
		assert.Equal(t, exitUsage, code, c.arg)
		assert.Contains(t, stderr, c.want)
	}
	code, out, stderr := runCmd("sim", "-faults", "kill-capture,sink-error", "-steps", "10", "-seed", "4")
	require.Equal(t, exitOK, code, stderr)
	assert.True(t, strings.HasPrefix(out, "seed 4: ok"), out)
}
