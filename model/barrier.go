package model

import (
	"fmt"
	"sort"

	"cdcspec/spec"
)

// The blocking DDL barrier (reference A.7; TiCDC maintainer/barrier.go,
// barrier_event.go, downstreamadapter/dispatcher/basic_dispatcher.go at
// b813e76f9). The upstream commits at most one blocking DDL (or syncpoint),
// of the kind Config.Barrier names, at the next ts (ABlockDDL).
//
// Dispatcher side: a dispatcher the DDL influences (its table is blocked and
// it started below the DDL) flushes its rows below T, reports WAITING
// (re-sent every heartbeat until it gets an action), waits for Write or
// Pass, writes (Write) or skips (Pass) the DDL, reports DONE and resumes;
// its checkpoint stays at T-1 until its next advance. An action for a DDL it
// already passed (or started above) is answered with DONE again; one for a
// DDL it has not reached is ignored. The table trigger handles CREATE TABLE DDLs below the
// barrier first, and holds a DB/All event's WAITING until every such
// CREATE TABLE was ACKed (#3802; the catalogued bug
// db-ddl-before-table-ddls-acked reports it at once).
//
// Maintainer side: one block event (Maint.Bar), keyed by its commitTs. The
// range checker is a mask of tables (bit 0: the trigger): the blocked
// tables of a normal DDL; for DB and All, built from the span controller's
// spans when the trigger reports. Only reports from replicating spans and
// the trigger count. Once covered: the writer is the trigger for DB/All
// and whenever the trigger reported, else the last reporter; Write is
// re-sent to it until it reports DONE; then a schedule-changing DDL (drop,
// truncate) is scheduled, and Pass is re-sent to every influenced
// dispatcher, the writer included (#3970; the catalogued bug
// writer-not-passed-after-move skips it), until every one reported DONE;
// the event is deleted. Reports of dispatchers that vanished or stopped
// replicating are dropped and the coverage re-checked. A bootstrap restores
// the event from the WAITING stages in the responses; an event nobody
// completes is advanced once a related span's checkpoint passed it
// (checkBlockedDispatchers).

// Dispatcher block stages (Disp.Blk, SnapDisp.Blk).
const (
	blkWaiting = 1 // reported WAITING, waiting for Write or Pass
	blkPassed  = 2 // wrote or passed the DDL
)

// Block status stages (heartbeatpb.BlockStage) and actions (heartbeatpb.Action) in messages.
const (
	stageWaiting = 1
	stageDone    = 3

	actWrite = 1
	actPass  = 2
)

// BarEv is the barrier's block event (BarrierEvent). Masks are over table
// indices; bit 0 is the table trigger.
type BarEv struct {
	T       uint8 // commitTs; 0: no event
	Need    uint8 // range checker: tables that must report
	Rep     uint8 // reported tables (reportedDispatchers)
	Chk     bool  // the range checker exists (DB/All: once the trigger reported)
	Sel     bool  // selected: a writer was chosen
	Adv     bool  // writerDispatcherAdvanced: the writer reported DONE (and scheduling ran)
	TrigRel bool  // tableTriggerDispatcherRelated
	Writer  uint8 // table index of the writer (0: trigger); none before selection
}

// barrierKind describes one Config.Barrier.
type barrierKind struct {
	name      string
	reason    string // the DDL, for events and stories
	influence string // spec.InfluenceNormal, InfluenceDB, InfluenceAll
	sync      bool   // a syncpoint
	blocked   uint8  // normal: the blocked tables (bit 0: the trigger)
	drop      uint8  // the table it drops, 0: none
	add       bool   // it adds a new table (truncate): table Tables+DDLTables+1
	minTables int
}

var barrierKinds = []barrierKind{
	// An ALTER on a partitioned table whose partitions are tables 1 and 2:
	// normal influence without the table trigger (schemastore
	// buildDDLEventForNormalDDLOnSingleTable), so the writer is a partition's
	// dispatcher.
	{name: "normal", reason: "alter partitioned table (partitions t1, t2)", influence: spec.InfluenceNormal, blocked: 1<<1 | 1<<2, minTables: 2},
	{name: "drop", reason: "drop table t1", influence: spec.InfluenceNormal, blocked: 1 | 1<<1, drop: 1, minTables: 1},
	{name: "truncate", reason: "truncate table t1", influence: spec.InfluenceNormal, blocked: 1 | 1<<1, drop: 1, add: true, minTables: 1},
	{name: "rename", reason: "rename tables t1, t2", influence: spec.InfluenceNormal, blocked: 1 | 1<<1 | 1<<2, minTables: 2},
	{name: "db", reason: "alter database", influence: spec.InfluenceDB},
	{name: "syncpoint", reason: "syncpoint", influence: spec.InfluenceAll, sync: true},
}

