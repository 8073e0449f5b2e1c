package model

import (
	"cdcspec/spec"
)

// The changefeed's lifecycle beyond create: fast-fail errors and the Failed
// state, pause, resume (with and without an overwritten checkpoint) and
// remove as client requests, and coordinator failover. Section references
// are the TiCDC protocol reference's (C.2-C.4 API flows, C.7 coordinator
// failover); the implementation's counterparts are impl/coordinator
// (controller.go PauseChangefeed, ResumeChangefeed, RemoveChangefeed,
// maybeInitialize; changefeed.go checkFailedStatus).

// running reports whether the changefeed is expected to replicate: normal
// or warning (shouldRunChangefeed).
func running(c *Coord) bool { return c.State == cfNormal || c.State == cfWarning }

// deleted reports whether a removed changefeed's keys are gone: its remove
// stop finished.
func deleted(c *Coord) bool { return c.State == cfRemoved && c.Op == copNone }

// fastFail: dispatcher id fails with an unretryable error. The dispatcher
// stops advancing (its sink or filter is broken) and its manager keeps the
// error as its first one unless it already has one.
func fastFail(s *State, id uint8, e *emitter) {
	d := s.disp(id)
	if d == nil {
		return
	}
	s.FastFails++
	d.SinkErr = true
	dm := &s.DMs[d.Node]
	if !dm.Err {
		dm.Err, dm.ErrFast = true, true
	}
	if e != nil {
		e.add(spec.Event{Kind: spec.SinkError, Node: NodeName(s.Ident(d.Node)), Dispatcher: dispName(d.ID), Span: partSpan(d.Table, d.Part),
			Err: spec.FastFailErrText})
	}
}

// statusErrText is the error a status carries, "" for none.
func statusErrText(m Msg) string {
	switch {
	case m.D == 0:
		return ""
	case m.E == 1:
		return spec.FastFailErrText
	}
	return sinkErrText
}

// checkFailedStatus is step 3 of UpdateStatus (Backoff.checkFailedStatus,
// #5424): a failed changefeed stays failed; a fast-fail error fails it at
// once, before the BootstrapDone toggle and before checkpoint progress, and
// the baseline follows the failing report. It returns whether UpdateStatus
// ends here.
func checkFailedStatus(cfg *Config, s *State, m Msg, ckpt uint8, e *emitter) bool {
	c := &s.Coord
	if c.State == cfFailed {
		return true
	}
	if m.D == 0 || m.E != 1 {
		return false
	}
	if cfg.bug(spec.BugFastFailIgnoredWithProgress) {
		// Before #5424 only HandleError looked for fast-fail errors: the
		// progress and toggle returns come first (failIfFastFail below).
		return false
	}
	if ckpt > c.Baseline {
		c.Baseline = ckpt
	}
	failChangefeed(cfg, s, m, spec.FastFailErrText, e)
	return true
}

// failIfFastFail is HandleError's fast-fail check, the only one before
// #5424: reached by an error status without progress.
func failIfFastFail(cfg *Config, s *State, m Msg, e *emitter) bool {
	if m.E != 1 || !cfg.bug(spec.BugFastFailIgnoredWithProgress) {
		return false
	}
	failChangefeed(cfg, s, m, spec.FastFailErrText, e)
	return true
}

// handleErrorBudget is HandleError's budget (coordinator/changefeed/backoff.go
// at b813e76f9), the model's abstraction of changefeed-error-stuck-duration:
// Config.ErrorStuckRestarts restarts per streak of errors without
// checkpoint progress (0: no give-up, Retries stays 0). The first error of a
// streak (not retrying) resets it (resetErrRetry); a streak that spent it
// fails the changefeed ("The changefeed won't be restarted as it has been
// experiencing failures for an extended duration") and reports true;
// otherwise one restart is spent. TiCDC counts time (errBackoff's
// MaxElapsedTime, 30 min: about 8 restarts of the 10 s to 10 min schedule)
// and resets it exactly where the model resets the count: HandleError when
// not retrying, progress while retrying (resetErrRetry), resume
// (resetBackoff) and a new coordinator's NewBackoff. SPEC.md section 9.
func handleErrorBudget(cfg *Config, s *State, m Msg, e *emitter) bool {
	c := &s.Coord
	if cfg.ErrorStuckRestarts == 0 {
		return false
	}
	if !c.Retrying {
		c.Retries = 0
	}
	if int(c.Retries) >= cfg.ErrorStuckRestarts && !cfg.mut(MutErrorStuckGiveUp) {
		if e != nil {
			e.add(spec.Event{Kind: spec.BackoffGaveUp, Checkpoint: uint64(c.Ckpt)})
		}
		failChangefeed(cfg, s, m, sinkErrText, e)
		return true
	}
	c.Retries++
	return false
}

