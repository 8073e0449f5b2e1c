// Package refinement checks that the implementation (impl/, run by impl/sim)
// refines the model (model/) step by step: after every step the simulation
// takes (a delivery, a tick, upstream or sink progress, a membership change,
// a fault), some run of the model that takes only the model actions mapped
// from that step reaches a state with the same model.View as the
// implementation. This is trace validation: the Tracker keeps the set of
// model states consistent with every implementation step so far, and a
// divergence is the first step after which that set is empty.
//
// The mapping, one implementation step to the model actions it may stand for
// (each a model action of the same actor; see allowed):
//
//	implementation step                 model actions
//	----------------------------------  ----------------------------------------------------
//	deliver m to node N                 deliver a message of m's kind addressed to N (to the
//	                                    coordinator for MaintainerHeartbeat); a HeartBeatRequest
//	                                    may stand for a watermark, an error and one status
//	                                    message per status it carries (older statuses on the
//	                                    channel first: the implementation coalesced them); then
//	                                    N's own follow-up actions; a Remove (of a dispatcher
//	                                    or a maintainer) first delivers the re-sent Creates or
//	                                    AddMaintainerRequests the model queued ahead of it and
//	                                    the receiver ignores (dropStale)
//	tick on node N                      N's periodic actions: coordinator-schedule/-tick/
//	                                    -retry-timer (N hosts the coordinator), maintainer-tick,
//	                                    manager-cleanup, maintainer-schedule, dm-tick,
//	                                    dm-complete-status, dispatcher-closed,
//	                                    maintainer-merge-post-finish; a Create or a
//	                                    MergeDispatcherRequest queued for N (the implementation
//	                                    journals them and acts at a tick)
//	upstream advance                    upstream-advance while the model's ts stays MaxTables
//	                                    below TsMax (room for CREATE TABLE), else nothing
//	sink result on N                    N's dispatcher and DM actions
//	kill-capture N                      expire-session N (the model's one way a capture dies)
//	capture keys expire (N left)        detect-node-left N
//	expire-session N                    expire-session N, detect-node-left N
//	add-capture                         restart-capture of the lowest slot whose capture was seen leaving
//	sink-error on N                     sink-error of one of N's table dispatchers
//	stall-upstream / resume-upstream    stall-upstream / resume-upstream
//	create-table                        create-table
//	move-table t                        maintainer-move of t's spans (one or two), any target
//	split-table t                       maintainer-split of t's whole span with target nodes
//	                                    (Config.Splits, WithSplits)
//	merge-table t                       maintainer-merge of t's halves (Config.Merges,
//	                                    WithMerges: the table split at creation)
//	move-maintainer                     move-maintainer to any slot (the Views that follow tell them apart)
//	slow-close-dispatcher, heal,        (none): the failpoint only delays a close, which the
//	  random-message-faults,            model's dispatcher-closed leaves to any later tick;
//	  drop/duplicate/delay-messages,    message faults take effect only as deliveries that do
//	  partition, heal-network           not happen (a model message never delivered is the
//	                                    model's drop-messages)
//
// Where the model does in one step what the implementation does in several
// (SPEC.md section 7.1), the model takes the step when the implementation
// has finished, and implView shows the implementation's intermediate states
// as the state before: a move's origin closing its table trigger (item 16;
// the remove is taken at the step that closes the origin's maintainer), a
// merge journaled but not committed (item 14; taken at the commit's tick).
// The other way round, the model finalises a coordinator operator in the
// step that finishes it, the implementation at its operator controller's
// next poll: implView shows a finished operator as already post-finished.
// A coordinator tick that binds a moved changefeed to its target is a
// choice of the tick, not a periodic action: the implementation's operator
// controller schedules at its own pace.
//
// What the mapping leaves out, and what makes the Tracker stop following
// (Stopped names it; a stopped Tracker checks nothing more and says so):
// a second changefeed, pause/resume/remove (section 7.1 of SPEC.md, item
// 12: the model's cascade close is atomic), a second split of a table or
// a split in a configuration without Config.Splits, a merge in one without
// Config.Merges or after a split (the model merges only a table split at
// creation), remove-table-dispatchers, the failpoint block-create-dispatcher,
// a crash of the coordinator's capture (coordinator failover), more captures
// or tables than the model's slots, a capture joining with no slot free
// (the model restarts a slot whose capture was seen leaving), CREATE
// TABLE while the upstream is stalled (the model's DDLs need a live
// upstream), a second CREATE TABLE (the model's trigger holds one pending
// CREATE TABLE), a blocking DDL or syncpoint (the model commits the one
// blocking DDL its configuration names, Config.Barrier, and model.View has
// no block stage), catalogue entries the model cannot express (ConfigFor),
// an error report reaching the coordinator after the model's timestamps ran
// out (whether it comes with checkpoint progress decides the backoff,
// reference A.2 step 6, and the implementation's checkpoint can still
// progress where the model's cannot), and more than MaxCandidates matching
// model states.
// The View leaves out timestamps (but for the order View.Handoff compares),
// dispatcher IDs, epochs and messages in flight (see model.View).
//
// The package is the one place where the model and the implementation are
// mapped onto each other, at three grains, each read from model.View and
// the model's accessors: the Tracker above, per simulation step; the
// Shadow (shadow.go), a bounded model following a drive.Driver's domain
// steps and compared at quiescence (Quiescence); and ReplayModel
// (replay.go), a model counterexample translated into drive.Steps and
// replayed on the simulation (`cdcspec check --replay-impl`).
package refinement

