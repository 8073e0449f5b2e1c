package sim

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/impl/core"
	"cdcspec/spec"
)

// coordinatorCommand: what the coordinator sends a node's maintainer
// manager (TiCDC: SendCommand on the "maintainer-manager" topic, queued in
// Manager.msgCh).
func coordinatorCommand(m core.Message) bool {
	switch m.(type) {
	case *core.CoordinatorBootstrapRequest, *core.AddMaintainerRequest, *core.RemoveMaintainerRequest:
		return true
	}
	return false
}

// commandOrder is what the network did with the coordinator's commands over
// some chaos runs.
type commandOrder struct {
	sent, delivered, dropped, duplicates int
	// overtaken lists deliveries of a command after a later command of the
	// same (coordinator node, target node) pair was delivered.
	overtaken []string
}

// observeCommandOrder runs chaos seeds under delivery and records, per
// (coordinator node, target node), the send order of the coordinator's
// commands against the order their handler ran in.
func observeCommandOrder(delivery spec.Delivery, seeds int) commandOrder {
	var o commandOrder
	for seed := 1; seed <= seeds; seed++ {
		last := map[streamKey]uint64{} // highest command ID handled per pair
		handled := map[uint64]bool{}   // command IDs handled
		types := map[uint64]string{}   // command ID -> type, for messages
		observe := func(ev NetEvent) {
			if !coordinatorCommand(ev.Env.Msg) {
				return
			}
			k := streamKey{ev.Env.From, ev.Env.To}
			switch ev.Kind {
			case NetSent:
				o.sent++
				types[ev.ID] = ev.Env.Msg.TypeName()
			case NetDropped:
				o.dropped++
			case NetDelivered:
				o.delivered++
				if handled[ev.ID] {
					o.duplicates++
					return
				}
				handled[ev.ID] = true
				if ev.ID < last[k] {
					o.overtaken = append(o.overtaken, fmt.Sprintf("seed %d: %s #%d handled after %s #%d (%s -> %s)",
						seed, types[ev.ID], ev.ID, types[last[k]], last[k], ev.Env.From, ev.Env.To))
					return
				}
				last[k] = ev.ID
			}
		}
		RunChaos(ChaosConfig{Seed: uint64(seed), Steps: 60, Delivery: delivery, observe: observe})
	}
	return o
}

// TestMessageCenterKeepsCoordinatorCommandOrder: under the default delivery
// (TiCDC's message center: one command stream per node pair, one msgCh per
// maintainer manager) no coordinator command is handled after a command the
// coordinator sent later to the same node, and none is handled twice,
// whatever the random faults (loss, delays, partitions, stream stalls,
// crashes). Under per-type-streams, the earlier cdcspec network, the same
// runs let a later command overtake an earlier one, which is how the check
// itself is known to work.
func TestMessageCenterKeepsCoordinatorCommandOrder(t *testing.T) {
	seeds := 60
	if testing.Short() || raceEnabled {
		seeds = 15
	}
	mc := observeCommandOrder(spec.DeliveryMessageCenter, seeds)
	require.Greater(t, mc.delivered, 20*seeds, "too few coordinator commands handled to mean anything")
	require.Positive(t, mc.dropped, "the faults lost no coordinator command: the runs exercised no loss")
	assert.Empty(t, mc.overtaken, "a coordinator command overtook an earlier one to the same node")
	assert.Zero(t, mc.duplicates, "a coordinator command was handled twice")
	t.Logf("message-center: %d commands sent, %d handled, %d lost, none out of order, none twice", mc.sent, mc.delivered, mc.dropped)

	pt := observeCommandOrder(spec.DeliveryPerTypeStreams, seeds)
	require.NotEmpty(t, pt.overtaken, "per-type-streams must let a later command overtake an earlier one in these runs, or this test cannot fail")
	t.Logf("per-type-streams: %d of %d handled commands overtook a later one, e.g. %s", len(pt.overtaken), pt.delivered, pt.overtaken[0])
}

// netLog records the network's decisions for one test.
type netLog struct {
	delivered []uint64
	dropped   map[uint64]string
	msgs      map[uint64]core.Message // as handled
}

func newNetLog() *netLog {
	return &netLog{dropped: map[uint64]string{}, msgs: map[uint64]core.Message{}}
}

func (l *netLog) observe(ev NetEvent) {
	switch ev.Kind {
	case NetDelivered:
		l.delivered = append(l.delivered, ev.ID)
		l.msgs[ev.ID] = ev.Env.Msg
	case NetDropped:
		l.dropped[ev.ID] = ev.Why
	}
}

// inject puts env on its stream now, as if a component had sent it
// directly (test-only: skips rules and random faults).
func inject(s *Sim, env core.Envelope) uint64 {
	s.msgID++
	_, rq, cf := route(env.Msg)
	s.enterStream(&inFlight{env: env, id: s.msgID, net: 1, send: sendDirect, recv: rq, cf: cf})
	return s.msgID
}

