package model

import (
	"cdcspec/spec"
)

const sinkErrText = "[CDC:ErrKafkaAsyncSendMessage]kafka async send message failed"

// coordSchedule is the basic scheduler putting the absent changefeed on a
// node: AddOperator for an add first bumps and persists the epoch (A.2).
func coordSchedule(cfg *Config, s *State, slot uint8, e *emitter) {
	c := &s.Coord
	if cfg.has(FeatEpochs) {
		c.Epoch++
		if e != nil {
			e.add(spec.Event{Kind: spec.EpochBumped, Epoch: uint64(c.Epoch)})
		}
	}
	dest := s.Ident(slot)
	c.Op, c.OpNode, c.OpEpoch = copAdd, dest, c.Epoch
	handoffOtherOpStarted(s)
	c.Repl, c.Node = replScheduling, dest
	if e != nil {
		e.add(spec.Event{Kind: spec.MaintainerOpStarted, Op: spec.OpAdd, Node: NodeName(dest), Epoch: uint64(c.Epoch)})
	}
	s.send(coordOpMsg(s))
}

// coordOpMsg is the request the current operator sends on every Schedule().
func coordOpMsg(s *State) Msg {
	c := &s.Coord
	if c.Op == copMove {
		return coordMoveMsg(s)
	}
	if c.Op == copAdd {
		return Msg{Kind: mAddMaintainer, Src: s.coordID(), Dst: c.OpNode, Epoch: c.OpEpoch, A: c.Ckpt}
	}
	m := Msg{Kind: mRemoveMaintainer, Src: s.coordID(), Dst: c.OpNode, Epoch: c.OpEpoch, A: 1}
	if c.OpRemove {
		m.B = 1
	}
	return m
}

func coordWouldResend(s *State) bool {
	m := coordOpMsg(s)
	if !s.live(m.Dst) {
		return false
	}
	n := s.nmsgs()
	for i := 0; i < n; i++ {
		if s.Net[i] == m {
			return false
		}
	}
	return true
}

// coordTickEnabled reports whether a coordinator tick would send anything:
// a re-sent bootstrap request while booting, else the operator's request.
func coordTickEnabled(s *State) bool {
	if s.Coord.Booting {
		return coordBootstrapWouldResend(s)
	}
	return s.Coord.Op != copNone && coordWouldResend(s)
}

func coordResend(cfg *Config, s *State) {
	if s.Coord.Booting {
		sendCoordBootstrapRequests(s)
		return
	}
	if s.Coord.Op != copNone {
		coordMoveSchedule(s)
		s.send(coordOpMsg(s))
	}
}

// coordOnNodeRemoved: an add to the dead node is cancelled (absent); a stop
// aimed at it is re-targeted to the coordinator's own node (slot 0), where a
// removal-only maintainer does the cascade close; a replicating changefeed
// there becomes absent (A.2, C.7).
func coordOnNodeRemoved(cfg *Config, s *State, id uint8, e *emitter) {
	c := &s.Coord
	handoffNodeLeft(s, id)
	if c.Booting {
		coordBootstrapNodeRemoved(cfg, s, id, e)
		return
	}
	if cfg.mut(MutCoordNodeRemoved) && c.Op != copNone {
		return
	}
	switch {
	case c.Op == copMove:
		coordMoveOnNodeRemoved(s, id, e)
	case c.Op == copAdd && c.OpNode == id:
		c.Op, c.OpNode = copNone, none
		c.Repl, c.Node = replAbsent, none
	case c.Op == copStop && c.OpNode == id:
		c.OpNode = s.Ident(0)
		s.send(coordOpMsg(s))
	case c.Op == copNone && c.Node == id:
		c.Repl, c.Node = replAbsent, none
	}
}