import (
	"fmt"
	"sort"
	"strings"

	"cdcspec/impl/core"
	"cdcspec/impl/maintainer"
	"cdcspec/impl/sim"
	"cdcspec/model"
	"cdcspec/spec"
)

// DefaultMaxCandidates bounds the model states the Tracker keeps.
const DefaultMaxCandidates = 256

// maxFollowUps bounds the model actions one implementation step stands for.
const maxFollowUps = 6

// Tracker follows one changefeed of a simulation with a set of model states.
type Tracker struct {
	Cfg  model.Config
	Feed core.ChangefeedID
	// Stopped says why the Tracker stopped following ("" while it follows).
	Stopped string
	// Steps counts the implementation steps compared; Divergence is set at
	// the first step no model run matches.
	Steps      int
	Divergence *Divergence
	// MaxCandidates bounds the candidate set; exceeding it stops the
	// Tracker (never a silent truncation).
	MaxCandidates int

	sim     *sim.Sim
	cands   []model.State
	ident   map[core.NodeID]uint8 // implementation node -> model identity
	slot    map[core.NodeID]uint8
	hist    []string // the implementation steps so far, for the story
	peak    int
	stalled bool // the implementation's upstream is stalled
	// tsExhausted: the implementation's upstream advanced where no
	// candidate's could (its ts ran out); from then on the implementation's
	// checkpoint can progress where the model's cannot.
	tsExhausted bool
	ddls        int // CREATE TABLEs mirrored so far
	splits      int // split-table requests mirrored so far
	// closingOrigin: the node's maintainer took a move's non-cascade
	// remove and is closing its table trigger; the model takes the remove
	// when the implementation's maintainer is closed (implView).
	closingOrigin map[core.NodeID]bool
	closedOrigin  bool // a closing origin's remove was mapped (for tests)
	// holdDelivery: the implementation's delivery in this step has no model
	// counterpart yet (set by mapStep, read by observe).
	holdDelivery bool
	// hand is the implementation's side of View.Handoff, kept as the
	// model's HandoffGhost (and the handoff-keeps-checkpoint monitor) keep
	// it: the last maintainer move until another coordinator operator
	// starts, and the origin's final Stopped report.
	hand        handoff
	splitTables [model.MaxTables + 1]bool
	inc         [model.MaxNodes]uint8 // incarnation of each slot
	detected    [model.MaxNodes]bool  // the slot's capture was seen leaving
}

func (t *Tracker) current(sl uint8) uint8 { return model.IdentOf(sl, t.inc[sl]) }

// restartSlot is the slot a joining capture takes: the lowest one whose
// capture was seen leaving, as the model's restart.
func (t *Tracker) restartSlot() (uint8, bool) {
	for sl := 1; sl < t.Cfg.Nodes; sl++ {
		if t.detected[sl] {
			return uint8(sl), true
		}
	}
	return 0, false
}

