// Package spec is cdcspec's shared vocabulary: the events of TiCDC's control
// plane and the named properties that must hold over them.
//
// The same Event type is produced by three sources:
//   - model/ emits events from its pure Step function;
//   - impl/ logs each event in TiCDC's log format (and exposes the stream);
//   - traces/ parses TiCDC production logs back into events.
//
// A property is one Monitor implementation, run unchanged over all three
// streams. If a checker needs a second copy of a rule, the vocabulary is
// missing an event: add it here.
//
// This package imports only the standard library.
package spec

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind names what happened. Names follow TiCDC's components: the coordinator
// owns changefeeds, one maintainer per changefeed schedules spans, dispatcher
// managers (DM) run one dispatcher per span on every node.
type Kind uint8

// Event kinds. The comment on each kind lists the Event fields it sets
// (besides Kind, Time, Changefeed, Node and Source, which every event may set).
const (
	KindUnknown Kind = iota

	// --- coordinator ---

	// StatusReceived: a MaintainerStatus reached the coordinator's
	// handleMaintainerStatus. Fields: Node (sender), Epoch, Checkpoint,
	// BootstrapDone, State ("working"/"stopped"), Err. Accepted is true when
	// the status passed the node and epoch checks (steps 3-4 of A.2) and was
	// handed to Changefeed.UpdateStatus.
	StatusReceived
	// StatusIgnored: the coordinator dropped a status and said so ("drop stale
	// maintainer status", "remote changefeed maintainer nodeID mismatch").
	// Fields: Node, Epoch, Reason.
	StatusIgnored
	// CheckpointStored: the coordinator persisted the changefeed checkpoint
	// (saveCheckpointTs; etcd status key). Fields: Checkpoint.
	CheckpointStored
	// StateChanged: the changefeed's FeedState changed ("changefeed status
	// changed"). Fields: State (normal|warning|failed|stopped|finished|removed), Err.
	StateChanged
	// BackoffErrorSeen: an error reached the backoff ("changefeed maintainer
	// report an error", or the fast-fail variant). Fields: Node, Err, Checkpoint, State.
	BackoffErrorSeen
	// BackoffStarted: the changefeed will be stopped and retried ("changefeed
	// meets an error, will be stopped"). Fields: Checkpoint, NextRetry, Err.
	BackoffStarted
	// BackoffIgnored: an error arrived while the changefeed was already
	// restarting ("changefeed is already in restarting progress, ignore the
	// error"). The error reached the backoff, which chose to ignore it.
	BackoffIgnored
	// BootstrapDoneChanged: the status's BootstrapDone differs from the stored
	// one ("Received changefeed status with bootstrapDone"); the coordinator
	// reports Normal and, by design, ignores a retryable error in the same
	// status (A.2 step 4). Fields: Node, BootstrapDone.
	BootstrapDoneChanged
	// BackoffRecovered: checkpoint passed the retry baseline; back to normal.
	BackoffRecovered
	// BackoffGaveUp: the retry budget is spent; the changefeed fails.
	BackoffGaveUp
	// MaintainerOpStarted / MaintainerOpFinished: a coordinator operator
	// ("add operator to running queue" / "operator finished", role=coordinator).
	// Fields: Op (add|move|stop), Node (destination; for move the target),
	// Origin (move only), Epoch, Removed (stop only). A finished operator
	// that did not succeed (canceled: its destination left; aborted: a move
	// gave up) sets Reason to "canceled" or "aborted" and marks nothing
	// replicating.
	MaintainerOpStarted
	MaintainerOpFinished
	// EpochBumped: the changefeed's maintainer epoch was bumped and persisted.
	// Fields: Epoch.
	EpochBumped
	// ChangefeedCreated: the changefeed was created (API). Fields: Checkpoint
	// (startTs), Tables (initial table IDs).
	ChangefeedCreated
	// ChangefeedResumed: resume (API). Fields: Checkpoint (the new baseline; an
	// overwritten checkpoint may be lower than the stored one).
	ChangefeedResumed
	// ChangefeedRemoved: the changefeed's etcd keys were deleted.
	ChangefeedRemoved

	// --- maintainer manager and maintainer ---

	// MaintainerCreated: "changefeed maintainer started". Fields: Node, Epoch,
	// Checkpoint, RemovalOnly (NewMaintainerForRemove: never bootstraps).
	MaintainerCreated
	// MaintainerBootstrapped: "changefeed maintainer bootstrapped". Fields: Node, Epoch, Checkpoint (startTs).
	MaintainerBootstrapped
	// MaintainerBootstrapFailed: "maintainer bootstrap failed". Fields: Node, Err.
	MaintainerBootstrapFailed
	// MaintainerClosed: "changefeed maintainer closed" (or removed from the
	// manager). Fields: Node, Epoch, Checkpoint, Removed.
	MaintainerClosed
	// DispatcherErrorReported: the maintainer accepted a DM's error ("dispatcher
	// report an error"). Fields: Node (maintainer's node), Origin (source node), Err.
	DispatcherErrorReported
	// MaintainerRejectedAdd: "reject add maintainer request because existing
	// maintainer is still running". Fields: Node, Epoch.
	MaintainerRejectedAdd

	// --- dispatcher manager and dispatchers ---

	// DispatcherCreated: "new dispatcher created" (or the table trigger).
	// Fields: Node, Dispatcher, Span, Checkpoint (startTs), Merge (a merge
	// target: created before its sources close, checked when it works).
	DispatcherCreated
	// DispatcherWorking: "update dispatcher status to working". Fields: Node, Dispatcher, Span.
	DispatcherWorking
	// DispatcherRemoved: "event dispatcher completely stopped, and delete it
	// from event dispatcher manager". Fields: Node, Dispatcher, Checkpoint.
	DispatcherRemoved
	// DispatcherManagerClosed: "event dispatcher manager closed": every
	// dispatcher of the changefeed on Node is gone. Fields: Node.
	DispatcherManagerClosed
	// DispatcherOpStarted / DispatcherOpFinished: a maintainer operator.
	// Fields: Op (add|remove|move|split|merge), Dispatcher, Span, Node (dest), Origin.
	DispatcherOpStarted
	DispatcherOpFinished
	// SpanNotFound: "no span found, remove it": the maintainer found a
	// working dispatcher it does not know. Fields: Node, Dispatcher.
	SpanNotFound
	// WorkingTableIgnored: "found a working table that is not in initial
	// table map, just ignore it" (seed #6202's marker). Fields: Span.Table.
	WorkingTableIgnored
	// SinkError: a dispatcher or sink error reached the DM ("Event Dispatcher
	// Manager Meets Error"). Fields: Node, Err.
	SinkError

	// --- data path ---

	// DataWritten: the upstream committed a row change of Span.Table at
	// Checkpoint (its commitTs) that this changefeed must deliver.
	DataWritten
	// DataFlushed: the sink acknowledged every row change of Span (Span.Table)
	// with commitTs <= Checkpoint.
	DataFlushed

	// --- cluster ---

	// NodeJoined / NodeLeft: a capture registered / its capture key vanished. Fields: Node.
	NodeJoined
	NodeLeft
	// CaptureSuicide: a capture lost its etcd session and exited. Fields: Node, Err.
	CaptureSuicide
	// TableCreated: a DDL created a table. Fields: Span.Table, Checkpoint (the DDL's commitTs).
	TableCreated
	// UpstreamStalled / UpstreamResumed: the upstream resolved ts stopped /
	// started advancing (TiKV outage, seed 004). Fields: Checkpoint (resolved ts).
	UpstreamStalled
	UpstreamResumed

	// --- run markers (emitted by drivers, not by the protocol) ---

	// FaultsHealed: the driver stopped injecting faults. Fields: Checkpoint =
	// the upstream resolved ts at that moment (the liveness target).
	FaultsHealed
	// Quiesced: the driver ran the system to quiescence after FaultsHealed;
	// liveness properties are judged here.
	Quiesced

	// --- barrier: blocking DDLs and syncpoints (spec/barrier.go) ---

	// DDLCommitted: the upstream committed a DDL at Checkpoint (its commitTs),
	// or a syncpoint of the changefeed falls due at Checkpoint (SyncPoint,
	// Influence "all"). Fields: Checkpoint, Tables (blocked tables of a
	// normal DDL; 0 is the table trigger), Dropped, Added, Influence, SyncPoint,
	// Reason (the DDL, e.g. "drop table").
	DDLCommitted
	// BlockStatusReported: a dispatcher reported its block status
	// (TableSpanBlockStatus). Fields: Node, Dispatcher, Span, Checkpoint
	// (BlockTs), State (Stage: NONE, WAITING or DONE), Tables, Dropped, Added,
	// Influence, SyncPoint.
	BlockStatusReported
	// BlockEventCreated: the maintainer's barrier created a block event
	// ("new block event is created"). Fields: Node (maintainer), Dispatcher
	// (the reporter), Checkpoint, SyncPoint, Influence.
	BlockEventCreated
	// BlockWriterSelected: every influenced dispatcher reported; one was
	// chosen to write ("all dispatcher reported heartbeat, schedule it, and
	// select one to write"). Fields: Node (maintainer), Dispatcher (writer),
	// Checkpoint, Influence.
	BlockWriterSelected
	// BlockActionReceived: a dispatcher got the maintainer's action for its
	// pending block event ("pending event get the action"). Fields: Node,
	// Dispatcher, Checkpoint, SyncPoint, State ("write" or "pass").
	BlockActionReceived
	// BlockEventDone: every influenced dispatcher reported DONE; the barrier
	// deleted the event ("all dispatchers reported event done, remove
	// event"). Fields: Node (maintainer), Checkpoint, SyncPoint.
	BlockEventDone
	// DDLWritten: a dispatcher wrote the DDL (or syncpoint) at Checkpoint to
	// the sink. Fields: Node, Dispatcher, Checkpoint, SyncPoint.
	DDLWritten

	// --- coordinator (added after the barrier kinds; numbering is stable) ---

	// CoordinatorBootstrapped: a new coordinator finished its bootstrap
	// ("coordinator bootstrapped", controller.go finishBootstrap): every
	// changefeed was rebuilt from etcd and the maintainers' reports
	// (changefeed.NewChangefeed), so every backoff starts afresh
	// (NewBackoff: resetErrRetry). Fields: Node (the coordinator's node).
	// Changefeed is empty: the event concerns every changefeed.
	CoordinatorBootstrapped

	kindCount
)

