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
