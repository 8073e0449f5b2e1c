package model

import (
	"cdcspec/spec"
)

// memberMask is the node set as NodeManager shows it: running nodes and
// crashed ones whose departure nobody has seen yet.
func memberMask(cfg *Config, s *State) uint8 {
	var mask uint8
	for i := 0; i < cfg.Nodes; i++ {
		if s.NodeSt[i] == nodeAlive || s.NodeSt[i] == nodeDead {
			mask |= 1 << i
		}
	}
	return mask
}

// managerHandleAdd is handleAddMaintainer (A.3).
func managerHandleAdd(cfg *Config, s *State, m Msg, e *emitter) {
	slot := slotOf(m.Dst)
	mt := &s.Maint[slot]
	if m.A == 0 {
		return
	}
	if mt.Exists {
		if !cfg.has(FeatEpochs) {
			// Before #5435 any existing entry, such as a removal-only
			// maintainer, made Add a silent no-op.
			return
		}
		if !(mt.Removed && m.Epoch > mt.Epoch) && !cfg.mut(MutManagerAddReject) {
			if e != nil {
				e.add(spec.Event{Kind: spec.MaintainerRejectedAdd, Node: NodeName(m.Dst), Epoch: uint64(m.Epoch)})
			}
			return
		}
	}
	*mt = Maint{Exists: true, Epoch: m.Epoch, StartTs: m.A, Committed: m.A, Reported: m.A, TriggerID: s.allocID()}
	for i := range mt.WM {
		mt.WM[i] = none
	}
	for i := range mt.Boot {
		mt.Boot[i].TrigCkpt = none
	}
	if e != nil {
		e.add(spec.Event{Kind: spec.MaintainerCreated, Node: NodeName(m.Dst), Epoch: uint64(m.Epoch), Checkpoint: uint64(m.A)})
	}
	// EventInit: ask every alive node for its dispatchers.
	mt.Bootstrapper = memberMask(cfg, s)
	sendBootstrapRequests(cfg, s, slot)
}

func sendBootstrapRequests(cfg *Config, s *State, slot uint8) {
	mt := &s.Maint[slot]
	for i := uint8(0); i < uint8(cfg.Nodes); i++ {
		if mt.Bootstrapper&(1<<i) == 0 || mt.Answered&(1<<i) != 0 {
			continue
		}
		r := Msg{Kind: mBootReq, Src: s.Ident(slot), Dst: s.Ident(i), Epoch: mt.Epoch, A: mt.StartTs}
		if i == slot {
			r.B = mt.TriggerID
		}
		s.send(r)
	}
}

// managerHandleRemove is handleRemoveMaintainer (A.3) and onRemoveMaintainer (A.4).
func managerHandleRemove(cfg *Config, s *State, m Msg, e *emitter) {
	slot := slotOf(m.Dst)
	mt := &s.Maint[slot]
	if !mt.Exists {
		if m.A != 1 {
			// not found, non-cascade: reply Stopped at once
			s.send(Msg{Kind: mStatus, Src: m.Dst, Dst: s.MgrCoord[slot], Epoch: m.Epoch})
			return
		}
		// Not found, cascade: a removal-only maintainer does the cascade close.
		*mt = Maint{Exists: true, RemovalOnly: true, Epoch: m.Epoch}
		for i := range mt.WM {
			mt.WM[i] = none
		}
		for i := range mt.Boot {
			mt.Boot[i].TrigCkpt = none
		}
		if e != nil {
			e.add(spec.Event{Kind: spec.MaintainerCreated, Node: NodeName(m.Dst), Epoch: uint64(m.Epoch), RemovalOnly: true})
		}
	} else if cfg.has(FeatEpochs) && m.Epoch != 0 && m.Epoch != mt.Epoch && !cfg.mut(MutRemoveEpochCheck) {
		return // "drop stale remove maintainer request"
	} else if m.A != 1 {
		managerNonCascadeRemove(cfg, s, slot, e) // a maintainer move (movemaintainer.go)
		return
	}
	if mt.Removing {
		return
	}
	mt.Removing = true
	mt.CloseAcked = 0
	sendCloseRequests(cfg, s, slot)
	maybeClosed(cfg, s, slot, e)
}