// BarrierKinds lists the values of Config.Barrier.
func BarrierKinds() []string {
	out := make([]string, len(barrierKinds))
	for i, k := range barrierKinds {
		out[i] = k.name
	}
	return out
}

func barrierOf(cfg *Config) *barrierKind {
	if cfg.Barrier == "" {
		return nil
	}
	for i := range barrierKinds {
		if barrierKinds[i].name == cfg.Barrier {
			return &barrierKinds[i]
		}
	}
	return nil
}

func validateBarrier(c *Config) error {
	if c.Barrier == "" {
		return nil
	}
	k := barrierOf(c)
	switch {
	case k == nil:
		return fmt.Errorf("config %q: unknown barrier %q (known: %v)", c.Name, c.Barrier, BarrierKinds())
	case c.Tables < k.minTables:
		return fmt.Errorf("config %q: barrier %q needs at least %d tables at creation, got %d", c.Name, c.Barrier, k.minTables, c.Tables)
	case k.add && c.Tables+c.DDLTables+1 > MaxTables:
		return fmt.Errorf("config %q: barrier %q adds a table: tables (%d) + ddl tables (%d) + 1 must be <= %d", c.Name, c.Barrier, c.Tables, c.DDLTables, MaxTables)
	}
	return nil
}

func allInfluence(k *barrierKind) bool { return k.influence != spec.InfluenceNormal }

func bit(t uint8) uint8 { return 1 << t }

// blockedMask: the tables the committed DDL blocks (bit 0: the trigger).
// DB and All block every table that exists just before it.
func blockedMask(cfg *Config, s *State) uint8 {
	k := barrierOf(cfg)
	if k == nil || s.BlkT == 0 {
		return 0
	}
	if !allInfluence(k) {
		return k.blocked
	}
	m := uint8(1)
	for t := uint8(1); t <= MaxTables; t++ {
		if s.TableT[t] != none && s.TableT[t] < s.BlkT {
			m |= bit(t)
		}
	}
	return m
}

// influenced: d must still block at the DDL: its table is blocked, it
// started below the DDL and has not passed it.
func influenced(cfg *Config, s *State, d *Disp) bool {
	return s.BlkT != 0 && blockedMask(cfg, s)&bit(d.Table) != 0 && d.StartTs < s.BlkT && d.Blk != blkPassed
}

// dropped: the barrier DDL dropped table t.
func dropped(s *State, t uint8) bool { return s.DropTab != 0 && s.DropTab == t }

// newBarrierTable is the table a truncate adds.
func newBarrierTable(cfg *Config) uint8 { return uint8(cfg.Tables + cfg.DDLTables + 1) }

// --- upstream ---

func blockDDLEnabled(cfg *Config, s *State) bool {
	return cfg.Barrier != "" && s.BlkT == 0 && !s.Stalled && s.UpTs < cfg.TsMax
}

// commitBlockDDL: the upstream commits the barrier DDL at the next ts.
func commitBlockDDL(cfg *Config, s *State, e *emitter) {
	k := barrierOf(cfg)
	s.UpTs++
	if !cfg.Puller {
		s.PullTs = s.UpTs
	}
	T := s.UpTs
	s.BlkT = T
	ev := spec.Event{Kind: spec.DDLCommitted, Checkpoint: uint64(T), Influence: k.influence, SyncPoint: k.sync, Reason: k.reason}
	if !allInfluence(k) {
		ev.Tables = maskTables(k.blocked)
	}
	if k.drop != 0 {
		s.DropTab = k.drop
		ev.Dropped = []int64{int64(k.drop)}
	}
	if k.add {
		nt := newBarrierTable(cfg)
		s.TableT[nt] = T
		setFlushed(s, nt, T)
		ev.Added = []int64{int64(nt)}
	}
	if e != nil {
		e.add(ev)
	}
}

func maskTables(m uint8) []int64 {
	var out []int64
	for t := uint8(0); t <= MaxTables; t++ {
		if m&bit(t) != 0 {
			out = append(out, int64(t))
		}
	}
	return out
}

