package spec

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseBugs(t *testing.T) {
	_, err := ParseBugs([]string{"no-such-bug"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"no-such-bug"`)
	assert.Contains(t, err.Error(), "no-epoch-fencing", "the error lists the known names")

	s, err := ParseBugs([]string{"no-epoch-fencing", " ", "stuck-after-upstream-failure"})
	require.NoError(t, err)
	assert.True(t, s.Has(BugNoEpochFencing))
	assert.True(t, s.Has(BugStuckAfterUpstreamFailure))
	assert.False(t, s.Has(BugRegressedCheckpointDropsError))
	assert.Equal(t, []string{"stuck-after-upstream-failure", "no-epoch-fencing"}, s.Names(), "catalogue order")
}

// TestCatalogue: IDs index the catalogue, names are unique and every entry
// is complete, so a switch read by model/ or impl/ always has an entry.
func TestCatalogue(t *testing.T) {
	seen := map[string]bool{}
	for i, b := range Bugs() {
		assert.Equal(t, BugID(i+1), b.ID, "entry %s out of ID order", b.Name)
		assert.Equal(t, b, b.ID.Entry())
		assert.Equal(t, b.Name, b.ID.String())
		assert.False(t, seen[b.Name], "duplicate name %s", b.Name)
		seen[b.Name] = true
		assert.NotEmpty(t, b.Issue, b.Name)
		assert.NotEmpty(t, b.Where, b.Name)
		assert.NotEmpty(t, b.Story, b.Name)
		assert.NotZero(t, b.Kind, b.Name)
		_, err := ParseDelivery(string(b.Delivery))
		assert.NoError(t, err, b.Name)
		assert.NotEmpty(t, b.Delivery, b.Name)
		_, ok := PropertyInfo(b.Property)
		assert.True(t, ok, "%s: unknown property %q", b.Name, b.Property)
		got, err := ParseBugs([]string{b.Name})
		require.NoError(t, err)
		assert.Equal(t, BugSet(0).With(b.ID), got)
	}
	assert.Len(t, Bugs(), int(bugLimit)-1)
}
