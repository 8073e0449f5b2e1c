// Package maintainer is TiCDC's maintainer manager and maintainer
// (maintainer/): add/remove handling with the removal-only maintainer,
// bootstrap that restores journaled operators, the span controller
// (absent/scheduling/replicating), add/remove/move/split dispatcher
// operators, the create-table barrier path, and the checkpoint calculation
// with the committed checkpoint. Event handlers only: no goroutine, no clock.
package maintainer

import (
	"sort"

	"go.uber.org/zap"

	"cdcspec/impl/core"
	"cdcspec/impl/logging"
	"cdcspec/spec"
)

const (
	heartbeatMs        = 200
	statusRefreshMs    = 1000
	maintainerTickGate = 0
)

// Manager is maintainer/maintainer_manager*.go: one per node.
type Manager struct {
	self core.NodeID
	opts *core.Options
	lg   *logging.Logger
	rnd  core.Rand
	up   core.Upstream
	now  int64

	// coordinatorID/Version come from CoordinatorBootstrapRequest; a lower
	// version is ignored. Add/Remove are handled only from coordinatorID.
	coordinatorID      core.NodeID
	coordinatorVersion int64

	maintainers map[core.ChangefeedID]*Maintainer
	// addTableBatch: the scheduler config's add-table-batch-size (0: the
	// default, defaultAddTableBatchSize).
	addTableBatch int
	// closedEpochs: the epoch of the last maintainer of a changefeed this
	// manager closed and dropped; an Add of that epoch or older is ignored.
	// Active only under a delivery stronger than TiCDC's message center
	// (spec.DeliveryPerTypeStreams or DeliveryReordering): there an
	// AddMaintainerRequest can overtake the Remove sent after it and
	// recreate a closed generation, which can still bootstrap while the
	// next generation bootstraps elsewhere (found by the soak test with long
	// delays). HEAD keeps no such tombstone (registerMaintainerForAdd
	// compares with a registered maintainer only), and its message center
	// cannot make that delivery: Add and Remove to one node leave the
	// coordinator on one command stream (pkg/messaging
	// remoteMessageTarget.sendCommand, FIFO, no duplicates) and the manager
	// handles both from its one queue msgCh (maintainer_manager.go
	// recvMessages, Run) in send order, at b813e76f9.
	closedEpochs map[core.ChangefeedID]uint64
	alive        []core.NodeID
	// stopping: liveness STOPPING (the node fenced itself); Add is rejected.
	stopping      bool
	lastHeartbeat int64
}

// defaultAddTableBatchSize is the scheduler config's add-table-batch-size
// default (pkg/config/scheduler_config.go:173-200 at b813e76f9).
const defaultAddTableBatchSize = 10000

// SetAddTableBatchSize sets the scheduler config's add-table-batch-size,
// the most add operators the basic scheduler creates in one round
// (NewController's batchSize, maintainer.go:211 at b813e76f9), for every
// maintainer of this manager; n <= 0 keeps the default.
func (mm *Manager) SetAddTableBatchSize(n int) { mm.addTableBatch = n }

func (mm *Manager) addTableBatchSize() int {
	if mm.addTableBatch <= 0 {
		return defaultAddTableBatchSize
	}
	return mm.addTableBatch
}

// NewManager returns a node's maintainer manager.
func NewManager(self core.NodeID, opts *core.Options, rnd core.Rand, up core.Upstream, lg *logging.Logger) *Manager {
	return &Manager{self: self, opts: opts, lg: lg, rnd: rnd, up: up, maintainers: map[core.ChangefeedID]*Maintainer{},
		closedEpochs: map[core.ChangefeedID]uint64{}}
}

func (mm *Manager) aliveNodes() []core.NodeID { return mm.alive }

// SetStopping moves liveness to STOPPING.
func (mm *Manager) SetStopping() { mm.stopping = true }

func (mm *Manager) sortedIDs() []core.ChangefeedID { return core.SortedKeys(mm.maintainers) }

// OnNodesChanged is the NodeManager callback.
func (mm *Manager) OnNodesChanged(now int64, alive []core.NodeID, out *core.Effects) {
	mm.now = now
	old := map[core.NodeID]bool{}
	for _, n := range mm.alive {
		old[n] = true
	}
	cur := map[core.NodeID]bool{}
	var added, removed []core.NodeID
	for _, n := range alive {
		cur[n] = true
		if !old[n] {
			added = append(added, n)
		}
	}
	for _, n := range mm.alive {
		if !cur[n] {
			removed = append(removed, n)
		}
	}
	mm.alive = append(mm.alive[:0:0], alive...)
	sort.Slice(mm.alive, func(i, j int) bool { return mm.alive[i] < mm.alive[j] })
	if len(added)+len(removed) == 0 {
		return
	}
	for _, id := range mm.sortedIDs() {
		m := mm.maintainers[id]
		m.now = now
		m.onNodesChanged(added, removed, out)
	}
}

