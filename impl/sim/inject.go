package sim

import (
	"fmt"

	"cdcspec/impl/core"
	"cdcspec/spec"
)

// Injection is one fault of the vocabulary (spec.Fault) with its target and
// parameters. Fields a fault does not read are ignored.
type Injection struct {
	Fault spec.Fault
	// Node is the capture the fault hits: kill-capture, expire-session,
	// sink-error and the failpoints need it; for kill-maintainer-capture and
	// kill-owner-capture it overrides the capture the role names; for
	// partition it is the capture cut off from the others.
	Node core.NodeID
	// Changefeed (a name, "cf1"): sink-error, and kill-maintainer-capture
	// (whose maintainer's capture dies).
	Changefeed string
	// Rule: drop-, duplicate- and delay-messages (Type, From, To, Count,
	// DelayMs; the fault sets Action).
	Rule Rule
	// Faults: random-message-faults.
	Faults Faults
	// Groups: partition into these groups (overrides Node); captures not
	// listed form one more group.
	Groups [][]core.NodeID
	// Off switches a failpoint off instead of on.
	Off bool
}

// UnsupportedFaults are the faults of the vocabulary the simulation cannot
// inject, with the reason; Inject takes every other one.
var UnsupportedFaults = map[spec.Fault]string{
	spec.FaultFreezeCapture:       "the simulation has no process to pause; a capture that keeps its session but sends and hears nothing is a partition of that capture",
	spec.FaultExpireFrozenSession: "the simulation has no freeze-capture; expire-session is the suicide itself",
	spec.FaultKillMoveDestination: "compound: a story writes move-table, then kill-capture of the destination, as two steps",
	spec.FaultKillMaintainerInflight: "compound: testdata/issue3411.txt writes it as block-create-dispatcher, slow-close-dispatcher, " +
		"move-table and kill-capture steps",
	spec.FaultKillMaintainerStaleCreate: "compound: testdata/issue5083.txt writes it as delay-messages, move-table and kill-capture steps",
	spec.FaultKillCaptureDuringDDL:      "compound: a story writes blocking-ddl, then kill-capture, as two steps",
	spec.FaultMoveWriterDuringDDL:       "compound: a story writes delay-messages, blocking-ddl and move-table as separate steps",
	spec.FaultDropAddTableStatus:        "compound: a story writes create-table, drop-messages and blocking-ddl as separate steps",
	spec.FaultStore: "the simulation's upstream has no stores (one kv-client stream per table, impl/upstream); stall-upstream is its " +
		"store failure, every store at once",
}

// Inject applies one fault through the Sim's fault methods and returns the
// capture it hit or started ("" for a fault of no single capture). Every
// driver of the simulation (proptest, RunChaos, the scenario files) injects
// through here.
func (s *Sim) Inject(in Injection) (core.NodeID, error) {
	if why, ok := UnsupportedFaults[in.Fault]; ok {
		return "", fmt.Errorf("%s: the simulation cannot inject it: %s", in.Fault, why)
	}
	node := in.Node
	switch in.Fault {
	case spec.FaultKillCapture:
		return node, s.KillCapture(node)
	case spec.FaultKillMaintainerCapture:
		if node == "" {
			if node = s.MaintainerNode(in.Changefeed); node == "" {
				return "", fmt.Errorf("%s: no bootstrapped maintainer of %s runs", in.Fault, in.Changefeed)
			}
		}
		return node, s.KillCapture(node)
	case spec.FaultKillOwnerCapture:
		if node == "" {
			node = s.Owner()
		}
		return node, s.KillCapture(node)
	case spec.FaultExpireSession:
		return node, s.ExpireSession(node)
	case spec.FaultRestartCapture, spec.FaultAddCapture:
		// A restarted capture registers a fresh capture ID: to the others
		// it is a new capture.
		return s.AddCapture(), nil
	case spec.FaultDropMessages, spec.FaultDuplicateMessages, spec.FaultDelayMessages:
		r := in.Rule
		r.Action = ruleActions[in.Fault]
		return "", s.AddRule(r)
	case spec.FaultRandomMessageFaults:
		return "", s.SetFaults(in.Faults)
	case spec.FaultPartition:
		groups := in.Groups
		if groups == nil {
			if node == "" {
				return "", fmt.Errorf("%s: name the capture to cut off, or the groups", in.Fault)
			}
			groups = [][]core.NodeID{{node}}
		}
		s.Partition(groups...)
		return node, nil
	case spec.FaultHealNetwork:
		s.HealNetwork()
		return "", nil
	case spec.FaultSinkError:
		return node, s.SinkError(CfID(in.Changefeed), node)
	case spec.FaultFastFailError:
		return node, s.FastFailError(CfID(in.Changefeed), node)
	case spec.FaultStallUpstream:
		s.StallUpstream()
		return "", nil
	case spec.FaultResumeUpstream:
		s.ResumeUpstream()
		return "", nil
	case spec.FaultBlockCreateDispatcher, spec.FaultSlowCloseDispatcher:
		for name, f := range failpointFault {
			if f == in.Fault {
				return node, s.SetFailpoint(node, name, !in.Off)
			}
		}
	case spec.FaultHeal:
		s.Heal()
		return "", nil
	}
	if _, err := spec.ParseFault(string(in.Fault)); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s: not handled by Sim.Inject nor listed in UnsupportedFaults", in.Fault)
}

// HealNetwork ends partitions and random message faults; targeted rules
// stay (Heal ends them).
func (s *Sim) HealNetwork() {
	s.partition = map[core.NodeID]int{}
	s.faults = Faults{DelayMinMs: 1, DelayMaxMs: 5}
	s.notify(Step{Kind: StepFault, Name: string(spec.FaultHealNetwork)})
}

// MaintainerNode is the running capture that hosts feed's bootstrapped,
// non-removing maintainer, or "".
func (s *Sim) MaintainerNode(feed string) core.NodeID {
	for _, n := range s.State().Nodes {
		for _, m := range n.Maintainers {
			if m.Changefeed == CfID(feed) && m.Bootstrapped && !m.Removing && !m.RemovalOnly {
				return n.ID
			}
		}
	}
	return ""
}