// Divergence is the first implementation step after which no model run has
// the implementation's View.
type Divergence struct {
	Step  int    // 1-based index of the implementation step
	What  string // the implementation step
	Field string // the first View field that differs from the closest model state
	Impl  model.View
	Model model.View // the closest candidate's view
	Story []string   // the implementation steps up to the divergence
}

func (d *Divergence) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the implementation left the model at step %d (%s): %s\n", d.Step, d.What, d.Field)
	fmt.Fprintf(&b, "implementation view: %+v\nclosest model view:  %+v\nsteps:\n", d.Impl, d.Model)
	from := 0
	if len(d.Story) > 40 {
		from = len(d.Story) - 40
		fmt.Fprintf(&b, "  ... %d earlier steps\n", from)
	}
	for i := from; i < len(d.Story); i++ {
		fmt.Fprintf(&b, "  %d. %s\n", i+1, d.Story[i])
	}
	return b.String()
}

// ConfigFor is the model configuration a simulation maps to: nodes
// captures, tables initial tables, the catalogue entries bugs switched on in
// both, and rawWatermark for a pre-#4548 maintainer. It returns why the
// model cannot follow such a run instead, when it cannot.
func ConfigFor(nodes, tables int, bugs spec.BugSet, rawWatermark bool) (model.Config, string) {
	switch {
	case nodes > model.MaxNodes:
		return model.Config{}, fmt.Sprintf("%d captures, the model has %d slots", nodes, model.MaxNodes)
	case tables > model.MaxTables:
		return model.Config{}, fmt.Sprintf("%d tables, the model has %d", tables, model.MaxTables)
	}
	for _, b := range bugs.Bugs() {
		if b.ModelGap != "" {
			return model.Config{}, fmt.Sprintf("catalogue entry %s is not in the model (%s)", b.Name, b.ModelGap)
		}
	}
	base := model.Base()
	mc := model.Config{Features: base.Features, Bugs: bugs, Puller: bugs.Has(spec.BugStuckAfterUpstreamFailure)}
	if rawWatermark {
		mc.Features &^= model.FeatCommittedCheckpoint
	}
	return Config(nodes, tables, mc), ""
}

// Config is the model configuration a simulation of nodes captures and
// tables tables maps to, with bugs switched on in the model.
func Config(nodes, tables int, bugs model.Config) model.Config {
	cfg := model.Base()
	cfg.Name = "refinement"
	cfg.Nodes = nodes
	cfg.Tables = tables
	cfg.DDLTables = model.MaxTables - tables
	cfg.TsMax = 9
	cfg.Crashes, cfg.Restarts, cfg.SinkErrors, cfg.Stalls = 7, 7, 7, 7
	// Client requests stop the Tracker (mapStep), so the model needs no
	// budget for them; maintainer moves it follows (and Validate refuses
	// both in one configuration).
	cfg.FastFails, cfg.MaintMoves = 7, 7
	cfg.SpanMoves = true
	cfg.Bugs = bugs.Bugs
	cfg.Features = bugs.Features
	cfg.Puller = bugs.Puller
	return cfg
}

// WithSplits is cfg with room for splits split operators (Config.Splits):
// the span slots that CREATE TABLEs would take hold the halves instead.
func WithSplits(cfg model.Config, splits int) model.Config {
	cfg.Splits = splits
	cfg.DDLTables = max(0, model.MaxSpans-cfg.Tables-splits)
	return cfg
}

// WithMerges is cfg as the model's merge configuration holds it: one
// table, split in two halves at creation (the implementation's
// EnableTableAcrossNodes), and one merge operator (Config.Merges).
func WithMerges(cfg model.Config) model.Config {
	cfg.Merges, cfg.Splits, cfg.DDLTables = 1, 0, 0
	return cfg
}

