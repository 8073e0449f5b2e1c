package traces

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"512": 512, "64K": 64 << 10, "16M": 16 << 20, "1G": 1 << 30} {
		got, err := ParseSize(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "0", "-1M", "1X", "G", "1.5G"} {
		_, err := ParseSize(bad)
		assert.Error(t, err, bad)
	}
}