// --- dispatcher side ---

// tableAtDDL: a table dispatcher the DDL influences has reached it (the
// resolved ts passed the DDL's); it flushes below it and blocks once.
func tableAtDDL(cfg *Config, s *State, d *Disp) bool {
	return influenced(cfg, s, d) && s.BlkT <= s.PullTs
}

// trigBlockNow: the trigger reached the DDL, handled every CREATE TABLE
// below it, and (unless the bug) no CREATE TABLE awaits its ACK for a
// DB/All event (holdBlockEvent, #3802).
func trigBlockNow(cfg *Config, s *State, d *Disp) bool {
	if !influenced(cfg, s, d) || d.Blk != 0 || s.BlkT > s.PullTs {
		return false
	}
	if t, T := pendingDDL(cfg, s, d); t != 0 && T < s.BlkT {
		dm := &s.DMs[d.Node]
		if dm.NoneT != T && dm.AckedT != T {
			return false // the CREATE TABLE below comes first
		}
	}
	if allInfluence(barrierOf(cfg)) && s.DMs[d.Node].NoneT != 0 && !cfg.bug(spec.BugDBDDLBeforeTableDDLsAcked) {
		return false // "dispatcher hold block event"
	}
	return true
}

// blockAt: d flushes its rows below the DDL and reports WAITING.
func blockAt(cfg *Config, s *State, d *Disp, e *emitter) {
	T := s.BlkT
	if d.Table != 0 {
		flushTo(s, d, T-1, e)
	} else {
		d.Ckpt = max(d.Ckpt, min(triggerTarget(cfg, s, d), T-1))
	}
	d.Blk = blkWaiting
	sendBlockStatus(cfg, s, d, stageWaiting, e)
}

// flushTo advances a table dispatcher's checkpoint to ts (its rows up to ts
// reached the sink).
func flushTo(s *State, d *Disp, ts uint8, e *emitter) {
	if ts <= d.Ckpt {
		return
	}
	d.Ckpt = ts
	noteFlushed(s, d)
	if e != nil {
		e.add(spec.Event{Kind: spec.DataFlushed, Node: NodeName(s.Ident(d.Node)), Dispatcher: dispName(d.ID), Span: partSpan(d.Table, d.Part), Checkpoint: uint64(d.Ckpt)})
	}
}

func stageName(st uint8) string {
	if st == stageDone {
		return spec.StageDone
	}
	return spec.StageWaiting
}

func sendBlockStatus(cfg *Config, s *State, d *Disp, stage uint8, e *emitter) {
	dm := &s.DMs[d.Node]
	node := s.Ident(d.Node)
	if e != nil {
		k := barrierOf(cfg)
		ev := spec.Event{Kind: spec.BlockStatusReported, Node: NodeName(node), Dispatcher: dispName(d.ID), Span: spec.WholeTable(int64(d.Table)),
			Checkpoint: uint64(s.BlkT), State: stageName(stage), Influence: k.influence, SyncPoint: k.sync}
		if !allInfluence(k) {
			ev.Tables = maskTables(k.blocked)
		}
		e.add(ev)
	}
	if dm.Owner != none {
		s.send(blockStatusMsg(s, d, stage))
	}
}

func blockStatusMsg(s *State, d *Disp, stage uint8) Msg {
	return Msg{Kind: mBlockStatus, Src: s.Ident(d.Node), Dst: s.DMs[d.Node].Owner, A: d.ID, B: stage, C: s.BlkT, D: d.Table}
}

// resendWaiting: the resend task re-sends every WAITING status until an
// action arrives (the model has no ACK: a selected event ignores re-sends).
func resendWaiting(s *State, slot uint8) {
	if s.DMs[slot].Owner == none {
		return
	}
	for i := range s.Disp {
		if d := &s.Disp[i]; d.ID != 0 && d.Node == slot && d.Blk == blkWaiting {
			s.send(blockStatusMsg(s, d, stageWaiting))
		}
	}
}