// failChangefeed is handleStateChange(Failed): the state and error are
// persisted with Progress Stopping and the maintainer is stopped with the
// current epoch (no bump); the changefeed is not scheduled again.
func failChangefeed(cfg *Config, s *State, m Msg, errText string, e *emitter) {
	c := &s.Coord
	if e != nil {
		e.add(spec.Event{Kind: spec.StateChanged, State: spec.StateFailed, Err: errText, Node: NodeName(m.Src)})
	}
	c.State = cfFailed
	c.Retrying, c.RetryWait, c.Retries = false, false, 0
	stopChangefeed(cfg, s, false, e)
}

// stopChangefeed is operatorController.StopChangefeed after the state was
// set: a cascade stop of the maintainer the changefeed is bound to (the
// coordinator's own node when none), with the current epoch, replacing any
// operator. A stop that replaces a pending stop keeps that stop's node and
// epoch (#6135) unless the catalogue entry stop-replaces-pending-stop is
// on; a pending remove-stop is never replaced by a non-remove stop.
func stopChangefeed(cfg *Config, s *State, remove bool, e *emitter) {
	c := &s.Coord
	node, epoch := c.Node, c.Epoch
	if node == none {
		node = s.Ident(0)
	}
	switch c.Op {
	case copStop:
		if c.OpRemove && !remove {
			c.Repl, c.Node = replAbsent, none
			return
		}
		if !cfg.bug(spec.BugStopReplacesPendingStop) {
			node, epoch = c.OpNode, c.OpEpoch
		}
	case copAdd:
		node, epoch = c.OpNode, c.OpEpoch
	case copMove:
		// moveOriginStopTargetLocked: the origin and its epoch until the
		// target is bound, then the target and the move's epoch.
		if c.OpPh == cmovAddTarget {
			node, epoch = c.OpNode, c.OpEpoch
		} else {
			node, epoch = c.OpOrigin, c.OpOrigEpoch
		}
	}
	c.Op, c.OpNode, c.OpEpoch, c.OpRemove = copStop, node, epoch, remove
	clearMove(c)
	handoffOtherOpStarted(s)
	c.Repl = replAbsent
	if !cfg.mut(MutStopClearsNode) {
		// StopByChangefeedID: cf.SetNodeID("") (changefeed_db.go:129 at
		// b813e76f9), so the stopped maintainer's late statuses fail
		// validateMaintainerNode.
		c.Node = none
	}
	if e != nil {
		e.add(spec.Event{Kind: spec.MaintainerOpStarted, Op: spec.OpStop, Node: NodeName(node), Epoch: uint64(epoch), Removed: remove})
	}
	s.send(coordOpMsg(s))
}

// pauseChangefeed is PauseChangefeed (C.2): state stopped, Progress
// Stopping, then the stop.
func pauseChangefeed(cfg *Config, s *State, e *emitter) {
	s.ClientOps++
	c := &s.Coord
	c.State = cfStopped
	c.RetryWait = false
	if e != nil {
		e.add(spec.Event{Kind: spec.StateChanged, State: spec.StateStopped})
	}
	stopChangefeed(cfg, s, false, e)
}

// removeChangefeed is RemoveChangefeed (C.4): Progress Removing, then a
// stop with Removed; when it finishes the keys are deleted
// (ChangefeedRemoved, coordFinishStop).
func removeChangefeed(cfg *Config, s *State, e *emitter) {
	s.ClientOps++
	c := &s.Coord
	c.State = cfRemoved
	c.RetryWait = false
	if e != nil {
		e.add(spec.Event{Kind: spec.StateChanged, State: spec.StateRemoved})
	}
	stopChangefeed(cfg, s, true, e)
}

