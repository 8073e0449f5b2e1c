package model

import (
	"bytes"

	"cdcspec/search"
)

// Symmetry reduction (search.Symmetric). The node slots 1..Nodes-1 are
// interchangeable: slot 0 hosts the coordinator and never crashes, the
// others start alike and have the same fault budget. So a configuration of
// three nodes has a group of two; the standard ones (two nodes) have none.
//
// Tables are not interchangeable, although the tables at creation start
// alike: a bootstrapping maintainer allocates their DispatcherIDs in table
// order (maintainer.go), dispatchers are kept and reported in ID order, and
// that order reaches the network (a complete status lists them in it), so
// swapping two tables does not commute with a step (TestSymmetryCommutes
// fails with tables in the group). perm still maps table fields, so that
// the group can grow to tables once the model allocates IDs otherwise.
//
// A permutation g of slots and tables maps a state s to g(s) by moving
// every node-indexed and table-indexed part and renaming every field that
// names a slot, an identity (slot | incarnation<<2) or a table, then
// restoring the canonical form (canonicalize: spans sort by table, the
// network groups channels by sender and receiver). The model is symmetric:
// g maps the enabled actions of s to those of g(s), the successor of s by a
// to the successor of g(s) by g(a), and keeps every safety verdict
// (TestSymmetryCommutes checks all three on random walks). The search keeps
// the representative of each orbit: the g(s) with the smallest encoding.
//
// Liveness is judged from representatives: the fair schedule orders
// actions by slot and table (actKey), so it is one fair schedule of the
// orbit, the same for all its members, and the story of a liveness
// counterexample maps that schedule back to the names of the path's end
// (UnpermuteAction). Stories always use the original names: the path is
// re-derived from the concrete initial state.
//
// A new State field must be handled here. symmetryRoles lists every field
// of State by path with its role, and TestSymmetryFieldsListed fails on a
// field that is not listed: a field that holds
//   - a node slot, an identity, a slot+1 or a bitmask of slots, or that is
//     an array indexed by slot: permute it in permute (and list its role);
//   - a table ID or an array indexed by table: likewise;
//   - a message payload that names a node or a table for some kinds: map
//     it in permuteMsg for those kinds;
//   - nothing node- or table-specific (a ts, a count, an epoch, a
//     DispatcherID): list it as roleNone.
//
// If the new behaviour singles out a slot or a table (a deterministic
// choice by index, a fault allowed on one slot only), the part is no
// longer interchangeable: shrink the group in newSymmetry.

// perm is one element of the symmetry group.
type perm struct {
	slot  [MaxNodes + 1]uint8  // slot -> slot; index coordSlot maps to itself
	table [MaxTables + 1]uint8 // table -> table; 0 (the trigger) maps to itself
}

func identityPerm() perm {
	var p perm
	for i := range p.slot {
		p.slot[i] = uint8(i)
	}
	for i := range p.table {
		p.table[i] = uint8(i)
	}
	return p
}

func (p *perm) inverse() perm {
	var q perm
	for i, j := range p.slot {
		q.slot[j] = uint8(i)
	}
	for i, j := range p.table {
		q.table[j] = uint8(i)
	}
	return q
}

// id maps an identity (slot | inc<<2), leaving none alone.
func (p *perm) id(id uint8) uint8 {
	if id == none {
		return none
	}
	return id&^3 | p.slot[id&3]
}

// tab maps a table ID, leaving none and out-of-range values alone.
func (p *perm) tab(t uint8) uint8 {
	if int(t) < len(p.table) {
		return p.table[t]
	}
	return t
}

// key maps a span key (table | part<<2, split.go).
func (p *perm) key(k uint8) uint8 { return p.tab(keyTable(k)) | k&^3 }

// mask maps a bitmask of slots.
func (p *perm) mask(m uint8) uint8 {
	var out uint8
	for i := 0; i < MaxNodes; i++ {
		if m&(1<<i) != 0 {
			out |= 1 << p.slot[i]
		}
	}
	return out | m&^(1<<MaxNodes-1)
}

