package cluster

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/spec"
)

// TestScenariosParse: every scenario file parses, and a few read as
// their stories say (the seeds' schedules moved here from Go switches
// unchanged).
func TestScenariosParse(t *testing.T) {
	names := Scenarios()
	require.Contains(t, names, "seed-5709")
	for _, name := range names {
		sc, err := LoadScenario(name)
		require.NoError(t, err, name)
		assert.Equal(t, name, sc.Name)
	}
	sc, err := LoadScenario("seed-3952")
	require.NoError(t, err)
	assert.Equal(t, 1, sc.Captures)
	assert.False(t, sc.RawWatermark)
	require.Len(t, sc.Steps, 3)
	assert.Equal(t, Step{At: 4 * time.Second, Fault: spec.FaultDuplicateMessages, MsgType: "RemoveMaintainerRequest", Dur: 7 * time.Second}, sc.Steps[0])
	assert.Equal(t, 4100*time.Millisecond, sc.Steps[1].At)

	sc, err = LoadScenario("seed-5709")
	require.NoError(t, err)
	assert.True(t, sc.RawWatermark)
	assert.Equal(t, spec.ActionSplitTable, sc.Steps[0].Action)

	sc, err = LoadScenario("seed-9595")
	require.NoError(t, err)
	assert.Equal(t, []Step{{At: 4 * time.Second, Fault: spec.FaultStore, AllStores: true, SlowReceive: true, Dur: 10 * time.Second}}, sc.Steps)
}

// TestScenarioBadInput: bad input is an error naming file and line.
func TestScenarioBadInput(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"at 4s kill\n", `x.txt:1: unknown fault "kill"`},
		{"# story\n\nat 4s sink-error for=x\n", `x.txt:3: for="x": want a positive duration`},
		{"at 4s delay-messages msg=Nope\n", `x.txt:1: msg="Nope": unknown message type (known: `},
		{"at 4s sink-error loud\n", `x.txt:1: option "loud" of sink-error`},
		{"at four sink-error\n", `x.txt:1: offset "four"`},
		{"at 5s sink-error\nat 4s create-table\n", `x.txt:2: at 4s comes before the previous step's 5s`},
		{"captures 0\nat 1s sink-error\n", `x.txt:1: captures "0"`},
		{"raw-watermark yes\n", `x.txt:1: raw-watermark takes no argument`},
		{"wait 4s\n", `x.txt:1: unknown command "wait"`},
		{"at 4s\n", `x.txt:1: want "at <offset> <fault or action> [options]"`},
		{"# only a story\n", `x.txt: no step`},
		{"at 4s partition\n", `x.txt:1: fault partition: cdcspec run cannot inject it`},
	} {
		_, err := ParseScenario("x", "x.txt", []byte(c.text))
		if assert.Error(t, err, c.text) {
			assert.Contains(t, err.Error(), c.want, c.text)
		}
	}
	_, err := LoadScenario("seed-0")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown scenario "seed-0" (known: seed-3411, `)
	_, err = LoadScenario("../scenarios/seed-5709")
	require.Error(t, err)
}
