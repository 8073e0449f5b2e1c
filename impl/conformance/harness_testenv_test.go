package conformance

import (
	"fmt"
	"strings"

	"github.com/cockroachdb/datadriven"

	"cdcspec/impl/core"
	"cdcspec/impl/maintainer"
)

// cmdTestEnvironment builds HEAD's operator-test environment
// (maintainer/operator at b813e76f9), where the span and operator
// controllers run standalone with hand-made replica sets:
//
//	setup-test-environment [node=node-a] [nodes=node-a,node-b] [cf=test-changefeed] [epoch=7]
//	    setupTestEnvironment (operator_move_test.go:32-78): manager@node sees
//	    nodes alive, and its maintainer of cf at epoch is bootstrapped with
//	    the table trigger on node at 1 and no task
//	    (maintainer.NewTestEnvironmentForConformance). The maintainer keeps
//	    running when node leaves (a later "nodes alive=..." without it),
//	    as HEAD's controllers do in those tests.
//	replica-set on=N cf=CF id=D span=tT[a,b) checkpoint=TS [node=N]
//	    a hand-made span: working on node (NewWorkingSpanReplication,
//	    AddReplicatingSpan), else absent (NewSpanReplication,
//	    AddAbsentReplicaSet, as newAddTestReplicaSet)
//	replica-set on=N cf=CF remove id=D
//	    span.Controller.RemoveReplicatingSpan
//	operator on=N cf=CF op=add|move|remove|occupy id=D [to=N]
//	    the operator HEAD's test builds by hand on span D (to: the add's or
//	    move's destination), added to the operator controller; its first
//	    message goes out at the next execute
//	operator on=N cf=CF cancel id=D
//	    the controller's cancelOperator: OnTaskRemoved, then finalised
//
// setupMergeTestEnvironment (operator_merge_test.go:33-104) is
// setup-test-environment, the two halves as replica-set commands, and
// merge-table (AddMergeOperator's occupy and merge operators).
func (h *harness) cmdTestEnvironment(b *strings.Builder, d *datadriven.TestData) error {
	if d.Cmd == "setup-test-environment" {
		node, name, epoch := "node-a", "test-changefeed", uint64(7)
		nodes := []core.NodeID{"node-a", "node-b"}
		if v, ok := arg(d, "node"); ok {
			node = v
		}
		if v, ok := arg(d, "nodes"); ok {
			nodes = nodeList(v)
		}
		if v, ok := arg(d, "cf"); ok {
			name = v
		}
		if _, ok := arg(d, "epoch"); ok {
			n, err := argU64(d, "epoch")
			if err != nil {
				return err
			}
			epoch = n
		}
		self := core.NodeID(node)
		if h.mgrs[self] != nil {
			return fmt.Errorf("setup-test-environment: manager@%s exists already", node)
		}
		mm := maintainer.NewManager(self, &h.opts, h.rnd, h.up, h.lg)
		h.mgrs[self] = mm
		var out core.Effects
		mm.OnNodesChanged(h.now, nodes, &out)
		m := maintainer.NewTestEnvironmentForConformance(mm, cfID(name), epoch)
		h.emit(b, &out)
		fmt.Fprintf(b, "trigger %s on %s at 1\n", h.ids.alias(m.TriggerID()), node)
		return h.printState(b, "manager@"+node)
	}
	m, err := h.maintainerArg(d)
	if err != nil {
		return err
	}
	_, id, err := h.ids.resolveArg(d)
	if err != nil {
		return err
	}
	if id == "" {
		return fmt.Errorf("%s: want id=D", d.Cmd)
	}
	var out core.Effects
	switch d.Cmd {
	case "replica-set":
		if _, ok := arg(d, "remove"); ok {
			if err := m.RemoveReplicaSetForConformance(id); err != nil {
				return err
			}
			break
		}
		if _, ok := arg(d, "mark-absent"); ok {
			if err := m.MarkReplicaSetAbsentForConformance(id); err != nil {
				return err
			}
			break
		}
		sv, _ := arg(d, "span")
		sp, err := parseSpan(sv)
		if err != nil {
			return err
		}
		if _, ok := arg(d, "checkpoint"); !ok {
			return fmt.Errorf("replica-set: want checkpoint=TS")
		}
		cp, err := argU64(d, "checkpoint")
		if err != nil {
			return err
		}
		node, _ := arg(d, "node")
		schema := core.DefaultSchemaID
		if _, ok := arg(d, "schema"); ok {
			v, err := argU64(d, "schema")
			if err != nil {
				return err
			}
			schema = int64(v)
		}
		if err := m.AddReplicaSetForConformance(schema, id, sp, cp, core.NodeID(node)); err != nil {
			return err
		}
	case "operator":
		if _, ok := arg(d, "cancel"); ok {
			if !m.CancelOperatorForConformance(id, &out) {
				b.WriteString("no operator\n")
			}
			break
		}
		kind, _ := arg(d, "op")
		to, _ := arg(d, "to")
		added, err := m.StartOperatorForConformance(kind, id, core.NodeID(to), &out)
		if err != nil {
			return err
		}
		fmt.Fprintf(b, "added=%v\n", added)
	}
	h.emit(b, &out)
	on, _ := arg(d, "on")
	return h.printState(b, "manager@"+on)
}