func sendCloseRequests(cfg *Config, s *State, slot uint8) {
	mt := &s.Maint[slot]
	for i := uint8(0); i < uint8(cfg.Nodes); i++ {
		if memberMask(cfg, s)&(1<<i) != 0 && mt.CloseAcked&(1<<i) == 0 {
			s.send(Msg{Kind: mCloseReq, Src: s.Ident(slot), Dst: s.Ident(i), Epoch: mt.Epoch})
		}
	}
}

// maybeClosed: every alive node ACKed the close, the maintainer is Stopped
// and removed ("changefeed maintainer closed").
func maybeClosed(cfg *Config, s *State, slot uint8, e *emitter) {
	mt := &s.Maint[slot]
	if !mt.Removing || mt.Removed {
		return
	}
	members := memberMask(cfg, s)
	if mt.CloseAcked&members != members && !(cfg.mut(MutCloseWaitsAllAcks) && mt.CloseAcked != 0) {
		return
	}
	mt.Removed = true
	if e != nil {
		e.add(spec.Event{Kind: spec.MaintainerClosed, Node: NodeName(s.Ident(slot)), Epoch: uint64(mt.Epoch), Checkpoint: uint64(mt.Reported)})
	}
}

// maintTick is one maintainer period: checkpoint calculation (A.8), the
// manager's MaintainerHeartbeat with this maintainer's status (errors
// drained), and the re-sends of bootstrap, operator and close requests.
func maintTick(cfg *Config, s *State, slot uint8, e *emitter) {
	mt := &s.Maint[slot]
	// calCheckpointTs runs until Close at HEAD (maintainer.go:264-267,
	// 696-733), removing included; cdcspec stops it once removing, and
	// checkpoint-advances-while-removing restores HEAD's rule.
	if mt.Bootstrapped && (!mt.Removing || cfg.bug(spec.BugCheckpointAdvancesWhileRemoving)) {
		calculateCheckpoint(cfg, s, slot)
	}
	if mt.Removed && mt.StopReported {
		// buildHeartbeat reports a maintainer whose status changed (or
		// not reported for 1 s), and the manager unregisters a closed
		// maintainer in the tick that reports it (maintainer_manager.go:
		// 146-149, maintainer_manager_maintainers.go:372-418 at
		// b813e76f9): a closed maintainer's Stopped is reported once.
		return
	}
	st := Msg{Kind: mStatus, Src: s.Ident(slot), Dst: s.MgrCoord[slot], Epoch: mt.Epoch, B: mt.Reported, D: mt.Err}
	mt.StopReported = mt.Removed
	if !mt.Removed {
		st.A = 1
	}
	if mt.Bootstrapped && !cfg.mut(MutStatusBootstrapDone) {
		st.C = 1 // BootstrapDone: m.initialized (maintainer.go:397 at b813e76f9)
	}
	if mt.Err != 0 && mt.ErrFast {
		st.E = 1
	}
	mt.Err, mt.ErrFast = 0, false
	s.sendStatus(st)
	switch {
	case mt.Removing && !mt.Removed:
		sendCloseRequests(cfg, s, slot)
	case !mt.Bootstrapped && !mt.RemovalOnly && !mt.Removing:
		sendBootstrapRequests(cfg, s, slot)
	case mt.Bootstrapped && !mt.Removing:
		sendBootstrapRequests(cfg, s, slot) // nodes that joined after the bootstrap
		for j := range mt.Spans {
			if sp := &mt.Spans[j]; sp.ID != 0 && sp.Op != mopNone {
				resendOp(cfg, s, slot, sp)
			}
		}
		barrierResend(cfg, s, slot, e)
	}
}

// calculateCheckpoint is Maintainer.calculateNewCheckpointTs (A.8).
func calculateCheckpoint(cfg *Config, s *State, slot uint8) {
	mt := &s.Maint[slot]
	res := uint8(tsInf)
	need := uint8(1) << slot
	for j := range mt.Spans {
		sp := &mt.Spans[j]
		if sp.ID == 0 {
			continue
		}
		// Operators that hold the checkpoint back: add, move, and remove
		// (cdcspec; TiCDC's remove does not: remove-operator-passes-checkpoint).
		if (!cfg.mut(MutAddHoldsCheckpoint) && (sp.State != replReplicating || sp.Op == mopAdd || sp.Op == mopMove)) ||
			(sp.Op == mopRemove && !cfg.bug(spec.BugRemoveOperatorPassesCheckpoint)) {
			res = min(res, sp.Ckpt)
		}
		if sp.State != replAbsent && sp.Node != none {
			need |= 1 << slotOf(sp.Node)
		}
	}
	for i := uint8(0); i < uint8(cfg.Nodes); i++ {
		if need&(1<<i) == 0 || s.NodeSt[i] == nodeDetected {
			continue
		}
		if mt.WM[i] == none {
			if cfg.mut(MutMissingCaptureHeartbeat) {
				continue
			}
			return // "checkpointTs can not be advanced, since missing capture heartbeat"
		}
		res = min(res, mt.WM[i])
	}
	if res == tsInf && !cfg.mut(MutNeverCommitUnbounded) {
		return // #4709: never commit an unbounded checkpoint
	}
	if cfg.has(FeatCommittedCheckpoint) {
		mt.Committed = max(mt.Committed, res)
		mt.Reported = mt.Committed
	} else {
		mt.Reported = res
	}
}

