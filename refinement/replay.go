package refinement

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"cdcspec/impl/core"
	"cdcspec/model"
	"cdcspec/refinement/drive"
	"cdcspec/spec"
)

// Replaying a model counterexample on the implementation.
//
// The model's counterexample is a list of fine-grained actions (deliveries,
// ticks, crashes). The implementation cannot be stepped message by message
// from outside, so ReplayModel translates the counterexample into an
// environment script for the simulation and lets the simulation's scheduler
// do the rest:
//
//	model action                       script step
//	---------------------------------  --------------------------------------------------------------
//	create-table                       create-table
//	stall-upstream / resume-upstream   stall-upstream / resume-upstream
//	expire-session n                   kill-capture of n's capture (the others see it leave at the
//	                                   model's detect-node-left, not at once as after expire-session)
//	detect-node-left n                 advance-time past the session TTL (the key expires)
//	restart-capture n                  restart-capture (n's identity moves to the new capture)
//	sink-error d                       sink-error cf1 on the capture of d's node
//	coordinator-schedule n (first)     run 3 s; slot n is mapped to the capture the implementation
//	                                   chose for cf1's maintainer (slots are swapped, not forced)
//	maintainer-schedule / -move t->n   move-table cf1 t -> n's capture (aligns span placement)
//	drop-messages m /                  drop-messages / duplicate-messages (count 1; type-only variant:
//	  duplicate-messages m             10) for m's type, sender and receiver, added at the start of
//	                                   the segment in which m was sent
//	deliver m, sent before and         delay-messages (30 s) for m's type, sender and receiver,
//	  delivered after an environment   added at the start of the segment in which m was sent: the
//	  action (a "late" delivery)       message overtakes the crash / DDL / stall as in the model
//	other deliveries, ticks, timers    left to the simulation's scheduler
//
// A segment is the stretch between two script steps; each step lets virtual
// time pass (crash 1 s, detect 10.5 s, others 1 s). Slot i of the model is the
// i-th capture of the simulation (slot 0, the coordinator's node, is the
// first capture, the owner); the model's coordinator endpoint is the owner.
// Every variant (rules bound to sender and receiver, or to the type only) is
// tried with a few simulation seeds; the first run whose spec monitors report
// the counterexample's property reproduces it. The run always ends with
// heal + quiesce, so liveness counterexamples are judged too.

// ReplayResult is the outcome of ReplayModel.
type ReplayResult struct {
	Property   spec.Property
	Reproduced bool
	Seed       uint64 // simulation seed of the reproducing run
	Variant    string
	Message    string
	Story      drive.Story // the reproducing run (or the last one tried)
	Script     []string    // the translated script, for the report
	Tried      []string    // one line per run
}

// ReplayOptions tune ReplayModel.
type ReplayOptions struct {
	Seeds int // simulation seeds per variant (default 8)
}

type scriptItem struct {
	at   int // model action index the item belongs to (rules: segment start)
	rule bool
	step func(r *replayer) (drive.Step, bool)
	post func(r *replayer) // after the step ran (may be nil)
	text string
}

type replayer struct {
	d       *drive.Driver
	tables  int     // the model's initial tables
	ddl     []int64 // impl table IDs created by the script's DDLs, in order
	slotCap [model.MaxNodes]core.NodeID
	anyNode bool // rules bound to the message type only
}

// table maps a model table ID to the implementation's: initial tables keep
// their IDs, the k-th DDL table is the k-th table the script created.
func (r *replayer) table(t int64) (int64, bool) {
	if t <= int64(r.tables) {
		return t, true
	}
	k := int(t) - r.tables - 1
	if k < 0 || k >= len(r.ddl) {
		return 0, false
	}
	return r.ddl[k], true
}

func (r *replayer) index(id core.NodeID) (int, bool) {
	for i, c := range r.d.Sim.Captures() {
		if c == id {
			return i, true
		}
	}
	return 0, false
}

func (r *replayer) slotIndex(slot uint8) (int, bool) {
	if int(slot) >= len(r.slotCap) || r.slotCap[slot] == "" {
		return 0, false
	}
	return r.index(r.slotCap[slot])
}

// bind binds a message rule to m's sender and receiver: the capture of a
// node's slot, the owner for the coordinator. An endpoint without a capture
// is left unbound (any sender, any receiver).
func (r *replayer) bind(st *drive.Step, m model.Msg) {
	owner := func() (int, bool) { return r.index(r.d.Sim.Owner()) }
	from, ok := owner()
	if !m.FromCoordinator() {
		from, ok = r.slotIndex(m.SrcSlot())
	}
	if ok {
		st.From = &from
	}
	to, ok := owner()
	if !m.ToCoordinator() {
		to, ok = r.slotIndex(m.DstSlot())
	}
	if ok {
		st.To = to
	}
}

