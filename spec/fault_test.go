package spec

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFaultVocabulary: names are unique, lower-case words joined by
// hyphens, and each has a one-line doc; ParseFault takes every name back.
func TestFaultVocabulary(t *testing.T) {
	seen := map[Fault]bool{}
	for _, f := range Faults() {
		assert.False(t, seen[f], "duplicate fault %s", f)
		seen[f] = true
		assert.Regexp(t, `^[a-z]+(-[a-z]+)*$`, string(f))
		assert.NotEmpty(t, f.Doc(), f)
		assert.NotContains(t, f.Doc(), "\n", f)
		got, err := ParseFault(string(f))
		require.NoError(t, err)
		assert.Equal(t, f, got)
	}
	assert.Len(t, FaultNames(), len(Faults()))
	assert.False(t, Fault("crash").Known())
	for _, a := range Actions() {
		assert.Regexp(t, `^[a-z]+(-[a-z]+)*$`, string(a))
		assert.NotEmpty(t, a.Doc(), a)
		assert.False(t, Fault(a).Known(), "%s is both a fault and an action", a)
	}
	assert.False(t, Action("move").Known())
}

func TestParseFault(t *testing.T) {
	_, err := ParseFault("kill")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown fault "kill"`)
	assert.Contains(t, err.Error(), "kill-capture, ", "the error lists the known names")
	assert.Contains(t, err.Error(), string(FaultHeal))

	fs, err := ParseFaults(strings.Split("kill-capture,,sink-error", ","))
	require.NoError(t, err)
	assert.Equal(t, []Fault{FaultKillCapture, FaultSinkError}, fs)
	_, err = ParseFaults([]string{"sink-error", "meteor"})
	assert.ErrorContains(t, err, `"meteor"`)
}

func TestCheckUnsupported(t *testing.T) {
	assert.NoError(t, CheckUnsupported("d", map[Fault]string{FaultPartition: "no network"}))
	assert.ErrorContains(t, CheckUnsupported("d", map[Fault]string{"crash": "x"}), `"crash" is not in the vocabulary`)
	assert.ErrorContains(t, CheckUnsupported("d", map[Fault]string{FaultPartition: " "}), "partition is listed as not supported without a reason")
}