// tabMask maps a bitmask of tables (bit 0: the table trigger).
func (p *perm) tabMask(m uint8) uint8 {
	var out uint8
	for i := 0; i <= MaxTables && i < 8; i++ {
		if m&(1<<i) != 0 {
			out |= 1 << p.table[i]
		}
	}
	return out
}

// slotOf maps a slot, leaving out-of-range values alone.
func (p *perm) slotOf(v uint8) uint8 {
	if int(v) < len(p.slot) {
		return p.slot[v]
	}
	return v
}

// slot1 maps a slot+1 field (0 = none).
func (p *perm) slot1(v uint8) uint8 {
	if v == 0 {
		return 0
	}
	return p.slotOf(v-1) + 1
}

// symmetry is the group of a configuration: every permutation of its
// interchangeable slots and tables, the identity first.
type symmetry struct {
	group []perm
	inv   []perm
}

func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := append(append(append([]int{}, p[:i]...), n-1), p[i:]...)
			out = append(out, q)
		}
	}
	return out
}

// newSymmetry builds the group of cfg.
func newSymmetry(cfg *Config) *symmetry {
	nodes := cfg.Nodes - 1 // slots 1..Nodes-1
	tables := 0            // none: see the file's comment
	sy := &symmetry{}
	for _, np := range permutations(nodes) {
		for _, tp := range permutations(tables) {
			p := identityPerm()
			for i, j := range np {
				p.slot[1+i] = uint8(1 + j)
			}
			for i, j := range tp {
				p.table[1+i] = uint8(1 + j)
			}
			sy.group = append(sy.group, p)
			sy.inv = append(sy.inv, p.inverse())
		}
	}
	// identity first (permutations lists it first already; keep the
	// contract explicit)
	for i := range sy.group {
		if sy.group[i] == identityPerm() {
			sy.group[0], sy.group[i] = sy.group[i], sy.group[0]
			sy.inv[0], sy.inv[i] = sy.inv[i], sy.inv[0]
			break
		}
	}
	return sy
}

// represent replaces *s by the smallest g(s) over the group and returns
// the index of g.
func (sy *symmetry) represent(s *State) int {
	best, bi := *s, 0
	bb := best.Bytes()
	for i := 1; i < len(sy.group); i++ {
		t := permute(s, &sy.group[i])
		if bytes.Compare(t.Bytes(), bb) < 0 {
			best, bi = t, i
		}
	}
	*s = best
	return bi
}

