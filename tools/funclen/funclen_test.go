package funclen

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestModuleFunctionLength is the rule itself: every function of the
// module's non-test code over MaxLines lines names its reason on a `Long:`
// line of its doc comment (docs/function-length.md).
func TestModuleFunctionLength(t *testing.T) {
	funcs, err := Check("../..")
	require.NoError(t, err)
	var bad []string
	for _, f := range funcs {
		if f.Reason == "" {
			bad = append(bad, f.String())
		} else {
			t.Logf("%s: Long: %s", f, f.Reason)
		}
	}
	require.Empty(t, bad, "functions over %d lines without a %q line in their doc comment:\n%s",
		MaxLines, LongPrefix, strings.Join(bad, "\n"))
}

// TestFixtureFunctionLength shows the check can fail: the fixture holds a
// function of 121 lines without a reason (reported), one with a reason (kept
// with it), one of exactly 120 lines (not reported), a method of a generic
// type, and a long function in a _test.go file (not reported).
func TestFixtureFunctionLength(t *testing.T) {
	funcs, err := Check("testdata/fixture")
	require.NoError(t, err)
	require.Len(t, funcs, 3)
	require.Equal(t, "generic.go", funcs[0].File)
	require.Equal(t, "G.method", funcs[0].Name, "a method of a generic type")
	require.Equal(t, Func{File: "long.go", Line: 4, Name: "tooLong", Lines: 121}, funcs[1])
	require.Equal(t, "T.longWithReason", funcs[2].Name)
	require.Equal(t, "one case per kind, for the fixture", funcs[2].Reason)
}

// TestEmptyReasonIsAnError: a `Long:` line must say something.
func TestEmptyReasonIsAnError(t *testing.T) {
	_, err := Check("testdata/emptyreason")
	require.ErrorContains(t, err, "empty.go:5: bare: \"Long:\" line with no reason")
}