// TestOrchestratorQueueSlots: the dispatcher orchestrator keeps one pending
// message per (changefeed, message type); a re-send while one is pending is
// dropped, a newer maintainer epoch replaces the pending one in place, and
// a removed close replaces a plain one of an epoch not newer
// (pendingMessageQueue.TryEnqueue, shouldReplacePendingMessage).
func TestOrchestratorQueueSlots(t *testing.T) {
	l := newNetLog()
	s := New(Config{Seed: 1, Nodes: 2, observe: l.observe})
	caps := s.Captures()
	from, to := caps[0], caps[1]
	cf := CfID("slots")
	boot := func(epoch uint64) core.Envelope {
		return core.Envelope{From: from, To: to, Msg: &core.MaintainerBootstrapRequest{Changefeed: cf, StartTs: 1, Epoch: epoch}}
	}
	closeReq := func(epoch uint64, removed bool) core.Envelope {
		return core.Envelope{From: from, To: to, Msg: &core.MaintainerCloseRequest{Changefeed: cf, Epoch: epoch, Removed: removed}}
	}
	// All arrive in the same millisecond, before the first is handled.
	b5 := inject(s, boot(5))
	b5again := inject(s, boot(5))
	b7 := inject(s, boot(7))
	c7 := inject(s, closeReq(7, false))
	c7removed := inject(s, closeReq(7, true))
	c6removed := inject(s, closeReq(6, true))
	s.RunFor(100)

	var handled []uint64
	for _, id := range l.delivered {
		if id >= b5 && id <= c6removed {
			handled = append(handled, id)
		}
	}
	assert.Equal(t, []uint64{b7, c7removed}, handled, "one bootstrap and one close handled, each the last admitted, in slot order")
	assert.Contains(t, l.dropped[b5], "replaced")
	assert.Contains(t, l.dropped[b5again], "holds one already")
	assert.Contains(t, l.dropped[c7], "replaced")
	assert.Contains(t, l.dropped[c6removed], "holds one already", "an older epoch's removed close does not replace a newer pending close")

	// Once handled, the slot is free: the next request is queued again.
	b8 := inject(s, boot(8))
	s.RunFor(100)
	assert.Contains(t, l.delivered, b8)
}

// TestMaintainerBlockStatusDedupe: a maintainer admits a block status only
// while no equivalent one (same sender, dispatcher, block ts, stage) is
// queued or being handled; once handled, the next copy is admitted again
// (Maintainer.filterBlockStatusEvent, impl/maintainer.BlockStatusPendingSet).
func TestMaintainerBlockStatusDedupe(t *testing.T) {
	l := newNetLog()
	s := New(Config{Seed: 1, Nodes: 2, observe: l.observe})
	caps := s.Captures()
	from, to := caps[0], caps[1]
	cf := CfID("dedupe")
	status := func(id core.DispatcherID, ts uint64) core.BlockStatus {
		return core.BlockStatus{ID: id, BlockTs: ts, Stage: core.StageNone, NeedAdded: []int64{9}}
	}
	req := func(sts ...core.BlockStatus) core.Envelope {
		return core.Envelope{From: from, To: to, Msg: &core.BlockStatusRequest{Changefeed: cf, Statuses: sts}}
	}
	// The maintainer's queue is busy for 50 ms: the three arrive before the
	// first is handled.
	s.lanes[laneKey{from, to, recvMaintainer, cf}] = s.now + 50
	first := inject(s, req(status("d1", 10)))
	again := inject(s, req(status("d1", 10)))
	mixed := inject(s, req(status("d1", 10), status("d1", 11)))
	s.RunFor(100)

	require.Contains(t, l.delivered, first)
	assert.Contains(t, l.dropped[again], "equivalent block status")
	require.Contains(t, l.delivered, mixed, "a request with a new status is admitted")
	kept := l.msgs[mixed].(*core.BlockStatusRequest).Statuses
	assert.Equal(t, []core.BlockStatus{status("d1", 11)}, kept, "only the status without an equivalent one queued is kept")

	// Handled: the same status is admitted again.
	later := inject(s, req(status("d1", 10)))
	s.RunFor(100)
	assert.Contains(t, l.delivered, later)
	for k, set := range s.blockPending {
		assert.Zero(t, set.Len(), "every admitted status was released once handled (%v)", k)
	}
}

// TestBlockStatusSendQueueDedupe: the sending node's block-status queue
// drops a WAITING or DONE status equal to one still queued or being sent;
// a NONE status always passes; once sent, the same status is queued again
// (BlockStatusRequestQueue, dispatcher.BlockStatusRequestQueue).
func TestBlockStatusSendQueueDedupe(t *testing.T) {
	l := newNetLog()
	s := New(Config{Seed: 1, Nodes: 2, observe: l.observe})
	caps := s.Captures()
	from, to := caps[0], caps[1]
	cf := CfID("dedupe")
	req := func(st core.BlockStatus) core.Envelope {
		return core.Envelope{From: from, To: to, Msg: &core.BlockStatusRequest{Changefeed: cf, Statuses: []core.BlockStatus{st}}}
	}
	send := func(env core.Envelope) uint64 {
		s.msgID++
		s.sendMessageCenter(env, 1, 0, false)
		return s.msgID
	}
	waiting := core.BlockStatus{ID: "d1", BlockTs: 10, Stage: core.StageWaiting, Influence: spec.InfluenceNormal, BlockTables: []int64{1}}
	none := core.BlockStatus{ID: "d1", BlockTs: 11, Stage: core.StageNone, NeedAdded: []int64{9}}
	// The collector's sending goroutine is busy for 50 ms: both copies
	// wait in the queue.
	s.sendQueues[sendQueueKey{from, sendBlockStatusQueue}] = s.now + 50
	first := send(req(waiting))
	again := send(req(waiting))
	n1 := send(req(none))
	n2 := send(req(none))
	s.RunFor(100)

	assert.Contains(t, l.dropped[again], "queued or being sent on the sending node")
	assert.NotContains(t, l.dropped, first)
	assert.NotContains(t, l.dropped, n1)
	// The second NONE passes the sending queue; the maintainer's gate,
	// which keys every stage, drops it while the first is queued there.
	assert.NotContains(t, l.dropped[n2], "sending node", "the sending queue never de-duplicates NONE statuses")
	assert.Contains(t, l.dropped[n2], "still queued")

	// Sent: the same status is queued again.
	later := send(req(waiting))
	s.RunFor(100)
	assert.NotContains(t, l.dropped, later)
	assert.Zero(t, s.blockSendQueues[from].Len())
}
