package server

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/impl/core"
	"cdcspec/runtime/adminapi"
)

// TestCheckRule: a rule is a clear, or delay/dup with a delay, or drop
// without one; anything else is refused with ErrInvalidParam.
func TestCheckRule(t *testing.T) {
	for _, r := range []adminapi.DelayRule{
		{Clear: true},
		{Type: "BlockStatusRequest", Action: "delay", DelayMs: 10, Count: 1},
		{Action: "dup", DelayMs: 10, Count: 1, ForMs: 100},
		{Type: "BlockStatusRequest", Action: "drop", Count: 5, ForMs: 100},
	} {
		assert.NoError(t, checkRule(r), "%+v", r)
	}
	for _, r := range []adminapi.DelayRule{
		{Action: "delay", Count: 1},
		{Action: "drop", DelayMs: 10, Count: 1},
		{Action: "drop"},
		{Action: "drop", Count: 1, ForMs: -1},
		{Action: "lose", Count: 1},
		{Clear: true, Action: "lose", Count: 1},
	} {
		assert.ErrorIs(t, checkRule(r), adminapi.ErrInvalidParam, "%+v", r)
	}
}

// TestApplyRules: a drop rule loses the messages of its type while it
// lasts and counts them; other types pass; a rule whose for_ms passed no
// longer applies; a delay rule hands the message back after its delay.
func TestApplyRules(t *testing.T) {
	s := &Server{lg: NewWallClockLogger(io.Discard, "info"), delayed: make(chan core.Envelope, 4)}
	bs := core.Envelope{From: "a", To: "b", Msg: &core.BlockStatusRequest{}}
	hb := core.Envelope{From: "a", To: "b", Msg: &core.HeartBeatResponse{}}
	s.rules = []rule{{DelayRule: adminapi.DelayRule{Type: "BlockStatusRequest", Action: "drop", Count: 2}, until: time.Now().Add(time.Hour)}}
	assert.False(t, s.applyRules(hb), "another type passes")
	assert.True(t, s.applyRules(bs))
	assert.True(t, s.applyRules(bs))
	assert.False(t, s.applyRules(bs), "count spent")
	require.Empty(t, s.delayed, "a dropped message never comes back")

	s.rules = []rule{{DelayRule: adminapi.DelayRule{Type: "BlockStatusRequest", Action: "drop", Count: 10}, until: time.Now().Add(-time.Millisecond)}}
	assert.False(t, s.applyRules(bs), "the rule's for_ms passed")

	s.rules = []rule{{DelayRule: adminapi.DelayRule{Type: "HeartBeatResponse", Action: "delay", DelayMs: 1, Count: 1}}}
	assert.True(t, s.applyRules(hb))
	select {
	case env := <-s.delayed:
		assert.Equal(t, hb, env)
	case <-time.After(5 * time.Second):
		t.Fatal("a delayed message was not handed back")
	}
}