// permute returns g(s) in canonical form.
func permute(s *State, g *perm) State {
	var t State
	t = *s
	for i := 0; i < MaxNodes; i++ {
		j := g.slot[i]
		t.Inc[j], t.NodeSt[j] = s.Inc[i], s.NodeSt[i]
		t.Maint[j], t.DMs[j] = s.Maint[i], s.DMs[i]
		t.MgrCoord[j] = s.MgrCoord[i] // a coordinator identity: no slot to map
		t.Coord.BootEp[j], t.Coord.BootCk[j] = s.Coord.BootEp[i], s.Coord.BootCk[i]
	}
	for i := 0; i <= MaxTables; i++ {
		j := g.table[i]
		t.TableT[j], t.Flushed[j], t.FlushedPart[j] = s.TableT[i], s.Flushed[i], s.FlushedPart[i]
	}
	c := &t.Coord
	c.Node, c.OpNode, c.OpOrigin = g.id(c.Node), g.id(c.OpNode), g.id(c.OpOrigin)
	c.BootWait, c.BootHas = g.mask(c.BootWait), g.mask(c.BootHas)
	t.Hand.Origin = g.id(t.Hand.Origin)
	for i := range t.Maint {
		// Every field is mapped whether or not its part exists: the maps
		// are bijections, so leftovers of a removed part stay consistent.
		m := &t.Maint[i]
		m.Bootstrapper, m.Answered, m.CloseAcked = g.mask(m.Bootstrapper), g.mask(m.Answered), g.mask(m.CloseAcked)
		m.Err = g.slot1(m.Err)
		wm, pend, boot := m.WM, m.PendWM, m.Boot
		for k := 0; k < MaxNodes; k++ {
			m.WM[g.slot[k]] = wm[k]
			m.PendWM[g.slot[k]] = pend[k]
			m.Boot[g.slot[k]] = boot[k]
		}
		m.Bar.Need, m.Bar.Rep, m.Bar.Writer = g.tabMask(m.Bar.Need), g.tabMask(m.Bar.Rep), g.tab(m.Bar.Writer)
		for k := range m.Spans {
			sp := &m.Spans[k]
			sp.Table, sp.Node, sp.OpDest = g.tab(sp.Table), g.id(sp.Node), g.id(sp.OpDest)
		}
		for k := range m.Boot {
			b := &m.Boot[k]
			for x := range b.D {
				b.D[x].Table = g.tab(b.D[x].Table)
			}
			for x := range b.J {
				b.J[x].Table = g.tab(b.J[x].Table)
			}
		}
	}
	for i := range t.DMs {
		d := &t.DMs[i]
		d.Owner = g.id(d.Owner)
		d.NoneTable = g.tab(d.NoneTable)
		for x := range d.J {
			d.J[x].Table = g.tab(d.J[x].Table)
		}
	}
	for i := range t.Disp {
		d := &t.Disp[i]
		d.Node, d.Table = g.slotOf(d.Node), g.tab(d.Table)
	}
	n := t.nmsgs()
	for i := 0; i < n; i++ {
		t.Net[i] = g.msg(t.Net[i])
	}
	// the network groups channels in chanLess order, send order within one
	for i := 1; i < n; i++ {
		for j := i; j > 0 && chanLess(&t.Net[j], &t.Net[j-1]); j-- {
			t.Net[j], t.Net[j-1] = t.Net[j-1], t.Net[j]
		}
	}
	t.DropTab, t.WrTable, t.WrNode = g.tab(t.DropTab), g.tab(t.WrTable), g.id(t.WrNode)
	if t.ErrDrop.Set {
		t.ErrDrop.Node = g.id(t.ErrDrop.Node)
	}
	canonicalize(&t, nil)
	return t
}

// msg maps a message: its endpoints and the payload fields that name a
// slot or a table (net.go lists the payload of each kind).
func (p *perm) msg(m Msg) Msg {
	m.Src, m.Dst = p.id(m.Src), p.id(m.Dst)
	switch m.Kind {
	case mStatus:
		m.D = p.slot1(m.D) // error source slot+1
	case mSchedule:
		m.C = p.key(m.C)
	case mBlockNone:
		m.A = p.tab(m.A)
	case mBlockStatus, mMerge:
		m.D = p.tab(m.D)
	}
	return m
}

// action maps an action of s to the same action of g(s).
func (p *perm) action(a Action) Action {
	switch a.Kind {
	case ADeliver, ADrop, ADuplicate:
		a.Msg = p.msg(a.Msg)
	case ACrash, ADetect, ARestart, ACoordSchedule, AMaintTick, AMaintCleanup, ADMTick, ADMComplete, ACoordMove:
		a.Node = p.slotOf(a.Node)
	case AMaintApplyWM:
		a.Node, a.Arg = p.slotOf(a.Node), p.slotOf(a.Arg)
	case AMaintSchedule, AMaintMove:
		a.Node, a.Arg, a.Arg2 = p.slotOf(a.Node), p.key(a.Arg), p.slotOf(a.Arg2)
	case ASplit:
		a.Node, a.Arg, a.Arg2 = p.slotOf(a.Node), p.key(a.Arg), a.Arg2&3|p.slotOf(a.Arg2>>2)<<2
	case AMerge, AMergePostFinish:
		a.Node, a.Arg = p.slotOf(a.Node), p.tab(a.Arg)
	case AOpPostFinish:
		a.Node, a.Arg = p.slotOf(a.Node), p.key(a.Arg)
	}
	// ASinkError, AFastFail, ADispClosed name a DispatcherID, which no
	// permutation changes; the upstream's and the puller's actions, the
	// client's (APause, AResume, ARemove) and ACoordFailover (slot 0, which
	// the group fixes) name nothing.
	return a
}