var kindNames = [...]string{
	KindUnknown:               "unknown",
	StatusReceived:            "status-received",
	StatusIgnored:             "status-ignored",
	CheckpointStored:          "checkpoint-stored",
	StateChanged:              "state-changed",
	BackoffErrorSeen:          "backoff-error-seen",
	BackoffStarted:            "backoff-started",
	BackoffIgnored:            "backoff-ignored",
	BootstrapDoneChanged:      "bootstrap-done-changed",
	BackoffRecovered:          "backoff-recovered",
	BackoffGaveUp:             "backoff-gave-up",
	MaintainerOpStarted:       "maintainer-op-started",
	MaintainerOpFinished:      "maintainer-op-finished",
	EpochBumped:               "epoch-bumped",
	ChangefeedCreated:         "changefeed-created",
	ChangefeedResumed:         "changefeed-resumed",
	ChangefeedRemoved:         "changefeed-removed",
	MaintainerCreated:         "maintainer-created",
	MaintainerBootstrapped:    "maintainer-bootstrapped",
	MaintainerBootstrapFailed: "maintainer-bootstrap-failed",
	MaintainerClosed:          "maintainer-closed",
	DispatcherErrorReported:   "dispatcher-error-reported",
	MaintainerRejectedAdd:     "maintainer-rejected-add",
	DispatcherCreated:         "dispatcher-created",
	DispatcherWorking:         "dispatcher-working",
	DispatcherRemoved:         "dispatcher-removed",
	DispatcherManagerClosed:   "dispatcher-manager-closed",
	DispatcherOpStarted:       "dispatcher-op-started",
	DispatcherOpFinished:      "dispatcher-op-finished",
	SpanNotFound:              "span-not-found",
	WorkingTableIgnored:       "working-table-ignored",
	SinkError:                 "sink-error",
	DataWritten:               "data-written",
	DataFlushed:               "data-flushed",
	NodeJoined:                "node-joined",
	NodeLeft:                  "node-left",
	CaptureSuicide:            "capture-suicide",
	TableCreated:              "table-created",
	UpstreamStalled:           "upstream-stalled",
	UpstreamResumed:           "upstream-resumed",
	FaultsHealed:              "faults-healed",
	Quiesced:                  "quiesced",
	DDLCommitted:              "ddl-committed",
	BlockStatusReported:       "block-status-reported",
	BlockEventCreated:         "block-event-created",
	BlockWriterSelected:       "block-writer-selected",
	BlockActionReceived:       "block-action-received",
	BlockEventDone:            "block-event-done",
	DDLWritten:                "ddl-written",
	CoordinatorBootstrapped:   "coordinator-bootstrapped",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Kinds returns every defined kind except KindUnknown, in declaration order.
func Kinds() []Kind {
	out := make([]Kind, 0, kindCount-1)
	for k := Kind(1); k < kindCount; k++ {
		out = append(out, k)
	}
	return out
}

// ParseKind is the inverse of Kind.String.
func ParseKind(s string) (Kind, bool) {
	for k := Kind(1); k < kindCount; k++ {
		if kindNames[k] == s {
			return k, true
		}
	}
	return KindUnknown, false
}

// Op names a coordinator or maintainer operator.
type Op string

// Operator types. Coordinator: OpAdd, OpMove, OpStop. Maintainer: OpAdd,
// OpRemove, OpMove, OpSplit, OpMerge.
const (
	OpAdd    Op = "add"
	OpMove   Op = "move"
	OpStop   Op = "stop"
	OpRemove Op = "remove"
	OpSplit  Op = "split"
	OpMerge  Op = "merge"
)

// Changefeed states (pkg/config FeedState), as carried by StateChanged.State.
const (
	StateNormal   = "normal"
	StateWarning  = "warning"
	StateFailed   = "failed"
	StateStopped  = "stopped"
	StateFinished = "finished"
	StateRemoved  = "removed"
)

// Maintainer component states, as carried by StatusReceived.State.
const (
	MaintainerWorking = "working"
	MaintainerStopped = "stopped"
)

// Span is a key range of one table. Start and End are opaque keys compared
// bytewise; an empty End means "to the end of the table", so Span{Table: t}
// is the whole table. The table trigger (DDL span) uses Table 0.
type Span struct {
	Table int64
	Start string
	End   string
}

// WholeTable returns the span covering all of table t.
func WholeTable(t int64) Span { return Span{Table: t} }

// Overlaps reports whether two spans share at least one key.
func (s Span) Overlaps(o Span) bool {
	if s.Table != o.Table {
		return false
	}
	// [s.Start, s.End) and [o.Start, o.End) with "" End = +inf.
	if s.End != "" && s.End <= o.Start {
		return false
	}
	if o.End != "" && o.End <= s.Start {
		return false
	}
	return true
}

func (s Span) String() string {
	if s.Start == "" && s.End == "" {
		return "t" + strconv.FormatInt(s.Table, 10)
	}
	end := s.End
	if end == "" {
		end = "+inf"
	}
	return fmt.Sprintf("t%d[%s,%s)", s.Table, s.Start, end)
}

// Source locates the evidence for an event: the log file and line it was
// parsed from (traces), or the model step / simulation message that produced
// it. Empty for events with no textual origin.
type Source struct {
	File string
	Line int
	Text string // the raw line, possibly truncated; evidence for findings
	// Untimed: the log line carried no timestamp of its own (pasted
	// without its prefix); the event's Time is the line before's.
	Untimed bool
}

func (s Source) String() string {
	if s.File == "" {
		return ""
	}
	return s.File + ":" + strconv.Itoa(s.Line)
}

// Event is one thing that happened. It is a flat value so that all three
// sources can fill it cheaply; each Kind documents which fields it sets.
// Unused fields are zero.
type Event struct {
	Kind Kind
	// Time in milliseconds since an arbitrary origin: Unix ms for logs and the
	// real runtime, virtual ms in simulation, the step index in the model.
	Time int64
	// Changefeed is "keyspace/name" or just "name"; monitors compare it as is.
	Changefeed string
	Node       string
	Origin     string
	Epoch      uint64
	Checkpoint uint64
	NextRetry  int64
	Span       Span
	Tables     []int64
	// Dropped and Added are the tables a DDL drops and adds
	// (NeedDroppedTables, NeedAddedTables); Influence is its influence type
	// (InfluenceNormal, InfluenceDB, InfluenceAll); SyncPoint marks a
	// syncpoint rather than a DDL. Barrier events only.
	Dropped    []int64
	Added      []int64
	Influence  string
	Dispatcher string
	Op         Op
	State      string
	Err        string
	Reason     string

	BootstrapDone bool
	Accepted      bool
	RemovalOnly   bool
	Removed       bool
	Merge         bool
	SyncPoint     bool

	Source Source
}

// JoinTables renders table IDs as "1,2,3".
func JoinTables(ts []int64) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = strconv.FormatInt(t, 10)
	}
	return strings.Join(parts, ",")
}