// implMsgType maps a model message kind name to the impl's message type
// that carries it (core.MessageKind.ModelKinds); a name no type carries is
// returned as is.
func implMsgType(modelKind string) string {
	if k, ok := core.KindOfModel(modelKind); ok {
		return k.Name
	}
	return modelKind
}

// netHas reports whether a message like m (same kind, sender, receiver and
// epoch) is in flight. Payloads are not compared: canonicalization may
// renumber dispatcher IDs between states.
func netHas(s *model.State, m model.Msg) bool {
	for _, n := range s.InFlight() {
		if n.Kind == m.Kind && n.Src == m.Src && n.Dst == m.Dst && n.Epoch == m.Epoch {
			return true
		}
	}
	return false
}

func isEnv(k model.ActKind) bool {
	switch k {
	case model.ACreateTable, model.AUpstreamStall, model.AUpstreamResume, model.ACrash, model.ADetect,
		model.ARestart, model.ASinkError, model.ACoordSchedule, model.AMaintSchedule, model.AMaintMove, model.ABlockDDL, model.ACoordMove:
		return true
	}
	return false
}

// isBoundary: environment actions end a segment; placement alignment
// (schedule, move) does not.
func isBoundary(k model.ActKind) bool {
	return isEnv(k) && k != model.ACoordSchedule && k != model.AMaintSchedule && k != model.AMaintMove
}