// dmHandleBlockAction: HeartBeatResponse with a DispatcherStatus action.
func dmHandleBlockAction(cfg *Config, s *State, m Msg, e *emitter) {
	slot := slotOf(m.Dst)
	dm := &s.DMs[slot]
	if !dm.Exists || (cfg.has(FeatDMFence) && dmFenced(dm, m)) {
		return
	}
	d := s.disp(m.B)
	if d == nil || d.Node != slot || m.C != s.BlkT {
		return
	}
	switch d.Blk {
	case blkWaiting:
		if e != nil {
			act := spec.ActionPass
			if m.A == actWrite {
				act = spec.ActionWrite
			}
			e.add(spec.Event{Kind: spec.BlockActionReceived, Node: NodeName(m.Dst), Dispatcher: dispName(d.ID), Checkpoint: uint64(m.C), State: act, SyncPoint: barrierOf(cfg).sync})
		}
		if m.A == actWrite {
			writeDDL(cfg, s, d, e)
		}
		d.Blk = blkPassed
		sendBlockStatus(cfg, s, d, stageDone, e)
	default:
		// An outdated action (offerDoneBlockStatus): a dispatcher past the
		// DDL reports DONE again; one that has not reached it ignores it.
		if d.Blk == blkPassed || d.StartTs >= s.BlkT || d.Ckpt >= s.BlkT {
			sendBlockStatus(cfg, s, d, stageDone, e)
		}
	}
}

// writeDDL: the sink executes the DDL. A second write while the first
// writer still runs breaks exactly-once (ghost DDLTwice).
func writeDDL(cfg *Config, s *State, d *Disp, e *emitter) {
	if s.DDLWrit > 0 && s.live(s.WrNode) {
		for i := range s.Disp {
			if o := &s.Disp[i]; o.ID != 0 && o.Table == s.WrTable && s.Ident(o.Node) == s.WrNode && o != d {
				s.DDLTwice = true
			}
		}
	}
	s.DDLWrit = min(2, s.DDLWrit+1)
	s.WrNode, s.WrTable = s.Ident(d.Node), d.Table
	if e != nil {
		e.add(spec.Event{Kind: spec.DDLWritten, Node: NodeName(s.Ident(d.Node)), Dispatcher: dispName(d.ID), Checkpoint: uint64(s.BlkT), SyncPoint: barrierOf(cfg).sync})
	}
}

// --- maintainer side ---

func (mt *Maint) spanTables() uint8 {
	var m uint8
	for j := range mt.Spans {
		if sp := &mt.Spans[j]; sp.ID != 0 {
			m |= bit(sp.Table)
		}
	}
	return m
}

func replicating(sp *SpanRep) bool { return sp != nil && sp.State == replReplicating }

// maintHandleBlockStatus is Barrier.HandleStatus for one TableSpanBlockStatus.
func maintHandleBlockStatus(cfg *Config, s *State, slot uint8, m Msg, e *emitter) {
	mt := &s.Maint[slot]
	k := barrierOf(cfg)
	if !mt.Bootstrapped || mt.Removing || k == nil || m.C != s.BlkT {
		return
	}
	table := uint8(0)
	if m.A != mt.TriggerID {
		sp := mt.spanByID(m.A)
		if !replicating(sp) {
			return // "Get block status from unexisted/unreplicating dispatcher, ignore it"
		}
		table = sp.Table
		sp.Ckpt = max(sp.Ckpt, m.C-1)
	}
	if m.B == stageDone {
		barrierEventDone(cfg, s, slot, table, e)
		return
	}
	barrierBlockState(cfg, s, slot, table, e)
}

func newBlockEvent(cfg *Config, s *State, slot, table uint8, e *emitter) {
	mt := &s.Maint[slot]
	k := barrierOf(cfg)
	mt.Bar = BarEv{T: s.BlkT, Writer: none}
	if !allInfluence(k) {
		mt.Bar.Need, mt.Bar.Chk = k.blocked, true
	}
	if e != nil {
		e.add(spec.Event{Kind: spec.BlockEventCreated, Node: NodeName(s.Ident(slot)), Dispatcher: barrierDispName(mt, table), Checkpoint: uint64(s.BlkT), SyncPoint: k.sync, Influence: k.influence})
	}
}

func barrierDispName(mt *Maint, table uint8) string {
	if table == 0 {
		return dispName(mt.TriggerID)
	}
	if sp := mt.spanByTable(table); sp != nil {
		return dispName(sp.ID)
	}
	return ""
}

// markReported is markDispatcherEventDone: the trigger's report builds a
// DB/All range checker from the spans.
func markReported(mt *Maint, table uint8) {
	ev := &mt.Bar
	ev.Rep |= bit(table)
	if !ev.Chk && table == 0 {
		ev.Need, ev.Chk = 1|mt.spanTables(), true
	}
}