func (mt *Maint) spanByTable(t uint8) *SpanRep {
	for j := range mt.Spans {
		if mt.Spans[j].ID != 0 && mt.Spans[j].Table == t {
			return &mt.Spans[j]
		}
	}
	return nil
}

func containsID(ids []uint8, id uint8) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func (mt *Maint) spanByID(id uint8) *SpanRep {
	for j := range mt.Spans {
		if mt.Spans[j].ID == id && id != 0 {
			return &mt.Spans[j]
		}
	}
	return nil
}

func (s *State) addSpan(mt *Maint, sp SpanRep) *SpanRep {
	for j := range mt.Spans {
		if mt.Spans[j].ID == 0 {
			mt.Spans[j] = sp
			return &mt.Spans[j]
		}
	}
	s.Overflow = true
	return nil
}

// createStartTs is the startTs of a Create: the span checkpoint, clamped to
// the committed checkpoint (#4548).
func createStartTs(cfg *Config, mt *Maint, sp *SpanRep) uint8 {
	if cfg.has(FeatCommittedCheckpoint) && !cfg.mut(MutStartTsClamp) {
		return max(sp.Ckpt, mt.Committed)
	}
	return sp.Ckpt
}

// scheduleMsg is a ScheduleDispatcherRequest; key names the span (split.go).
func scheduleMsg(s *State, slot uint8, mt *Maint, dst, action, id, key, startTs, ot uint8) Msg {
	return Msg{Kind: mSchedule, Src: s.Ident(slot), Dst: dst, Epoch: mt.Epoch, A: action, B: id, C: key, D: startTs, E: ot}
}

func resendOp(cfg *Config, s *State, slot uint8, sp *SpanRep) {
	mt := &s.Maint[slot]
	switch {
	case sp.Op == mopAdd:
		s.send(scheduleMsg(s, slot, mt, sp.OpDest, schedCreate, sp.ID, sp.key(), createStartTs(cfg, mt, sp), otAdd))
	case sp.Op == mopRemove && sp.OpPh == remFinished:
		// a finished remove sends nothing (operator_remove.go Schedule)
	case sp.Op == mopRemove:
		ot := uint8(otRemove)
		if sp.OpAbs {
			ot = otMove
		}
		s.send(scheduleMsg(s, slot, mt, sp.Node, schedRemove, sp.ID, sp.key(), 0, ot))
	case sp.Op == mopMove && sp.OpPh == movRemoveOrigin:
		s.send(scheduleMsg(s, slot, mt, sp.Node, schedRemove, sp.ID, sp.key(), 0, otMove))
	case sp.Op == mopMove:
		s.send(scheduleMsg(s, slot, mt, sp.OpDest, schedCreate, sp.ID, sp.key(), createStartTs(cfg, mt, sp), otMove))
	case sp.Op == mopSplit:
		s.send(scheduleMsg(s, slot, mt, sp.Node, schedRemove, sp.ID, sp.key(), 0, otSplit))
	case sp.Op == mopMerge && sp.OpPh == mergeRunning:
		if m, ok := mergeRequest(s, slot, sp); ok {
			s.send(m)
		}
	}
}

// maintSchedule: the basic scheduler adds an absent span to a node (C.8).
func maintSchedule(cfg *Config, s *State, slot, key, dslot uint8, e *emitter) {
	mt := &s.Maint[slot]
	sp := mt.spanByKey(key)
	dest := s.Ident(dslot)
	sp.Op, sp.OpDest = mopAdd, dest
	sp.State, sp.Node = replScheduling, dest
	if e != nil {
		e.add(spec.Event{Kind: spec.DispatcherOpStarted, Op: spec.OpAdd, Dispatcher: dispName(sp.ID), Span: partSpan(sp.Table, sp.Part), Node: NodeName(dest)})
	}
	resendOp(cfg, s, slot, sp)
}