// resumeChangefeed is ResumeChangefeed (C.3): allowed only for a stopped or
// failed changefeed whose stop finished. The epoch is bumped, the state is
// normal, the status is reset for the next owner (GetStatusForResume: no
// error, BootstrapDone false), the checkpoint may be overwritten (ckpt 0:
// keep), and the backoff is reset with its baseline at the checkpoint
// (MoveToSchedulingQueue with resetBackoff). Rows at or below an
// overwritten checkpoint are no longer owed (the client chose to skip or
// replay them): the ghost Flushed follows.
func resumeChangefeed(cfg *Config, s *State, ckpt uint8, e *emitter) {
	s.ClientOps++
	c := &s.Coord
	if ckpt == 0 {
		ckpt = c.Ckpt
	}
	if cfg.has(FeatEpochs) {
		c.Epoch++
		if e != nil {
			e.add(spec.Event{Kind: spec.EpochBumped, Epoch: uint64(c.Epoch)})
		}
	}
	c.State = cfNormal
	c.Ckpt = ckpt
	c.BootDone = false
	c.Retrying, c.Restarting, c.RetryWait, c.Retries = false, false, false, 0
	c.Baseline = ckpt
	c.Repl, c.Node = replAbsent, none
	for t := 1; t <= MaxTables; t++ {
		if s.TableT[t] != none {
			for h := range s.FlushedPart[t] {
				s.FlushedPart[t][h] = max(s.FlushedPart[t][h], ckpt)
			}
			s.Flushed[t] = min(s.FlushedPart[t][0], s.FlushedPart[t][1])
		}
	}
	if e != nil {
		e.add(spec.Event{Kind: spec.ChangefeedResumed, Checkpoint: uint64(ckpt)})
		e.add(spec.Event{Kind: spec.StateChanged, State: spec.StateNormal})
	}
}

// coordFinishStop is StopChangefeedOperator.PostFinish: a remove deletes the
// changefeed's keys.
func coordFinishStop(s *State, e *emitter) {
	if s.Coord.OpRemove && e != nil {
		e.add(spec.Event{Kind: spec.ChangefeedRemoved})
	}
}

// coordFailover: the coordinator resigns and a new one is elected
// (server/module_election.go:143-178 at b813e76f9: co.Run returns, Stop,
// resign, and the next campaign; the model's step is the old coordinator's
// exit and the new one's New, controller.go:191-217, which asks every node
// in the node set for a CoordinatorBootstrapRequest). Everything the old
// coordinator held only in memory is lost: its operator, the replica
// state, BootstrapDone, the backoff. Statuses addressed to it are lost with
// it; requests it sent stay in flight, and a manager takes them until it
// answers the new coordinator's bootstrap (managerFromCoordinator). The new
// coordinator is not initialized (Coord.Booting) until every node answered:
// it handles no status and schedules nothing
// (shouldHandleMaintainerHeartbeat, controller.go:445-453).
//
// The persisted Progress (Coord.Prog) is what the old coordinator last
// wrote: stopping while its stop operator ran for a stopped, failed or
// removed changefeed, deleted once a remove finished.
func coordFailover(cfg *Config, s *State, e *emitter) {
	c := &s.Coord
	prog := uint8(progNone)
	switch {
	case c.Booting:
		prog = c.Prog // a coordinator that never initialized wrote nothing
	case deleted(c):
		prog = progDeleted
	case c.Op == copStop && !running(c):
		prog = progStopping
	}
	s.CoordFails++
	for i := 0; i < s.nmsgs(); {
		if isCoord(s.Net[i].Dst) {
			s.removeMsg(i)
			continue
		}
		i++
	}
	// In-memory state of the new coordinator: nothing until finishBootstrap.
	c.Repl, c.Node, c.BootDone = replAbsent, none, false
	c.Op, c.OpNode, c.OpEpoch, c.OpRemove = copNone, none, 0, false
	clearMove(c)
	// NewBackoff: a fresh budget whether or not retrying is restored below.
	c.Retrying, c.Restarting, c.RetryWait, c.Retries = false, false, false, 0
	c.Baseline = c.Ckpt
	c.Booting, c.Prog = true, prog
	c.BootWait, c.BootHas = memberMask(cfg, s), 0
	c.BootEp, c.BootCk = [MaxNodes]uint8{}, [MaxNodes]uint8{}
	sendCoordBootstrapRequests(s)
}

// sendCoordBootstrapRequests sends CoordinatorBootstrapRequest to every node
// that has not answered (bootstrapper.HandleNodesChange at New, and
// ResendBootstrapMessage on each periodic task, controller.go:393-398).
func sendCoordBootstrapRequests(s *State) {
	c := &s.Coord
	for i := uint8(0); i < MaxNodes; i++ {
		if c.BootWait&(1<<i) != 0 {
			s.send(Msg{Kind: mCoordBootReq, Src: s.coordID(), Dst: s.Ident(i)})
		}
	}
}

