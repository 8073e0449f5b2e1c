package sim

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/impl/core"
	"cdcspec/spec"
)

// TestRoutesFollowMessageWaits ties the simulation's routes to
// spec.MessageWaits through the registry: every registered message type has
// a route whose sending and receiving queues are its row's, keyed by its
// changefeed unless the queue is node-wide.
func TestRoutesFollowMessageWaits(t *testing.T) {
	sendNames := map[sendQueue]string{sendDirect: "", sendHeartbeatQueue: spec.SendHeartbeatQueue, sendBlockStatusQueue: spec.SendBlockStatusQueue}
	for _, k := range core.MessageKinds() {
		m := k.New()
		if f := reflect.ValueOf(m).Elem().FieldByName("Changefeed"); f.IsValid() {
			f.SetString("ks/route")
		}
		sq, rq, cf := route(m)
		assert.Equal(t, k.Wait.SendQueue, sendNames[sq], "%s: sending queue", k.Name)
		assert.Equal(t, k.Wait.RecvQueue, rq.String(), "%s: receiving queue", k.Name)
		if rq == recvCoordinator || rq == recvManager {
			assert.Empty(t, cf, "%s: a node-wide queue is not keyed by changefeed", k.Name)
		} else {
			assert.Equal(t, core.ChangefeedID("ks/route"), cf, "%s: a per-changefeed queue is keyed by the message's changefeed", k.Name)
		}
	}
	require.Panics(t, func() { route(unregistered{}) }, "a message outside the registry has no route")
}

type unregistered struct{}

func (unregistered) TypeName() string { return "Unregistered" }

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

// TestChaosDelaysEveryDelayableType: delayMessages draws every registered
// type that may wait, except the ones RunChaos never sends, and those are
// indeed never sent: no menu entry merges.
func TestChaosDelaysEveryDelayableType(t *testing.T) {
	drawn := map[string]bool{}
	for _, n := range delayableTypes {
		drawn[n] = true
	}
	for _, k := range core.MessageKinds() {
		if why := chaosNeverSends[k.Name]; why != "" {
			assert.False(t, drawn[k.Name], "%s is drawn although RunChaos never sends it (%s)", k.Name, why)
			continue
		}
		assert.Equal(t, k.Delayable(), drawn[k.Name], "%s: drawn by delayMessages iff it may wait on its way", k.Name)
	}
	for _, e := range chaosMenu {
		assert.NotEqual(t, spec.ActionMergeTable, e.action, "chaosMenu merges: MergeDispatcherRequest leaves chaosNeverSends")
	}
}

// TestSinkCancelCutsWriteInFlight: a cancel cuts the named dispatcher's
// write in flight (its result reports ToTs = FromTs) and leaves the
// others' alone (core.Effects, step 3).
func TestSinkCancelCutsWriteInFlight(t *testing.T) {
	s := New(Config{Seed: 1, Nodes: 1})
	n := s.nodes[s.Captures()[0]]
	n.SinkWrite(core.SinkWrite{Changefeed: "ks/cf", Sink: 7, Dispatcher: "d1", FromTs: 10, ToTs: 20})
	n.SinkWrite(core.SinkWrite{Changefeed: "ks/cf", Sink: 7, Dispatcher: "d2", FromTs: 10, ToTs: 20})
	n.SinkCancel(core.SinkCancel{Sink: 7, Dispatcher: "d1"})
	n.SinkCancel(core.SinkCancel{Sink: 8, Dispatcher: "d2"}) // another sink: nothing to cut
	got := map[core.DispatcherID]uint64{}
	for _, it := range s.q {
		if it.kind == itemSinkResult {
			got[it.sr.Dispatcher] = it.sr.ToTs
		}
	}
	assert.Equal(t, map[core.DispatcherID]uint64{"d1": 10, "d2": 20}, got)
}
