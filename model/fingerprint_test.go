package model

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/search"
)

// TestCheckStateSet: the fingerprint is deterministic, covers the search's
// distinct states, and tells two different state spaces apart.
func TestCheckStateSet(t *testing.T) {
	cfg, _ := Standard("default")
	b := search.Bounds{Workers: 1, DelayBounded: true, DelayBound: 2}
	r1, s1, err := CheckStateSet(cfg, b)
	require.NoError(t, err)
	_, s2, err := CheckStateSet(cfg, b)
	require.NoError(t, err)
	assert.Equal(t, s1, s2)
	assert.GreaterOrEqual(t, s1.Count, r1.Distinct)
	plain, err := Check(cfg, b, nil)
	require.NoError(t, err)
	assert.Equal(t, plain.Distinct, r1.Distinct, "the wrapper changes the search")
	b.DelayBound = 3
	_, s3, err := CheckStateSet(cfg, b)
	require.NoError(t, err)
	assert.NotEqual(t, s1.Hash, s3.Hash)
}
