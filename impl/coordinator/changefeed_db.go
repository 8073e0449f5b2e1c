package coordinator

import (
	"sort"

	"go.uber.org/zap"

	"cdcspec/impl/core"
	"cdcspec/impl/logging"
	"cdcspec/spec"
)

// ChangefeedDB is coordinator/changefeed/changefeed_db.go: running
// changefeeds (absent/scheduling/replicating with a nodeID) and the stopped
// ones (failed/stopped/finished).
type ChangefeedDB struct {
	changefeeds map[core.ChangefeedID]*Changefeed
	// stopped holds changefeeds that are not scheduled; also in changefeeds.
	stopped map[core.ChangefeedID]bool
	// leftOnNode and absentStopped exist only with the catalogue entry
	// stopped-changefeed-left-on-node (before pingcap/ticdc#2967): a stopped
	// changefeed still listed among its old node's tasks (nodeTasks), and
	// one that node's removal put into the absent set while it stays in
	// the stopped map.
	leftOnNode    map[core.ChangefeedID]core.NodeID
	absentStopped map[core.ChangefeedID]bool
	bugs          spec.BugSet
	lg            *logging.Logger
}

func newChangefeedDB(lg *logging.Logger, bugs spec.BugSet) *ChangefeedDB {
	return &ChangefeedDB{changefeeds: map[core.ChangefeedID]*Changefeed{}, stopped: map[core.ChangefeedID]bool{},
		leftOnNode: map[core.ChangefeedID]core.NodeID{}, absentStopped: map[core.ChangefeedID]bool{}, bugs: bugs, lg: lg}
}

// Get returns a changefeed (running or stopped).
func (db *ChangefeedDB) Get(id core.ChangefeedID) *Changefeed { return db.changefeeds[id] }

// IDs returns every changefeed ID, sorted.
func (db *ChangefeedDB) IDs() []core.ChangefeedID {
	out := make([]core.ChangefeedID, 0, len(db.changefeeds))
	for id := range db.changefeeds {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// IsStopped reports whether the changefeed is in the stopped map.
func (db *ChangefeedDB) IsStopped(id core.ChangefeedID) bool { return db.stopped[id] }

// MarkReplicaAbsent clears the node and marks the changefeed absent.
func (db *ChangefeedDB) MarkReplicaAbsent(cf *Changefeed) {
	db.lg.Info("changefeed_db.go", 309, "marking changefeed absent", zap.String("changefeed", string(cf.ID)), zap.String("node", string(cf.nodeID)))
	cf.nodeID = ""
	cf.state = Absent
}

// BindReplicaToNode sets the node and marks scheduling.
func (db *ChangefeedDB) BindReplicaToNode(cf *Changefeed, n core.NodeID) {
	db.lg.Info("changefeed_db.go", 216, "bind changefeed to node", zap.String("changefeed", string(cf.ID)),
		zap.String("oldNode", string(cf.nodeID)), zap.String("node", string(n)))
	cf.nodeID = n
	cf.state = Scheduling
}

// MarkReplicaScheduling marks the changefeed scheduling, keeping its node
// (changefeed_db.go MarkMaintainerScheduling: a move's Start).
func (db *ChangefeedDB) MarkReplicaScheduling(cf *Changefeed) {
	db.lg.Info("changefeed_db.go", 320, "marking changefeed scheduling", zap.String("ChangefeedDB", string(cf.ID)))
	cf.state = Scheduling
}

// MarkReplicaReplicating marks the changefeed replicating on its node.
func (db *ChangefeedDB) MarkReplicaReplicating(cf *Changefeed) {
	db.lg.Info("changefeed_db.go", 228, "marking changefeed replicating", zap.String("changefeed", string(cf.ID)), zap.String("node", string(cf.nodeID)))
	cf.state = Replicating
}

// MoveToSchedulingQueue makes a changefeed absent (runnable again).
// resetBackoff is used by resume; overwrite replaces the checkpoint.
func (db *ChangefeedDB) MoveToSchedulingQueue(now int64, cf *Changefeed, resetBackoff bool, checkpoint uint64) {
	delete(db.stopped, cf.ID)
	delete(db.leftOnNode, cf.ID)
	delete(db.absentStopped, cf.ID)
	if resetBackoff {
		cf.backoff.resetBackoff(now, checkpoint)
	}
	db.lg.Info("changefeed_db.go", 291, "move a changefeed to scheduling queue, it will be scheduled later",
		zap.String("changefeed", string(cf.ID)), zap.Uint64("checkpointTs", cf.status.CheckpointTs),
		zap.Time("nextScheduleTime", unixMs(cf.backoff.nextRetryTime)))
	cf.nodeID = ""
	cf.state = Absent
}

// StopChangefeed moves a changefeed to the stopped map (removed=false) or
// deletes it (removed=true), clearing its node; its statuses are ignored
// from here on.
func (db *ChangefeedDB) StopChangefeed(cf *Changefeed, removed bool) {
	db.lg.Info("changefeed_db.go", 149, "stop changefeed", zap.String("changefeed", string(cf.ID)))
	if db.bugs.Has(spec.BugStoppedChangefeedLeftOnNode) && cf.nodeID != "" && !removed {
		// Before #2967 the node was cleared first, so the replica was
		// removed from node ""'s tasks and stayed in its old node's.
		db.leftOnNode[cf.ID] = cf.nodeID
	}
	delete(db.absentStopped, cf.ID)
	cf.nodeID = ""
	cf.state = Absent
	if removed {
		delete(db.changefeeds, cf.ID)
		delete(db.stopped, cf.ID)
		return
	}
	db.stopped[cf.ID] = true
}

// tasksOnNode lists the changefeeds the coordinator's node-removal
// handling finds on n (GetByNodeID): those bound to it, and, with
// stopped-changefeed-left-on-node, stopped ones its task list kept.
func (db *ChangefeedDB) tasksOnNode(n core.NodeID) []*Changefeed {
	var out []*Changefeed
	for _, id := range db.IDs() {
		if cf := db.changefeeds[id]; cf.nodeID == n || (db.stopped[id] && db.leftOnNode[id] == n) {
			out = append(out, cf)
		}
	}
	return out
}

// MarkStoppedAbsent is MarkMaintainerAbsent of a stopped changefeed its old
// node's task list kept (stopped-changefeed-left-on-node): it joins the
// absent set, which the basic scheduler reads, while it stays stopped.
func (db *ChangefeedDB) MarkStoppedAbsent(cf *Changefeed) {
	db.lg.Info("changefeed_db.go", 309, "marking changefeed absent", zap.String("changefeed", string(cf.ID)), zap.String("node", string(db.leftOnNode[cf.ID])))
	delete(db.leftOnNode, cf.ID)
	db.absentStopped[cf.ID] = true
}

// schedulable: the basic scheduler may add a maintainer for it (absent,
// not stopped, or a stopped one the absent set holds).
func (db *ChangefeedDB) schedulable(cf *Changefeed) bool {
	return cf.state == Absent && (!db.stopped[cf.ID] || db.absentStopped[cf.ID])
}

// countByNode counts scheduling+replicating changefeeds per node.
func (db *ChangefeedDB) countByNode() map[core.NodeID]int {
	out := map[core.NodeID]int{}
	for id, cf := range db.changefeeds {
		if !db.stopped[id] && cf.nodeID != "" {
			out[cf.nodeID]++
		}
	}
	return out
}

func (db *ChangefeedDB) emitRemoved(out *core.Effects, id core.ChangefeedID) {
	db.lg.Event(out, spec.Event{Kind: spec.ChangefeedRemoved, Changefeed: string(id)})
}