// translate builds the script from the counterexample.
func translate(cfg model.Config, actions []model.Action) ([]scriptItem, error) {
	states, _, err := model.Replay(cfg, actions)
	if err != nil && len(states) < len(actions)+1 {
		// A liveness counterexample ends with its fair schedule, which Replay
		// accepts; anything else that does not replay is an error.
		return nil, fmt.Errorf("model replay: %v", err)
	}
	var items []scriptItem
	segStart := 0 // index of the first action after the last environment action
	segOf := make([]int, len(actions))
	for i, a := range actions {
		segOf[i] = segStart
		if isBoundary(a.Kind) {
			segStart = i + 1
		}
	}
	firstSchedule := true
	for i, a := range actions {
		a := a
		s := &states[i]
		switch a.Kind {
		case model.ACreateTable:
			items = append(items, scriptItem{at: i, text: "create-table",
				step: func(*replayer) (drive.Step, bool) { return drive.Step{Op: drive.OpCreateTable, Ms: 1000}, true },
				post: func(r *replayer) {
					ts := r.d.Sim.Upstream().Tables()
					r.ddl = append(r.ddl, ts[len(ts)-1])
				}})
		case model.ABlockDDL:
			// The model's barrier kinds name the same tables as the
			// upstream's: t1 (and t1's successor, t2) where they name any.
			items = append(items, scriptItem{at: i, text: "blocking-ddl " + cfg.Barrier, step: func(r *replayer) (drive.Step, bool) {
				t, ok := r.table(1)
				return drive.Step{Op: drive.OpBlockingDDL, DDL: cfg.Barrier, Table: t, Ms: 1000}, ok
			}})
		case model.AUpstreamStall:
			items = append(items, scriptItem{at: i, text: "stall-upstream", step: func(*replayer) (drive.Step, bool) { return drive.Step{Op: drive.OpStallUpstream, Ms: 1000}, true }})
		case model.AUpstreamResume:
			items = append(items, scriptItem{at: i, text: "resume-upstream", step: func(*replayer) (drive.Step, bool) { return drive.Step{Op: drive.OpResumeUpstream, Ms: 1000}, true }})
		case model.ACrash:
			sl := a.Node
			items = append(items, scriptItem{at: i, text: fmt.Sprintf("kill-capture slot %d", sl), step: func(r *replayer) (drive.Step, bool) {
				n, ok := r.slotIndex(sl)
				return drive.Step{Op: drive.OpKillCapture, Node: n, Ms: 1000}, ok
			}})
		case model.ADetect:
			items = append(items, scriptItem{at: i, text: "advance-time past the session TTL", step: func(*replayer) (drive.Step, bool) {
				return drive.Step{Op: drive.OpAdvanceTime, Ms: 10_500}, true
			}})
		case model.ARestart:
			sl := a.Node
			items = append(items, scriptItem{at: i, text: fmt.Sprintf("restart-capture slot %d", sl), step: func(r *replayer) (drive.Step, bool) {
				return drive.Step{Op: drive.OpRestartCapture, Ms: 1000}, true
			}})
		case model.ASinkError:
			sl, ok := s.DispatcherSlot(a.Arg)
			if !ok {
				sl = 0xFF // no capture: the step is skipped
			}
			items = append(items, scriptItem{at: i, text: fmt.Sprintf("sink-error on slot %d", sl), step: func(r *replayer) (drive.Step, bool) {
				n, ok := r.slotIndex(sl)
				return drive.Step{Op: drive.OpSinkError, Feed: ShadowFeed, Node: n, Ms: 1000}, ok
			}})
		case model.ACoordSchedule:
			if !firstSchedule {
				continue
			}
			firstSchedule = false
			sl := a.Node
			items = append(items, scriptItem{at: i, text: fmt.Sprintf("slot %d is the capture the implementation chose for the maintainer", sl),
				step: func(r *replayer) (drive.Step, bool) {
					return drive.Step{Op: drive.OpAdvanceTime, Ms: 3000}, true // let the coordinator place the maintainer
				},
				post: func(r *replayer) {
					m := r.d.Sim.MaintainerNode(ShadowFeed)
					if m == "" || r.slotCap[sl] == m {
						return
					}
					// swap slots: the model's maintainer slot is the impl's maintainer capture
					for o := range r.slotCap {
						if r.slotCap[o] == m {
							r.slotCap[o] = r.slotCap[sl]
						}
					}
					r.slotCap[sl] = m
				}})
		case model.ACoordMove:
			sl := a.Node
			items = append(items, scriptItem{at: i, text: fmt.Sprintf("move the maintainer to slot %d", sl), step: func(r *replayer) (drive.Step, bool) {
				n, ok := r.slotIndex(sl)
				return drive.Step{Op: drive.OpMoveMaintainer, Feed: ShadowFeed, Node: n, Ms: 2000}, ok
			}})
		case model.AMaintSchedule, model.AMaintMove:
			t, sl := int64(a.Arg), a.Arg2
			items = append(items, scriptItem{at: i, text: fmt.Sprintf("table %d on slot %d", t, sl), step: func(r *replayer) (drive.Step, bool) {
				n, ok := r.slotIndex(sl)
				it, ok2 := r.table(t)
				return drive.Step{Op: drive.OpMoveTable, Feed: ShadowFeed, Table: it, Node: n, Ms: 2000}, ok && ok2
			}})
		case model.ADeliver, model.ADrop, model.ADuplicate:
			if it, ok := messageRule(i, actions, states, segOf); ok {
				items = append(items, it)
			}
		}
	}
	items = append(items, silencedChannels(actions, states, segOf)...)
	sort.SliceStable(items, func(i, j int) bool {
		if items[i].at != items[j].at {
			return items[i].at < items[j].at
		}
		return items[i].rule && !items[j].rule
	})
	return items, nil
}

// messageRule is the script's rule for the message action actions[i]
// (see the table above): a drop or duplicate, or a delivery that comes
// after an environment action the message was sent before (a late one),
// bound to the segment in which the message was sent. ok is false for a
// delivery in its own segment, which the simulation's scheduler makes.
func messageRule(i int, actions []model.Action, states []model.State, segOf []int) (scriptItem, bool) {
	a := actions[i]
	sent := i
	for sent > 0 && netHas(&states[sent], a.Msg) {
		sent--
	}
	late := false
	for k := sent + 1; k < i; k++ {
		if isEnv(actions[k].Kind) && actions[k].Kind != model.AMaintSchedule && actions[k].Kind != model.AMaintMove {
			late = true
		}
	}
	if a.Kind == model.ADeliver && !late {
		return scriptItem{}, false
	}
	action := map[model.ActKind]drive.Op{model.ADeliver: drive.OpDelayMessages, model.ADrop: drive.OpDropMessages, model.ADuplicate: drive.OpDupMessages}[a.Kind]
	typ := implMsgType(a.Msg.KindName())
	m, src, dst := a.Msg, a.Msg.Src, a.Msg.Dst
	at := segOf[sent]
	if isEnv(actions[sent].Kind) {
		at = sent // sent by a scripted step itself: add the rule just before it
	}
	return scriptItem{at: at, rule: true, text: fmt.Sprintf("%s %s %d->%d", action, typ, src, dst), step: func(r *replayer) (drive.Step, bool) {
		st := drive.Step{Op: action, MsgType: typ, Count: 1, To: -1}
		if action != drive.OpDropMessages {
			st.DelayMs = 30_000
		}
		if r.anyNode {
			// bound to the type only: catch every message of the type
			// the segment sends (the model's one message is one of them)
			st.Count = 1
		} else {
			r.bind(&st, m)
		}
		return st, true
	}}, true
}

