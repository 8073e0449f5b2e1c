// Package coordinator is TiCDC's coordinator (coordinator/): the
// changefeed DB, Changefeed.UpdateStatus with its backoff, the add / move /
// stop maintainer operators, the basic and balance schedulers, and epochs
// persisted by compare-and-swap. It is an event handler: OnMessage, OnTick,
// OnNodesChanged, OnMetaResult and the API calls append Effects; it owns no
// goroutine and reads no clock.
package coordinator

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"go.uber.org/zap"

	"cdcspec/impl/core"
	"cdcspec/impl/logging"
	"cdcspec/spec"
)

const (
	bootstrapResendMs  = 500
	basicSchedulerMs   = 500
	balanceSchedulerMs = 60_000
)

type nodeState struct {
	answered bool
	lastSent int64
}

// Coordinator is coordinator/controller.go's Controller plus the parts of
// coordinator.go that persist changes.
type Coordinator struct {
	self    core.NodeID
	version int64
	opts    *core.Options
	lg      *logging.Logger
	rnd     core.Rand

	db *ChangefeedDB
	oc *operatorController
	be backend

	// nodes are the alive captures; answered = replied to our bootstrap
	// request (their maintainer heartbeats count only after that).
	nodes       map[core.NodeID]*nodeState
	responses   map[core.NodeID][]core.MaintainerStatus
	initialized bool
	snapshot    []core.KV

	lastBasic   int64
	lastBalance int64
	// now is the time of the input being handled (the latest seen: an API
	// write's commit runs in OnMetaResult, which has no clock).
	now int64
	// exited: an etcd write failed; TiCDC's coordinator returns from run and
	// the capture resigns ownership. A failed API write does not exit.
	exited bool
	// apiErr is the error of the last API write that failed, for the
	// caller (TakeAPIError).
	apiErr error
}

// New returns the coordinator of owner revision version, running on self,
// with the metadata snapshot read when it was elected.
func New(self core.NodeID, version int64, snapshot []core.KV, opts *core.Options, rnd core.Rand, lg *logging.Logger) *Coordinator {
	c := &Coordinator{self: self, version: version, opts: opts, lg: lg, rnd: rnd,
		db: newChangefeedDB(lg, opts.Bugs), nodes: map[core.NodeID]*nodeState{}, responses: map[core.NodeID][]core.MaintainerStatus{},
		snapshot: snapshot}
	c.oc = &operatorController{c: c, ops: map[core.ChangefeedID]*opEntry{}}
	return c
}

// Exited reports whether the coordinator stopped itself after a failed write.
func (c *Coordinator) Exited() bool { return c.exited }

// TakeAPIError returns (and clears) the error of the last API call whose
// write failed. An API call returns before its write; the write's result
// arrives in OnMetaResult before the next input, and the caller reads the
// outcome here, after executing the call's Effects.
func (c *Coordinator) TakeAPIError() error {
	err := c.apiErr
	c.apiErr = nil
	return err
}

// Initialized reports whether the coordinator bootstrap finished.
func (c *Coordinator) Initialized() bool { return c.initialized }

// Version is the owner revision.
func (c *Coordinator) Version() int64 { return c.version }