// maintMove: the balance scheduler moves a replicating span (A.6 Move).
func maintMove(cfg *Config, s *State, slot, key, dslot uint8, e *emitter) {
	mt := &s.Maint[slot]
	sp := mt.spanByKey(key)
	dest := s.Ident(dslot)
	sp.Op, sp.OpDest, sp.OpPh = mopMove, dest, movRemoveOrigin
	sp.State = replScheduling
	if cfg.MaxMoves > 0 {
		s.Moves++
	}
	if e != nil {
		e.add(spec.Event{Kind: spec.DispatcherOpStarted, Op: spec.OpMove, Dispatcher: dispName(sp.ID), Span: partSpan(sp.Table, sp.Part), Node: NodeName(dest), Origin: NodeName(sp.Node)})
	}
	resendOp(cfg, s, slot, sp)
}

func opFinished(e *emitter, op spec.Op, sp *SpanRep, node uint8) { opFinishedOp(e, op, sp, node) }

// opPostFinish is finalizeOperator of a finished remove operator
// (AOpPostFinish): its PostFinish marks the span absent (a restored move or
// split remove) or drops it ("remove dispatcher operator finished").
func opPostFinish(s *State, slot uint8, sp *SpanRep, e *emitter) {
	opFinished(e, spec.OpRemove, sp, sp.Node)
	if sp.OpAbs {
		markAbsent(sp)
	} else {
		*sp = SpanRep{}
	}
}

// appendPostFinishActions lists the finished operators of the maintainer on
// slot that its operator controller's next poll post-finishes; none while
// the maintainer is removing (a quiesced operator is never finalised before
// Close: pollQueueingOperator's isOperatorAllowed).
func appendPostFinishActions(s *State, slot uint8, buf []Action) []Action {
	mt := &s.Maint[slot]
	for j := range mt.Spans {
		if sp := &mt.Spans[j]; sp.ID != 0 && sp.Op == mopRemove && sp.OpPh == remFinished {
			buf = append(buf, Action{Kind: AOpPostFinish, Node: slot, Arg: sp.key()})
		}
	}
	return buf
}

func markAbsent(sp *SpanRep) {
	sp.State, sp.Node = replAbsent, none
	sp.Op, sp.OpDest, sp.OpPh, sp.OpAbs = mopNone, 0, 0, false
}