func barrierBlockState(cfg *Config, s *State, slot, table uint8, e *emitter) {
	mt := &s.Maint[slot]
	ev := &mt.Bar
	if ev.T == 0 {
		newBlockEvent(cfg, s, slot, table, e)
	}
	if table == 0 {
		ev.TrigRel = true
	}
	if ev.Sel {
		checkEventFinish(cfg, s, slot, e) // already selected: only ACK
		return
	}
	markReported(mt, table)
	if !allReported(cfg, mt) {
		return
	}
	writer := table
	if allInfluence(barrierOf(cfg)) || ev.TrigRel {
		writer = 0
	}
	ev.Sel, ev.Writer, ev.Rep = true, writer, 0
	if cfg.bug(spec.BugNewTableScheduledAtSelection) && barrierOf(cfg).add {
		// #3443 (fixed by #3445): the new table's span is added when the
		// writer is selected, before the DDL is written. The pre-fix code
		// removed the dropped table then too (impl/ moves the whole
		// scheduleBlockEvent); the model moves only the add, the part
		// that lets the new table's rows reach the sink first.
		if nt := newBarrierTable(cfg); mt.spanByTable(nt) == nil {
			s.addSpan(mt, SpanRep{ID: s.allocID(), Table: nt, State: replAbsent, Node: none, Ckpt: ev.T})
		}
	}
	if e != nil {
		e.add(spec.Event{Kind: spec.BlockWriterSelected, Node: NodeName(s.Ident(slot)), Dispatcher: barrierDispName(mt, writer), Checkpoint: uint64(ev.T), Influence: barrierOf(cfg).influence})
	}
	sendWrite(cfg, s, slot)
}

// allReported is allDispatcherReported with its double check.
func allReported(cfg *Config, mt *Maint) bool {
	ev := &mt.Bar
	if !ev.Chk {
		return false
	}
	if ev.Need&^ev.Rep != 0 {
		return false
	}
	recheck := false
	for t := uint8(1); t <= MaxTables; t++ {
		if ev.Rep&bit(t) != 0 && !replicating(mt.spanByTable(t)) {
			ev.Rep &^= bit(t) // "unexisted/unreplicating dispatcher, remove it from barrier event"
			recheck = true
		}
	}
	if recheck && allInfluence(barrierOf(cfg)) {
		ev.Need = 1 | mt.spanTables()
	}
	return ev.Need&^ev.Rep == 0
}

func writerTarget(mt *Maint, slotID uint8, table uint8) (uint8, uint8) {
	if table == 0 {
		return mt.TriggerID, slotID
	}
	if sp := mt.spanByTable(table); sp != nil && sp.Node != none {
		return sp.ID, sp.Node
	}
	return 0, none
}

func sendWrite(cfg *Config, s *State, slot uint8) {
	mt := &s.Maint[slot]
	ev := &mt.Bar
	id, node := writerTarget(mt, s.Ident(slot), ev.Writer)
	if id == 0 {
		// "writer dispatcher not found": a normal event takes the first
		// blocked table's span as the writer.
		for t := uint8(1); t <= MaxTables; t++ {
			if ev.Need&bit(t) != 0 && mt.spanByTable(t) != nil {
				ev.Writer = t
				break
			}
		}
		return
	}
	s.send(Msg{Kind: mBlockAction, Src: s.Ident(slot), Dst: node, Epoch: mt.Epoch, A: actWrite, B: id, C: ev.T})
}

// barrierEventDone is handleEventDone.
func barrierEventDone(cfg *Config, s *State, slot, table uint8, e *emitter) {
	mt := &s.Maint[slot]
	ev := &mt.Bar
	if ev.T == 0 {
		return // "No block event found, ignore the event done message"
	}
	if ev.Sel && ev.Writer == table && !ev.Adv {
		scheduleBlockEvent(cfg, s, slot, e)
		ev.Adv = true
	}
	markReported(mt, table)
	checkEventFinish(cfg, s, slot, e)
}

