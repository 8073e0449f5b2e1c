package model

import (
	"cdcspec/spec"
)

// dmHandleBootstrap is the dispatcher orchestrator's bootstrap handling
// (A.9): create the dispatcher manager, take ownership (a newer or equal
// epoch), ensure the table trigger on the maintainer's own node, and answer
// with the snapshot: dispatchers, the trigger checkpoint and the journal.
// An existing manager whose table trigger does not match the request's
// answers with an error instead (handleBootstrapRequest,
// dispatcher_orchestrator.go:182-355 at b813e76f9).
func dmHandleBootstrap(cfg *Config, s *State, m Msg, e *emitter) {
	slot := slotOf(m.Dst)
	dm := &s.DMs[slot]
	existed := dm.Exists
	if !dm.Exists {
		if dm.ClosedEpoch != 0 && m.Epoch <= dm.ClosedEpoch {
			return // "drop stale maintainer bootstrap request after close"
		}
		*dm = DM{Exists: true, Owner: none}
	} else if cfg.has(FeatDMFence) && dm.Owner != none && !cfg.mut(MutDMBootstrapFence) &&
		(m.Epoch < dm.OwnerEpoch || (m.Epoch == dm.OwnerEpoch && m.Src != dm.Owner)) {
		return // "drop stale maintainer bootstrap request"
	}
	var trig *Disp
	for i := range s.Disp {
		if d := &s.Disp[i]; d.ID != 0 && d.Node == slot && d.Table == 0 {
			trig = d
		}
	}
	if existed && trig != nil && trig.ID != m.B {
		// bootstrapTableTrigger.validate (dispatcher_orchestrator.go:402-425,
		// 464-496 at b813e76f9), before the owner is updated: a nil
		// trigger ID while this node still has a trigger ("table trigger
		// event dispatcher present during nil trigger bootstrap"), or
		// another trigger ID ("... id mismatch during bootstrap"), fails
		// the bootstrap; handleDispatcherError (:851-863) answers with
		// the error and the node stays unanswered.
		s.send(Msg{Kind: mBootResp, Src: m.Dst, Dst: m.Src, Epoch: m.Epoch, A: bootRespErr})
		return
	}
	dm.Owner, dm.OwnerEpoch = m.Src, m.Epoch
	var snap Snapshot
	snap.TrigCkpt = none
	if m.B != 0 {
		if trig == nil {
			trig = s.newDisp()
			if trig == nil {
				return
			}
			*trig = Disp{ID: m.B, Node: slot, Table: 0, St: dWorking, StartTs: m.A, Ckpt: m.A}
			dm.NoneT, dm.NoneTable, dm.AckedT = 0, 0, 0
			if e != nil {
				e.add(spec.Event{Kind: spec.DispatcherCreated, Node: NodeName(m.Dst), Dispatcher: dispName(m.B), Span: spec.WholeTable(0), Checkpoint: uint64(m.A)})
			}
		}
		snap.TrigCkpt = trig.StartTs // the response carries the trigger startTs
		if trig.Blk == blkWaiting {
			snap.TrigBlk = blkWaiting
		}
	}
	k := 0
	for i := range s.Disp {
		d := &s.Disp[i]
		if d.ID != 0 && d.Node == slot && d.Table != 0 && k < MaxSnap {
			st := d.St
			if st == dRemoving || st == dMergeClosed {
				st = dWorking // still in the dispatcher map until it finishes closing
			}
			snap.D[k] = SnapDisp{ID: d.ID, Table: d.Table, Status: st, Ckpt: d.Ckpt, Part: d.Part}
			if d.Blk == blkWaiting {
				snap.D[k].Blk = blkWaiting
			}
			k++
		}
	}
	snap.J = dm.J
	if mt := &s.Maint[slotOf(m.Src)]; mt.Exists && s.live(m.Src) && mt.Epoch == m.Epoch && !mt.Bootstrapped {
		mt.Boot[slot] = snap
	}
	s.send(Msg{Kind: mBootResp, Src: m.Dst, Dst: m.Src, Epoch: m.Epoch})
}

// bootRespErr marks a MaintainerBootstrapResponse that carries an error
// (Msg.A), and bootstrapTriggerErrText is its text: the orchestrator refused
// the request's table trigger (validateBootstrapNoTableTriggerDispatcher and
// validateBootstrapTableTriggerDispatcherID, dispatcher_orchestrator.go:464-496
// at b813e76f9).
const (
	bootRespErr             = 1
	bootstrapTriggerErrText = "[CDC:ErrChangefeedInitTableTriggerDispatcherFailed]table trigger event dispatcher present during nil trigger bootstrap or id mismatch during bootstrap"
)