// String renders an event in one line, stable and grep-friendly, e.g.
//
//	status-received cf=default/cf node=n1 epoch=3 checkpoint=120 bootstrapDone=true err="sink failed" accepted
func (e Event) String() string {
	var b strings.Builder
	b.WriteString(e.Kind.String())
	kv := func(k, v string) {
		b.WriteByte(' ')
		b.WriteString(k)
		b.WriteByte('=')
		if strings.ContainsAny(v, " \t\"=") {
			b.WriteString(strconv.Quote(v))
		} else {
			b.WriteString(v)
		}
	}
	if e.Changefeed != "" {
		kv("cf", e.Changefeed)
	}
	if e.Node != "" {
		kv("node", e.Node)
	}
	if e.Origin != "" {
		kv("origin", e.Origin)
	}
	if e.Op != "" {
		kv("op", string(e.Op))
	}
	if e.Dispatcher != "" {
		kv("dispatcher", e.Dispatcher)
	}
	if e.Span != (Span{}) {
		kv("span", e.Span.String())
	}
	if len(e.Tables) > 0 {
		kv("tables", JoinTables(e.Tables))
	}
	if len(e.Dropped) > 0 {
		kv("dropped", JoinTables(e.Dropped))
	}
	if len(e.Added) > 0 {
		kv("added", JoinTables(e.Added))
	}
	if e.Influence != "" {
		kv("influence", e.Influence)
	}
	if e.Epoch != 0 {
		kv("epoch", strconv.FormatUint(e.Epoch, 10))
	}
	if e.Checkpoint != 0 {
		kv("checkpoint", strconv.FormatUint(e.Checkpoint, 10))
	}
	if e.State != "" {
		kv("state", e.State)
	}
	if e.Kind == StatusReceived || e.Kind == BootstrapDoneChanged {
		kv("bootstrapDone", strconv.FormatBool(e.BootstrapDone))
	}
	if e.Err != "" {
		kv("err", e.Err)
	}
	if e.Reason != "" {
		kv("reason", e.Reason)
	}
	if e.NextRetry != 0 {
		kv("nextRetry", strconv.FormatInt(e.NextRetry, 10))
	}
	if e.Accepted {
		b.WriteString(" accepted")
	}
	if e.RemovalOnly {
		b.WriteString(" removal-only")
	}
	if e.Removed {
		b.WriteString(" removed")
	}
	if e.Merge {
		b.WriteString(" merge")
	}
	if e.SyncPoint {
		b.WriteString(" syncpoint")
	}
	return b.String()
}
