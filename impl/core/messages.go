// Package core holds what every impl component shares: identifiers, the
// control-plane messages (a compact heartbeatpb), the Effects a handler
// returns, the interfaces to the outside world (transport, metadata store,
// sink, clock, randomness), and the bug switches.
//
// Components (coordinator, maintainer, dispatcher) are event handlers: they
// own no goroutine and read no clock. A runtime (impl/sim for deterministic
// simulation, a later one on real IO) feeds them inputs and executes the
// Effects they return, following the ordering rules on Effects.
package core

import "cdcspec/spec"

// NodeID identifies one capture process. A restarted capture gets a fresh ID
// (pkg/node/node.go).
type NodeID string

// ChangefeedID is "keyspace/name".
type ChangefeedID string

// Name returns the name part of "keyspace/name".
func (c ChangefeedID) Name() string {
	for i := len(c) - 1; i >= 0; i-- {
		if c[i] == '/' {
			return string(c[i+1:])
		}
	}
	return string(c)
}

// DispatcherID identifies one dispatcher instance. It is new for every span
// instance (AddNewTable, split products) and for every maintainer's table
// trigger. TiCDC prints it as two decimal numbers (low then high); so do we.
type DispatcherID string

// Topic routes a message inside a node, as pkg/messaging topics do.
type Topic uint8

const (
	TopicCoordinator        Topic = iota + 1 // coordinator
	TopicMaintainerManager                   // maintainer-manager (manager and its maintainers)
	TopicDispatcherManagers                  // dispatcher-manager-manager (orchestrator)
	TopicHeartbeatCollector                  // heartbeat-collector (dispatcher managers)
)

func (t Topic) String() string {
	switch t {
	case TopicCoordinator:
		return "coordinator"
	case TopicMaintainerManager:
		return "maintainer-manager"
	case TopicDispatcherManagers:
		return "dispatcher-manager-manager"
	case TopicHeartbeatCollector:
		return "heartbeat-collector"
	}
	return "unknown"
}

// Message is one control-plane message. Type names mirror heartbeatpb;
// everything else about a type (its topic, route, codec factory, model
// kinds) is its MessageKind in the registry (registry.go).
type Message interface {
	TypeName() string
}

// Envelope is a message in transit.
type Envelope struct {
	From, To NodeID
	Msg      Message
}

// RunningError is heartbeatpb.RunningError.
type RunningError struct {
	Time    int64 // virtual ms
	Node    NodeID
	Code    string // e.g. "CDC:ErrChangefeedRetryable", "CDC:ErrGCTTLExceeded"
	Message string
}

// ComponentState is heartbeatpb.ComponentState.
type ComponentState uint8

const (
	ComponentWorking ComponentState = iota + 1
	ComponentStopped
	ComponentRemoved
	ComponentInitializing
	ComponentRemoving
)

func (s ComponentState) String() string {
	switch s {
	case ComponentWorking:
		return "Working"
	case ComponentStopped:
		return "Stopped"
	case ComponentRemoved:
		return "Removed"
	case ComponentInitializing:
		return "Initializing"
	case ComponentRemoving:
		return "Removing"
	}
	return "Unknown"
}

// --- coordinator <-> maintainer manager ---

// CoordinatorBootstrapRequest: the coordinator (owner revision Version)
// announces itself; re-sent every 500 ms until answered.
type CoordinatorBootstrapRequest struct{ Version int64 }

// CoordinatorBootstrapResponse carries every local maintainer's status.
type CoordinatorBootstrapResponse struct{ Statuses []MaintainerStatus }

// MaintainerStatus is heartbeatpb.MaintainerStatus.
type MaintainerStatus struct {
	Changefeed    ChangefeedID
	State         ComponentState // Working or Stopped
	CheckpointTs  uint64
	Err           []RunningError
	BootstrapDone bool
	Epoch         uint64
	// CascadeClosed: the maintainer finished a cascade close (every
	// dispatcher manager closed). Not in TiCDC: a stop operator needs it to
	// tell its own cascade close from the Stopped of a move's non-cascade
	// remove (see StopChangefeedOperator.Check).
	CascadeClosed bool
}

// MaintainerHeartbeat carries changed statuses (and any older than 1 s).
type MaintainerHeartbeat struct{ Statuses []MaintainerStatus }

// AddMaintainerRequest asks a manager to run the changefeed's maintainer.
type AddMaintainerRequest struct {
	Changefeed   ChangefeedID
	CheckpointTs uint64
	IsNew        bool
	Epoch        uint64
}

// RemoveMaintainerRequest asks a manager to stop the maintainer. Cascade
// also closes every dispatcher manager; Removed means the changefeed is
// deleted (and forces Cascade).
type RemoveMaintainerRequest struct {
	Changefeed ChangefeedID
	Cascade    bool
	Removed    bool
	Epoch      uint64
}

