package model

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// View is the part of the control plane's state that the implementation is
// compared on after every one of its steps (package refinement): what each
// actor believes about the one changefeed, with nodes as identities
// (NodeName) and without timestamps, dispatcher IDs, epochs or messages in
// flight. Those are left out on purpose: the model's timestamps are 1..TsMax
// where the implementation's are milliseconds, its IDs and epochs are
// allocated per model run, and its network is a bounded multiset. Every
// field is a fact both sides keep.
type View struct {
	Feed  string // coordinator FeedState: normal | warning | failed | stopped | removed
	Sched string // coordinator replica state: absent | scheduling | replicating
	Bound string // node the coordinator binds the maintainer to; "" none
	Op    string // coordinator maintainer operator: "" | add | stop | move
	// Maint is the maintainer of each running node, "" when it has none.
	Maint [MaxNodes]string
	// Ghosts counts, per running node's maintainer, the spans its scheduler
	// holds absent although its span controller removed them: a merge
	// source's late Stopped that the fallback marked absent after PostFinish
	// removed it (merge-occupy-finishes-early, #4542). Never added again,
	// a ghost's checkpoint holds the maintainer's back.
	Ghosts [MaxNodes]int
	// DM is the dispatcher manager of each running node: "" none, else its
	// owner (the maintainer node it obeys).
	DM [MaxNodes]string
	// Handoff says whether the last maintainer move handed the origin's
	// checkpoint to the target (handoff-keeps-checkpoint, #6283): "" until
	// the origin's final Stopped report reached the coordinator and a
	// maintainer of the move's epoch runs, then "kept" when that maintainer
	// started at or above the report's checkpoint, else "behind". It is
	// the one comparison of timestamps in the View, taken as an order so
	// that the model's and the implementation's clocks need not agree.
	Handoff string
	// Disp lists every dispatcher as "node/table/state" (table 0 is the
	// table trigger), sorted. A half of a split table is "tN<" (its left
	// half, up to the split key) or "tN>" (its right half), a whole span
	// "tN": which key a split cuts at is left out (the model's is fixed,
	// split.go), which half a node holds is not.
	Disp []string
}

// MaintView renders a maintainer's flags in View.Maint.
func MaintView(removalOnly, bootstrapped, removing, removed bool) string {
	var f []string
	switch {
	case removalOnly:
		f = append(f, "removal-only")
	case bootstrapped:
		f = append(f, "bootstrapped")
	default:
		f = append(f, "bootstrapping")
	}
	if removed {
		f = append(f, "removed")
	} else if removing {
		f = append(f, "removing")
	}
	return strings.Join(f, ",")
}

// Span parts in View.Disp (DispView's part).
const (
	PartWhole = ""  // the table's whole key range
	PartLeft  = "<" // the left half of a split table
	PartRight = ">" // the right half of a split table
)

// DispView renders one dispatcher in View.Disp; part is PartWhole,
// PartLeft or PartRight. The table trigger's Initializing is rendered
// Working: the model creates the trigger Working (it has no first-event wait
// for it), so that one difference is not compared.
func DispView(node string, table int, part, state string) string {
	if table == 0 && state == "Initializing" {
		state = "Working"
	}
	return fmt.Sprintf("%s/t%d%s/%s", node, table, part, state)
}

// viewPart is a span part's rendering in View.Disp.
func viewPart(p uint8) string {
	switch p {
	case partLeft:
		return PartLeft
	case partRight:
		return PartRight
	}
	return PartWhole
}

// HandoffView renders View.Handoff for a move's maintainer that started at
// or above the origin's final checkpoint (kept) or below it.
func HandoffView(kept bool) string {
	if kept {
		return "kept"
	}
	return "behind"
}