// OnMessage routes a message on topic maintainer-manager.
func (mm *Manager) OnMessage(now int64, from core.NodeID, msg core.Message, out *core.Effects) {
	mm.now = now
	switch m := msg.(type) {
	case *core.CoordinatorBootstrapRequest:
		mm.onCoordinatorBootstrapRequest(from, m, out)
	case *core.AddMaintainerRequest:
		if !mm.fromCoordinator(from, "AddMaintainerRequest", m.Changefeed) {
			return
		}
		mm.handleAddMaintainer(m, out)
	case *core.RemoveMaintainerRequest:
		if !mm.fromCoordinator(from, "RemoveMaintainerRequest", m.Changefeed) {
			return
		}
		mm.handleRemoveMaintainer(from, m, out)
	case *core.MaintainerBootstrapResponse:
		if mt := mm.find(m.Changefeed, msg); mt != nil {
			mt.now = now
			mt.onBootstrapResponse(from, m, out)
		}
	case *core.MaintainerCloseResponse:
		if mt := mm.find(m.Changefeed, msg); mt != nil {
			mt.now = now
			mt.onCloseResponse(from, m, out)
		}
	case *core.HeartBeatRequest:
		// The heartbeat collector drops pushes to an unknown path silently.
		if mt := mm.maintainers[m.Changefeed]; mt != nil {
			mt.now = now
			mt.onHeartbeatRequest(from, m, out)
		}
	case *core.BlockStatusRequest:
		if mt := mm.maintainers[m.Changefeed]; mt != nil {
			mt.now = now
			mt.onBlockStatusRequest(from, m, out)
		}
	}
}

func (mm *Manager) find(id core.ChangefeedID, msg core.Message) *Maintainer {
	mt := mm.maintainers[id]
	if mt == nil {
		mm.lg.Warn("maintainer_manager_maintainers.go", 436, "maintainer is not found", logging.CF(id), zap.String("message", msg.TypeName()))
	}
	return mt
}

func (mm *Manager) fromCoordinator(from core.NodeID, typ string, id core.ChangefeedID) bool {
	if mm.coordinatorVersion > 0 && from == mm.coordinatorID {
		return true
	}
	mm.lg.Warn("maintainer_manager_maintainers.go", 122, "ignore invalid coordinator id", zap.String("type", typ),
		zap.String("coordinatorID", string(mm.coordinatorID)), zap.String("from", string(from)), logging.CF(id))
	return false
}

func (mm *Manager) onCoordinatorBootstrapRequest(from core.NodeID, req *core.CoordinatorBootstrapRequest, out *core.Effects) {
	if req.Version < mm.coordinatorVersion {
		return
	}
	if mm.coordinatorID == from && mm.coordinatorVersion == req.Version {
		mm.lg.Info("maintainer_manager.go", 203, "new coordinator online, bootstrap response already sent",
			zap.String("coordinatorID", string(from)), zap.Int64("version", req.Version))
	}
	mm.coordinatorID, mm.coordinatorVersion = from, req.Version
	resp := &core.CoordinatorBootstrapResponse{}
	for _, id := range mm.sortedIDs() {
		resp.Statuses = append(resp.Statuses, mm.maintainers[id].GetMaintainerStatus())
	}
	out.SendTo(mm.self, from, resp)
}

// handleAddMaintainer: ignored with checkpoint 0 or when STOPPING; an
// existing maintainer is replaced only if it is fully stopped and the
// request epoch is newer (#5435); otherwise rejected or ignored.
func (mm *Manager) handleAddMaintainer(req *core.AddMaintainerRequest, out *core.Effects) {
	if req.CheckpointTs == 0 || mm.stopping {
		return
	}
	if closed, ok := mm.closedEpochs[req.Changefeed]; ok && req.Epoch != 0 && req.Epoch <= closed && !mm.opts.Delivery.TiCDC() {
		mm.lg.Warn("maintainer_manager_maintainers.go", 1, "ignore stale add maintainer request", logging.CF(req.Changefeed),
			zap.Uint64("requestMaintainerEpoch", req.Epoch), zap.Uint64("closedMaintainerEpoch", closed))
		return
	}
	if old := mm.maintainers[req.Changefeed]; old != nil {
		if old.removed && old.state == core.ComponentStopped && req.Epoch > old.epoch {
			delete(mm.maintainers, req.Changefeed)
		} else {
			if req.Epoch > old.epoch {
				mm.lg.Event(out, spec.Event{Kind: spec.MaintainerRejectedAdd, Changefeed: string(req.Changefeed), Node: string(mm.self), Epoch: req.Epoch},
					zap.Uint64("existingMaintainerEpoch", old.epoch), zap.Bool("existingRemoved", old.removed),
					zap.String("existingState", old.state.String()))
			}
			return
		}
	}
	m := NewMaintainer(mm, req.Changefeed, req.CheckpointTs, req.IsNew, req.Epoch, out)
	mm.maintainers[req.Changefeed] = m
	m.initialize(out)
}