// coordHandleStatus is controller.handleMaintainerStatus followed by
// Changefeed.UpdateStatus, in TiCDC's order (A.2).
func coordHandleStatus(cfg *Config, s *State, m Msg, e *emitter) {
	c := &s.Coord
	if c.Booting || m.Dst != s.coordID() {
		// shouldHandleMaintainerHeartbeat (controller.go:445-453 at
		// b813e76f9): not initialized yet. (A status to a resigned
		// coordinator never reaches this one: send drops it.)
		return
	}
	working, ckpt, bootDone := m.A == 1, m.B, m.C == 1
	st := spec.MaintainerStopped
	if working {
		st = spec.MaintainerWorking
	}
	errText := statusErrText(m)
	recv := spec.Event{Kind: spec.StatusReceived, Node: NodeName(m.Src), Epoch: uint64(m.Epoch), Checkpoint: uint64(ckpt), BootstrapDone: bootDone, State: st, Err: errText}
	handoffStatusReceived(s, m)

	// (1) the operator sees the status first.
	hadOp := c.Op != copNone
	switch c.Op {
	case copAdd:
		// AddMaintainerOperator.Check: from the destination, current epoch,
		// Working and BootstrapDone. Before #3976 (bug) BootstrapDone was not
		// required, so a removal-only maintainer's Working report finished it.
		epochOK := !cfg.has(FeatEpochs) || m.Epoch == c.OpEpoch || cfg.mut(MutAddCheckEpoch)
		bootOK := bootDone || cfg.bug(spec.BugAddAcceptsUnbootstrappedMaintainer)
		if m.Src == c.OpNode && epochOK && working && bootOK {
			c.Op = copNone
			c.Repl = replReplicating
			c.Restarting = false // StartFinished
			if e != nil {
				e.add(spec.Event{Kind: spec.MaintainerOpFinished, Op: spec.OpAdd, Node: NodeName(m.Src), Epoch: uint64(c.OpEpoch)})
			}
			c.OpNode = none
		}
	case copStop:
		// StopChangefeedOperator.Check: a non-Working report from the node
		// with the stopped epoch; before epochs any non-Working report.
		match := !working && (!cfg.has(FeatEpochs) || cfg.mut(MutStopCheckEpoch) || (m.Src == c.OpNode && m.Epoch == c.OpEpoch))
		if match {
			if e != nil {
				e.add(spec.Event{Kind: spec.MaintainerOpFinished, Op: spec.OpStop, Node: NodeName(c.OpNode), Epoch: uint64(c.OpEpoch)})
			}
			coordFinishStop(s, e)
			c.Op, c.OpNode, c.OpRemove = copNone, none, false
		}
	case copMove:
		coordMoveCheck(cfg, s, m, e)
	}
	if deleted(c) {
		// The changefeed's keys are gone: "no changefeed found and no
		// operator for it, removing from maintainer".
		if e != nil {
			e.add(recv)
		}
		if working && !hadOp {
			s.send(Msg{Kind: mRemoveMaintainer, Src: s.coordID(), Dst: m.Src, Epoch: m.Epoch, A: 1, B: 1})
		}
		return
	}
	// (3) node check, (4) epoch check.
	if m.Src != c.Node && !(cfg.mut(MutStatusNodeCheck) && c.Node != none) {
		if e != nil {
			e.add(recv)
		}
		if e != nil {
			e.add(spec.Event{Kind: spec.StatusIgnored, Node: NodeName(m.Src), Epoch: uint64(m.Epoch), Reason: "remote changefeed maintainer nodeID mismatch with local record"})
		}
		return
	}
	// #6280: the active move's origin's final Stopped report passes (movemaintainer.go).
	if cfg.has(FeatEpochs) && m.Epoch != 0 && m.Epoch != c.Epoch && !cfg.mut(MutStatusEpochCheck) && !moveFinalReport(cfg, s, m) {
		if e != nil {
			e.add(recv)
		}
		if e != nil {
			e.add(spec.Event{Kind: spec.StatusIgnored, Node: NodeName(m.Src), Epoch: uint64(m.Epoch), Reason: "drop stale maintainer status"})
		}
		return
	}
	recv.Accepted = true
	if e != nil {
		e.add(recv)
	}
	updateStatus(cfg, s, m, e)
}