// dmFenced reports whether a control request passes the owner fence:
// exactly the owner (maintainer node, epoch) (#5436).
func dmFenced(dm *DM, m Msg) bool {
	return m.Src != dm.Owner || m.Epoch != dm.OwnerEpoch
}

// dmCloseFenced reports whether a MaintainerCloseRequest is ACKed without
// closing ("drop stale maintainer close request"). HEAD fences it as every
// control request, by the owner (node, epoch)
// (dispatcher_orchestrator.go:668-685 at b813e76f9): the catalogue entry
// stop-close-dropped-after-failover, since a stop re-targeted to the
// coordinator's node after the maintainer's node died sends its close from
// another node with the same epoch. cdcspec's rule fences only an older
// epoch's close: a close of the owner's epoch or a newer one closes,
// whatever node sends it.
func dmCloseFenced(cfg *Config, dm *DM, m Msg) bool {
	if cfg.bug(spec.BugStopCloseDroppedAfterFailover) {
		return dmFenced(dm, m)
	}
	return m.Epoch < dm.OwnerEpoch
}

// dmHandleSchedule is SchedulerDispatcherRequestHandler (A.9).
func dmHandleSchedule(cfg *Config, s *State, m Msg, e *emitter) {
	slot := slotOf(m.Dst)
	dm := &s.DMs[slot]
	if !dm.Exists {
		return
	}
	// preCheckForSchedulerHandler. With no-epoch-fencing (before #5436) a
	// request from a previous maintainer generation is obeyed.
	if cfg.has(FeatDMFence) && !cfg.bug(spec.BugNoEpochFencing) && dmFenced(dm, m) {
		return // "drop stale schedule dispatcher request"
	}
	id := m.B
	d := s.dispOn(id, slot)
	switch m.A {
	case schedCreate:
		if d != nil && !cfg.mut(MutDMCreateIdempotent) {
			return // idempotent Create
		}
		nd := s.newDisp()
		if nd == nil {
			return
		}
		*nd = Disp{ID: id, Node: slot, Table: keyTable(m.C), Part: keyPart(m.C), St: dInit, StartTs: m.D, Ckpt: m.D}
		if e != nil {
			e.add(spec.Event{Kind: spec.DispatcherCreated, Node: NodeName(m.Dst), Dispatcher: dispName(id), Span: partSpan(nd.Table, nd.Part), Checkpoint: uint64(m.D)})
		}
	case schedRemove:
		if d == nil {
			// a missing dispatcher reports Stopped at once
			s.send(Msg{Kind: mDispStatus, Src: m.Dst, Dst: dm.Owner, A: id, B: 0, C: 0, D: dmWatermark(s, slot)})
			return
		}
		if !cfg.bug(spec.BugInflightOperatorsLostOnFailover) {
			journal(dm, Journal{ID: id, Table: d.Table, Action: schedRemove, OpType: m.E})
		}
		d.St = dRemoving
	}
}

func journal(dm *DM, j Journal) {
	for i := range dm.J {
		if dm.J[i].ID == j.ID {
			dm.J[i] = j
			return
		}
	}
	for i := range dm.J {
		if dm.J[i].ID == 0 {
			dm.J[i] = j
			return
		}
	}
}

func unjournal(dm *DM, id uint8) {
	for i := range dm.J {
		if dm.J[i].ID == id {
			dm.J[i] = Journal{}
		}
	}
}

// dmHandleClose: a cascade close closes every dispatcher of the changefeed
// on the node and the manager itself; a stale close is ACKed and ignored.
func dmHandleClose(cfg *Config, s *State, m Msg, e *emitter) {
	slot := slotOf(m.Dst)
	dm := &s.DMs[slot]
	if dm.Exists && !(cfg.has(FeatDMFence) && !cfg.mut(MutDMCloseFence) && dmCloseFenced(cfg, dm, m)) {
		for i := range s.Disp {
			if d := &s.Disp[i]; d.ID != 0 && d.Node == slot {
				if e != nil {
					e.add(spec.Event{Kind: spec.DispatcherRemoved, Node: NodeName(m.Dst), Dispatcher: dispName(d.ID), Checkpoint: uint64(d.Ckpt)})
				}
				*d = Disp{}
			}
		}
		*dm = DM{ClosedEpoch: m.Epoch}
		if e != nil {
			e.add(spec.Event{Kind: spec.DispatcherManagerClosed, Node: NodeName(m.Dst)})
		}
	} else if !dm.Exists {
		dm.ClosedEpoch = max(dm.ClosedEpoch, m.Epoch)
	}
	s.send(Msg{Kind: mCloseResp, Src: m.Dst, Dst: m.Src, Epoch: m.Epoch, A: 1})
}

