package conformance

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cockroachdb/datadriven"

	"cdcspec/impl/core"
	"cdcspec/impl/maintainer"
	"cdcspec/spec"
)

// spanControllerRun is one standalone span controller of the spans command
// (unit tests of maintainer/span): the controller and its maintainer's
// table trigger.
type spanControllerRun struct {
	sc      *maintainer.SpanController
	trigger core.DispatcherID
}

// cmdSpans drives one maintainer span controller directly, as TiCDC's
// span_controller_test.go and checkpoint_ts_tracker_test.go drive
// span.Controller:
//
//	spans new cf=CF node=N [checkpoint=TS]      a controller (its maintainer's trigger at TS, default 1)
//	spans add-absent table=T checkpoint=TS      AddAbsentReplicaSet of the whole table, a fresh ID
//	spans add-scheduling table=T checkpoint=TS node=N   AddSchedulingReplicaSet
//	spans add-replicating id=D table=T checkpoint=TS node=N   AddReplicatingSpan (a Working dispatcher)
//	spans add-new-table table=T start=TS        AddNewTable
//	    (each add takes [schema=S], the table's schema ID; default core.DefaultSchemaID)
//	spans bind id=D node=N | mark-scheduling id=D | mark-replicating id=D | mark-absent id=D
//	spans update-status id=D state=S checkpoint=TS      UpdateStatus
//	spans replace id=D tables=T,... checkpoint=TS [targets=N,...]   ReplaceReplicaSet by whole tables
//	spans remove-tables tables=T,...            RemoveByTableIDs
//	spans update-schema table=T schema=S        UpdateSchemaID
//	spans remove-schema schema=S                RemoveBySchemaID
//	spans min bound=TS                          GetMinCheckpointTsForNonReplicatingSpans
//	spans get id=D | by-table table=T | by-schema schema=S   GetTaskByID, GetTasksByTableID,
//	                                            GetTasksBySchemaID (with GetTaskSizeBySchemaID)
//	spans remove-tasks tables=T,... | schema=S  GetRemoveTasksByTableIDs, GetRemoveTasksBySchemaID
//	spans stats                                 TaskSize, the absent/scheduling/replicating sizes,
//	                                            GetTaskSizePerNode
//
// A mutation prints the controller's tasks after it. A span line names its
// schema when it is not core.DefaultSchemaID.
func (h *harness) cmdSpans(b *strings.Builder, d *datadriven.TestData) error {
	if len(d.CmdArgs) == 0 {
		return fmt.Errorf("spans: want an operation")
	}
	op := d.CmdArgs[0].Key
	if op == "new" {
		name, _ := arg(d, "cf")
		node, _ := arg(d, "node")
		cp := uint64(1)
		if _, ok := arg(d, "checkpoint"); ok {
			v, err := argU64(d, "checkpoint")
			if err != nil {
				return err
			}
			cp = v
		}
		mm := maintainer.NewManager(core.NodeID(node), &h.opts, h.rnd, h.up, h.lg)
		sc, trigger := maintainer.NewSpanControllerForConformance(mm, cfID(name), cp)
		h.spans = &spanControllerRun{sc: sc, trigger: trigger}
		fmt.Fprintf(b, "changefeed=%s enableTableAcrossNodes=%v\n", cfName(sc.ChangefeedID()), sc.EnableTableAcrossNodes())
		h.printSpans(b)
		return nil
	}
	if h.spans == nil {
		return fmt.Errorf("spans %s: no span controller (spans new)", op)
	}
	sc := h.spans.sc
	task := func() (*maintainer.SpanReplication, error) {
		v, id, err := h.ids.resolveArg(d)
		if err != nil {
			return nil, err
		}
		s := sc.GetTaskByID(id)
		if s == nil {
			return nil, fmt.Errorf("spans %s: no task %s", op, v)
		}
		return s, nil
	}
	tables := func() ([]int64, error) {
		v, _ := arg(d, "tables")
		return int64List(v)
	}
	schema := func(def bool) (int64, error) {
		v, ok := arg(d, "schema")
		if !ok && def {
			return core.DefaultSchemaID, nil
		}
		ss, err := int64List(v)
		if err != nil || len(ss) != 1 {
			return 0, fmt.Errorf("spans %s: schema=%q, want one schema ID", op, v)
		}
		return ss[0], nil
	}
	table := func() (int64, error) {
		v, _ := arg(d, "table")
		ts, err := int64List(v)
		if err != nil || len(ts) != 1 {
			return 0, fmt.Errorf("spans %s: table=%q, want one table ID", op, v)
		}
		return ts[0], nil
	}
	switch op {
	case "add-absent", "add-scheduling":
		t, err := table()
		if err != nil {
			return err
		}
		sch, err := schema(true)
		if err != nil {
			return err
		}
		cp, err := argU64(d, "checkpoint")
		if err != nil {
			return err
		}
		if op == "add-absent" {
			sc.AddNewSpan(sch, spec.WholeTable(t), cp)
		} else {
			node, _ := arg(d, "node")
			sc.AddSchedulingReplicaSet(sch, spec.WholeTable(t), cp, core.NodeID(node))
		}
	case "add-replicating":
		t, err := table()
		if err != nil {
			return err
		}
		sch, err := schema(true)
		if err != nil {
			return err
		}
		cp, err := argU64(d, "checkpoint")
		if err != nil {
			return err
		}
		_, id, err := h.ids.resolveArg(d)
		if err != nil {
			return err
		}
		node, _ := arg(d, "node")
		sc.AddReplicatingSpan(sch, id, spec.WholeTable(t), core.NodeID(node), cp)
	case "add-new-table":
		t, err := table()
		if err != nil {
			return err
		}
		sch, err := schema(true)
		if err != nil {
			return err
		}
		start, err := argU64(d, "start")
		if err != nil {
			return err
		}
		fmt.Fprintf(b, "added=%v\n", sc.AddNewTable(sch, t, start))
	case "bind", "mark-scheduling", "mark-replicating", "mark-absent":
		s, err := task()
		if err != nil {
			return err
		}
		switch op {
		case "bind":
			node, _ := arg(d, "node")
			sc.BindSpanToNode(s, core.NodeID(node))
		case "mark-scheduling":
			sc.MarkSpanScheduling(s)
		case "mark-absent":
			sc.MarkSpanAbsent(s)
		default:
			sc.MarkSpanReplicating(s)
		}
	case "update-status":
		v, id, err := h.ids.resolveArg(d)
		if err != nil {
			return err
		}
		stv, _ := arg(d, "state")
		state, err := parseState(stv)
		if err != nil {
			return err
		}
		cp, err := argU64(d, "checkpoint")
		if err != nil {
			return err
		}
		st := &core.TableSpanStatus{ID: id, State: state, CheckpointTs: cp}
		switch s := sc.GetTaskByID(id); {
		case id == h.spans.trigger:
			fmt.Fprintf(b, "%s is the maintainer's table trigger, not a task: nothing to update\n", v)
		case s == nil:
			return fmt.Errorf("spans %s: no task %s", op, v)
		case sc.UpdateStatus(s, st):
			b.WriteString("stored\n")
		default:
			b.WriteString("dropped: checkpoint below the stored one\n")
		}
	case "replace":
		s, err := task()
		if err != nil {
			return err
		}
		ts, err := tables()
		if err != nil {
			return err
		}
		cp, err := argU64(d, "checkpoint")
		if err != nil {
			return err
		}
		var parts []spec.Span
		for _, t := range ts {
			parts = append(parts, spec.WholeTable(t))
		}
		tv, _ := arg(d, "targets")
		news, inScheduling := sc.ReplaceReplicaSet(s, parts, cp, nodeList(tv))
		var names []string
		for _, n := range news {
			names = append(names, h.ids.alias(n.ID))
		}
		fmt.Fprintf(b, "new=%s in-scheduling=%v\n", strings.Join(names, ","), inScheduling)
	case "remove-tables":
		ts, err := tables()
		if err != nil {
			return err
		}
		sc.RemoveByTableIDs(ts...)
	case "update-schema":
		t, err := table()
		if err != nil {
			return err
		}
		sch, err := schema(false)
		if err != nil {
			return err
		}
		sc.UpdateSchemaID(t, sch)
	case "remove-schema":
		sch, err := schema(false)
		if err != nil {
			return err
		}
		sc.RemoveBySchemaID(sch)
	case "by-schema":
		sch, err := schema(false)
		if err != nil {
			return err
		}
		ss := sc.GetTasksBySchemaID(sch)
		fmt.Fprintf(b, "%d tasks, size %d\n", len(ss), sc.GetTaskSizeBySchemaID(sch))
		for _, s := range ss {
			b.WriteString(h.spanLine(s) + "\n")
		}
		return nil
	case "remove-tasks":
		var ss []*maintainer.SpanReplication
		if _, ok := arg(d, "tables"); ok {
			ts, err := tables()
			if err != nil {
				return err
			}
			ss = sc.GetRemoveTasksByTableIDs(ts...)
		} else {
			sch, err := schema(false)
			if err != nil {
				return err
			}
			ss = sc.GetRemoveTasksBySchemaID(sch)
		}
		fmt.Fprintf(b, "%d tasks to remove\n", len(ss))
		for _, s := range ss {
			b.WriteString(h.spanLine(s) + "\n")
		}
		return nil
	case "stats":
		fmt.Fprintf(b, "tasks=%d absent=%d scheduling=%d replicating=%d per-node=%s\n", sc.TaskSize(),
			sc.SizeByState(maintainer.SpanAbsent), sc.SizeByState(maintainer.SpanScheduling), sc.SizeByState(maintainer.SpanReplicating),
			fmtSizes(sc.GetTaskSizePerNode()))
		return nil
	case "min":
		bound, err := argU64(d, "bound")
		if err != nil {
			return err
		}
		fmt.Fprintf(b, "min=%d\n", sc.GetMinCheckpointTsForNonReplicatingSpans(bound))
		return nil
	case "get":
		_, id, err := h.ids.resolveArg(d)
		if err != nil {
			return err
		}
		if s := sc.GetTaskByID(id); s != nil {
			b.WriteString(h.spanLine(s) + "\n")
		} else {
			b.WriteString("nil\n")
		}
		return nil
	case "by-table":
		t, err := table()
		if err != nil {
			return err
		}
		ss := sc.GetTasksByTableID(t)
		fmt.Fprintf(b, "%d tasks\n", len(ss))
		for _, s := range ss {
			b.WriteString(h.spanLine(s) + "\n")
		}
		return nil
	default:
		return fmt.Errorf("spans: unknown operation %q", op)
	}
	h.drainLog(b)
	h.printSpans(b)
	return nil
}

// printSpans lists the table trigger and the controller's tasks.
func (h *harness) printSpans(b *strings.Builder) {
	fmt.Fprintf(b, "trigger %s (the maintainer's, not a task)\n", h.ids.alias(h.spans.trigger))
	tasks := h.spans.sc.Tasks()
	if len(tasks) == 0 {
		b.WriteString("no tasks\n")
	}
	for _, s := range tasks {
		b.WriteString(h.spanLine(s) + "\n")
	}
}

func (h *harness) spanLine(s *maintainer.SpanReplication) string {
	l := newLine("span "+h.ids.alias(s.ID)).kv("span", s.Span.String())
	if s.GetSchemaID() != core.DefaultSchemaID {
		l.kv("schema", strconv.FormatInt(s.GetSchemaID(), 10))
	}
	l.kv("state", s.State().String())
	if s.NodeID() != "" {
		l.kv("node", string(s.NodeID()))
	}
	return l.u("checkpoint", s.CheckpointTs()).String()
}