// scheduleBlockEvent: drop the dropped table's span (remove operator), add
// the new table's span (absent, startTs = commitTs).
func scheduleBlockEvent(cfg *Config, s *State, slot uint8, e *emitter) {
	mt := &s.Maint[slot]
	k := barrierOf(cfg)
	if k.drop != 0 {
		if sp := mt.spanByTable(k.drop); sp != nil {
			if sp.State == replAbsent {
				*sp = SpanRep{}
			} else {
				sp.Op, sp.OpAbs, sp.OpDest, sp.OpPh = mopRemove, false, 0, 0
				sp.State = replScheduling
				if e != nil {
					e.add(spec.Event{Kind: spec.DispatcherOpStarted, Op: spec.OpRemove, Dispatcher: dispName(sp.ID), Span: spec.WholeTable(int64(sp.Table)), Node: NodeName(sp.Node)})
				}
				resendOp(cfg, s, slot, sp)
			}
		}
	}
	if k.add {
		nt := newBarrierTable(cfg)
		if mt.spanByTable(nt) == nil {
			s.addSpan(mt, SpanRep{ID: s.allocID(), Table: nt, State: replAbsent, Node: none, Ckpt: mt.Bar.T})
		}
	}
}

func checkEventFinish(cfg *Config, s *State, slot uint8, e *emitter) {
	mt := &s.Maint[slot]
	ev := &mt.Bar
	if !ev.Sel || !allReported(cfg, mt) {
		return
	}
	if e != nil {
		e.add(spec.Event{Kind: spec.BlockEventDone, Node: NodeName(s.Ident(slot)), Checkpoint: uint64(ev.T), SyncPoint: barrierOf(cfg).sync})
	}
	mt.Bar = BarEv{}
}

// barrierResend is Barrier.Resend on the maintainer's tick.
func barrierResend(cfg *Config, s *State, slot uint8, e *emitter) {
	mt := &s.Maint[slot]
	ev := &mt.Bar
	if ev.T == 0 {
		return
	}
	switch {
	case !ev.Sel:
		checkBlockedDispatchers(cfg, s, slot)
	case !ev.Adv:
		sendWrite(cfg, s, slot)
	default:
		sendPass(cfg, s, slot)
		checkEventFinish(cfg, s, slot, e)
	}
}

// checkBlockedDispatchers: a related span whose checkpoint passed the
// event means the writer already wrote it; advance the event.
func checkBlockedDispatchers(cfg *Config, s *State, slot uint8) {
	mt := &s.Maint[slot]
	ev := &mt.Bar
	rel := ev.Need
	if !ev.Chk {
		rel = 1 | mt.spanTables() // GetAllTasks includes the DDL span
	}
	if rel&1 != 0 && mt.TrigCk == trigCkPassed-trigCkBelow {
		ev.Sel, ev.Adv, ev.Rep = true, true, 0
		if !ev.Chk {
			ev.Need, ev.Chk = 1|mt.spanTables(), true
		}
		return
	}
	for t := uint8(1); t <= MaxTables; t++ {
		if sp := mt.spanByTable(t); rel&bit(t) != 0 && sp != nil && sp.Ckpt >= ev.T {
			ev.Sel, ev.Adv = true, true
			if !ev.Chk {
				ev.Need, ev.Chk = 1|mt.spanTables(), true
			}
			ev.Rep = 0
			return
		}
	}
}

// sendPass re-sends Pass to every influenced dispatcher that has not
// reported DONE; a blocked table with no span is done (markTableDone).
func sendPass(cfg *Config, s *State, slot uint8) {
	mt := &s.Maint[slot]
	ev := &mt.Bar
	skipWriter := cfg.bug(spec.BugWriterNotPassedAfterMove) && ev.Writer != none
	for t := uint8(0); t <= MaxTables; t++ {
		if ev.Need&bit(t) == 0 || ev.Rep&bit(t) != 0 || (skipWriter && t == ev.Writer) {
			continue
		}
		id, node := writerTarget(mt, s.Ident(slot), t)
		if id == 0 {
			if t != 0 && mt.spanByTable(t) == nil {
				ev.Rep |= bit(t)
			}
			continue
		}
		s.send(Msg{Kind: mBlockAction, Src: s.Ident(slot), Dst: node, Epoch: mt.Epoch, A: actPass, B: id, C: ev.T})
	}
}