// Field roles for TestSymmetryFieldsListed.
const (
	roleNone       = "none"        // nothing node- or table-specific
	roleSlotArray  = "slot-array"  // array indexed by slot: moved
	roleTableArray = "table-array" // array indexed by table: moved
	roleIdentity   = "identity"    // slot | inc<<2, or none
	roleSlot       = "slot"
	roleSlot1      = "slot+1"    // slot+1, 0 = none
	roleSlotMask   = "slot-mask" // bitmask of slots
	roleTable      = "table"
	roleTableMask  = "table-mask" // bitmask of tables, bit 0 the trigger
	roleMsg        = "message"    // endpoints are identities; payload per kind (perm.msg)
)

// symmetryRoles names the role of every State field, by path ("[]" for an
// array element). permute handles each as its role says.
var symmetryRoles = map[string]string{
	"Inc": roleSlotArray, "NodeSt": roleSlotArray,
	"UpTs": roleNone, "PullTs": roleNone, "Stalled": roleNone,
	"TableT": roleTableArray, "NextID": roleNone,
	"Crashes": roleNone, "Drops": roleNone, "Dups": roleNone, "SinkErrs": roleNone,
	"Stalls": roleNone, "DDLs": roleNone, "Restarts": roleNone, "Overflow": roleNone,
	"FastFails": roleNone, "ClientOps": roleNone, "CoordFails": roleNone, "MaintMoves": roleNone,
	"Coord.OpOrigin": roleIdentity, "Coord.OpOrigEpoch": roleNone, "Coord.OpPh": roleNone, "Coord.OpOrigGone": roleNone,
	"Hand.Active": roleNone, "Hand.Removing": roleNone, "Hand.Origin": roleIdentity, "Hand.Epoch": roleNone,
	"Hand.HasFinal": roleNone, "Hand.Final": roleNone, "Hand.FinalEpoch": roleNone,
	"Coord.OpRemove": roleNone, "Maint[].ErrFast": roleNone, "Maint[].PendWM": roleSlotArray,
	"DMs[].ErrFast": roleNone, "ErrDrop.Fast": roleNone,
	"Moves": roleNone, "Splits": roleNone, "Merges": roleNone, "FlushedPart": roleTableArray, "FlushedPart[][]": roleNone,
	"Maint[].Spans[].Part": roleNone, "Maint[].Boot[].D[].Part": roleNone, "Disp[].Part": roleNone, "BlkT": roleNone, "DropTab": roleTable, "DDLWrit": roleNone, "WrNode": roleIdentity,
	"WrTable": roleTable, "DDLTwice": roleNone,
	"Maint[].Bar.T": roleNone, "Maint[].Bar.Need": roleTableMask, "Maint[].Bar.Rep": roleTableMask,
	"Maint[].Bar.Chk": roleNone, "Maint[].Bar.Sel": roleNone, "Maint[].Bar.Adv": roleNone,
	"Maint[].Bar.TrigRel": roleNone, "Maint[].Bar.Writer": roleTable, "Maint[].TrigCk": roleNone,
	"Maint[].Boot[].TrigBlk": roleNone, "Maint[].Boot[].D[].Blk": roleNone, "Disp[].Blk": roleNone,

	"Coord.State": roleNone, "Coord.Repl": roleNone, "Coord.Node": roleIdentity, "Coord.Epoch": roleNone,
	"Coord.Ckpt": roleNone, "Coord.BootDone": roleNone, "Coord.Retrying": roleNone, "Coord.Retries": roleNone, "Coord.Restarting": roleNone,
	"Coord.Baseline": roleNone, "Coord.RetryWait": roleNone, "Coord.Op": roleNone, "Coord.OpNode": roleIdentity,
	"Coord.OpEpoch": roleNone,
	"Coord.Booting": roleNone, "Coord.BootWait": roleSlotMask, "Coord.BootHas": roleSlotMask, "Coord.Prog": roleNone,
	"Coord.BootEp": roleSlotArray, "Coord.BootCk": roleSlotArray, "MgrCoord": roleSlotArray,

	"Maint":          roleSlotArray,
	"Maint[].Exists": roleNone, "Maint[].RemovalOnly": roleNone, "Maint[].Bootstrapped": roleNone,
	"Maint[].Removing": roleNone, "Maint[].Removed": roleNone, "Maint[].StopReported": roleNone, "Maint[].Epoch": roleNone,
	"Maint[].StartTs": roleNone, "Maint[].Committed": roleNone, "Maint[].Reported": roleNone,
	"Maint[].Bootstrapper": roleSlotMask, "Maint[].Answered": roleSlotMask, "Maint[].CloseAcked": roleSlotMask,
	"Maint[].Err": roleSlot1, "Maint[].TriggerID": roleNone, "Maint[].WM": roleSlotArray,
	"Maint[].Spans[].ID": roleNone, "Maint[].Spans[].Table": roleTable, "Maint[].Spans[].State": roleNone,
	"Maint[].Spans[].Node": roleIdentity, "Maint[].Spans[].Ckpt": roleNone, "Maint[].Spans[].Op": roleNone,
	"Maint[].Spans[].OpDest": roleIdentity, "Maint[].Spans[].OpPh": roleNone, "Maint[].Spans[].OpAbs": roleNone,
	"Maint[].Boot":              roleSlotArray,
	"Maint[].Boot[].TrigCkpt":   roleNone,
	"Maint[].Boot[].D[].ID":     roleNone,
	"Maint[].Boot[].D[].Table":  roleTable,
	"Maint[].Boot[].D[].Status": roleNone,
	"Maint[].Boot[].D[].Ckpt":   roleNone,
	"Maint[].Boot[].J[].ID":     roleNone,
	"Maint[].Boot[].J[].Table":  roleTable,
	"Maint[].Boot[].J[].Action": roleNone,
	"Maint[].Boot[].J[].OpType": roleNone,
	"DMs":                       roleSlotArray,
	"DMs[].Exists":              roleNone,
	"DMs[].Owner":               roleIdentity,
	"DMs[].OwnerEpoch":          roleNone,
	"DMs[].Err":                 roleNone,
	"DMs[].NoneT":               roleNone,
	"DMs[].NoneTable":           roleTable,
	"DMs[].AckedT":              roleNone,
	"DMs[].ClosedEpoch":         roleNone,
	"DMs[].J[].ID":              roleNone,
	"DMs[].J[].Table":           roleTable,
	"DMs[].J[].Action":          roleNone,
	"DMs[].J[].OpType":          roleNone,
	"Disp[].ID":                 roleNone,
	"Disp[].Node":               roleSlot,
	"Disp[].Table":              roleTable,
	"Disp[].St":                 roleNone,
	"Disp[].StartTs":            roleNone,
	"Disp[].Ckpt":               roleNone,
	"Disp[].SinkErr":            roleNone,
	"Net[]":                     roleMsg,
	"Pull.Down":                 roleNone,
	"Pull.Worker":               roleNone,
	"Pull.Receiver":             roleNone,
	"Pull.Cancelled":            roleNone,
	"Pull.Region":               roleNone,
	"Pull.Started":              roleNone,
	"Pull.WorkerErr":            roleNone,
	"Flushed":                   roleTableArray,
	"ErrDrop.Set":               roleNone,
	"ErrDrop.Node":              roleIdentity,
	"ErrDrop.Epoch":             roleNone,
	"ErrDrop.Reported":          roleNone,
	"ErrDrop.Stored":            roleNone,
}

// The model as a search.Symmetric system.

var _ search.Symmetric[State, Action] = system{}

// Represent replaces *s by its orbit's representative.
func (m system) Represent(s *State) search.Perm {
	if m.sym == nil || len(m.sym.group) < 2 {
		return 0
	}
	return search.Perm(m.sym.represent(s))
}

// UnpermuteAction maps an action of the representative g(s) back to s.
func (m system) UnpermuteAction(p search.Perm, a Action) Action {
	if m.sym == nil || p == 0 {
		return a
	}
	return m.sym.inv[p].action(a)
}

// SymmetryGroup is the number of permutations of the configuration's group.
func (m system) SymmetryGroup() int {
	if m.sym == nil {
		return 1
	}
	return len(m.sym.group)
}