// Follow starts following changefeed name of s, which must have just been
// created (CreateChangefeed returned, no step since). Captures map to model
// slots: the coordinator's capture to slot 0, the others in start order.
func Follow(s *sim.Sim, name string, cfg model.Config) *Tracker {
	t := &Tracker{Cfg: cfg, Feed: sim.CfID(name), MaxCandidates: DefaultMaxCandidates, sim: s,
		ident: map[core.NodeID]uint8{}, slot: map[core.NodeID]uint8{}, closingOrigin: map[core.NodeID]bool{}}
	caps := s.Captures()
	switch {
	case len(caps) != cfg.Nodes:
		t.stop(fmt.Sprintf("%d captures, the model has %d slots", len(caps), cfg.Nodes))
		return t
	case len(s.State().Changefeeds) != 1:
		t.stop("more than one changefeed: the model has one")
		return t
	}
	next := uint8(1)
	for _, id := range caps {
		sl := next
		if id == s.Owner() {
			sl = 0
		} else {
			next++
		}
		t.slot[id], t.ident[id] = sl, sl
	}
	init := model.Init(&t.Cfg)
	t.cands = []model.State{init}
	// The creation itself: the coordinator may already have acted on it.
	t.advance("create-changefeed "+name, func(a model.Action, _ *model.State, _ int) bool { return coordinatorAction(a) }, false, nil)
	s.Observe(t.observe)
	return t
}

func (t *Tracker) stop(why string) {
	if t.Stopped == "" && t.Divergence == nil {
		t.Stopped = why
		if t.sim != nil {
			t.sim.Observe(nil)
		}
	}
}

// Following reports whether the Tracker still compares steps.
func (t *Tracker) Following() bool { return t.Stopped == "" && t.Divergence == nil }

// PeakCandidates is the largest candidate set seen.
func (t *Tracker) PeakCandidates() int { return t.peak }

func (t *Tracker) observe(st sim.Step) {
	if !t.Following() {
		return
	}
	t.holdDelivery = false
	what, filter, mustAct, why := t.mapStep(st)
	if why != "" {
		t.stop(why)
		return
	}
	t.noteHandoff(st)
	if st.Kind == sim.StepDeliver && !t.holdDelivery {
		if sl, ok := t.slot[st.Node]; ok && t.ident[st.Node] == t.current(sl) {
			if kinds := modelKinds(st.Msg); kinds != nil {
				for i := range t.cands {
					t.cands[i] = t.deliverMatching(t.cands[i], st, kinds)
				}
				t.cands = dedupe(t.cands)
			}
		}
	}
	var post func(model.State) model.State
	if st.Kind == sim.StepTick {
		if sl, ok := t.slot[st.Node]; ok && t.ident[st.Node] == t.current(sl) {
			post = func(s model.State) model.State { return t.periodic(s, sl) }
		}
	}
	t.advance(what, filter, mustAct, post)
}

// periodic takes, in s, every periodic action of slot sl's components that
// the implementation's OnTick always runs: the maintainer's tick
// (checkpoint, heartbeat, re-sends), the dispatcher manager's heartbeat and
// complete status, and the coordinator's operator re-sends on slot 0. They
// only re-send and report, so taking them at every tick keeps the candidate
// set from multiplying by when a re-send happened. Choices (scheduling,
// retry timers, cleanup, closing dispatchers) stay optional (see mapStep).
func (t *Tracker) periodic(s model.State, sl uint8) model.State {
	for _, k := range []model.ActKind{model.AMaintTick, model.ADMTick, model.ADMComplete, model.ACoordTick} {
		if k == model.ACoordTick && sl != 0 {
			continue
		}
		for _, a := range model.Actions(t.Cfg, s) {
			if a.Kind == k && (k == model.ACoordTick || a.Node == sl) {
				n, _ := model.Step(t.Cfg, s, a)
				if !n.Overflow && (k != model.ACoordTick || !coordTickActs(&s, &n)) {
					s = n
				}
				break
			}
		}
	}
	return s
}

// handoff is one maintainer move's history as View.Handoff reads it.
type handoff struct {
	active, removing, hasFinal bool
	origin                     core.NodeID
	epoch, final               uint64
}