// dmHandleAck: the maintainer ACKed the trigger's NONE status; the trigger's
// checkpoint may pass the DDL now (#5402).
func dmHandleAck(cfg *Config, s *State, m Msg) {
	dm := &s.DMs[slotOf(m.Dst)]
	if !dm.Exists || (cfg.has(FeatDMFence) && !cfg.mut(MutDMAckFence) && dmFenced(dm, m)) {
		return
	}
	if dm.NoneT == m.A {
		dm.NoneT, dm.NoneTable, dm.AckedT = 0, 0, m.A
	}
}

// dmTick is the dispatcher manager's heartbeat task, with the dispatchers'
// progress since the last one folded in: every dispatcher of the node first
// advances (dispAdvance), then the manager sends the watermark (minimum
// checkpoint over its dispatchers) to its maintainer, the first error again
// (every 5 s until the manager closes) and the NONE block status until ACKed.
func dmTick(cfg *Config, s *State, slot uint8, e *emitter) {
	for i := range s.Disp {
		if d := &s.Disp[i]; d.ID != 0 && d.Node == slot && (d.St == dInit || (d.St == dWorking && dispCanAdvance(cfg, s, d))) {
			dispAdvance(cfg, s, d, e)
		}
	}
	dm := &s.DMs[slot]
	if dm.Owner == none {
		return
	}
	src := s.Ident(slot)
	s.sendLatest(Msg{Kind: mWatermark, Src: src, Dst: dm.Owner, A: dmWatermark(s, slot), B: triggerCkpt(cfg, s, slot)})
	if dm.Err {
		m := Msg{Kind: mDMErr, Src: src, Dst: dm.Owner, A: 1}
		if dm.ErrFast {
			m.B = 1
		}
		s.send(m)
	}
	if dm.NoneT != 0 {
		s.send(Msg{Kind: mBlockNone, Src: src, Dst: dm.Owner, A: dm.NoneTable, B: dm.NoneT})
	}
	resendWaiting(s, slot)
	if cfg.Merges > 0 {
		cleanupFinishedMergeOperators(s, slot)
	}
}

// completeStatuses lists the status messages of a complete-status round:
// every working table dispatcher of the node.
func completeStatus(s *State, slot uint8, d *Disp) Msg {
	dm := &s.DMs[slot]
	return Msg{Kind: mDispStatus, Src: s.Ident(slot), Dst: dm.Owner, A: d.ID, B: dWorking, C: d.Ckpt, D: dmWatermark(s, slot)}
}

// dmCompleteWouldSend: some working dispatcher's status is not in flight.
func dmCompleteWouldSend(s *State, slot uint8) bool {
	if s.DMs[slot].Owner == none {
		return false
	}
	for i := range s.Disp {
		d := &s.Disp[i]
		if d.ID == 0 || d.Node != slot || d.Table == 0 || d.St != dWorking {
			continue
		}
		m := completeStatus(s, slot, d)
		found := false
		for j := 0; j < s.nmsgs(); j++ {
			found = found || s.Net[j] == m
		}
		if !found {
			return true
		}
	}
	return false
}

// dmCompleteStatus: the heartbeat task's complete statuses (every 10 s):
// the maintainer learns of every dispatcher again (a lost Working status,
// a dispatcher it does not know: "no span found, remove it").
func dmCompleteStatus(s *State, slot uint8) {
	if s.DMs[slot].Owner == none {
		return
	}
	for i := range s.Disp {
		if d := &s.Disp[i]; d.ID != 0 && d.Node == slot && d.Table != 0 && d.St == dWorking {
			s.send(completeStatus(s, slot, d))
		}
	}
}

// dmWatermark is the minimum checkpoint over the manager's dispatchers;
// every HeartBeatRequest carries it, status changes included.
func dmWatermark(s *State, slot uint8) uint8 {
	wm := uint8(tsInf)
	for i := range s.Disp {
		if d := &s.Disp[i]; d.ID != 0 && d.Node == slot {
			wm = min(wm, d.Ckpt)
		}
	}
	return wm
}

// pendingDDL returns the add-table DDL the trigger must handle next, if its
// commitTs is within the trigger's reach: (table, commitTs). A table the
// barrier DDL adds (truncate) is not a CREATE TABLE; one above a barrier DDL
// the trigger has not passed waits for it.
func pendingDDL(cfg *Config, s *State, d *Disp) (uint8, uint8) {
	for t := uint8(1); t <= MaxTables; t++ {
		T := s.TableT[t]
		if T == none || T == 0 || (s.BlkT != 0 && T == s.BlkT) {
			continue
		}
		if s.BlkT != 0 && T > s.BlkT && influenced(cfg, s, d) {
			continue
		}
		if d.Ckpt < T && T <= s.PullTs {
			return t, T
		}
	}
	return 0, 0
}