// updateStatus is Changefeed.UpdateStatus (A.2 steps 1-6) plus
// handleStateChange for a warning. It also maintains the
// error-never-dropped ghost: an error whose checkpoint did not move that
// reaches neither the backoff nor the BootstrapDone rule was dropped.
//
// Long: mirrors HEAD's Changefeed.UpdateStatus (coordinator/changefeed/changefeed.go:163-207) steps 1-6.
func updateStatus(cfg *Config, s *State, m Msg, e *emitter) {
	c := &s.Coord
	ckpt, bootDone, hasErr := m.B, m.C == 1, m.D != 0
	fast := hasErr && m.E == 1
	handled := false
	defer func() {
		drop := hasErr && !handled
		if fast {
			// A fast-fail error is handled only by failing the changefeed.
			drop = c.State != cfFailed && running(c)
		}
		if drop && !s.ErrDrop.Set {
			s.ErrDrop = ErrDropGhost{Set: true, Node: m.Src, Epoch: m.Epoch, Reported: m.B, Stored: c.Ckpt, Fast: fast}
		}
	}()
	// 1. Regressed checkpoint.
	if ckpt < c.Ckpt {
		if !hasErr {
			handled = true // nothing to drop
			return
		}
		if cfg.bug(spec.BugRegressedCheckpointDropsError) {
			// Before #5779 the whole status, Err included, was dropped here.
			return
		}
		ckpt = c.Ckpt // #5779: continue with a copy at the stored checkpoint
	}
	// 2. Store it.
	storedBefore := c.Ckpt
	if ckpt > c.Ckpt {
		c.Ckpt = ckpt
		if e != nil {
			e.add(spec.Event{Kind: spec.CheckpointStored, Checkpoint: uint64(ckpt)})
		}
	}
	// 3. Fast-fail errors (lifecycle.go).
	if checkFailedStatus(cfg, s, m, ckpt, e) {
		handled = true
		return
	}
	// 4. BootstrapDone changed: report Normal, by design ignore the error.
	// cdcspec runs step 6's progress check here: the backoff's baseline
	// follows the stored checkpoint and a retrying changefeed is recovered.
	// HEAD does neither (catalogue entry toggle-keeps-baseline), so the next
	// status at this checkpoint is taken for progress and its error is
	// ignored; that holds while retrying too (a restarted maintainer's
	// bootstrapped status raises the checkpoint, the next one carries the
	// sink's error).
	if bootDone != c.BootDone {
		c.BootDone = bootDone
		handled = true
		if !cfg.bug(spec.BugToggleKeepsBaseline) && c.Ckpt > c.Baseline {
			c.Baseline = c.Ckpt
			if c.Retrying {
				c.Retrying, c.Retries = false, 0
				if e != nil {
					e.add(spec.Event{Kind: spec.BackoffRecovered, Checkpoint: uint64(c.Ckpt)})
				}
			}
		}
		if e != nil {
			e.add(spec.Event{Kind: spec.BootstrapDoneChanged, Node: NodeName(m.Src), BootstrapDone: bootDone})
		}
		if c.State != cfNormal {
			c.State = cfNormal
			if e != nil {
				e.add(spec.Event{Kind: spec.StateChanged, State: spec.StateNormal})
			}
		}
		return
	}
	// 6. CheckStatus.
	if ckpt > c.Baseline {
		c.Baseline = ckpt
		// Progress past the baseline: the backoff ignores this report's
		// error. That is handling only if the stored checkpoint moved
		// with it (spec error-never-dropped: an error is handled by a
		// backoff event, a state change, a toggle or a stored-checkpoint
		// advance).
		handled = ckpt > storedBefore
		if c.Retrying {
			c.Retrying, c.Retries = false, 0
			if e != nil {
				e.add(spec.Event{Kind: spec.BackoffRecovered, Checkpoint: uint64(ckpt)})
			}
			if c.State != cfNormal {
				c.State = cfNormal
				if e != nil {
					e.add(spec.Event{Kind: spec.StateChanged, State: spec.StateNormal})
				}
			}
		}
		return
	}
	if !hasErr {
		return
	}
	handled = true
	if e != nil {
		e.add(spec.Event{Kind: spec.BackoffErrorSeen, Node: NodeName(m.Src), Err: statusErrText(m), Checkpoint: uint64(c.Ckpt), State: spec.StateWarning})
	}
	if failIfFastFail(cfg, s, m, e) {
		return
	}
	if c.Restarting && !cfg.mut(MutRestartingIgnoresError) {
		if e != nil {
			e.add(spec.Event{Kind: spec.BackoffIgnored, Err: sinkErrText})
		}
		return
	}
	if handleErrorBudget(cfg, s, m, e) {
		return
	}
	c.Restarting, c.Retrying, c.RetryWait = true, true, true
	if e != nil {
		e.add(spec.Event{Kind: spec.BackoffStarted, Checkpoint: uint64(c.Ckpt), NextRetry: 1, Err: sinkErrText})
	}
	// handleStateChange(Warning): bump the epoch, cascade-stop the old
	// maintainer with its epoch, move the changefeed to the scheduling queue.
	c.State = cfWarning
	if e != nil {
		e.add(spec.Event{Kind: spec.StateChanged, State: spec.StateWarning, Err: sinkErrText})
	}
	oldEpoch, oldNode := c.Epoch, c.Node
	if cfg.has(FeatEpochs) {
		c.Epoch++
		if e != nil {
			e.add(spec.Event{Kind: spec.EpochBumped, Epoch: uint64(c.Epoch)})
		}
	}
	c.Op, c.OpNode, c.OpEpoch = copStop, oldNode, oldEpoch
	clearMove(c)
	handoffOtherOpStarted(s)
	c.Repl, c.Node = replAbsent, none
	if e != nil {
		e.add(spec.Event{Kind: spec.MaintainerOpStarted, Op: spec.OpStop, Node: NodeName(oldNode), Epoch: uint64(oldEpoch)})
	}
	s.send(coordOpMsg(s))
}