// noteHandoff updates the implementation's handoff history after step st
// (see Tracker.hand); implView ends it when another coordinator operator
// starts.
func (t *Tracker) noteHandoff(st sim.Step) {
	h := &t.hand
	switch {
	case st.Kind == sim.StepFault && spec.Action(st.Name) == spec.ActionMoveMaintainer:
		for _, c := range t.sim.State().Changefeeds {
			if c.ID == t.Feed && strings.HasPrefix(c.Operator, "move ") {
				*h = handoff{active: true, removing: true, origin: c.Node, epoch: c.Epoch}
			}
		}
	case !h.removing:
	case st.Kind == sim.StepMembership:
		for _, id := range st.Left {
			if id == h.origin {
				h.removing = false
			}
		}
	case st.Kind == sim.StepDeliver && st.From == h.origin && core.TopicOf(st.Msg) == core.TopicCoordinator:
		if hb := heartbeatOf(st.Msg); hb != nil {
			for _, ms := range hb.Statuses {
				if ms.Changefeed == t.Feed && ms.State != core.ComponentWorking {
					h.removing, h.hasFinal, h.final = false, true, ms.CheckpointTs
				}
			}
		}
	}
}

// coordTickActs reports whether the coordinator's tick from s to n did more
// than re-send: a move operator's Schedule binding the changefeed to the
// target once the origin stopped. The implementation's operator controller
// schedules at its own pace (not at every tick), so that step is a choice of
// the tick (mapStep), not a periodic action.
func coordTickActs(s, n *model.State) bool {
	return s.Coord != n.Coord && s.View().Diff(n.View()) != ""
}

// advance replaces the candidates by every state reachable with up to
// maxFollowUps model actions that filter allows (at least one when mustAct)
// whose View is the implementation's.
//
// post, when set, is applied to every reached state before it is compared
// and kept: a tick's periodic actions, which the implementation runs after
// the tick's choices.
func (t *Tracker) advance(what string, f filter, mustAct bool, post func(model.State) model.State) {
	t.Steps++
	t.hist = append(t.hist, what)
	want := t.implView()
	seen := map[model.State]bool{}
	var next []model.State
	frontier := t.cands
	closest, closestDiff := model.View{}, ""
	for depth := 0; depth <= maxFollowUps && len(frontier) > 0; depth++ {
		var grow []model.State
		for i := range frontier {
			s := frontier[i]
			if depth > 0 || !mustAct || !canAct(t.Cfg, s, f) {
				c := s
				if post != nil {
					c = post(s)
				}
				v := c.View()
				if d := want.Diff(v); d == "" {
					if !seen[c] {
						seen[c] = true
						next = append(next, c)
					}
				} else if closestDiff == "" || len(d) < len(closestDiff) {
					closest, closestDiff = v, d
				}
			}
			if depth == maxFollowUps {
				continue
			}
			for _, a := range model.Actions(t.Cfg, s) {
				if !f(a, &s, depth) {
					continue
				}
				n, _ := model.Step(t.Cfg, s, a)
				if n.Overflow {
					continue
				}
				grow = append(grow, n)
			}
		}
		frontier = dedupe(grow)
	}
	if len(next) == 0 {
		t.Divergence = &Divergence{Step: t.Steps, What: what, Field: closestDiff, Impl: want, Model: closest,
			Story: append([]string(nil), t.hist...)}
		t.sim.Observe(nil)
		return
	}
	if len(next) > t.MaxCandidates {
		t.stop(fmt.Sprintf("more than %d model states match the implementation", t.MaxCandidates))
		return
	}
	if len(next) > t.peak {
		t.peak = len(next)
	}
	t.cands = next
}

// canAct reports whether some model action that filter allows at depth 0 is
// enabled in s: a step that must act may stutter only where it cannot.
func canAct(cfg model.Config, s model.State, f filter) bool {
	for _, a := range model.Actions(cfg, s) {
		if f(a, &s, 0) {
			return true
		}
	}
	return false
}