// restoreBarrier is handleBootstrapResponse: the WAITING stages of the
// responses rebuild the event; the dispatchers re-send their statuses.
func restoreBarrier(cfg *Config, s *State, slot uint8) {
	mt := &s.Maint[slot]
	if barrierOf(cfg) == nil || s.BlkT == 0 {
		return
	}
	restored := false
	for i := uint8(0); i < uint8(cfg.Nodes); i++ {
		if mt.Answered&bit(i) == 0 {
			continue
		}
		report := func(table uint8) {
			if mt.Bar.T == 0 {
				newBlockEvent(cfg, s, slot, table, nil)
			}
			markReported(mt, table)
			restored = true
		}
		if mt.Boot[i].TrigBlk == blkWaiting {
			report(0)
			// HEAD's handleBootstrapResponse leaves the event unrelated to
			// the trigger (restored-barrier-table-writer); cdcspec's rule
			// relates it, as the trigger's own WAITING would.
			if !cfg.bug(spec.BugRestoredBarrierTableWriter) {
				mt.Bar.TrigRel = true
			}
		}
		for _, d := range mt.Boot[i].D {
			if d.ID != 0 && d.Blk == blkWaiting && mt.spanByID(d.ID) != nil {
				report(d.Table)
			}
		}
	}
	if restored && !allReported(cfg, mt) {
		checkBlockedDispatchers(cfg, s, slot)
	}
}

// barrierString renders the barrier's state for State.String.
func barrierString(s *State) string {
	if s.BlkT == 0 {
		return ""
	}
	return fmt.Sprintf(" barrier@%d written=%d", s.BlkT, s.DDLWrit)
}

func (ev BarEv) String() string {
	if ev.T == 0 {
		return "none"
	}
	tabs := func(m uint8) string {
		var ts []int
		for t := 0; t <= MaxTables; t++ {
			if m&(1<<t) != 0 {
				ts = append(ts, t)
			}
		}
		sort.Ints(ts)
		return fmt.Sprint(ts)
	}
	return fmt.Sprintf("event@%d need=%s reported=%s selected=%v writer=%s advanced=%v", ev.T, tabs(ev.Need), tabs(ev.Rep), ev.Sel, tsString(ev.Writer), ev.Adv)
}

// --- properties ---

// invDDLOrderedWithRows: the barrier DDL at T is written exactly once
// (again only after its first writer stopped running, ghost DDLTwice),
// only once every blocked table's rows below T reached the sink (ghost
// Flushed on the step that writes it), and no blocked table's row above T
// reaches the sink before it is written.
func invDDLOrderedWithRows(cfg *Config, prev, s *State) string {
	if s.BlkT == 0 {
		return ""
	}
	T := s.BlkT
	k := barrierOf(cfg)
	what := fmt.Sprintf("the %s at commitTs %d (influence %s)", k.reason, T, k.influence)
	if s.DDLTwice {
		return fmt.Sprintf("a blocking DDL must be written exactly once, but %s was written again while its first writer, on node %s, still runs: changefeed %s, ts %d",
			what, NodeName(s.WrNode), Changefeed, T)
	}
	mask := blockedMask(cfg, s)
	for t := uint8(1); t <= MaxTables; t++ {
		if mask&bit(t) == 0 {
			continue
		}
		// A table the DDL drops has no row above it: its ghost Flushed may
		// pass T with nothing written, as the monitor sees.
		if s.DDLWrit == 0 && s.Flushed[t] > T && !dropped(s, t) {
			return fmt.Sprintf("no row above a blocking DDL may be written before the DDL, but the sink holds the rows of table %d up to ts %d while %s was not written: changefeed %s, span %s, ts %d",
				t, s.Flushed[t], what, Changefeed, spec.WholeTable(int64(t)), T)
		}
		// A dispatcher that started at or above the DDL flushes only rows
		// above it; the ghost above does not move for it when its start
		// leaves a gap (the DDL's own ts has no row), so it is judged here,
		// as the monitor judges each flushed row.
		if s.DDLWrit == 0 && !dropped(s, t) {
			for i := range s.Disp {
				if d := &s.Disp[i]; d.ID != 0 && d.Table == t && d.StartTs >= T && d.Ckpt > d.StartTs {
					return fmt.Sprintf("no row above a blocking DDL may be written before the DDL, but dispatcher %s flushed the rows of table %d up to ts %d while %s was not written: changefeed %s, span %s, ts %d",
						dispName(d.ID), t, d.Ckpt, what, Changefeed, spec.WholeTable(int64(t)), T)
				}
			}
		}
		if prev != nil && prev.DDLWrit == 0 && s.DDLWrit > 0 && s.Flushed[t]+1 < T {
			return fmt.Sprintf("a blocking DDL must be written only after every row below it, but %s was written while the sink holds the rows of table %d only up to ts %d (row at commitTs %d not flushed): changefeed %s, span %s, ts %d",
				what, t, s.Flushed[t], s.Flushed[t]+1, Changefeed, spec.WholeTable(int64(t)), T)
		}
	}
	return ""
}