// triggerTarget is how far the table trigger may advance: the resolved ts,
// capped below an add-table DDL until the maintainer ACKs it
// (addTableCheckpointBlocker, #5402).
func triggerTarget(cfg *Config, s *State, d *Disp) uint8 {
	target := s.PullTs
	dm := &s.DMs[d.Node]
	if cfg.bug(spec.BugTriggerPassesAddTableDDL) {
		return target
	}
	if t, T := pendingDDL(cfg, s, d); t != 0 && dm.AckedT != T {
		target = min(target, T-1)
	}
	if influenced(cfg, s, d) {
		target = min(target, s.BlkT-1)
	}
	return target
}

func dispCanAdvance(cfg *Config, s *State, d *Disp) bool {
	if d.SinkErr {
		return false
	}
	if d.Table == 0 {
		if t, T := pendingDDL(cfg, s, d); t != 0 && s.DMs[d.Node].NoneT != T && s.DMs[d.Node].AckedT != T {
			return true // writes the DDL and reports NONE
		}
		return trigBlockNow(cfg, s, d) || triggerTarget(cfg, s, d) > d.Ckpt
	}
	if tableAtDDL(cfg, s, d) {
		return d.Blk == 0 // flushes below the DDL and blocks
	}
	return s.PullTs > d.Ckpt
}

// dispAdvance: an initializing dispatcher gets its first event and reports
// Working; a working one flushes up to the resolved ts. The trigger writes a
// CREATE TABLE it reaches and reports NONE with the new table.
func dispAdvance(cfg *Config, s *State, d *Disp, e *emitter) {
	id := d.ID
	dm := &s.DMs[d.Node]
	node := s.Ident(d.Node)
	if d.St == dInit {
		d.St = dWorking
		if e != nil {
			e.add(spec.Event{Kind: spec.DispatcherWorking, Node: NodeName(node), Dispatcher: dispName(id), Span: partSpan(d.Table, d.Part)})
		}
		if dm.Owner != none {
			s.send(Msg{Kind: mDispStatus, Src: node, Dst: dm.Owner, A: id, B: dWorking, C: d.Ckpt, D: dmWatermark(s, d.Node)})
		}
		return
	}
	if d.Table == 0 {
		if t, T := pendingDDL(cfg, s, d); t != 0 && dm.NoneT != T && dm.AckedT != T {
			dm.NoneT, dm.NoneTable = T, t
			if dm.Owner != none {
				s.send(Msg{Kind: mBlockNone, Src: node, Dst: dm.Owner, A: t, B: T})
			}
		} else if trigBlockNow(cfg, s, d) {
			blockAt(cfg, s, d, e)
			return
		}
		d.Ckpt = max(d.Ckpt, triggerTarget(cfg, s, d))
		return
	}
	if tableAtDDL(cfg, s, d) {
		if d.Blk == 0 {
			blockAt(cfg, s, d, e)
		}
		return
	}
	if d.Ckpt >= s.PullTs {
		return
	}
	d.Ckpt = s.PullTs
	noteFlushed(s, d)
	if e != nil {
		e.add(spec.Event{Kind: spec.DataFlushed, Node: NodeName(node), Dispatcher: dispName(id), Span: partSpan(d.Table, d.Part), Checkpoint: uint64(d.Ckpt)})
	}
}

// dispClosed: a removing dispatcher finished closing; it is reported
// Stopped once with its final checkpoint and deleted; its journal entry goes.
func dispClosed(cfg *Config, s *State, id uint8, e *emitter) {
	var d *Disp
	for i := range s.Disp {
		if s.Disp[i].ID == id && (s.Disp[i].St == dRemoving || s.Disp[i].St == dMergeClosed) && d == nil {
			d = &s.Disp[i] // the removing one of two with this ID
		}
	}
	dm := &s.DMs[d.Node]
	node := s.Ident(d.Node)
	if e != nil && d.St != dMergeClosed { // a merge source's removal was reported when the merge closed it
		e.add(spec.Event{Kind: spec.DispatcherRemoved, Node: NodeName(node), Dispatcher: dispName(id), Checkpoint: uint64(d.Ckpt)})
	}
	unjournal(dm, id)
	ckpt, slot := d.Ckpt, d.Node
	*d = Disp{}
	if dm.Owner != none {
		// The heartbeat that reports Stopped folds the closed dispatcher's
		// final watermark into the node's (getDispatcherStatus,
		// dispatcher_manager_helper.go:42-52 at b813e76f9); the next one
		// no longer has it.
		s.send(Msg{Kind: mDispStatus, Src: node, Dst: dm.Owner, A: id, B: 0, C: ckpt, D: min(dmWatermark(s, slot), ckpt)})
	}
}