// maintOnNodeRemoved: spans on the dead node without an operator go absent,
// its watermark entry is deleted, operators get OnNodeRemove; an
// unbootstrapped maintainer stops waiting for it; a closing one too (C.9).
func maintOnNodeRemoved(cfg *Config, s *State, slot, dead uint8, e *emitter) {
	mt := &s.Maint[slot]
	mt.WM[dead], mt.PendWM[dead] = none, 0
	if !mt.Bootstrapped {
		mt.Bootstrapper &^= 1 << dead
		mt.Answered &^= 1 << dead
		mt.Boot[dead] = Snapshot{TrigCkpt: none}
		if !mt.RemovalOnly && !mt.Removing && mt.Bootstrapper != 0 && mt.Answered == mt.Bootstrapper {
			finishBootstrap(cfg, s, slot, e)
		}
	} else if !mt.Removing {
		for j := range mt.Spans {
			sp := &mt.Spans[j]
			if sp.ID == 0 || (sp.Op != mopNone && cfg.mut(MutNodeRemovedOperators)) {
				continue
			}
			onNode := sp.Node != none && slotOf(sp.Node) == dead
			toDest := sp.OpDest != 0 && sp.OpDest != none && slotOf(sp.OpDest) == dead
			switch sp.Op {
			case mopNone:
				if onNode {
					markAbsent(sp)
				}
			case mopAdd:
				if toDest {
					markAbsent(sp)
				}
			case mopRemove:
				// A finished remove waits for its PostFinish: the node's
				// spans with an operator are not marked absent, and
				// OnNodeRemove of a finished remove changes nothing.
				// OnNodeRemove finishes a running remove; PostFinish marks
				// the span absent only for a remove with that hook (a
				// move's or split's remove phase: OpAbs). A DDL's remove
				// took the task out of the span controller when it started
				// (operator_controller.go:216-227 RemoveTasksByTableIDs at
				// b813e76f9), so OnNodeRemoved (:284-303) finds nothing to
				// mark absent and nothing is added again: the span goes, as
				// when the dispatcher's Stopped status finishes it.
				if onNode && sp.OpPh != remFinished {
					opFinished(e, spec.OpRemove, sp, sp.Node)
					if sp.OpAbs {
						markAbsent(sp)
					} else {
						*sp = SpanRep{}
					}
				}
			case mopMove:
				switch {
				case sp.OpPh == movRemoveOrigin && onNode:
					// origin gone: add to the destination directly
					sp.OpPh, sp.Node = movAddDest, sp.OpDest
					resendOp(cfg, s, slot, sp)
				case sp.OpPh == movRemoveOrigin && toDest:
					// AbortRemoveOrigin: keep removing the origin, then absent
					sp.Op, sp.OpAbs, sp.OpDest, sp.OpPh = mopRemove, true, 0, remRunning
				case sp.OpPh == movAddDest && toDest:
					markAbsent(sp)
				}
			case mopSplit:
				if onNode && !cfg.mut(MutSplitAbortOnOriginRemoved) {
					splitAbort(sp)
				}
			case mopMerge:
				// A released merge (merge-occupy-finishes-early) has
				// finished; its PostFinish sees the node gone.
				if onNode && sp.OpPh == mergeRunning && !cfg.mut(MutMergeAbortOnOriginRemoved) {
					mergeAbort(s, slot, sp, e)
				}
			case mopOccupy:
				if onNode && !mt.occupyReleased(sp.Table) {
					markAbsent(sp)
				}
			}
		}
	}
	if mt.Removing {
		maybeClosed(cfg, s, slot, e)
	}
}

// onNodeJoined: an unbootstrapped maintainer also asks the new node; a
// bootstrapped one would ignore its answer (A.4 phase 6), so it does not ask.
func onNodeJoined(cfg *Config, s *State, slot uint8) {
	for i := range s.Maint {
		mt := &s.Maint[i]
		if mt.Exists && !mt.RemovalOnly && !mt.Removing && s.NodeSt[i] == nodeAlive {
			// HandleNodesChange: the new node is asked too, before and after
			// the bootstrap. Its MaintainerBootstrapRequest creates the
			// node's dispatcher manager, without which it drops every
			// ScheduleDispatcherRequest; the request is re-sent each period
			// until the node answers (ResendBootstrapMessage).
			mt.Bootstrapper |= 1 << slot
			mt.Answered &^= 1 << slot
			sendBootstrapRequests(cfg, s, uint8(i))
		}
	}
}

// tableInSnapshot: the schema snapshot at startTs has the table.
func tableInSnapshot(s *State, t, startTs uint8) bool {
	return s.TableT[t] != none && s.TableT[t] <= startTs && !(dropped(s, t) && s.BlkT <= startTs)
}