func dedupe(ss []model.State) []model.State {
	seen := make(map[model.State]bool, len(ss))
	out := ss[:0]
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// implView projects the implementation's state of the followed changefeed.
func (t *Tracker) implView() model.View {
	st := t.sim.State()
	var v model.View
	v.Feed, v.Sched = "normal", "absent"
	for _, cf := range st.Changefeeds {
		if cf.ID != t.Feed {
			continue
		}
		v.Feed = cf.State
		if cf.Sched != "" {
			v.Sched = cf.Sched
		}
		if cf.Node != "" {
			v.Bound = t.name(cf.Node)
		}
		if cf.OpFinished {
			// A finished coordinator operator waits for the operator
			// controller's next poll to be post-finished (HEAD's
			// pollQueueingOperator); the model finalises it in the step
			// that finished it, so the view shows what PostFinish will
			// leave.
			if cf.PostFinishSched != "" {
				v.Sched = cf.PostFinishSched
			}
			if v.Sched == "absent" {
				v.Bound = ""
			}
			continue
		}
		switch {
		case strings.HasPrefix(cf.Operator, "add "):
			v.Op = "add"
		case strings.HasPrefix(cf.Operator, "stop "):
			v.Op = "stop"
		case strings.HasPrefix(cf.Operator, "move "):
			v.Op = "move"
		case cf.Operator != "":
			v.Op = cf.Operator
		}
	}
	for _, n := range st.Nodes {
		sl, ok := t.slot[n.ID]
		if !ok {
			continue
		}
		closing := false
		for _, m := range n.Maintainers {
			if m.Changefeed == t.Feed {
				v.Maint[sl] = model.MaintView(m.RemovalOnly, m.Bootstrapped, m.Removing, m.Removed)
				v.Ghosts[sl] = m.Ghosts
				if t.closingOrigin[n.ID] && m.Removing && !m.Removed {
					// A move's origin closing its table trigger (SPEC.md
					// 7.1, item 16) is the model's maintainer before the
					// remove, its trigger Working.
					closing = true
					v.Maint[sl] = model.MaintView(m.RemovalOnly, m.Bootstrapped, false, false)
					v.Disp = append(v.Disp, model.DispView(t.name(n.ID), 0, model.PartWhole, "Working"))
				}
			}
		}
		if !closing {
			delete(t.closingOrigin, n.ID)
		}
		for _, dm := range n.Managers {
			if dm.Changefeed == t.Feed {
				v.DM[sl] = t.name(dm.MaintainerID)
			}
		}
		for _, d := range n.Dispatchers {
			if d.Changefeed != t.Feed {
				continue
			}
			table := int(d.Span.Table)
			if d.Trigger {
				if closing {
					continue
				}
				table = 0
			}
			v.Disp = append(v.Disp, model.DispView(t.name(n.ID), table, viewPart(d.Span), d.State))
		}
	}
	if v.Op == "add" || v.Op == "stop" {
		t.hand = handoff{} // another coordinator operator started
	}
	if h := &t.hand; h.active && h.hasFinal {
		for _, n := range st.Nodes {
			for _, m := range n.Maintainers {
				if _, ok := t.slot[n.ID]; ok && m.Changefeed == t.Feed && !m.RemovalOnly && m.Epoch == h.epoch {
					v.Handoff = model.HandoffView(m.StartCheckpoint >= h.final)
				}
			}
		}
	}
	sort.Strings(v.Disp)
	return v
}

// maintainerOn returns the followed changefeed's maintainer on node id.
func (t *Tracker) maintainerOn(id core.NodeID) (maintainer.MaintainerInfo, bool) {
	for _, n := range t.sim.State().Nodes {
		if n.ID != id {
			continue
		}
		for _, m := range n.Maintainers {
			if m.Changefeed == t.Feed {
				return m, true
			}
		}
	}
	return maintainer.MaintainerInfo{}, false
}

// viewPart renders an implementation span's part as model.View does: the
// whole table, or the half below or above the one key a split cut it at.
// A span bounded on both sides (a half split again) has no model part; the
// Tracker stops before one exists (mapSplit).
func viewPart(sp spec.Span) string {
	switch {
	case sp.Start == "" && sp.End == "":
		return model.PartWhole
	case sp.Start == "":
		return model.PartLeft
	case sp.End == "":
		return model.PartRight
	}
	return "[" + sp.Start + "," + sp.End + ")"
}

// name renders an implementation node as its model identity.
func (t *Tracker) name(id core.NodeID) string {
	if x, ok := t.ident[id]; ok {
		return model.NodeName(x)
	}
	return "?" + string(id)
}

// took reports whether some candidate satisfies took (for tests: the
// candidates followed a feature).
func (t *Tracker) took(f func(*model.State) bool) bool {
	for i := range t.cands {
		if f(&t.cands[i]) {
			return true
		}
	}
	return false
}

// moved reports whether the candidates took a maintainer move (for tests).
func (t *Tracker) moved() bool {
	for i := range t.cands {
		if t.cands[i].MaintMoves > 0 {
			return true
		}
	}
	return false
}