// View projects s. Slots that are not running show no maintainer and no
// dispatcher manager: a crashed capture's components are gone.
func (s *State) View() View {
	var v View
	v.Feed = cfStateName(s.Coord.State)
	v.Sched = [...]string{replAbsent: "absent", replScheduling: "scheduling", replReplicating: "replicating"}[s.Coord.Repl]
	if s.Coord.Node != none {
		v.Bound = NodeName(s.Coord.Node)
	}
	v.Op = [...]string{copNone: "", copAdd: "add", copStop: "stop", copMove: "move"}[s.Coord.Op]
	for i := range s.Maint {
		if s.NodeSt[i] != nodeAlive {
			continue
		}
		if m := &s.Maint[i]; m.Exists {
			v.Maint[i] = MaintView(m.RemovalOnly, m.Bootstrapped, m.Removing, m.Removed)
			for j := range m.Spans {
				if m.Spans[j].ID != 0 && m.Spans[j].Op == mopGhost {
					v.Ghosts[i]++
				}
			}
		}
		if dm := &s.DMs[i]; dm.Exists {
			v.DM[i] = NodeName(dm.Owner)
		}
	}
	if h := &s.Hand; h.Active && h.HasFinal {
		for i := range s.Maint {
			if m := &s.Maint[i]; s.NodeSt[i] == nodeAlive && m.Exists && !m.RemovalOnly && m.Epoch == h.Epoch {
				v.Handoff = HandoffView(m.StartTs >= h.Final)
			}
		}
	}
	for _, d := range s.Disp {
		if d.ID == 0 || s.NodeSt[d.Node] != nodeAlive {
			continue
		}
		st := statusName(d.St)
		if d.St == dMergeClosed {
			// a source the merge closed is removing until its removal
			// finishes (TiCDC's, and the implementation's, state)
			st = "Removing"
		}
		v.Disp = append(v.Disp, DispView(NodeName(s.Ident(d.Node)), int(d.Table), viewPart(d.Part), st))
	}
	sort.Strings(v.Disp)
	return v
}

// Diff names the first field where v and w differ ("" when equal), as
// "field: v-value != w-value".
func (v View) Diff(w View) string {
	switch {
	case v.Feed != w.Feed:
		return fmt.Sprintf("changefeed state: %q != %q", v.Feed, w.Feed)
	case v.Sched != w.Sched:
		return fmt.Sprintf("coordinator replica state: %q != %q", v.Sched, w.Sched)
	case v.Bound != w.Bound:
		return fmt.Sprintf("coordinator's maintainer node: %q != %q", v.Bound, w.Bound)
	case v.Op != w.Op:
		return fmt.Sprintf("coordinator operator: %q != %q", v.Op, w.Op)
	}
	if v.Handoff != w.Handoff {
		return fmt.Sprintf("maintainer move's handoff of the origin's checkpoint: %q != %q", v.Handoff, w.Handoff)
	}
	for i := range v.Maint {
		if v.Maint[i] != w.Maint[i] {
			return fmt.Sprintf("maintainer on slot %d: %q != %q", i, v.Maint[i], w.Maint[i])
		}
	}
	for i := range v.Ghosts {
		if v.Ghosts[i] != w.Ghosts[i] {
			return fmt.Sprintf("ghost spans of the maintainer on slot %d: %d != %d", i, v.Ghosts[i], w.Ghosts[i])
		}
	}
	for i := range v.DM {
		if v.DM[i] != w.DM[i] {
			return fmt.Sprintf("dispatcher manager on slot %d (its owner): %q != %q", i, v.DM[i], w.DM[i])
		}
	}
	if a, b := strings.Join(v.Disp, " "), strings.Join(w.Disp, " "); a != b {
		return fmt.Sprintf("dispatchers: [%s] != [%s]", a, b)
	}
	return ""
}

// KindName is the heartbeatpb name of m's kind ("ScheduleDispatcherRequest",
// "HeartBeatRequest(status)", ...), for mappings that match messages by kind.
func (m Msg) KindName() string { return msgNames[m.Kind] }

// ToCoordinator reports whether m is addressed to the coordinator (and not
// to a node's maintainer manager or dispatcher manager).
func (m Msg) ToCoordinator() bool { return isCoord(m.Dst) }

// DstSlot is the node slot m is addressed to (meaningless when
// ToCoordinator).
func (m Msg) DstSlot() uint8 { return slotOf(m.Dst) }

// DispatcherSlot is the node slot of dispatcher id, if it exists.
func (s *State) DispatcherSlot(id uint8) (uint8, bool) {
	if d := s.disp(id); d != nil {
		return d.Node, true
	}
	return 0, false
}

// IdentOf is the identity of incarnation inc of slot, as NodeName renders it.
func IdentOf(slot, inc uint8) uint8 { return ident(slot, inc) }

// FromCoordinator reports whether m was sent by the coordinator.
func (m Msg) FromCoordinator() bool { return isCoord(m.Src) }