// finishBootstrap is FinishBootstrap (A.4 phase 3) over the cached responses.
//
// Long: mirrors HEAD's FinishBootstrap (maintainer_controller_bootstrap.go:77-172) step by step.
func finishBootstrap(cfg *Config, s *State, slot uint8, e *emitter) {
	mt := &s.Maint[slot]
	startTs := uint8(0)
	for i := range mt.Boot {
		if mt.Answered&(1<<i) != 0 && mt.Boot[i].TrigCkpt != none {
			startTs = max(startTs, mt.Boot[i].TrigCkpt)
		}
	}
	if startTs == 0 {
		if e != nil {
			e.add(spec.Event{Kind: spec.MaintainerBootstrapFailed, Node: NodeName(s.Ident(slot)), Err: "no table trigger checkpoint in bootstrap responses"})
		}
		return
	}
	// In-flight merges from the journals first (merge.go): their merged
	// and source dispatchers are not adopted one by one.
	var takenBuf [MaxNodes * MaxSnap]uint8
	taken := takenBuf[:0]
	if cfg.Merges > 0 {
		for i := uint8(0); i < uint8(cfg.Nodes); i++ {
			if mt.Answered&(1<<i) != 0 {
				taken = restoreMerges(cfg, s, slot, i, startTs, taken)
			}
		}
	}
	// Working dispatchers from the snapshots.
	for i := uint8(0); i < uint8(cfg.Nodes); i++ {
		if mt.Answered&(1<<i) == 0 {
			continue
		}
		for _, d := range mt.Boot[i].D {
			if d.ID == 0 || containsID(taken, d.ID) {
				continue
			}
			adopt := tableInSnapshot(s, d.Table, startTs)
			if !adopt {
				if cfg.bug(spec.BugRestoredCreateIgnoredForNewTable) {
					// handleRemainingWorkingTasks: "found a working table that
					// is not in initial table map, just ignore it".
					if e != nil {
						e.add(spec.Event{Kind: spec.WorkingTableIgnored, Span: spec.WholeTable(int64(d.Table)), Dispatcher: dispName(d.ID), Node: NodeName(s.Ident(i))})
					}
					continue
				}
				// #6207 direction: the DDL history after startTs creates the
				// table; adopt its surviving dispatcher.
				adopt = s.TableT[d.Table] != none
			}
			if !adopt {
				continue
			}
			if mt.spanOverlapping(d.Table, d.Part) != nil {
				if cfg.mut(MutBootstrapOverlapCleanup) {
					continue
				}
				// unexpected overlapping dispatcher: remove it
				s.send(scheduleMsg(s, slot, mt, s.Ident(i), schedRemove, d.ID, spanKey(d.Table, d.Part), 0, otRemove))
				continue
			}
			s.addSpan(mt, SpanRep{ID: d.ID, Table: d.Table, Part: d.Part, State: replReplicating, Node: s.Ident(i), Ckpt: d.Ckpt})
		}
	}
	// restoreCurrentWorkingOperators (#3691): a journaled Remove becomes a
	// remove operator; one that belonged to a move marks the span absent
	// when done, so the scheduler re-adds it. So does a standalone remove
	// (a DROP's) of a table the snapshot at startTs still has: its
	// PostFinish removes the span and repairs the table's coverage with
	// absent spans (maintainer_controller_bootstrap.go:1220-1230
	// handleCurrentWorkingRemove, tableExists, at b813e76f9), and the
	// re-added dispatcher meets the DROP again.
	if !cfg.bug(spec.BugInflightOperatorsLostOnFailover) {
		for i := uint8(0); i < uint8(cfg.Nodes); i++ {
			if mt.Answered&(1<<i) == 0 {
				continue
			}
			for _, j := range mt.Boot[i].J {
				if j.ID == 0 || j.Action != schedRemove {
					continue
				}
				if sp := mt.spanByID(j.ID); sp != nil && sp.Op == mopNone {
					sp.Op, sp.OpAbs, sp.OpPh = mopRemove, j.OpType != otRemove || tableInSnapshot(s, sp.Table, startTs), remRunning
					// HEAD's restored remove leaves the span replicating
					// until PostFinish marks it absent
					// (maintainer_controller_bootstrap.go 1249-1262);
					// cdcspec marks it scheduling, so it bounds the
					// checkpoint whatever the operator does.
					if !cfg.bug(spec.BugRemoveOperatorPassesCheckpoint) {
						sp.State = replScheduling
					}
				}
			}
		}
	}
	// Tables of the snapshot with no working dispatcher: AddNewTable; a
	// split table with one half adopted gets the other (the holes of the
	// table's key range, absent).
	for t := uint8(1); t <= MaxTables; t++ {
		if !tableInSnapshot(s, t, startTs) {
			continue
		}
		if mt.spanOverlapping(t, partWhole) == nil {
			if cfg.Merges > 0 {
				// the table split at creation (merge.go): its two halves
				for p := uint8(partLeft); p <= partRight; p++ {
					s.addSpan(mt, SpanRep{ID: s.allocID(), Table: t, Part: p, State: replAbsent, Node: none, Ckpt: startTs})
				}
				continue
			}
			s.addSpan(mt, SpanRep{ID: s.allocID(), Table: t, State: replAbsent, Node: none, Ckpt: startTs})
			continue
		}
		for p := uint8(partLeft); p <= partRight && !cfg.mut(MutBootstrapFillsSplitHoles); p++ {
			if mt.spanOverlapping(t, p) == nil {
				s.addSpan(mt, SpanRep{ID: s.allocID(), Table: t, Part: p, State: replAbsent, Node: none, Ckpt: startTs})
			}
		}
	}
	restoreBarrier(cfg, s, slot)
	mt.Bootstrapped = true
	mt.Boot = [MaxNodes]Snapshot{}
	for i := range mt.Boot {
		mt.Boot[i].TrigCkpt = none
	}
	if e != nil {
		e.add(spec.Event{Kind: spec.MaintainerBootstrapped, Node: NodeName(s.Ident(slot)), Epoch: uint64(mt.Epoch), Checkpoint: uint64(startTs)})
	}
	for j := range mt.Spans {
		if sp := &mt.Spans[j]; sp.ID != 0 && sp.Op != mopNone {
			resendOp(cfg, s, slot, sp)
		}
	}
}