// --- maintainer <-> dispatcher orchestrator / managers ---

// MaintainerBootstrapRequest: only the maintainer's own node's copy carries
// the table trigger ID and IsNew.
type MaintainerBootstrapRequest struct {
	Changefeed ChangefeedID
	StartTs    uint64
	TriggerID  DispatcherID // "" on other nodes
	IsNew      bool
	Epoch      uint64
}

// BootstrapTableSpan is one dispatcher in a bootstrap response.
type BootstrapTableSpan struct {
	ID           DispatcherID
	Span         spec.Span
	State        ComponentState
	CheckpointTs uint64
	// BlockState is the dispatcher's WAITING block status, if it is blocked
	// (the new maintainer's barrier restores its events from them).
	BlockState *BlockStatus
}

// MaintainerBootstrapResponse is the DM snapshot for a (new) maintainer.
type MaintainerBootstrapResponse struct {
	Changefeed   ChangefeedID
	Spans        []BootstrapTableSpan
	CheckpointTs uint64 // trigger startTs on the maintainer's node, else 0
	Operators    []ScheduleDispatcherRequest
	// MergeOperators are the journaled in-flight merges (mergeOperatorMap,
	// #3769): restored at bootstrap.
	MergeOperators []MergeDispatcherRequest
	Err            *RunningError
	Epoch          uint64
}

// MaintainerCloseRequest closes the changefeed's DM on a node.
type MaintainerCloseRequest struct {
	Changefeed ChangefeedID
	Removed    bool
	Epoch      uint64
}

// MaintainerCloseResponse: Success once the DM is closed.
type MaintainerCloseResponse struct {
	Changefeed ChangefeedID
	Success    bool
	Epoch      uint64
}

// ScheduleAction is Create or Remove.
type ScheduleAction uint8

const (
	ScheduleCreate ScheduleAction = iota + 1
	ScheduleRemove
)

func (a ScheduleAction) String() string {
	if a == ScheduleCreate {
		return "Create"
	}
	return "Remove"
}

// OperatorType tells a new maintainer which operator a journaled step
// belonged to (#3691).
type OperatorType uint8

const (
	OpTypeAdd OperatorType = iota + 1
	OpTypeRemove
	OpTypeMove
	OpTypeSplit
)

func (o OperatorType) String() string {
	switch o {
	case OpTypeAdd:
		return "O_Add"
	case OpTypeRemove:
		return "O_Remove"
	case OpTypeMove:
		return "O_Move"
	case OpTypeSplit:
		return "O_Split"
	}
	return "O_Unknown"
}

// DispatcherConfig is heartbeatpb.DispatcherConfig.
type DispatcherConfig struct {
	ID      DispatcherID
	Span    spec.Span
	StartTs uint64
	// SkipDMLAsStartTs: the dispatcher is re-created at a DDL barrier's
	// blockTs-1 to replay the DDL; it skips the DML at blockTs
	// (NewAddDispatcherMessage). impl's dispatchers write nothing at a
	// DDL's blockTs before the DDL, so they have nothing to skip.
	SkipDMLAsStartTs bool
}

// MergeDispatcherRequest merges adjacent dispatchers of one table on one
// node into a new dispatcher (heartbeatpb.MergeDispatcherRequest).
type MergeDispatcherRequest struct {
	Changefeed    ChangefeedID
	DispatcherIDs []DispatcherID
	MergedID      DispatcherID
	Epoch         uint64
}

// ScheduleDispatcherRequest creates or removes one dispatcher.
type ScheduleDispatcherRequest struct {
	Changefeed ChangefeedID
	Config     DispatcherConfig
	Action     ScheduleAction
	OpType     OperatorType
	Epoch      uint64
	// OpSeq numbers the maintainer operator that sent the request; it grows
	// with every operator of one maintainer (0: not sent by an operator,
	// e.g. a cleanup remove). Not in TiCDC: read only by cdcspec's fence
	// against a stale copy of a same-generation request, which is active
	// only under a delivery stronger than TiCDC's message center (see
	// DispatcherManager.opFence).
	OpSeq uint64
}

// Watermark is a DM's min checkpoint over its dispatchers; Seq grows with
// every dispatcher-set change (#3947).
type Watermark struct {
	CheckpointTs uint64
	ResolvedTs   uint64
	Seq          uint64
}

// TableSpanStatus is one dispatcher's status in a heartbeat.
type TableSpanStatus struct {
	ID           DispatcherID
	State        ComponentState
	CheckpointTs uint64
}

// HeartBeatRequest is the DM's heartbeat. It carries no epoch.
type HeartBeatRequest struct {
	Changefeed ChangefeedID
	Watermark  *Watermark
	Statuses   []TableSpanStatus
	Complete   bool
	Err        *RunningError
}