// coordBootstrapWouldResend reports whether a re-sent bootstrap request
// would add a message: some awaited live node has none in flight.
func coordBootstrapWouldResend(s *State) bool {
	c := &s.Coord
	for i := uint8(0); i < MaxNodes; i++ {
		if c.BootWait&(1<<i) == 0 || !s.live(s.Ident(i)) {
			continue
		}
		m := Msg{Kind: mCoordBootReq, Src: s.coordID(), Dst: s.Ident(i)}
		found := false
		for j := 0; j < s.nmsgs(); j++ {
			if s.Net[j] == m {
				found = true
				break
			}
		}
		if !found {
			return true
		}
	}
	return false
}

// managerFromCoordinator is the manager's admission of an Add or Remove
// (maintainer_manager.go:210-225, maintainer_manager_maintainers.go:105-123
// at b813e76f9): handled only if sent by the coordinator whose bootstrap
// the manager answered last; otherwise "ignore invalid coordinator id".
// Requests and bootstrap requests share the manager's one queue (msgCh,
// maintainer_manager.go:89-101), so a request is judged against the
// coordinator the manager knows when the request's turn comes.
func managerFromCoordinator(s *State, m Msg) bool {
	return m.Src == s.MgrCoord[slotOf(m.Dst)]
}

// managerHandleCoordBootstrap is onCoordinatorBootstrapRequest
// (maintainer_manager.go:179-208): a request of an older coordinator is
// ignored ("ignore invalid coordinator version"); otherwise the sender
// becomes the manager's coordinator and gets every local maintainer's
// status (buildBootstrapResponse). The model reports a maintainer that is
// not closed; a closed one the manager has not cleaned up yet is left out
// (SPEC.md section 9).
func managerHandleCoordBootstrap(s *State, m Msg) {
	slot := slotOf(m.Dst)
	if m.Src>>2 < s.MgrCoord[slot]>>2 {
		return
	}
	s.MgrCoord[slot] = m.Src
	r := Msg{Kind: mCoordBootResp, Src: m.Dst, Dst: m.Src}
	if mt := &s.Maint[slot]; mt.Exists && !mt.Removed {
		r.A, r.Epoch, r.B = 1, mt.Epoch, mt.Reported
	}
	s.send(r)
}

// coordHandleBootstrapResponse is onMaintainerBootstrapResponse
// (controller.go:530-545): the response of a tracked node is cached (a
// later one replaces it, bootstrapper.HandleBootstrapResponse); once every
// tracked node answered, the coordinator finishes its bootstrap.
func coordHandleBootstrapResponse(cfg *Config, s *State, m Msg, e *emitter) {
	c := &s.Coord
	sl := slotOf(m.Src)
	if !c.Booting || m.Dst != s.coordID() || !s.member(m.Src) {
		return
	}
	c.BootWait &^= 1 << sl
	c.BootHas &^= 1 << sl
	c.BootEp[sl], c.BootCk[sl] = 0, 0
	if m.A == 1 {
		c.BootHas |= 1 << sl
		c.BootEp[sl], c.BootCk[sl] = m.Epoch, m.B
	}
	maybeFinishCoordBootstrap(cfg, s, e)
}

// coordBootstrapNodeRemoved: a node left while the coordinator waits for
// its answer; the bootstrapper forgets it and its cached response
// (HandleNodesChange, pkg/bootstrap/bootstrap.go:87-97), which may complete
// the bootstrap (onNodeChanged, controller.go:505-528).
func coordBootstrapNodeRemoved(cfg *Config, s *State, id uint8, e *emitter) {
	c := &s.Coord
	sl := slotOf(id)
	c.BootWait &^= 1 << sl
	c.BootHas &^= 1 << sl
	c.BootEp[sl], c.BootCk[sl] = 0, 0
	maybeFinishCoordBootstrap(cfg, s, e)
}

// maintReport is what one node's CoordinatorBootstrapResponse says of the
// changefeed: a maintainer and its epoch.
type maintReport struct {
	node, epoch, ckpt uint8
}