// maintBootstrapError is onMaintainerBootstrapResponse with an Err
// (maintainer/maintainer.go:1025-1042 at b813e76f9): after the epoch check
// the error goes to runningErrors (onError) and the node stays unanswered,
// so the bootstrapper asks it again; the next status carries the error and
// the coordinator handles it as a retryable one (a warning restart closes
// the node's dispatcher manager). A closed maintainer handles no event
// (HandleEvent, :336-343).
func maintBootstrapError(cfg *Config, mt *Maint, src uint8, m Msg) {
	if mt.Removed || (cfg.has(FeatEpochs) && m.Epoch != mt.Epoch) {
		return // "drop stale maintainer response"
	}
	if mt.Err == 0 {
		mt.Err, mt.ErrFast = src+1, false
	}
}

// maintHandleDM handles the dispatcher managers' messages to a maintainer.
func maintHandleDM(cfg *Config, s *State, m Msg, e *emitter) {
	slot := slotOf(m.Dst)
	mt := &s.Maint[slot]
	if !mt.Exists {
		return // "maintainer is not found"
	}
	src := slotOf(m.Src)
	flushPendingWatermark(cfg, mt, src)
	switch m.Kind {
	case mBootResp:
		if m.A == bootRespErr {
			maintBootstrapError(cfg, mt, src, m)
			return
		}
		if mt.Bootstrapped && !mt.Removing && m.Epoch == mt.Epoch && s.member(m.Src) {
			// A node that joined after the bootstrap answered: it has a
			// dispatcher manager now and is not asked again. Its snapshot
			// holds no dispatcher of this maintainer's generation, so there
			// is nothing to adopt.
			mt.Answered |= 1 << src
			return
		}
		if mt.Bootstrapped || mt.RemovalOnly || mt.Removing {
			return
		}
		if cfg.has(FeatEpochs) && m.Epoch != mt.Epoch && !cfg.mut(MutBootRespEpochCheck) {
			return // "drop stale maintainer response"
		}
		if (mt.Bootstrapper&(1<<src) == 0 || !s.member(m.Src)) && !cfg.mut(MutBootRespMemberCheck) {
			return
		}
		mt.Answered |= 1 << src
		if mt.Answered == mt.Bootstrapper {
			finishBootstrap(cfg, s, slot, e)
		}
	case mCloseResp:
		if mt.Removing && m.A == 1 && s.member(m.Src) {
			mt.CloseAcked |= 1 << src
			maybeClosed(cfg, s, slot, e)
		}
	case mWatermark:
		// checkpointTsByCapture is keyed by node ID and the calculation
		// reads the bootstrapper's current IDs only: a late watermark of
		// a previous incarnation of the slot is stored under an ID nobody
		// reads, so the slot's entry ignores it.
		if !s.member(m.Src) {
			return
		}
		if mt.Bootstrapped || cfg.mut(MutHeartbeatBeforeBootstrap) {
			applyWatermark(cfg, mt, src, m.A)
			if m.B != trigCkNone {
				mt.TrigCk = m.B - trigCkBelow
			}
		}
	case mDMErr:
		// Before bootstrap heartbeats, errors included, are ignored.
		if mt.Bootstrapped && mt.Err == 0 {
			mt.Err, mt.ErrFast = src+1, m.B == 1
			if e != nil {
				e.add(spec.Event{Kind: spec.DispatcherErrorReported, Node: NodeName(m.Dst), Origin: NodeName(m.Src), Err: statusErrText(Msg{D: 1, E: m.B})})
			}
		}
	case mDispStatus:
		if mt.Bootstrapped || (cfg.mut(MutHeartbeatBeforeBootstrap) && !mt.RemovalOnly) {
			// The same HeartBeatRequest carries the watermark: applied
			// before the statuses (heartbeat.go), or after them in a later
			// step before #2864.
			if cfg.bug(spec.BugOperatorDoneBeforeWatermark) {
				handleDispStatus(cfg, s, slot, m, e)
				if mt.Exists {
					mt.PendWM[src] = m.D
				}
			} else {
				applyWatermark(cfg, mt, src, m.D)
				handleDispStatus(cfg, s, slot, m, e)
			}
		}
	case mBlockStatus:
		maintHandleBlockStatus(cfg, s, slot, m, e)
	case mBlockNone:
		if !mt.Bootstrapped || (mt.Removing && !cfg.mut(MutRemovingNoSchedule)) {
			return
		}
		// Non-blocking add-table DDL: schedule at once, then ACK (A.7).
		if mt.spanOverlapping(m.A, partWhole) == nil {
			s.addSpan(mt, SpanRep{ID: s.allocID(), Table: m.A, State: replAbsent, Node: none, Ckpt: m.B})
		}
		s.send(Msg{Kind: mAck, Src: m.Dst, Dst: m.Src, Epoch: mt.Epoch, A: m.B})
	}
}