// SrcSlot is the node slot m was sent from (meaningless when
// FromCoordinator).
func (m Msg) SrcSlot() uint8 { return slotOf(m.Src) }

// SpanTable is the table of the span that a, a maintainer-move or
// maintainer-split, names (its Arg is a span key: the table and the part).
func (a Action) SpanTable() uint8 { return keyTable(a.Arg) }

// SplitHasTargets reports whether a, a maintainer-split, names target nodes
// (aligned with the split result or not) rather than none.
func (a Action) SplitHasTargets() bool { return a.Arg2&3 != splitNoTargets }

// InFlight lists the messages in flight, grouped by channel, in send order
// within a channel. The slice aliases s: read it, do not keep it past a
// change to s.
func (s *State) InFlight() []Msg { return s.Net[:s.nmsgs()] }

// StatusReport is the channel of the periodic MaintainerStatus that the
// maintainer on slot sends to the current coordinator, as a Msg without
// payload (Kind, Src, Dst): the maintainer sends one at its next tick
// whether or not one is in flight now.
func (s *State) StatusReport(slot uint8) Msg {
	return Msg{Kind: mStatus, Src: s.Ident(slot), Dst: s.coordID()}
}

// IsCreate reports whether m is a ScheduleDispatcherRequest that creates a
// dispatcher (and not one that removes it).
func (m Msg) IsCreate() bool { return m.Kind == mSchedule && m.A == schedCreate }

// CreateQueuedFor reports whether a Create addressed to slot dst is in flight.
func (s *State) CreateQueuedFor(dst uint8) bool {
	for i, n := 0, s.nmsgs(); i < n; i++ {
		if m := &s.Net[i]; m.Dst != coordSlot && slotOf(m.Dst) == dst && m.IsCreate() {
			return true
		}
	}
	return false
}

// TableCreated reports whether table t exists (initially or by a DDL).
func (s *State) TableCreated(t int) bool { return s.TableT[t] != none }

// IsMerge reports whether m is a MergeDispatcherRequest.
func (m Msg) IsMerge() bool { return m.Kind == mMerge }

// StatusName is the component status a HeartBeatRequest(status) carries
// ("Working", "Stopped", ...), "" for other messages.
func (m Msg) StatusName() string {
	if m.Kind != mDispStatus {
		return ""
	}
	return statusName(m.B)
}

// StatusQueued reports whether a HeartBeatRequest(status) with component
// status state (as StatusName renders it) from identity src's dispatcher
// manager to slot dst's maintainer is in flight.
func (s *State) StatusQueued(src, dst uint8, state string) bool {
	for i, n := 0, s.nmsgs(); i < n; i++ {
		if m := &s.Net[i]; m.Kind == mDispStatus && m.Src == src && m.Dst != coordSlot && slotOf(m.Dst) == dst && m.StatusName() == state {
			return true
		}
	}
	return false
}

// WorkingDispatchers counts the Working dispatchers of table t (any span
// part) on running nodes, as v.Disp lists them (DispView's rendering).
func (v View) WorkingDispatchers(t int) int {
	table := "t" + strconv.Itoa(t)
	n := 0
	for _, d := range v.Disp {
		i, j := strings.IndexByte(d, '/'), strings.LastIndexByte(d, '/')
		if i < 0 || j <= i || d[j+1:] != "Working" {
			continue
		}
		if part := d[i+1 : j]; strings.TrimRight(part, PartLeft+PartRight) == table {
			n++
		}
	}
	return n
}

// ActiveMaintainers counts the running nodes whose maintainer of the
// changefeed is bootstrapped, neither removal-only nor removing nor removed.
func (v View) ActiveMaintainers() int {
	active := MaintView(false, true, false, false)
	n := 0
	for _, m := range v.Maint {
		if m == active {
			n++
		}
	}
	return n
}

// Checkpoint is the coordinator's stored checkpoint and the upstream's
// resolved ts, in the model's timestamps (1..TsMax). The View leaves both
// out: they compare with the implementation's only as an order.
func (s *State) Checkpoint() (stored, upstream int) { return int(s.Coord.Ckpt), int(s.UpTs) }

// MsgKind is the message kind KindName renders as name, if there is one.
func MsgKind(name string) (uint8, bool) {
	for k, n := range msgNames {
		if n == name && n != "" {
			return uint8(k), true
		}
	}
	return 0, false
}
