package coordinator

import (
	"sort"

	"go.uber.org/zap"

	"cdcspec/impl/core"
	"cdcspec/impl/logging"
	"cdcspec/spec"
)

// ChangefeedDB is coordinator/changefeed/changefeed_db.go at b813e76f9:
// running changefeeds (absent/scheduling/replicating, the latter two with a
// nodeID) and the stopped ones (failed/stopped/finished). Method names
// follow HEAD's; HEAD's replica.ReplicationDB keeps the absent, scheduling
// and replicating sets and a per-node map, here each changefeed's state and
// nodeID are the one record they are derived from.
type ChangefeedDB struct {
	changefeeds map[core.ChangefeedID]*Changefeed
	// stopped holds changefeeds that are not scheduled; also in changefeeds.
	stopped map[core.ChangefeedID]bool
	// leftOnNode and absentStopped exist only with the catalogue entry
	// stopped-changefeed-left-on-node (before pingcap/ticdc#2967): a stopped
	// changefeed still listed among its old node's tasks (GetByNodeID), and
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

// AddAbsentChangefeed adds a changefeed to be scheduled later
// (changefeed_db.go:75-85).
func (db *ChangefeedDB) AddAbsentChangefeed(cf *Changefeed) {
	db.changefeeds[cf.ID] = cf
	cf.state = Absent
}

// AddStoppedChangefeed adds a changefeed that is not scheduled
// (changefeed_db.go:87-95).
func (db *ChangefeedDB) AddStoppedChangefeed(cf *Changefeed) {
	db.changefeeds[cf.ID] = cf
	db.stopped[cf.ID] = true
}

// AddReplicatingMaintainer adds a changefeed whose maintainer already runs
// on n (changefeed_db.go:97-110).
func (db *ChangefeedDB) AddReplicatingMaintainer(cf *Changefeed, n core.NodeID) {
	cf.nodeID = n
	db.lg.Info("changefeed_db.go", 103, "add an replicating maintainer", zap.String("nodeID", string(n)), zap.String("changefeed", string(cf.ID)))
	db.changefeeds[cf.ID] = cf
	cf.state = Replicating
}

// GetByID returns a changefeed (running or stopped), nil if unknown.
func (db *ChangefeedDB) GetByID(id core.ChangefeedID) *Changefeed { return db.changefeeds[id] }

// Get is GetByID.
func (db *ChangefeedDB) Get(id core.ChangefeedID) *Changefeed { return db.changefeeds[id] }

// IDs returns every changefeed ID, sorted (GetAllChangefeeds).
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

// GetSize is the number of changefeeds, stopped ones included.
func (db *ChangefeedDB) GetSize() int { return len(db.changefeeds) }

// GetStoppedSize is the number of stopped changefeeds.
func (db *ChangefeedDB) GetStoppedSize() int { return len(db.stopped) }

// running returns the running changefeeds in state s, sorted by ID.
func (db *ChangefeedDB) running(s SchedState) []*Changefeed {
	var out []*Changefeed
	for _, id := range db.IDs() {
		if cf := db.changefeeds[id]; !db.stopped[id] && cf.state == s {
			out = append(out, cf)
		}
	}
	return out
}

// GetAbsent returns the absent changefeeds whose backoff lets them run at
// now (pkg/scheduler/replica/replication_group.go GetAbsent filters by
// ShouldRun), sorted by ID.
func (db *ChangefeedDB) GetAbsent(now int64) []*Changefeed {
	var out []*Changefeed
	for _, id := range db.IDs() {
		cf := db.changefeeds[id]
		if cf.state == Absent && (!db.stopped[id] || db.absentStopped[id]) && cf.backoff.ShouldRun(now) {
			out = append(out, cf)
		}
	}
	return out
}

// GetAbsentSize is the number of absent changefeeds, runnable or not.
func (db *ChangefeedDB) GetAbsentSize() int { return len(db.running(Absent)) }

// GetScheduling returns the scheduling changefeeds, sorted by ID.
func (db *ChangefeedDB) GetScheduling() []*Changefeed { return db.running(Scheduling) }

// GetReplicating returns the replicating changefeeds, sorted by ID.
func (db *ChangefeedDB) GetReplicating() []*Changefeed { return db.running(Replicating) }

// GetByNodeID returns the scheduling and replicating changefeeds bound to
// n, sorted by ID.
func (db *ChangefeedDB) GetByNodeID(n core.NodeID) []*Changefeed {
	var out []*Changefeed
	for _, id := range db.IDs() {
		cf := db.changefeeds[id]
		if n == "" {
			continue
		}
		if (!db.stopped[id] && cf.nodeID == n) || (db.stopped[id] && db.leftOnNode[id] == n) {
			out = append(out, cf)
		}
	}
	return out
}

// GetTaskSizePerNode counts scheduling and replicating changefeeds per
// node; a node without any is absent from the map.
func (db *ChangefeedDB) GetTaskSizePerNode() map[core.NodeID]int {
	out := map[core.NodeID]int{}
	for id, cf := range db.changefeeds {
		if !db.stopped[id] && cf.nodeID != "" {
			out[cf.nodeID]++
		}
	}
	return out
}

// GetWaitingSchedulingChangefeeds returns at most maxSize runnable absent
// changefeeds and the task size per node (changefeed_db.go:234-242).
func (db *ChangefeedDB) GetWaitingSchedulingChangefeeds(now int64, maxSize int) ([]*Changefeed, map[core.NodeID]int) {
	absent := db.GetAbsent(now)
	if len(absent) > maxSize {
		absent = absent[:maxSize]
	}
	return absent, db.GetTaskSizePerNode()
}

// MarkMaintainerAbsent clears the node and marks the changefeed absent.
func (db *ChangefeedDB) MarkMaintainerAbsent(cf *Changefeed) {
	db.lg.Info("changefeed_db.go", 309, "marking changefeed absent", zap.String("changefeed", string(cf.ID)), zap.String("node", string(cf.nodeID)))
	cf.nodeID = ""
	cf.state = Absent
}

// BindChangefeedToNode sets the node and marks scheduling.
func (db *ChangefeedDB) BindChangefeedToNode(cf *Changefeed, n core.NodeID) {
	db.lg.Info("changefeed_db.go", 216, "bind changefeed to node", zap.String("changefeed", string(cf.ID)),
		zap.String("oldNode", string(cf.nodeID)), zap.String("node", string(n)))
	cf.nodeID = n
	cf.state = Scheduling
}

// MarkMaintainerScheduling marks the changefeed scheduling, keeping its
// node (a move's Start).
func (db *ChangefeedDB) MarkMaintainerScheduling(cf *Changefeed) {
	db.lg.Info("changefeed_db.go", 320, "marking changefeed scheduling", zap.String("ChangefeedDB", string(cf.ID)))
	cf.state = Scheduling
}

// MarkMaintainerReplicating marks the changefeed replicating on its node
// and ends its restart (changefeed_db.go:223-232: task.StartFinished()).
func (db *ChangefeedDB) MarkMaintainerReplicating(cf *Changefeed) {
	db.lg.Info("changefeed_db.go", 228, "marking changefeed replicating", zap.String("changefeed", string(cf.ID)), zap.String("node", string(cf.nodeID)))
	cf.state = Replicating
	cf.backoff.StartFinished()
}

// MoveToSchedulingQueue makes a changefeed absent (runnable again). With
// resetBackoff (resume, create) the backoff is reset and its baseline moves
// to the changefeed's status checkpoint (changefeed_db.go:267-297).
func (db *ChangefeedDB) MoveToSchedulingQueue(now int64, id core.ChangefeedID, resetBackoff bool) {
	cf := db.changefeeds[id]
	if cf == nil {
		return
	}
	if resetBackoff {
		cf.backoff.resetBackoff(now, cf.status.CheckpointTs)
	}
	delete(db.stopped, cf.ID)
	delete(db.leftOnNode, cf.ID)
	delete(db.absentStopped, cf.ID)
	db.lg.Info("changefeed_db.go", 291, "move a changefeed to scheduling queue, it will be scheduled later",
		zap.String("changefeed", string(cf.ID)), zap.Uint64("checkpointTs", cf.status.CheckpointTs),
		zap.Time("nextScheduleTime", unixMs(cf.backoff.nextRetryTime)))
	cf.nodeID = ""
	cf.state = Absent
}

// StopByChangefeedID moves a changefeed to the stopped map (remove=false)
// or deletes it (remove=true), clearing its node, and returns the node it
// was bound to ("" for an unknown changefeed). Its statuses are ignored from
// here on. Follows changefeed_db.go:112-162.
func (db *ChangefeedDB) StopByChangefeedID(id core.ChangefeedID, remove bool) core.NodeID {
	cf := db.changefeeds[id]
	if cf == nil {
		return ""
	}
	n := cf.nodeID
	if db.bugs.Has(spec.BugStoppedChangefeedLeftOnNode) && n != "" && !remove {
		// Before #2967 the node was cleared first, so the replica was
		// removed from node ""'s tasks and stayed in its old node's.
		db.leftOnNode[cf.ID] = n
	}
	delete(db.absentStopped, cf.ID)
	cf.nodeID = ""
	cf.state = Absent
	if remove {
		db.lg.Info("changefeed_db.go", 129, "remove changefeed", zap.String("changefeed", string(cf.ID)))
		delete(db.changefeeds, cf.ID)
		delete(db.stopped, cf.ID)
		return n
	}
	db.lg.Info("changefeed_db.go", 149, "stop changefeed", zap.String("changefeed", string(cf.ID)))
	db.stopped[cf.ID] = true
	return n
}

func (db *ChangefeedDB) emitRemoved(out *core.Effects, id core.ChangefeedID) {
	db.lg.Event(out, spec.Event{Kind: spec.ChangefeedRemoved, Changefeed: string(id)})
}

// MarkStoppedAbsent is MarkMaintainerAbsent of a stopped changefeed its old
// node's task list kept (stopped-changefeed-left-on-node): it joins the
// absent set, which the basic scheduler reads, while it stays stopped.
func (db *ChangefeedDB) MarkStoppedAbsent(cf *Changefeed) {
	db.lg.Info("changefeed_db.go", 309, "marking changefeed absent", zap.String("changefeed", string(cf.ID)), zap.String("node", string(db.leftOnNode[cf.ID])))
	delete(db.leftOnNode, cf.ID)
	db.absentStopped[cf.ID] = true
}