// handleDispStatus is Controller.handleStatus (A.6 self-healing).
func handleDispStatus(cfg *Config, s *State, slot uint8, m Msg, e *emitter) {
	mt := &s.Maint[slot]
	id, status, ckpt := m.A, m.B, m.C
	working := status == dWorking || status == dInit
	if id == mt.TriggerID {
		return
	}
	sp := mt.spanByID(id)
	if sp == nil {
		if status == dWorking && (!mt.Removing || cfg.mut(MutRemovingNoSchedule)) {
			if e != nil {
				e.add(spec.Event{Kind: spec.SpanNotFound, Node: NodeName(m.Src), Dispatcher: dispName(id)})
			}
			s.send(scheduleMsg(s, slot, mt, m.Src, schedRemove, id, 0, 0, otRemove))
		}
		return
	}
	hadOp := sp.Op != mopNone
	switch sp.Op {
	case mopMerge:
		if sp.OpPh == mergeRunning && m.Src == sp.Node && status == dWorking {
			mergeCheck(cfg, s, slot, sp, ckpt, e)
			return
		}
	case mopOccupy:
		if mt.occupyReleased(sp.Table) && m.Src == sp.Node && !working && !mt.Removing {
			occupyLateTerminal(sp, ckpt)
			return
		}
	case mopGhost:
		// not in the span controller: "no span found" for a Working one
		if status == dWorking && !mt.Removing {
			s.send(scheduleMsg(s, slot, mt, m.Src, schedRemove, id, 0, 0, otRemove))
		}
		return
	case mopAdd:
		if m.Src == sp.OpDest && status == dWorking {
			sp.Ckpt = max(sp.Ckpt, ckpt)
			sp.Op, sp.OpDest = mopNone, 0
			sp.State = replReplicating
			opFinished(e, spec.OpAdd, sp, m.Src)
			return
		}
	case mopRemove:
		// Check finishes the operator; PostFinish is a later step
		// (AOpPostFinish). The span's status is updated below, as
		// handleStatus does after Check.
		if m.Src == sp.Node && !working {
			sp.OpPh = remFinished
		}
	case mopSplit:
		if m.Src == sp.Node && !working {
			splitPostFinish(cfg, s, slot, sp, max(sp.Ckpt, ckpt), e)
			return
		}
	case mopMove:
		if sp.OpPh == movRemoveOrigin && m.Src == sp.Node && !working {
			sp.Ckpt = max(sp.Ckpt, ckpt)
			sp.OpPh, sp.Node = movAddDest, sp.OpDest
			resendOp(cfg, s, slot, sp)
			return
		}
		if sp.OpPh == movAddDest && m.Src == sp.OpDest && status == dWorking {
			sp.Op, sp.OpDest, sp.OpPh = mopNone, 0, 0
			sp.State = replReplicating
			opFinished(e, spec.OpMove, sp, m.Src)
			return
		}
	}
	if m.Src != sp.Node {
		return // "nodeID not match"
	}
	sp.Ckpt = max(sp.Ckpt, ckpt)
	if !working && !hadOp && !mt.Removing && !cfg.bug(spec.BugInflightOperatorsLostOnFailover) {
		// #3691 fallback: "dispatcher becomes non-working without operator,
		// mark span absent for rescheduling".
		markAbsent(sp)
	}
}
