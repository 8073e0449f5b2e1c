package spec

import (
	"fmt"
	"strings"
)

// Delivery names a message-delivery assumption: which messages keep their
// send order, which may be lost, duplicated or overtaken. The simulation
// runs one per run (sim.Config.Delivery); every catalogued bug and every
// finding records the weakest one under which it was found (Bug.Delivery,
// SPEC.md "Delivery semantics"). Names are stable interface (CLI flags,
// scenario files, recorded stories).
type Delivery string

const (
	// DeliveryMessageCenter is TiCDC HEAD's message center (pkg/messaging at
	// b813e76f9) and the receiving components' queues, exactly: one command
	// stream per (sender node, receiver node), FIFO while the connection
	// lives; messages that share a sending queue and a receiving queue are
	// handled in send order; any message may be lost; nothing is
	// duplicated by the transport. The default everywhere.
	DeliveryMessageCenter Delivery = "message-center"
	// DeliveryPerTypeStreams is cdcspec's earlier network: FIFO per (sender,
	// receiver, message type) only, so an Add and a later Remove to one node
	// may swap; the transport may duplicate a message (right behind it) and
	// targeted rules may inject a stale copy outside any order. Stronger
	// than TiCDC: a finding that needs it is not a TiCDC bug as such.
	DeliveryPerTypeStreams Delivery = "per-type-streams"
	// DeliveryReordering lifts every FIFO rule: any message may overtake
	// any other, and duplicates arrive at any later time. Stronger than
	// TiCDC.
	DeliveryReordering Delivery = "reordering"
)

// Deliveries lists every delivery assumption, TiCDC's first.
func Deliveries() []Delivery {
	return []Delivery{DeliveryMessageCenter, DeliveryPerTypeStreams, DeliveryReordering}
}

// ParseDelivery returns the named delivery; "" is DeliveryMessageCenter.
func ParseDelivery(s string) (Delivery, error) {
	if s == "" {
		return DeliveryMessageCenter, nil
	}
	var names []string
	for _, d := range Deliveries() {
		if string(d) == s {
			return d, nil
		}
		names = append(names, string(d))
	}
	return "", fmt.Errorf("unknown delivery %q (known: %s)", s, strings.Join(names, ", "))
}

// OrDefault maps "" to DeliveryMessageCenter.
func (d Delivery) OrDefault() Delivery {
	if d == "" {
		return DeliveryMessageCenter
	}
	return d
}

// TiCDC reports whether TiCDC HEAD's message center can make every
// delivery the assumption allows, so that a finding under it is reachable
// in TiCDC as far as delivery goes.
func (d Delivery) TiCDC() bool { return d.OrDefault() == DeliveryMessageCenter }

// Duplicates reports whether the transport may deliver one message twice
// (and a targeted rule may inject a stale copy). TiCDC's never does.
func (d Delivery) Duplicates() bool { return !d.TiCDC() }

// Label is the delivery assumption for reports: the name, and for the
// stronger ones that TiCDC cannot make such deliveries.
func (d Delivery) Label() string {
	if d.TiCDC() {
		return string(DeliveryMessageCenter) + " (TiCDC HEAD)"
	}
	return string(d) + " (stronger than TiCDC's message center)"
}