// goalBarrierEventuallyPasses: once faults stop, no dispatcher is still
// blocked at the barrier DDL.
func goalBarrierEventuallyPasses(cfg *Config, s *State) string {
	if s.Coord.State == cfFailed {
		return ""
	}
	for i := range s.Disp {
		if d := &s.Disp[i]; d.ID != 0 && d.Blk == blkWaiting {
			return fmt.Sprintf("every blocked dispatcher must eventually resume, but after faults healed and the cluster quiesced dispatcher %s on node %s (table %d) is still blocked at the DDL at commitTs %d (it reported WAITING and never DONE): changefeed %s, span %s, ts %d",
				dispName(d.ID), NodeName(s.Ident(d.Node)), d.Table, s.BlkT, Changefeed, spec.WholeTable(int64(d.Table)), s.BlkT)
		}
	}
	return ""
}

// goalTableSetFollowsDDLs: once faults stop, the dropped table has no
// dispatcher and the added one exactly one working dispatcher.
func goalTableSetFollowsDDLs(cfg *Config, s *State) string {
	k := barrierOf(cfg)
	if s.Coord.State == cfFailed || k == nil || s.BlkT == 0 {
		return ""
	}
	if k.drop != 0 {
		for i := range s.Disp {
			if d := &s.Disp[i]; d.ID != 0 && d.Table == k.drop {
				return fmt.Sprintf("no dispatcher of a dropped table may remain, but after faults healed and the cluster quiesced dispatcher %s on node %s of table %d, dropped by the DDL at commitTs %d (%s), is live: changefeed %s, span %s, ts %d",
					dispName(d.ID), NodeName(s.Ident(d.Node)), d.Table, s.BlkT, k.reason, Changefeed, spec.WholeTable(int64(d.Table)), s.BlkT)
			}
		}
	}
	if k.add {
		nt := newBarrierTable(cfg)
		n := 0
		for i := range s.Disp {
			if d := &s.Disp[i]; d.ID != 0 && d.Table == nt && d.St == dWorking {
				n++
			}
		}
		if n != 1 {
			return fmt.Sprintf("a table a DDL adds must be covered exactly once, but after faults healed and the cluster quiesced table %d, added by the DDL at commitTs %d (%s), has %d working dispatchers: changefeed %s, span %s, ts %d",
				nt, s.BlkT, k.reason, n, Changefeed, spec.WholeTable(int64(nt)), s.BlkT)
		}
	}
	return ""
}

// Trigger checkpoint as the watermark carries it (Msg.B of mWatermark) and
// the maintainer keeps it (Maint.TrigCk), abstracted: the model reads the
// table trigger's checkpoint only to compare it with the one barrier DDL's
// commitTs (checkBlockedDispatchers: has the trigger passed the event?), and
// a block event's ts is always State.BlkT. So every checkpoint below BlkT is
// one value and every checkpoint at or above it another. A checkpoint sent
// before the DDL was committed is below it (the trigger never passes the
// pulled ts, and the DDL commits above it), so the abstraction is exact: it
// merges only states whose futures compare alike (SPEC.md, abstractions).
// The maintainer keeps Maint.TrigCk = 1 once a watermark said passed, 0
// otherwise (a new maintainer starts at 0: below).
const (
	trigCkNone   = 0 // no trigger on the node (the maintainer keeps its value)
	trigCkBelow  = 1 // the trigger is below the barrier DDL, or none is committed
	trigCkPassed = 2 // the trigger's checkpoint reached the barrier DDL's commitTs
)

// triggerCkpt is the table trigger's checkpoint as its dispatcher manager's
// heartbeat carries it to the maintainer (the DDL span's status), abstracted
// (trigCk*); trigCkNone when the node has no trigger or the configuration
// has no barrier (the model's other configurations do not need it).
func triggerCkpt(cfg *Config, s *State, slot uint8) uint8 {
	if cfg.Barrier == "" {
		return trigCkNone
	}
	for i := range s.Disp {
		if d := &s.Disp[i]; d.ID != 0 && d.Node == slot && d.Table == 0 {
			if s.BlkT != 0 && d.Ckpt >= s.BlkT {
				return trigCkPassed
			}
			return trigCkBelow
		}
	}
	return trigCkNone
}
