package conformance

import (
	"fmt"
	"strings"

	"github.com/cockroachdb/datadriven"

	"cdcspec/model"
	"cdcspec/spec"
)

// The model side of a scenario, for the flows model/ covers. Commands:
//
//	model [config=NAME] [bug=NAME]...     start from model.Init of a standard configuration
//	model-do                              apply the input's actions, one per line; a line is the
//	                                      start of an enabled action's String() (model.Actions),
//	                                      e.g. "coordinator-schedule n1" or
//	                                      "deliver AddMaintainerRequest coordinator->n1"
//	model-state                           the coordinator's view and every maintainer and DM
//
// Only exported model API is used: Init, Actions, Step and the State fields.
type modelRun struct {
	cfg model.Config
	s   model.State
	on  bool
}

func (h *harness) modelCommand(b *strings.Builder, d *datadriven.TestData) error {
	m := &h.model
	switch d.Cmd {
	case "model":
		name := "default"
		if v, ok := arg(d, "config"); ok {
			name = v
		}
		cfg, ok := model.Standard(name)
		if !ok {
			return fmt.Errorf("unknown model config %q (known: %s)", name, strings.Join(model.StandardNames(), ", "))
		}
		for _, a := range d.CmdArgs {
			if a.Key != "bug" {
				continue
			}
			bugs, err := spec.ParseBugs(a.Vals)
			if err != nil {
				return err
			}
			cfg.Bugs |= bugs
		}
		m.cfg, m.on = cfg, true
		m.s = model.Init(&m.cfg)
		b.WriteString(cfg.String() + "\n")
		return nil
	case "model-do":
		if !m.on {
			return fmt.Errorf("model-do before model")
		}
		for _, l := range strings.Split(d.Input, "\n") {
			l = strings.TrimSpace(l)
			if l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			var found *model.Action
			var names []string
			for _, a := range model.Actions(m.cfg, m.s) {
				s := a.String()
				names = append(names, s)
				if strings.HasPrefix(s, l) && found == nil {
					a := a
					found = &a
				}
			}
			if found == nil {
				return fmt.Errorf("no enabled action starts with %q; enabled:\n  %s", l, strings.Join(names, "\n  "))
			}
			next, evs := model.Step(m.cfg, m.s, *found)
			fmt.Fprintf(b, "%s %s\n", found.Actor(&m.s), found.Describe(&m.s))
			for _, e := range evs {
				fmt.Fprintf(b, "  %s\n", e)
			}
			m.s = next
		}
		return nil
	case "model-state":
		if !m.on {
			return fmt.Errorf("model-state before model")
		}
		s := &m.s
		c := s.Coord
		st := []string{"normal", "warning", "failed"}[c.State]
		repl := []string{"absent", "scheduling", "replicating"}[c.Repl]
		node := "-"
		if c.Repl != 0 {
			node = model.NodeName(c.Node)
		}
		op := []string{"none", "add", "stop"}[c.Op]
		fmt.Fprintf(b, "coordinator state=%s sched=%s node=%s epoch=%d checkpoint=%d bootstrapped=%v retrying=%v restarting=%v op=%s",
			st, repl, node, c.Epoch, c.Ckpt, c.BootDone, c.Retrying, c.Restarting, op)
		if c.Op != 0 {
			fmt.Fprintf(b, " op-node=%s op-epoch=%d", model.NodeName(c.OpNode), c.OpEpoch)
		}
		b.WriteString("\n")
		for i := range s.Maint {
			mt := &s.Maint[i]
			if !mt.Exists {
				continue
			}
			fmt.Fprintf(b, "maintainer@%s epoch=%d bootstrapped=%v removal-only=%v removing=%v removed=%v checkpoint=%d\n",
				model.NodeName(s.Ident(uint8(i))), mt.Epoch, mt.Bootstrapped, mt.RemovalOnly, mt.Removing, mt.Removed, mt.Reported)
			for _, sp := range mt.Spans {
				if sp.ID == 0 {
					continue
				}
				sn := "-"
				if sp.State != 0 {
					sn = model.NodeName(sp.Node)
				}
				fmt.Fprintf(b, "  span t%d %s node=%s checkpoint=%d op=%s\n", sp.Table, []string{"absent", "scheduling", "replicating"}[sp.State], sn, sp.Ckpt,
					[]string{"none", "add", "remove", "move"}[sp.Op])
			}
		}
		for i := range s.DMs {
			dm := &s.DMs[i]
			if !dm.Exists {
				continue
			}
			fmt.Fprintf(b, "dm@%s owner=%s epoch=%d err=%v\n", model.NodeName(s.Ident(uint8(i))), model.NodeName(dm.Owner), dm.OwnerEpoch, dm.Err)
		}
		for _, dsp := range s.Disp {
			if dsp.ID == 0 {
				continue
			}
			fmt.Fprintf(b, "dispatcher t%d@%s %s checkpoint=%d\n", dsp.Table, model.NodeName(s.Ident(dsp.Node)),
				[]string{"-", "Initializing", "Working", "Removing"}[dsp.St], dsp.Ckpt)
		}
		return nil
	}
	return fmt.Errorf("unknown command %q", d.Cmd)
}