func unixMs(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// --- inputs ---

// OnNodesChanged is NodeManager's capture-set callback.
func (c *Coordinator) OnNodesChanged(now int64, alive []core.NodeID, out *core.Effects) {
	c.now = now
	set := map[core.NodeID]bool{}
	var added, removed []string
	for _, n := range alive {
		set[n] = true
		if _, ok := c.nodes[n]; !ok {
			c.nodes[n] = &nodeState{}
			added = append(added, string(n))
		}
	}
	for n := range c.nodes {
		if !set[n] {
			removed = append(removed, string(n))
		}
	}
	sort.Strings(removed)
	if len(added)+len(removed) == 0 {
		return
	}
	c.lg.Info("controller.go", 507, "controller detects node changed", zap.Int("addedCount", len(added)),
		zap.Int("removedCount", len(removed)), zap.Strings("addedNodes", added), zap.Strings("removedNodes", removed))
	for _, s := range removed {
		n := core.NodeID(s)
		delete(c.nodes, n)
		delete(c.responses, n)
		// OnNodeRemoved (operator_controller.go:397-410): every changefeed
		// GetByNodeID lists without an operator is marked absent.
		for _, cf := range c.db.GetByNodeID(n) {
			switch {
			case c.oc.op(cf.ID) != nil:
			case c.db.IsStopped(cf.ID):
				c.db.MarkStoppedAbsent(cf)
			default:
				c.db.MarkMaintainerAbsent(cf)
			}
		}
		c.oc.onNodeRemoved(n)
	}
	c.maybeInitialize(now, out)
}

// OnTick runs the bootstrap re-sends, operators and schedulers.
func (c *Coordinator) OnTick(now int64, out *core.Effects) {
	c.now = now
	if c.exited {
		return
	}
	c.sendBootstrapRequests(now, out)
	if !c.initialized {
		return
	}
	c.oc.poll(now, out)
	if now-c.lastBasic >= basicSchedulerMs {
		c.lastBasic = now
		c.basicSchedule(now, out)
	}
	if now-c.lastBalance >= balanceSchedulerMs {
		c.lastBalance = now
		c.balanceSchedule(now, out)
	}
}

func (c *Coordinator) sendBootstrapRequests(now int64, out *core.Effects) {
	for _, n := range sortedNodes(c.nodes) {
		st := c.nodes[n]
		if st.answered || (st.lastSent != 0 && now-st.lastSent < bootstrapResendMs) {
			continue
		}
		st.lastSent = now
		c.lg.Debug("controller.go", 1194, "send coordinator bootstrap request", zap.String("nodeID", string(n)))
		out.SendTo(c.self, n, &core.CoordinatorBootstrapRequest{Version: c.version})
	}
}

func sortedNodes(m map[core.NodeID]*nodeState) []core.NodeID {
	out := make([]core.NodeID, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// OnMessage handles CoordinatorBootstrapResponse and MaintainerHeartbeat.
func (c *Coordinator) OnMessage(now int64, from core.NodeID, msg core.Message, out *core.Effects) {
	c.now = now
	if c.exited {
		return
	}
	switch m := msg.(type) {
	case *core.CoordinatorBootstrapResponse:
		st, ok := c.nodes[from]
		if !ok || st.answered {
			return
		}
		st.answered = true
		c.lg.Info("controller.go", 533, "controller received maintainer bootstrap response", zap.String("node", string(from)),
			zap.Int("maintainerCount", len(m.Statuses)))
		if !c.initialized {
			c.responses[from] = m.Statuses
			c.maybeInitialize(now, out)
		}
	case *core.MaintainerHeartbeat:
		if st, ok := c.nodes[from]; !ok || !st.answered || !c.initialized {
			return
		}
		for i := range m.Statuses {
			c.handleMaintainerStatus(now, from, m.Statuses[i], out)
		}
	}
}

// OnMetaResult is the outcome of a Persist txn; it arrives before the next
// input. A failed write stops the coordinator (TiCDC's run returns the etcd
// error and the whole coordinator exits), except an API call's write: the
// API returns the backend's error with nothing changed
// (coordinator/controller.go CreateChangefeed, PauseChangefeed,
// ResumeChangefeed, RemoveChangefeed at b813e76f9), and a successful one is
// applied in memory only now.
func (c *Coordinator) OnMetaResult(r core.MetaResult, out *core.Effects) {
	pw, ok := c.be.pending[r.Token]
	if !ok {
		return
	}
	delete(c.be.pending, r.Token)
	if pw.commit != nil {
		if !r.OK {
			c.apiErr = fmt.Errorf("%s changefeed %s: etcd txn failed %s", pw.what, pw.cf, r.Err)
			return
		}
		pw.commit(out)
	}
	if !r.OK {
		switch pw.what {
		case "epoch":
			c.lg.Warn("operator_controller.go", 145, "add operator failed, cannot bump changefeed epoch", logging.Role("coordinator"),
				zap.String("changefeed", string(pw.cf)), zap.String("error", "compare-and-swap failed "+r.Err))
		default:
			c.lg.Error("coordinator.go", 364, "failed to update checkpointTs", zap.String("error", "etcd txn failed "+r.Err))
		}
		c.exited = true
		return
	}
	if pw.info && len(r.Revs) > 0 {
		if cf := c.db.Get(pw.cf); cf != nil {
			cf.infoModRev = r.Revs[0]
		}
	}
}

// --- bootstrap ---

// maybeInitialize bootstraps the coordinator once every node answered: the
// changefeeds from the etcd snapshot, then the running maintainers the nodes
// reported, adopted, stopped or removed (handleBootstrapResponses and
// finishBootstrap, coordinator/controller.go:552-811 at b813e76f9).
//
// Long: mirrors HEAD's finishBootstrap (coordinator/controller.go:711-811) case by case.
func (c *Coordinator) maybeInitialize(now int64, out *core.Effects) {
	if c.initialized || len(c.nodes) == 0 {
		return
	}
	for _, st := range c.nodes {
		if !st.answered {
			return
		}
	}
	c.initialized = true
	infos := map[core.ChangefeedID]ChangeFeedInfo{}
	infoRev := map[core.ChangefeedID]int64{}
	statuses := map[core.ChangefeedID]ChangefeedStatus{}
	for _, kv := range c.snapshot {
		id, isInfo, ok := parseChangefeedKey(kv.Key)
		if !ok {
			continue
		}
		if isInfo {
			var info ChangeFeedInfo
			if json.Unmarshal(kv.Value, &info) == nil {
				infos[id] = info
				infoRev[id] = kv.ModRev
			}
		} else {
			var st ChangefeedStatus
			if json.Unmarshal(kv.Value, &st) == nil {
				statuses[id] = st
			}
		}
	}
	c.snapshot = nil
	// Running maintainers reported by the nodes, by changefeed.
	type reported struct {
		node core.NodeID
		s    core.MaintainerStatus
	}
	running := map[core.ChangefeedID][]reported{}
	for _, n := range sortedNodes(c.nodes) {
		for _, s := range c.responses[n] {
			if s.State == core.ComponentWorking {
				running[s.Changefeed] = append(running[s.Changefeed], reported{n, s})
			}
		}
	}
	ids := make([]core.ChangefeedID, 0, len(infos))
	for id := range infos {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		info, st := infos[id], statuses[id]
		cf := c.newChangefeed(now, id, info, st.CheckpointTs)
		cf.infoModRev = infoRev[id]
		cf.isNew = false
		cf.progress = st.Progress
		switch {
		case st.Progress == ProgressRemoving:
			node, epoch := c.self, info.Epoch
			if rs := running[id]; len(rs) > 0 {
				// Stop the maintainer that runs, with its own epoch (it may
				// predate a move's bump).
				node, epoch = rs[0].node, rs[0].s.Epoch
			}
			c.lg.Info("controller.go", 780, "stop changefeed when bootstrapping", zap.String("changefeed", string(id)))
			c.oc.replaceWithStop(&StopChangefeedOperator{c: c, id: id, node: node, removed: true, epoch: epoch}, out)
			delete(running, id)
			continue
		case st.Progress == ProgressStopping || info.State == spec.StateStopped || info.State == spec.StateFailed || info.State == spec.StateFinished:
			c.db.AddStoppedChangefeed(cf)
			if st.Progress == ProgressStopping {
				node, epoch := c.self, info.Epoch
				if rs := running[id]; len(rs) > 0 {
					node, epoch = rs[0].node, rs[0].s.Epoch
				}
				c.lg.Info("controller.go", 780, "stop changefeed when bootstrapping", zap.String("changefeed", string(id)))
				c.oc.replaceWithStop(&StopChangefeedOperator{c: c, id: id, node: node, removed: false, epoch: epoch}, out)
			}
			delete(running, id)
			continue
		}
		c.db.AddAbsentChangefeed(cf)
		adopted := false
		for _, r := range running[id] {
			if !adopted && (r.s.Epoch == 0 || r.s.Epoch == info.Epoch) {
				adopted = true
				c.lg.Info("controller.go", 759, "changefeed maintainer already running in other server",
					zap.String("changefeed", string(id)), zap.String("node", string(r.node)))
				// As coordinator/controller.go finishBootstrap: the adopted
				// changefeed is built from the maintainer's reported
				// checkpoint (status, last saved checkpoint and backoff
				// baseline alike) with BootstrapDone false, so the
				// maintainer's first bootstrapped status toggles it.
				adoptedCf := c.newChangefeed(now, id, info, r.s.CheckpointTs)
				adoptedCf.infoModRev, adoptedCf.isNew, adoptedCf.progress = cf.infoModRev, cf.isNew, cf.progress
				adoptedCf.status.Epoch = r.s.Epoch
				cf = adoptedCf
				c.db.AddReplicatingMaintainer(cf, r.node)
				continue
			}
			// As coordinator/controller.go stopStaleBootstrapMaintainers at
			// b813e76f9: a stale-epoch maintainer gets a stop operator with
			// its own epoch that occupies the changefeed's operator slot
			// until it stopped (StopRemoteMaintainerWithMaintainerEpoch), so
			// the basic scheduler cannot bootstrap another generation
			// meanwhile; only when the slot is taken does it get a one-shot
			// cascade remove.
			c.lg.Warn("controller.go", 868, "ignore running maintainer with stale epoch when bootstrapping",
				zap.String("changefeed", string(id)), zap.String("node", string(r.node)), zap.Uint64("statusMaintainerEpoch", r.s.Epoch))
			if c.oc.op(id) == nil {
				c.oc.AddOperator(&StopChangefeedOperator{c: c, id: id, node: r.node, removed: false, epoch: r.s.Epoch}, out)
				continue
			}
			out.SendTo(c.self, r.node, &core.RemoveMaintainerRequest{Changefeed: id, Cascade: true, Epoch: r.s.Epoch})
		}
		delete(running, id)
	}
	var orphans []core.ChangefeedID
	for id := range running {
		orphans = append(orphans, id)
	}
	sort.Slice(orphans, func(i, j int) bool { return orphans[i] < orphans[j] })
	for _, id := range orphans {
		for _, r := range running[id] {
			c.lg.Warn("controller.go", 787, "maintainer not found in local, remove it", zap.String("changefeed", string(id)),
				zap.String("node", string(r.node)))
			out.SendTo(c.self, r.node, &core.RemoveMaintainerRequest{Changefeed: id, Cascade: true, Removed: true, Epoch: r.s.Epoch})
		}
	}
	c.responses = map[core.NodeID][]core.MaintainerStatus{}
	// Every changefeed above got a fresh backoff (newBackoff): the
	// error-stuck budget restarts here (spec error-stuck-fails).
	c.lg.Event(out, spec.Event{Kind: spec.CoordinatorBootstrapped, Node: string(c.self)})
}

func (c *Coordinator) newChangefeed(now int64, id core.ChangefeedID, info ChangeFeedInfo, checkpoint uint64) *Changefeed {
	cf := &Changefeed{ID: id, Info: info, opts: c.opts, lg: c.lg, progress: ProgressNone,
		status:                core.MaintainerStatus{Changefeed: id, CheckpointTs: checkpoint, State: core.ComponentWorking},
		lastSavedCheckpointTs: checkpoint}
	cf.backoff = newBackoff(now, id, checkpoint, c.opts.ErrorStuckDurationMs, c.rnd, c.lg)
	// As changefeed.NewChangefeed: a changefeed restored in warning is
	// retrying, so only checkpoint progress declares it recovered (#938).
	// The catalogue entry failover-loses-retrying restores #921.
	cf.backoff.retrying = info.State == spec.StateWarning && !c.opts.Bugs.Has(spec.BugFailoverLosesRetrying)
	return cf
}

// --- status ingestion ---

// handleMaintainerStatus is controller.go's per-status path: (1) the
// operator, (2) unknown changefeed, (3) node check, (4) epoch check, (5)
// UpdateStatus, then saveCheckpointTs and handleStateChange.
func (c *Coordinator) handleMaintainerStatus(now int64, from core.NodeID, s core.MaintainerStatus, out *core.Effects) {
	received := spec.Event{Kind: spec.StatusReceived, Changefeed: string(s.Changefeed), Node: string(from), Epoch: s.Epoch,
		Checkpoint: s.CheckpointTs, BootstrapDone: s.BootstrapDone, State: stateName(s.State)}
	if len(s.Err) > 0 {
		received.Err = s.Err[len(s.Err)-1].Message
	}
	hadOp := c.oc.onStatus(from, &s)
	cf := c.db.Get(s.Changefeed)
	if cf == nil {
		c.lg.Event(out, received)
		if s.State == core.ComponentWorking && !hadOp && c.oc.op(s.Changefeed) == nil {
			c.lg.Warn("controller.go", 641, "no changefeed found and no operator for it, removing from maintainer",
				zap.String("changefeed", string(s.Changefeed)), zap.String("sourceNode", string(from)))
			out.SendTo(c.self, from, &core.RemoveMaintainerRequest{Changefeed: s.Changefeed, Cascade: true, Removed: true, Epoch: s.Epoch})
		}
		return
	}
	if s.State == core.ComponentWorking && s.Epoch != 0 && s.Epoch < cf.Info.Epoch && !c.opts.Delivery.TiCDC() && c.shouldStopStale(cf, from, s.Epoch) {
		// Active only under a delivery stronger than TiCDC's message center
		// (spec.DeliveryPerTypeStreams or DeliveryReordering). There a late
		// AddMaintainerRequest of an older epoch can overtake the Remove
		// that followed it and create a maintainer that never bootstraps
		// (every DM belongs to a newer epoch) and makes the manager reject
		// every later add (found by the soak test with long message delays);
		// the coordinator sends it a cascade remove with its own epoch,
		// which epoch fencing makes harmless to the current generation's
		// dispatchers. HEAD only drops such statuses ("drop stale maintainer
		// status", handleSingleMaintainerStatus), and its message center
		// cannot make that delivery: the coordinator sends Add and Remove to
		// a node on one command stream (pkg/messaging
		// remoteMessageTarget.sendCommand, FIFO, no duplicates) and the
		// manager handles both from the one queue msgCh
		// (maintainer_manager.go recvMessages) in order, at b813e76f9; an
		// Add of an earlier coordinator node is dropped by coordinatorID.
		c.lg.Warn("controller.go", 618, "stop stale maintainer", zap.String("changefeed", string(cf.ID)), zap.String("node", string(from)),
			zap.Uint64("statusMaintainerEpoch", s.Epoch), zap.Uint64("currentMaintainerEpoch", cf.Info.Epoch))
		out.SendTo(c.self, from, &core.RemoveMaintainerRequest{Changefeed: cf.ID, Cascade: true, Epoch: s.Epoch})
	}
	if from != cf.nodeID {
		c.lg.Event(out, received)
		c.lg.Warn("controller.go", 669, "remote changefeed maintainer nodeID mismatch with local record",
			zap.String("changefeed", string(cf.ID)), zap.String("localNode", string(cf.nodeID)), zap.String("remoteNode", string(from)))
		return
	}
	if s.Epoch != 0 && cf.Info.Epoch != 0 && s.Epoch != cf.Info.Epoch && !c.moveFinalReport(cf, from, &s) {
		c.lg.Event(out, received)
		c.lg.Event(out, spec.Event{Kind: spec.StatusIgnored, Changefeed: string(cf.ID), Node: string(from), Epoch: s.Epoch,
			Reason: "stale epoch"}, zap.Uint64("currentMaintainerEpoch", cf.Info.Epoch))
		return
	}
	received.Accepted = true
	c.lg.Event(out, received)
	changed, state, err := cf.UpdateStatus(now, s, out)
	c.saveCheckpointTs(cf, out)
	if changed {
		c.handleStateChange(now, cf, state, err, out)
	}
}

// moveFinalReport reports whether s is the final Stopped report of the
// active move's origin, which the move operator has just taken (OriginStopped,
// before Schedule binds the target): #6280 (after b813e76f9) lets it through
// the epoch check so UpdateStatus stores its checkpoint and the target's
// AddMaintainerRequest carries it; every other stale-epoch status is still
// dropped. HEAD drops it as stale (catalogue entry
// move-final-stopped-rejected, #6283).
func (c *Coordinator) moveFinalReport(cf *Changefeed, from core.NodeID, s *core.MaintainerStatus) bool {
	op, ok := c.oc.op(cf.ID).(*MoveMaintainerOperator)
	return ok && op.state == moveOriginStopped && from == op.origin && s.Epoch == op.originEpoch &&
		s.State != core.ComponentWorking && !c.opts.Bugs.Has(spec.BugMoveFinalStoppedRejected)
}

// shouldStopStale: a move's origin keeps its (older) epoch until the move
// removes it; everything else reporting Working with an older epoch is a
// leftover generation.
func (c *Coordinator) shouldStopStale(cf *Changefeed, from core.NodeID, epoch uint64) bool {
	switch op := c.oc.op(cf.ID).(type) {
	case *MoveMaintainerOperator:
		return !(from == op.origin && epoch == op.originEpoch)
	case *StopChangefeedOperator:
		return !(from == op.node && epoch == op.epoch)
	}
	return true
}

func stateName(s core.ComponentState) string {
	if s == core.ComponentWorking {
		return spec.MaintainerWorking
	}
	return spec.MaintainerStopped
}

// saveCheckpointTs writes the status key when the checkpoint grew. Like
// TiCDC's UpdateChangefeedCheckpointTs it writes Progress=None
// unconditionally and uses no CAS.
func (c *Coordinator) saveCheckpointTs(cf *Changefeed, out *core.Effects) {
	if cf.status.CheckpointTs <= cf.lastSavedCheckpointTs {
		return
	}
	cf.lastSavedCheckpointTs = cf.status.CheckpointTs
	c.be.add(out, cf.ID, "checkpoint", putOp(StatusKey(cf.ID), ChangefeedStatus{CheckpointTs: cf.lastSavedCheckpointTs, Progress: ProgressNone}, -1))
	cf.progress = ProgressNone
	c.lg.Event(out, spec.Event{Kind: spec.CheckpointStored, Changefeed: string(cf.ID), Checkpoint: cf.lastSavedCheckpointTs})
}

func sameErr(a, b *core.RunningError) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Code == b.Code && a.Message == b.Message
}

// handleStateChange persists a state change (an unchanged state+error
// signature is not persisted, #4997) and acts on it.
func (c *Coordinator) handleStateChange(now int64, cf *Changefeed, state string, err *core.RunningError, out *core.Effects) {
	// #4997 (coordinator/coordinator.go handleStateChange,
	// isUnchangedRuntimeState): an unchanged state+error signature is not
	// persisted, and HEAD returns before acting on it. When a restarted
	// maintainer's first accepted status is already bootstrapped, no toggle
	// passes the changefeed through normal, so HEAD then skips every
	// re-sent identical error and never restarts again. cdcspec acts on an
	// unchanged warning (bump, stop, reschedule) when it arrives after the
	// restart finished; errors re-sent while a restart is under way stay
	// skipped, as in HEAD. The catalogue entry
	// unchanged-warning-not-acted-on restores HEAD's rule.
	unchanged := state == cf.Info.State && sameErr(err, cf.Info.Error)
	if unchanged && (state != spec.StateWarning || cf.backoff.erredWhileRestarting || c.opts.Bugs.Has(spec.BugUnchangedWarningNotActedOn)) {
		return
	}
	errMsg := ""
	if err != nil {
		errMsg = err.Message
	}
	switch state {
	case spec.StateWarning:
		oldEpoch := cf.Info.Epoch
		node := cf.nodeID
		if node == "" {
			node = c.self
		}
		cf.Info.State, cf.Info.Error = spec.StateWarning, err
		c.bumpChangefeedEpoch(now, cf, out)
		if !unchanged {
			c.lg.Event(out, spec.Event{Kind: spec.StateChanged, Changefeed: string(cf.ID), State: state, Err: errMsg})
		}
		c.oc.replaceWithStop(&StopChangefeedOperator{c: c, id: cf.ID, node: node, removed: false, epoch: oldEpoch}, out)
		c.db.MoveToSchedulingQueue(now, cf.ID, false)
	case spec.StateFailed, spec.StateFinished:
		node := cf.nodeID
		if node == "" {
			node = c.self
		}
		cf.Info.State, cf.Info.Error = state, err
		cf.progress = ProgressStopping
		c.be.add(out, cf.ID, "info", putOp(InfoKey(cf.ID), cf.Info, -1),
			putOp(StatusKey(cf.ID), ChangefeedStatus{CheckpointTs: cf.status.CheckpointTs, Progress: ProgressStopping}, -1))
		c.be.markInfo()
		c.lg.Event(out, spec.Event{Kind: spec.StateChanged, Changefeed: string(cf.ID), State: state, Err: errMsg})
		c.db.StopByChangefeedID(cf.ID, false)
		c.oc.replaceWithStop(&StopChangefeedOperator{c: c, id: cf.ID, node: node, removed: false, epoch: cf.Info.Epoch}, out)
	case spec.StateNormal:
		// UpdateChangefeed (coordinator.go:288-303, etcd_backend.go:178-208
		// at b813e76f9): the info key and the status key with the
		// in-memory checkpoint and progress None, in one txn.
		cf.Info.State, cf.Info.Error = spec.StateNormal, nil
		cf.progress = ProgressNone
		c.be.add(out, cf.ID, "info", putOp(InfoKey(cf.ID), cf.Info, -1),
			putOp(StatusKey(cf.ID), ChangefeedStatus{CheckpointTs: cf.status.CheckpointTs, Progress: ProgressNone}, -1))
		c.be.markInfo()
		c.lg.Event(out, spec.Event{Kind: spec.StateChanged, Changefeed: string(cf.ID), State: state})
	}
}

// bumpChangefeedEpoch sets epoch = max(candidate, stored+1) and persists the
// info key by CAS on its mod revision. The txn is in out.Persist, which the
// runtime applies before any message of the same batch is sent.
func (c *Coordinator) bumpChangefeedEpoch(now int64, cf *Changefeed, out *core.Effects) uint64 {
	e := uint64(now)
	if e <= cf.Info.Epoch {
		e = cf.Info.Epoch + 1
	}
	cf.Info.Epoch = e
	c.be.add(out, cf.ID, "epoch", putOp(InfoKey(cf.ID), cf.Info, cf.infoModRev))
	c.be.markInfo()
	c.lg.Event(out, spec.Event{Kind: spec.EpochBumped, Changefeed: string(cf.ID), Epoch: e})
	return e
}

// --- schedulers ---

func (c *Coordinator) aliveAnswered() []core.NodeID {
	var out []core.NodeID
	for _, n := range sortedNodes(c.nodes) {
		if c.nodes[n].answered {
			out = append(out, n)
		}
	}
	return out
}

// basicSchedule puts absent, runnable changefeeds on the node with the
// fewest maintainers.
func (c *Coordinator) basicSchedule(now int64, out *core.Effects) {
	nodes := c.aliveAnswered()
	if len(nodes) == 0 {
		return
	}
	counts := c.db.GetTaskSizePerNode()
	for _, cf := range c.db.GetAbsent(now) {
		if c.oc.op(cf.ID) != nil {
			continue
		}
		delete(c.db.absentStopped, cf.ID)
		dest := nodes[0]
		for _, n := range nodes[1:] {
			if counts[n] < counts[dest] {
				dest = n
			}
		}
		counts[dest]++
		epoch := c.bumpChangefeedEpoch(now, cf, out)
		c.oc.AddOperator(&AddMaintainerOperator{c: c, cf: cf, dest: dest, epoch: epoch}, out)
	}
}

// balanceSchedule moves one changefeed from the busiest to the idlest node,
// only with no operators and no absent changefeeds.
func (c *Coordinator) balanceSchedule(now int64, out *core.Effects) {
	if len(c.oc.ops) > 0 {
		return
	}
	nodes := c.aliveAnswered()
	if len(nodes) < 2 {
		return
	}
	counts := c.db.GetTaskSizePerNode()
	for _, id := range c.db.IDs() {
		if !c.db.IsStopped(id) && c.db.Get(id).state != Replicating {
			return
		}
	}
	maxN, minN := nodes[0], nodes[0]
	for _, n := range nodes {
		if counts[n] > counts[maxN] {
			maxN = n
		}
		if counts[n] < counts[minN] {
			minN = n
		}
	}
	if counts[maxN]-counts[minN] < 2 {
		return
	}
	for _, id := range c.db.IDs() {
		cf := c.db.Get(id)
		if c.db.IsStopped(id) || cf.nodeID != maxN {
			continue
		}
		c.MoveChangefeed(now, id, minN, out)
		return
	}
}

// MoveChangefeed starts a MoveMaintainerOperator (balance, drain or API).
func (c *Coordinator) MoveChangefeed(now int64, id core.ChangefeedID, dest core.NodeID, out *core.Effects) error {
	c.now = now
	cf := c.db.Get(id)
	if cf == nil || c.db.IsStopped(id) || cf.state != Replicating {
		return fmt.Errorf("changefeed %s is not replicating", id)
	}
	if c.oc.op(id) != nil {
		return fmt.Errorf("changefeed %s has an operator", id)
	}
	if st, ok := c.nodes[dest]; !ok || !st.answered || dest == cf.nodeID {
		return fmt.Errorf("node %s is not a valid move target", dest)
	}
	originEpoch := cf.Info.Epoch
	epoch := c.bumpChangefeedEpoch(now, cf, out)
	c.oc.AddOperator(&MoveMaintainerOperator{c: c, cf: cf, origin: cf.nodeID, dest: dest, originEpoch: originEpoch, epoch: epoch}, out)
	return nil
}

// --- API (coordinator/controller.go; serialized by apiLock in TiCDC) ---

// ErrNotInitialized is returned by API calls before the coordinator bootstrap.
var ErrNotInitialized = errors.New("coordinator is not initialized")

// CreateChangefeed creates a changefeed at startTs over the given initial
// tables (C.1).
func (c *Coordinator) CreateChangefeed(now int64, id core.ChangefeedID, startTs uint64, tables []int64, out *core.Effects) error {
	c.now = now
	if !c.initialized {
		return ErrNotInitialized
	}
	if c.db.Get(id) != nil {
		return fmt.Errorf("changefeed %s already exists", id)
	}
	info := ChangeFeedInfo{State: spec.StateNormal, Epoch: uint64(now), StartTs: startTs, Tables: tables}
	c.be.addAPI(out, id, "create", func(out *core.Effects) {
		cf := c.newChangefeed(now, id, info, startTs)
		cf.isNew = true
		c.db.AddAbsentChangefeed(cf)
		c.lg.Event(out, spec.Event{Kind: spec.ChangefeedCreated, Changefeed: string(id), Checkpoint: startTs, State: spec.StateNormal, Tables: tables})
		c.db.MoveToSchedulingQueue(now, id, true)
	}, putOp(InfoKey(id), info, 0),
		putOp(StatusKey(id), ChangefeedStatus{CheckpointTs: startTs, Progress: ProgressNone}, 0))
	c.be.markInfo()
	return nil
}

// apiChangefeed is the API calls' common prologue: the coordinator must be
// initialized and the changefeed must exist.
func (c *Coordinator) apiChangefeed(id core.ChangefeedID) (*Changefeed, error) {
	if !c.initialized {
		return nil, ErrNotInitialized
	}
	cf := c.db.Get(id)
	if cf == nil {
		return nil, fmt.Errorf("changefeed %s not found", id)
	}
	return cf, nil
}

// PauseChangefeed stops a running changefeed (C.2).
func (c *Coordinator) PauseChangefeed(now int64, id core.ChangefeedID, out *core.Effects) error {
	c.now = now
	cf, err := c.apiChangefeed(id)
	if err != nil {
		return err
	}
	if c.db.IsStopped(id) {
		return fmt.Errorf("changefeed %s is not running (state %s)", id, cf.Info.State)
	}
	info := cf.Info
	info.State = spec.StateStopped
	c.be.addAPI(out, id, "pause", func(out *core.Effects) {
		node := cf.nodeID
		if node == "" {
			node = c.self
		}
		cf.Info.State = spec.StateStopped
		cf.progress = ProgressStopping
		c.lg.Event(out, spec.Event{Kind: spec.StateChanged, Changefeed: string(id), State: spec.StateStopped})
		c.db.StopByChangefeedID(cf.ID, false)
		c.oc.replaceWithStop(&StopChangefeedOperator{c: c, id: id, node: node, removed: false, epoch: cf.Info.Epoch}, out)
	}, putOp(InfoKey(id), info, -1),
		putOp(StatusKey(id), ChangefeedStatus{CheckpointTs: cf.status.CheckpointTs, Progress: ProgressStopping}, -1))
	c.be.markInfo()
	return nil
}

// ResumeChangefeed resumes a stopped, failed or finished changefeed (C.3).
// overwriteCheckpoint 0 keeps the in-memory checkpoint.
func (c *Coordinator) ResumeChangefeed(now int64, id core.ChangefeedID, overwriteCheckpoint uint64, out *core.Effects) error {
	return c.ResumeChangefeedAt(now, id, overwriteCheckpoint, overwriteCheckpoint != 0, out)
}

// ResumeChangefeedAt is HEAD's Controller.ResumeChangefeed(newCheckpointTs,
// overwriteCheckpointTs) (coordinator/controller.go:1017-1066 at
// b813e76f9): a non-zero newCheckpointTs is the resumed checkpoint whatever
// the flag; the flag makes the changefeed new again (MoveToSchedulingQueue
// sets isNew to it). impl's last saved checkpoint is the one the resume's
// txn writes; HEAD moves its in-memory copy only with the flag.
func (c *Coordinator) ResumeChangefeedAt(now int64, id core.ChangefeedID, newCheckpointTs uint64, overwriteCheckpointTs bool, out *core.Effects) error {
	c.now = now
	cf, err := c.apiChangefeed(id)
	if err != nil {
		return err
	}
	switch cf.Info.State {
	case spec.StateStopped, spec.StateFailed, spec.StateFinished:
	default:
		return fmt.Errorf("changefeed %s cannot be resumed from state %s", id, cf.Info.State)
	}
	if !c.db.IsStopped(id) {
		return fmt.Errorf("changefeed %s is still being stopped", id)
	}
	checkpoint := cf.status.CheckpointTs
	if newCheckpointTs != 0 {
		checkpoint = newCheckpointTs
	}
	// ResumeChangefeed = BumpChangefeedEpoch (CAS) with state, error and status.
	e := uint64(now)
	if e <= cf.Info.Epoch {
		e = cf.Info.Epoch + 1
	}
	info := cf.Info
	info.State, info.Error, info.Epoch = spec.StateNormal, nil, e
	c.be.addAPI(out, id, "resume", func(out *core.Effects) {
		cf.isNew = overwriteCheckpointTs
		cf.Info = info
		c.lg.Event(out, spec.Event{Kind: spec.EpochBumped, Changefeed: string(id), Epoch: e})
		c.lg.Event(out, spec.Event{Kind: spec.ChangefeedResumed, Changefeed: string(id), Checkpoint: checkpoint})
		c.lg.Event(out, spec.Event{Kind: spec.StateChanged, Changefeed: string(id), State: spec.StateNormal})
		// Changefeed.GetStatusForResume (coordinator/changefeed/changefeed.go
		// at b813e76f9): the previous owner's errors are cleared (#3954) and
		// so is BootstrapDone, since the next maintainer has not bootstrapped
		// yet.
		cf.status = core.MaintainerStatus{Changefeed: id, State: core.ComponentWorking, CheckpointTs: checkpoint, Epoch: e}
		cf.lastSavedCheckpointTs = checkpoint
		cf.progress = ProgressNone
		c.db.MoveToSchedulingQueue(now, id, true)
	}, putOp(InfoKey(id), info, cf.infoModRev),
		putOp(StatusKey(id), ChangefeedStatus{CheckpointTs: checkpoint, Progress: ProgressNone}, -1))
	c.be.markInfo()
	return nil
}

// RemoveChangefeed deletes a changefeed (C.4).
func (c *Coordinator) RemoveChangefeed(now int64, id core.ChangefeedID, out *core.Effects) error {
	c.now = now
	cf, err := c.apiChangefeed(id)
	if err != nil {
		return err
	}
	c.be.addAPI(out, id, "remove", func(out *core.Effects) {
		node := cf.nodeID
		if node == "" {
			node = c.self
		}
		c.lg.Event(out, spec.Event{Kind: spec.StateChanged, Changefeed: string(id), State: spec.StateRemoved})
		c.db.StopByChangefeedID(cf.ID, true)
		c.oc.replaceWithStop(&StopChangefeedOperator{c: c, id: id, node: node, removed: true, epoch: cf.Info.Epoch}, out)
	}, putOp(StatusKey(id), ChangefeedStatus{CheckpointTs: cf.status.CheckpointTs, Progress: ProgressRemoving}, -1))
	return nil
}

// --- observability ---

// ChangefeedState is the abstract state the model also has.
type ChangefeedState struct {
	ID            core.ChangefeedID
	State         string // FeedState
	Sched         string // absent|scheduling|replicating ("" when stopped)
	Node          core.NodeID
	Epoch         uint64
	Checkpoint    uint64 // coordinator's in-memory view
	Stored        uint64 // last saved to etcd
	BootstrapDone bool
	Operator      string // "" or the operator's String()
	MoveState     string // a move operator's state (operator_move.go:33-37), else ""
	NextRetry     int64
	Retrying      bool
	// OpFinished: the operator is finished but not yet post-finished (it
	// leaves the controller at the next poll). PostFinishSched is then the
	// Sched its PostFinish will set ("" when it leaves Sched alone).
	OpFinished      bool
	PostFinishSched string
}

// Changefeeds returns every changefeed's abstract state, sorted by ID, plus
// operators of changefeeds already deleted from the DB (pending removes).
func (c *Coordinator) Changefeeds() []ChangefeedState {
	var out []ChangefeedState
	for _, id := range c.db.IDs() {
		cf := c.db.Get(id)
		st := ChangefeedState{ID: id, State: cf.Info.State, Node: cf.nodeID, Epoch: cf.Info.Epoch, Checkpoint: cf.status.CheckpointTs,
			Stored: cf.lastSavedCheckpointTs, BootstrapDone: cf.status.BootstrapDone, NextRetry: cf.backoff.nextRetryTime, Retrying: cf.backoff.retrying}
		if !c.db.IsStopped(id) {
			st.Sched = cf.state.String()
		}
		if op := c.oc.op(id); op != nil {
			st.Operator, st.OpFinished = op.String(), op.IsFinished()
			if sched, ok := op.postFinishSched(); st.OpFinished && ok {
				st.PostFinishSched = sched.String()
			}
			if m, ok := op.(*MoveMaintainerOperator); ok {
				st.MoveState = m.state.String()
			}
		}
		out = append(out, st)
	}
	for _, id := range c.oc.sortedIDs() {
		if c.db.Get(id) == nil {
			op := c.oc.op(id)
			out = append(out, ChangefeedState{ID: id, State: spec.StateRemoved, Operator: op.String(), OpFinished: op.IsFinished()})
		}
	}
	return out
}

// Operators returns the String() of every operator, sorted by changefeed.
func (c *Coordinator) Operators() []string {
	var out []string
	for _, id := range c.oc.sortedIDs() {
		out = append(out, c.oc.op(id).String())
	}
	return out
}
