// Package capture assembles one TiCDC process (a capture): the message
// router, the maintainer manager, the dispatcher orchestrator and, on the
// elected owner, the coordinator. It is the unit a runtime hosts: the
// simulation steps it deterministically; a real runtime feeds it from TCP,
// etcd watches and Kafka callbacks. Like its parts it owns no goroutine and
// reads no clock.
package capture

import (
	"go.uber.org/zap"

	"cdcspec/impl/coordinator"
	"cdcspec/impl/core"
	"cdcspec/impl/dispatcher"
	"cdcspec/impl/logging"
	"cdcspec/impl/maintainer"
)

// Capture is one node.
type Capture struct {
	ID   core.NodeID
	opts *core.Options
	lg   *logging.Logger
	rnd  core.Rand
	up   core.Upstream

	Coordinator  *coordinator.Coordinator
	Maintainers  *maintainer.Manager
	Orchestrator *dispatcher.Orchestrator
	alive        []core.NodeID
}

// New returns a capture with a fresh node ID.
func New(id core.NodeID, opts *core.Options, rnd core.Rand, up core.Upstream, lg *logging.Logger) *Capture {
	return &Capture{ID: id, opts: opts, lg: lg, rnd: rnd, up: up,
		Maintainers:  maintainer.NewManager(id, opts, rnd, up, lg),
		Orchestrator: dispatcher.NewOrchestrator(id, opts, rnd, up, lg)}
}

// BecomeOwner starts the coordinator with owner revision version and the
// metadata snapshot read at election.
func (c *Capture) BecomeOwner(now int64, version int64, snapshot []core.KV, out *core.Effects) {
	c.Coordinator = coordinator.New(c.ID, version, snapshot, c.opts, c.rnd, c.lg)
	c.Coordinator.OnNodesChanged(now, c.alive, out)
	c.Coordinator.OnTick(now, out)
}

// OwnerChanged: another capture owns the cluster now; a running coordinator
// stops itself.
func (c *Capture) OwnerChanged(newOwner core.NodeID) {
	if c.Coordinator != nil && newOwner != c.ID {
		c.lg.Info("coordinator.go", 144, "Coordinator changed, and I am not the coordinator, stop myself",
			zap.String("selfID", string(c.ID)), zap.String("newCoordinatorID", string(newOwner)))
		c.Coordinator = nil
	}
}

// OnNodesChanged is NodeManager's capture-set callback.
func (c *Capture) OnNodesChanged(now int64, alive []core.NodeID, out *core.Effects) {
	c.alive = append(c.alive[:0:0], alive...)
	if c.Coordinator != nil {
		c.Coordinator.OnNodesChanged(now, alive, out)
	}
	c.Maintainers.OnNodesChanged(now, alive, out)
}

// OnMessage routes by topic.
func (c *Capture) OnMessage(now int64, from core.NodeID, msg core.Message, out *core.Effects) {
	switch core.TopicOf(msg) {
	case core.TopicCoordinator:
		if c.Coordinator != nil {
			c.Coordinator.OnMessage(now, from, msg, out)
		}
	case core.TopicMaintainerManager:
		c.Maintainers.OnMessage(now, from, msg, out)
	case core.TopicDispatcherManagers, core.TopicHeartbeatCollector:
		c.Orchestrator.OnMessage(now, from, msg, out)
	}
}

// OnTick ticks every component.
func (c *Capture) OnTick(now int64, out *core.Effects) {
	if c.Coordinator != nil {
		c.Coordinator.OnTick(now, out)
	}
	c.Maintainers.OnTick(now, out)
	c.Orchestrator.OnTick(now, out)
}

// OnMetaResult delivers a Persist outcome (only the coordinator persists).
func (c *Capture) OnMetaResult(r core.MetaResult, out *core.Effects) {
	if c.Coordinator != nil {
		c.Coordinator.OnMetaResult(r, out)
	}
}

// OnSinkResult delivers a sink write's outcome.
func (c *Capture) OnSinkResult(now int64, r core.SinkResult, out *core.Effects) {
	c.Orchestrator.OnSinkResult(now, r, out)
}

// LocalFence is the session-lost path: liveness STOPPING, DM write paths
// closed. The runtime then exits the process (capture suicide).
func (c *Capture) LocalFence() {
	c.lg.Warn("server.go", 455, "local fence triggered", zap.String("reason", "etcd session done"))
	c.Maintainers.SetStopping()
	c.Orchestrator.LocalFence()
}