// silencedChannels: a node the model crashes had sent messages on a channel
// (kind, sender, receiver) that the model never delivered before the crash
// (for example the maintainer's MaintainerStatus: the coordinator's
// checkpoint stays where it was). The implementation sends such messages
// periodically, so the script drops that channel's messages from the start
// of the crash's segment (count 50). Channels that the model delivers on at
// any later point are left alone (a delivery after the crash becomes a
// delay rule instead).
func silencedChannels(actions []model.Action, states []model.State, segOf []int) []scriptItem {
	var items []scriptItem
	type ch struct {
		kind     string
		src, dst uint8
	}
	for c, a := range actions {
		if a.Kind != model.ACrash || c >= len(states) {
			continue
		}
		start := segOf[c]
		delivered := map[ch]bool{}
		for k := start; k < len(actions); k++ { // delivered in the segment, or late (a delay rule covers it)
			if actions[k].Kind == model.ADeliver {
				m := actions[k].Msg
				delivered[ch{actions[k].Msg.KindName(), m.Src, m.Dst}] = true
			}
		}
		seen := map[ch]bool{}
		net := states[c].InFlight()
		if states[c].View().Maint[a.Node] != "" {
			// the maintainer's periodic status to the coordinator, even if the
			// model had none in flight
			net = append(append([]model.Msg(nil), net...), states[c].StatusReport(a.Node))
		}
		for _, m := range net {
			if m.FromCoordinator() || m.SrcSlot() != a.Node {
				continue
			}
			name := m.KindName()
			key := ch{name, m.Src, m.Dst}
			if delivered[key] || seen[key] {
				continue
			}
			seen[key] = true
			m, typ := m, implMsgType(name)
			items = append(items, scriptItem{at: start, rule: true, text: fmt.Sprintf("drop-messages %s %d->%d (never delivered before the crash)", typ, m.Src, m.Dst),
				step: func(r *replayer) (drive.Step, bool) {
					st := drive.Step{Op: drive.OpDropMessages, MsgType: typ, Count: 50, To: -1}
					if !r.anyNode {
						r.bind(&st, m)
					}
					return st, true
				}})
		}
	}
	return items
}

// ReplayModel drives the simulation through a model counterexample's
// environment (see the table above) and reports whether the implementation
// shows the same property violation. bugs are switched on in the
// implementation (normally the ones the model had on).
func ReplayModel(cfg model.Config, actions []model.Action, prop spec.Property, bugs []string, opt ReplayOptions) (ReplayResult, error) {
	res := ReplayResult{Property: prop}
	if opt.Seeds <= 0 {
		opt.Seeds = 8
	}
	if _, err := spec.ParseBugs(bugs); err != nil {
		return res, err
	}
	items, err := translate(cfg, actions)
	if err != nil {
		return res, err
	}
	for _, it := range items {
		res.Script = append(res.Script, it.text)
	}
	raw := false
	if f, ok := model.ParseFeature("committed-checkpoint"); ok && cfg.Features&f == 0 {
		raw = true
	}
	nodes := cfg.Nodes
	if nodes < 2 {
		nodes = 2
	}
	tables := cfg.Tables
	if tables < 1 {
		tables = 1 // the simulation needs one table (0 means its default, 4)
	}
	for _, variant := range replayVariants {
		for seed := uint64(0); seed < uint64(opt.Seeds); seed++ {
			// MinCaptures 1: the model may crash all but its coordinator's node.
			su := drive.Setup{Seed: seed, Nodes: nodes, Tables: tables, Bugs: bugs, RawWatermark: raw, MinCaptures: 1}
			d, err := drive.NewDriver(su, nil)
			if err != nil {
				return res, err
			}
			r := &replayer{d: d, anyNode: strings.Contains(variant, "only"), tables: cfg.Tables}
			caps := d.Sim.Captures()
			for sl := 0; sl < len(caps) && sl < model.MaxNodes; sl++ {
				r.slotCap[sl] = caps[sl]
			}
			_ = d.Do(drive.Step{Op: drive.OpCreateChangefeed, Feed: ShadowFeed})
			for _, it := range items {
				st, ok := it.step(r)
				if !ok {
					continue
				}
				_ = d.Do(st)
				if it.post != nil {
					it.post(r)
				}
				if st.Op == drive.OpRestartCapture {
					// the lowest dead slot takes the newest capture
					after := d.Sim.Captures()
					for sl := 1; sl < model.MaxNodes; sl++ {
						if r.slotCap[sl] != "" && !contains(after, r.slotCap[sl]) {
							r.slotCap[sl] = after[len(after)-1]
							break
						}
					}
				}
				d.Check()
			}
			// let delayed messages land before the heal (Heal drops rules,
			// not messages already in flight, and quiescence may come first)
			_ = d.Do(drive.Step{Op: drive.OpAdvanceTime, Ms: 31_000})
			d.Finish()
			story := drive.Story{Setup: su, Steps: d.Steps}
			line := fmt.Sprintf("seed %d, %s: ", seed, variant)
			if f := d.Violated(prop); f != nil {
				res.Reproduced, res.Seed, res.Variant, res.Message, res.Story = true, seed, variant, f.Message, story
				res.Tried = append(res.Tried, line+"reproduced "+string(prop))
				return res, nil
			}
			var got []string
			for _, f := range d.Failures {
				got = append(got, string(f.Property))
			}
			if len(got) == 0 {
				got = []string{"no violation"}
			}
			res.Tried = append(res.Tried, line+strings.Join(got, ", "))
			res.Story = story
		}
	}
	return res, nil
}