// BlockStage of a block event.
type BlockStage uint8

const (
	StageNone BlockStage = iota + 1
	StageWaiting
	StageWriting
	StageDone
)

func (s BlockStage) String() string {
	switch s {
	case StageNone:
		return spec.StageNone
	case StageWaiting:
		return spec.StageWaiting
	case StageWriting:
		return spec.StageWriting
	case StageDone:
		return spec.StageDone
	}
	return "UNKNOWN"
}

// BlockStatus is a dispatcher's report about a DDL (TableSpanBlockStatus):
// NONE for a non-blocking CREATE TABLE on the table trigger (NeedAdded);
// WAITING and DONE for a blocking DDL or a syncpoint, keyed by (BlockTs,
// IsSyncPoint), with the event's influence, blocked, dropped and added
// tables (BlockTables lists a normal DDL's tables, 0 for the trigger).
type BlockStatus struct {
	ID          DispatcherID
	BlockTs     uint64
	Stage       BlockStage
	IsSyncPoint bool
	Influence   string // spec.InfluenceNormal, InfluenceDB, InfluenceAll
	BlockTables []int64
	NeedDropped []int64
	NeedAdded   []int64
	// SchemaID is BlockTables.SchemaID: the schema a DB-influence event
	// blocks; 0 names none, and the event covers every table (an upstream
	// with one schema).
	SchemaID int64
	// DropSchemaID is NeedDroppedTables.SchemaID of a DB-type drop (DROP
	// DATABASE): every span of the schema is removed; 0: none.
	DropSchemaID int64
	// UpdatedSchemas are the tables the DDL moves to another schema (a
	// RENAME across databases; heartbeatpb.State.UpdatedSchemas).
	UpdatedSchemas []SchemaIDChange
}

// SchemaIDChange is heartbeatpb.SchemaIDChange: table TableID moves from
// schema OldSchemaID to NewSchemaID.
type SchemaIDChange struct {
	TableID     int64
	OldSchemaID int64
	NewSchemaID int64
}

// BlockAction is heartbeatpb.Action: what the barrier tells a blocked
// dispatcher.
type BlockAction uint8

const (
	ActionWrite BlockAction = iota + 1
	ActionPass
)

func (a BlockAction) String() string {
	if a == ActionWrite {
		return spec.ActionWrite
	}
	return spec.ActionPass
}

// DispatcherAction is one barrier action for one dispatcher
// (heartbeatpb.DispatcherStatus with an Action).
type DispatcherAction struct {
	ID          DispatcherID
	Action      BlockAction
	CommitTs    uint64
	IsSyncPoint bool
}

// BlockStatusRequest carries block statuses. It carries no epoch.
type BlockStatusRequest struct {
	Changefeed ChangefeedID
	Statuses   []BlockStatus
}

// HeartBeatResponse carries the barrier's answer to block statuses: the
// statuses it ignored for now (IgnoredBlockStatus: the dispatcher's span
// is not replicating yet), ACKs, and Write and Pass actions.
type HeartBeatResponse struct {
	Changefeed ChangefeedID
	Ignored    []BlockStatus // ID + BlockTs + IsSyncPoint, not taken yet
	ACKs       []BlockStatus // ID + BlockTs acknowledged
	Actions    []DispatcherAction
	Epoch      uint64
}

func (CoordinatorBootstrapRequest) TypeName() string  { return "CoordinatorBootstrapRequest" }
func (CoordinatorBootstrapResponse) TypeName() string { return "CoordinatorBootstrapResponse" }
func (MaintainerHeartbeat) TypeName() string          { return "MaintainerHeartbeat" }
func (AddMaintainerRequest) TypeName() string         { return "AddMaintainerRequest" }
func (RemoveMaintainerRequest) TypeName() string      { return "RemoveMaintainerRequest" }
func (MaintainerBootstrapRequest) TypeName() string   { return "MaintainerBootstrapRequest" }
func (MaintainerBootstrapResponse) TypeName() string  { return "MaintainerBootstrapResponse" }
func (MaintainerCloseRequest) TypeName() string       { return "MaintainerCloseRequest" }
func (MaintainerCloseResponse) TypeName() string      { return "MaintainerCloseResponse" }
func (ScheduleDispatcherRequest) TypeName() string    { return "ScheduleDispatcherRequest" }
func (HeartBeatRequest) TypeName() string             { return "HeartBeatRequest" }
func (BlockStatusRequest) TypeName() string           { return "BlockStatusRequest" }
func (HeartBeatResponse) TypeName() string            { return "HeartBeatResponse" }
func (MergeDispatcherRequest) TypeName() string       { return "MergeDispatcherRequest" }