// maybeFinishCoordBootstrap is finishBootstrap (controller.go:711-811) once
// no tracked node's answer is awaited. The new coordinator reads etcd
// (state, epoch, stored checkpoint, Progress) and the cached responses:
//   - a deleted changefeed's maintainers get a cascade remove with Removed
//     ("maintainer not found in local, remove it");
//   - a removing one (Progress Removing) gets a remove-stop aimed at the
//     running maintainer with its epoch (else the coordinator's node);
//   - a stopped or failed one stays stopped; with a stop in progress
//     (Progress Stopping) it gets that stop again;
//   - a running one adopts the maintainer of the current epoch
//     (checkpoint, baseline and stored checkpoint from its report,
//     BootstrapDone false, retrying if the state is warning: #921) and
//     stops stale-epoch ones (stopStaleBootstrapMaintainers).
func maybeFinishCoordBootstrap(cfg *Config, s *State, e *emitter) {
	c := &s.Coord
	if !c.Booting || c.BootWait != 0 {
		return
	}
	var reports [MaxNodes]maintReport
	n := 0
	for i := uint8(0); i < uint8(cfg.Nodes); i++ {
		if c.BootHas&(1<<i) != 0 {
			reports[n] = maintReport{node: s.Ident(i), epoch: c.BootEp[i], ckpt: c.BootCk[i]}
			n++
		}
	}
	prog := c.Prog
	c.Booting, c.Prog, c.BootHas = false, progNone, 0
	c.BootEp, c.BootCk = [MaxNodes]uint8{}, [MaxNodes]uint8{}
	if e != nil {
		// finishBootstrap logs it last (controller.go:810 at b813e76f9);
		// the model emits it before the stop operators the bootstrap
		// starts, so that maintainer-operators-finish can tell the old
		// coordinator's operators (gone) from the new one's.
		e.add(spec.Event{Kind: spec.CoordinatorBootstrapped, Node: NodeName(s.Ident(0))})
	}
	switch {
	case prog == progDeleted:
		for _, r := range reports[:n] {
			s.send(Msg{Kind: mRemoveMaintainer, Src: s.coordID(), Dst: r.node, Epoch: r.epoch, A: 1, B: 1})
		}
		return
	case !running(c):
		if prog != progStopping {
			return
		}
		node, epoch := s.Ident(0), c.Epoch
		if n > 0 {
			node, epoch = reports[0].node, reports[0].epoch
		}
		c.Op, c.OpNode, c.OpEpoch, c.OpRemove = copStop, node, epoch, c.State == cfRemoved
		handoffOtherOpStarted(s)
		if e != nil {
			e.add(spec.Event{Kind: spec.MaintainerOpStarted, Op: spec.OpStop, Node: NodeName(node), Epoch: uint64(epoch), Removed: c.OpRemove})
		}
		s.send(coordOpMsg(s))
		return
	}
	c.Retrying = c.State == cfWarning && !cfg.bug(spec.BugFailoverLosesRetrying)
	adopted := false
	for _, r := range reports[:n] {
		if !adopted && (!cfg.has(FeatEpochs) || r.epoch == c.Epoch) {
			adopted = true
			c.Repl, c.Node = replReplicating, r.node
			c.Ckpt, c.Baseline = r.ckpt, r.ckpt
			continue
		}
		if c.Op == copNone {
			c.Op, c.OpNode, c.OpEpoch = copStop, r.node, r.epoch
			handoffOtherOpStarted(s)
			if e != nil {
				e.add(spec.Event{Kind: spec.MaintainerOpStarted, Op: spec.OpStop, Node: NodeName(r.node), Epoch: uint64(r.epoch)})
			}
			s.send(coordOpMsg(s))
			continue
		}
		s.send(Msg{Kind: mRemoveMaintainer, Src: s.coordID(), Dst: r.node, Epoch: r.epoch, A: 1})
	}
}

// appendLifecycleActions lists the enabled actions of this file.
func appendLifecycleActions(cfg *Config, s *State, buf []Action, withFaults bool) []Action {
	c := &s.Coord
	if withFaults && int(s.FastFails) < cfg.FastFails {
		for i := range s.Disp {
			if d := &s.Disp[i]; d.ID != 0 && d.St == dWorking && d.Table != 0 && !d.SinkErr {
				buf = append(buf, Action{Kind: AFastFail, Arg: d.ID})
			}
		}
	}
	if withFaults && int(s.CoordFails) < cfg.CoordFailovers {
		buf = append(buf, Action{Kind: ACoordFailover})
	}
	if int(s.ClientOps) < cfg.ClientOps && !c.Booting {
		// An uninitialized coordinator has no changefeed in memory: the
		// model takes no client request until its bootstrap finished.
		if running(c) {
			buf = append(buf, Action{Kind: APause})
		}
		if c.State != cfRemoved {
			buf = append(buf, Action{Kind: ARemove})
		}
		if (c.State == cfStopped || c.State == cfFailed) && c.Op == copNone {
			buf = append(buf, Action{Kind: AResume})
			if c.Ckpt > 1 {
				buf = append(buf, Action{Kind: AResume, Arg: 1}) // replay from below
			}
			if s.UpTs > c.Ckpt {
				buf = append(buf, Action{Kind: AResume, Arg: s.UpTs}) // skip ahead
			}
		}
	}
	return buf
}