// handleRemoveMaintainer: forward to the maintainer; if missing, a
// non-cascade remove is answered Stopped at once and a cascade one creates
// the removal-only maintainer.
func (mm *Manager) handleRemoveMaintainer(from core.NodeID, req *core.RemoveMaintainerRequest, out *core.Effects) {
	mm.lg.Info("maintainer_manager_maintainers.go", 366, "received remove maintainer request", logging.CF(req.Changefeed),
		zap.Bool("cascade", req.Cascade), zap.Bool("removed", req.Removed), zap.Uint64("epoch", req.Epoch))
	m := mm.maintainers[req.Changefeed]
	if m != nil && m.removed && !m.cascadeRemoving && (req.Cascade || req.Removed) && (req.Epoch == 0 || req.Epoch == m.epoch) &&
		!mm.opts.Bugs.Has(spec.BugRemoveDuringMoveLeaksDispatchers) {
		// A maintainer closed by a move's non-cascade remove closed only
		// its table trigger. A cascade remove that lands before
		// cleanupRemovedMaintainers is treated as not found: a removal-only
		// maintainer does the cascade close, as after the cleanup. (HEAD's
		// stopped maintainer drops it; catalogue entry
		// remove-during-move-leaks-dispatchers.)
		delete(mm.maintainers, req.Changefeed)
		m = nil
	}
	if m == nil {
		if !req.Cascade && !req.Removed {
			mm.lg.Warn("maintainer_manager_maintainers.go", 333, "ignore remove maintainer request, since the maintainer not found",
				logging.CF(req.Changefeed))
			out.SendTo(mm.self, from, &core.MaintainerHeartbeat{Statuses: []core.MaintainerStatus{{
				Changefeed: req.Changefeed, State: core.ComponentStopped, Epoch: req.Epoch}}})
			return
		}
		m = NewMaintainerForRemove(mm, req.Changefeed, req.Epoch, req.Removed, out)
		mm.maintainers[req.Changefeed] = m
	}
	m.now = mm.now
	m.onRemoveMaintainer(req, out)
}

// OnTick ticks every maintainer, sends the heartbeat every 200 ms (changed
// statuses plus any older than 1 s), then cleanupRemovedMaintainers.
func (mm *Manager) OnTick(now int64, out *core.Effects) {
	mm.now = now
	ids := mm.sortedIDs()
	for _, id := range ids {
		mm.maintainers[id].OnTick(now, out)
	}
	if now-mm.lastHeartbeat < heartbeatMs {
		return
	}
	mm.lastHeartbeat = now
	if mm.coordinatorVersion > 0 {
		hb := &core.MaintainerHeartbeat{}
		for _, id := range ids {
			m := mm.maintainers[id]
			if m.statusChanged || now-m.lastStatusSent >= statusRefreshMs {
				hb.Statuses = append(hb.Statuses, m.GetMaintainerStatus())
				m.statusChanged = false
				m.lastStatusSent = now
			}
		}
		if len(hb.Statuses) > 0 {
			out.SendTo(mm.self, mm.coordinatorID, hb)
		}
	}
	for _, id := range ids {
		m := mm.maintainers[id]
		if m.removed {
			delete(mm.maintainers, id)
			if !m.removalOnly && m.epoch > mm.closedEpochs[id] {
				mm.closedEpochs[id] = m.epoch
			}
			mm.lg.Info("maintainer_manager_maintainers.go", 414, "maintainer removed, remove it from dynamic stream", logging.CF(id),
				zap.Uint64("checkpointTs", m.committedCheckpointTs))
		}
	}
}

// Get returns the maintainer of a changefeed, or nil.
func (mm *Manager) Get(id core.ChangefeedID) *Maintainer { return mm.maintainers[id] }

// MaintainerInfo is the abstract state of one maintainer.
type MaintainerInfo struct {
	Changefeed   core.ChangefeedID
	Epoch        uint64
	Bootstrapped bool
	RemovalOnly  bool
	Removing     bool
	Removed      bool
	Checkpoint   uint64
	State        string
	// StartCheckpoint is the checkpoint the maintainer was created with
	// (its bootstrap's startTs).
	StartCheckpoint uint64
	// Ghosts counts the spans the scheduler holds absent although the span
	// controller removed them, or will once the released merge's removal
	// runs (a pending fallback MarkSpanAbsent): merge-occupy-finishes-early.
	Ghosts int
}

// Maintainers lists the node's maintainers.
func (mm *Manager) Maintainers() []MaintainerInfo {
	var out []MaintainerInfo
	for _, id := range mm.sortedIDs() {
		m := mm.maintainers[id]
		out = append(out, MaintainerInfo{Changefeed: id, Epoch: m.epoch, Bootstrapped: m.initialized, RemovalOnly: m.removalOnly,
			Removing: m.removing, Removed: m.removed, Checkpoint: m.reportedCheckpoint(), State: m.state.String(),
			StartCheckpoint: m.startCheckpoint, Ghosts: len(m.spans.ghosts) + len(m.spans.pendingAbsent)})
	}
	return out
}
