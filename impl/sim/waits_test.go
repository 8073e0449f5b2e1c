package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/impl/core"
	"cdcspec/spec"
)

// TestRoutesFollowMessageWaits ties the simulation's routes to
// spec.MessageWaits: every message type the simulation sends has a row, and
// its sending and receiving queues are the row's.
func TestRoutesFollowMessageWaits(t *testing.T) {
	msgs := []core.Message{
		&core.CoordinatorBootstrapRequest{}, &core.AddMaintainerRequest{}, &core.RemoveMaintainerRequest{},
		&core.CoordinatorBootstrapResponse{}, &core.MaintainerHeartbeat{},
		&core.MaintainerBootstrapRequest{}, &core.MaintainerCloseRequest{},
		&core.MaintainerBootstrapResponse{}, &core.MaintainerCloseResponse{},
		&core.HeartBeatRequest{}, &core.BlockStatusRequest{},
		&core.ScheduleDispatcherRequest{}, &core.HeartBeatResponse{}, &core.MergeDispatcherRequest{},
	}
	sendNames := map[sendQueue]string{sendDirect: "", sendHeartbeatQueue: spec.SendHeartbeatQueue, sendBlockStatusQueue: spec.SendBlockStatusQueue}
	require.Len(t, msgs, len(spec.MessageWaits), "a message type without a row, or a row without a route")
	for _, m := range msgs {
		w, ok := spec.MessageWaitOf(m.TypeName())
		require.True(t, ok, "%s has no row in spec.MessageWaits", m.TypeName())
		sq, rq, _ := route(m)
		assert.Equal(t, w.SendQueue, sendNames[sq], "%s: sending queue", m.TypeName())
		assert.Equal(t, w.RecvQueue, rq.String(), "%s: receiving queue", m.TypeName())
	}
}

// TestDelayRuleHoldsOnTheStream: a delay rule on a HeartBeatRequest holds
// it on its stream, not in the heartbeat collector's sending queue
// (spec.MessageWaits: SendCommand never blocks), so a later direct send of
// the same node to the same maintainer queue is handled after it. Before,
// the rule stalled the sending queue and the later response overtook the
// heartbeat by the whole delay.
func TestDelayRuleHoldsOnTheStream(t *testing.T) {
	l := newNetLog()
	s := New(Config{Seed: 1, Nodes: 2, observe: l.observe})
	caps := s.Captures()
	from, to := caps[1], caps[0]
	cf := CfID("waits")
	require.NoError(t, s.AddRule(Rule{Type: "HeartBeatRequest", From: from, To: to, Action: "delay", DelayMs: 5000, Count: 1}))
	s.send(core.Envelope{From: from, To: to, Msg: &core.HeartBeatRequest{Changefeed: cf}})
	hb := s.msgID
	s.RunFor(10)
	s.send(core.Envelope{From: from, To: to, Msg: &core.MaintainerCloseResponse{Changefeed: cf, Epoch: 1, Success: true}})
	resp := s.msgID
	s.RunFor(6000)
	var order []uint64
	for _, id := range l.delivered {
		if id == hb || id == resp {
			order = append(order, id)
		}
	}
	require.Equal(t, []uint64{hb, resp}, order, "the later direct response overtook the delayed heartbeat")
}
