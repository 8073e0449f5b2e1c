package mutant

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOnRecordsInfection(t *testing.T) {
	saved := active
	defer func() { active = saved; Reset() }()
	active = 3
	Reset()
	assert.False(t, On(2))
	assert.False(t, Infected(), "another mutant's site does not infect")
	assert.True(t, On(3))
	assert.True(t, Infected())
	Reset()
	assert.False(t, Infected())
	active = -1
	assert.False(t, On(-2))
	assert.False(t, On(0))
	assert.False(t, Infected())
}