func contains(ids []core.NodeID, id core.NodeID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// Report renders a ReplayResult for people.
func (r ReplayResult) Report() string {
	var b strings.Builder
	if r.Reproduced {
		fmt.Fprintf(&b, "the implementation shows the same violation: %s (simulation seed %d, %s)\n%s\n", r.Property, r.Seed, r.Variant, r.Message)
	} else {
		fmt.Fprintf(&b, "the implementation did not show %s in %d runs\n", r.Property, len(r.Tried))
	}
	b.WriteString("\nscript translated from the model counterexample:\n")
	for i, s := range r.Script {
		fmt.Fprintf(&b, "  %2d. %s\n", i+1, s)
	}
	b.WriteString("\nruns:\n")
	for _, t := range r.Tried {
		fmt.Fprintf(&b, "  %s\n", t)
	}
	fmt.Fprintf(&b, "\nimplementation story (%s run):\n", map[bool]string{true: "reproducing", false: "last"}[r.Reproduced])
	for i, st := range r.Story.Steps {
		fmt.Fprintf(&b, "  %2d. %s\n", i+1, st)
	}
	return b.String()
}

// counterexampleJSON is the part of `cdcspec check --format json` (and its
// counterexample.json artifact) that a replay needs.
type counterexampleJSON struct {
	Config struct {
		model.Config
		Features string `json:"features"`
	} `json:"config"`
	Bugs      []string `json:"bugs"`
	Violation *struct {
		Property string `json:"property"`
		Steps    []struct {
			Action model.Action `json:"action"`
			Fair   bool         `json:"after_heal"`
		} `json:"steps"`
	} `json:"violation"`
}

// ParseCounterexample reads `cdcspec check --format json` output (or the
// counterexample.json artifact): the model configuration, the actions, the
// violated property and the bugs that were on.
func ParseCounterexample(b []byte) (model.Config, []model.Action, spec.Property, []string, error) {
	var j counterexampleJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return model.Config{}, nil, "", nil, fmt.Errorf("counterexample json: %v", err)
	}
	if j.Violation == nil {
		return model.Config{}, nil, "", nil, fmt.Errorf("counterexample json: no violation (result was not a violation)")
	}
	cfg := j.Config.Config
	for _, f := range strings.Split(j.Config.Features, ",") {
		if f = strings.TrimSpace(f); f == "" || f == "none" {
			continue
		}
		ft, ok := model.ParseFeature(f)
		if !ok {
			return model.Config{}, nil, "", nil, fmt.Errorf("counterexample json: unknown feature %q", f)
		}
		cfg.Features |= ft
	}
	bs, err := spec.ParseBugs(j.Bugs)
	if err != nil {
		return model.Config{}, nil, "", nil, fmt.Errorf("counterexample json: %w", err)
	}
	cfg.Bugs |= bs
	var acts []model.Action
	for _, st := range j.Violation.Steps {
		if st.Action.Kind == 0 { // a checker-only step ("faults healed")
			continue
		}
		acts = append(acts, st.Action)
	}
	return cfg, acts, spec.Property(j.Violation.Property), j.Bugs, nil
}

var replayVariants = []string{"rules bound to sender and receiver", "rules bound to the message type only"}
