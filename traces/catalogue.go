package traces

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"cdcspec/spec"
)

// Symptom marks a catalogued line that feeds one of this package's log-only
// monitors, with or without a spec event.
type Symptom uint8

// Symptoms.
const (
	SymNone Symptom = iota
	// SymContext: a known TiCDC line with no monitor (counted in coverage).
	SymContext
	// SymOperatorStillRunning: "operator is still in running queue"
	// (operator_controller.go, every 30 s once an operator is 30 s old).
	SymOperatorStillRunning
	// SymRedoMetaStuck: tiflow's "Redo meta has not changed for a long time,
	// owner may be stuck" (meta_manager.go, tiflow#9595).
	SymRedoMetaStuck
	// SymCheckpointBlocked: the maintainer cannot advance the checkpoint
	// ("checkpointTs can not be advanced, since missing capture heartbeat").
	SymCheckpointBlocked
	// SymMembership: a node membership change seen by the coordinator or a
	// maintainer.
	SymMembership
	// SymSessionLost: the capture's etcd session ended or it fenced itself.
	SymSessionLost
	// SymOverlapRemoved: bootstrap removed an overlapping dispatcher.
	SymOverlapRemoved
	// SymMaintainerError: the maintainer raised an error itself.
	SymMaintainerError
	// SymPanic: a PANIC or FATAL record of a maintainer file.
	SymPanic
	// SymDispatcherManagerClosing: "closing event dispatcher manager": the
	// DM stops re-sending its error from here on.
	SymDispatcherManagerClosing
	// SymNodeMismatch: the coordinator dropped a status from another node.
	SymNodeMismatch
	// SymBootstrapFailure: a maintainer or dispatcher-manager bootstrap step
	// failed ("can not determine the startTs from the bootstrap response",
	// #4509); feeds bootstrap-failed.
	SymBootstrapFailure
	// SymInternalError: an ERROR TiCDC's code marks as unexpected (a state
	// it should not reach, an internal step that failed); feeds
	// internal-error.
	SymInternalError
	// SymSendFailed: a control message could not be sent or received; the
	// protocol re-sends. Feeds message-send-failed (info).
	SymSendFailed
	// SymErrorDiscarded: a dispatcher's error was discarded because the
	// error channel was full; feeds error-never-dropped.
	SymErrorDiscarded
	// SymImpossibleValue: TiCDC itself rejected an impossible timestamp;
	// feeds impossible-value (as do lines that report one).
	SymImpossibleValue
	// SymBarrierCreated, SymBarrierStuck, SymBarrierDone: the maintainer's
	// barrier (block event) lines; feed barrier-stuck.
	SymBarrierCreated
	SymBarrierStuck
	SymBarrierDone
	// SymBlockWaiting, SymBlockDone: a dispatcher's WAITING block status
	// re-sent, and its resend task cancelled; feed barrier-stuck.
	SymBlockWaiting
	SymBlockDone
	// SymDDLScheduled: the maintainer scheduled a DDL's table change ("add
	// new table", "remove table"); feeds table-set-follows-ddls' order check.
	SymDDLScheduled
)

var symNames = [...]string{"", "context", "operator-still-running", "redo-meta-stuck", "checkpoint-blocked",
	"membership", "session-lost", "overlap-removed", "maintainer-error", "panic", "dispatcher-manager-closing", "node-mismatch",
	"bootstrap-failure", "internal-error", "send-failed", "error-discarded", "impossible-value",
	"barrier-created", "barrier-stuck", "barrier-done", "block-waiting", "block-done", "ddl-scheduled"}

func (s Symptom) String() string {
	if int(s) < len(symNames) {
		return symNames[s]
	}
	return "symptom(" + strconv.Itoa(int(s)) + ")"
}

// Item is one catalogued log record: its spec event (Kind may be
// KindUnknown for symptom-only lines), its symptom, and extra values read by
// the log-only monitors.
type Item struct {
	Event spec.Event
	Sym   Symptom
	Level Level
	// Dur is a duration the line reports, in ms (the age of an operator, the
	// time since redo meta last changed); 0 if none.
	Dur int64
	// OpID identifies an operator in operator lines.
	OpID string
	// Msg is the record's message.
	Msg string

	// impossible names a timestamp field the line reports with an
	// impossible value ("checkpointTs=0"), "" if none.
	impossible string
	// caller is the record's caller file name (for symptoms whose finding
	// depends on the component).
	caller string

	file   int    // index of the input
	seq    int64  // order within the input
	noTime bool   // the record had no timestamp: it inherits the last one
	self   string // the capture's own node ID, if this line names it
}

// entry maps one (file, message) to what it means.
type entry struct {
	msg   string
	files []string // caller file names; empty: any file
	kind  spec.Kind
	sym   Symptom
	// keys maps Event field names to the log keys that carry them, as a
	// comma-separated list of alternatives (first found wins).
	keys map[string]string
	// fields is keys, compiled once: in a stable order, alternatives split.
	fields []fieldKeys
	// keyIdx lists every log key of fields with its field and its rank
	// among the field's alternatives (toItems reads a record's fields
	// once); keyTab indexes it by keySlot (see findKey).
	keyIdx []keyRef
	keyTab [keySlots]uint8
	// conv post-processes the event (operator strings, membership lists):
	// it is out's last element; conv returns out, possibly with that item
	// replaced by several.
	conv func(r *Record, it *Item, out []Item) []Item
	// v records where the line comes from, for the catalogue listing.
	v string

	// Derived once from the tables below (see catalogueIndex), so that the
	// parse workers need no map lookup per record:
	read    bool // a benign line a monitor still reads (contextItems)
	zeroOK  bool // a timestamp of 0 means none here (zeroMeansNone)
	ownLine bool // one of cdcspec's own lines (v "cdcspec..."): no impossible-value check
}

const (
	cfKeys = "changefeedID,changefeed,changefeedid,cf"
)

// catalogue is the message catalogue: TiCDC's new architecture at HEAD and
// release-8.5, tiflow's old architecture where the same guarantee applies,
// and cdcspec's own lines (spec.LogLines, logged by impl/). Lines are
// matched on message and caller file name, never on line numbers.
var catalogue = []entry{
	// ---- coordinator: backoff and state (backoff.go, controller.go, changefeed.go) ----
	{msg: "changefeed maintainer report an error", files: files("backoff.go"), kind: spec.BackoffErrorSeen, v: "HEAD, v8.5",
		keys: m("Changefeed", cfKeys, "Checkpoint", "checkpointTs", "Node", "node", "State", "state", "Err", "error")},
	{msg: "changefeed maintainer report a fast fail error", files: files("backoff.go"), kind: spec.BackoffErrorSeen, v: "HEAD, v8.5",
		keys: m("Changefeed", cfKeys, "Checkpoint", "checkpointTs", "Node", "node", "State", "state", "Err", "error")},
	{msg: "changefeed meets an error, will be stopped", files: files("backoff.go", "feed_state_manager.go"), kind: spec.BackoffStarted, v: "HEAD, v8.5, tiflow v7+",
		keys: m("Changefeed", cfKeys, "Checkpoint", "checkpointTs", "NextRetry", "nextRetryTime", "Err", "error")},
	{msg: "The changefeed won't be restarted as it has been experiencing failures for an extended duration", files: files("backoff.go", "feed_state_manager.go"), kind: spec.BackoffGaveUp, v: "HEAD, v8.5, tiflow",
		keys: m("Changefeed", cfKeys, "Checkpoint", "checkpointTs")},
	{msg: "changefeed is recovered from warning state,its checkpointTs is greater than lastRetryCheckpointTs,it will be changed to normal state", files: files("backoff.go", "feed_state_manager.go"), kind: spec.BackoffRecovered, v: "HEAD, v8.5, tiflow",
		keys: m("Changefeed", cfKeys, "Checkpoint", "checkpointTs")},
	{msg: "changefeed is already in restarting progress, ignore the error", files: files("backoff.go"), kind: spec.BackoffIgnored, v: "HEAD",
		keys: m("Changefeed", cfKeys, "Err", "err,error")},
	{msg: "changefeed status changed", files: files("controller.go"), kind: spec.StateChanged, v: "HEAD, v8.5",
		keys: m("Changefeed", cfKeys, "State", "state", "Err", "error")},
	{msg: "Received changefeed status with bootstrapDone", files: files("changefeed.go"), kind: spec.BootstrapDoneChanged, v: "HEAD",
		keys: m("Changefeed", cfKeys, "BootstrapDone", "bootstrapDone")},
	{msg: "drop stale maintainer status", files: files("controller.go"), kind: spec.StatusIgnored, v: "HEAD",
		keys: m("Changefeed", cfKeys, "Node", "node", "Epoch", "statusMaintainerEpoch", "Reason", "reason")},
	{msg: "remote changefeed maintainer nodeID mismatch with local record", files: files("controller.go"), kind: spec.StatusIgnored, sym: SymNodeMismatch, v: "HEAD, v8.5",
		keys: m("Changefeed", cfKeys, "Node", "remoteNode"), conv: reason("node mismatch")},
	{msg: "coordinator received maintainer status", files: files("controller.go"), kind: spec.StatusReceived, v: "cdcspec (TiCDC: DEBUG only)",
		keys: m("Changefeed", cfKeys, "Node", "node", "Epoch", "statusMaintainerEpoch", "Checkpoint", "checkpointTs", "BootstrapDone", "bootstrapDone", "State", "state", "Err", "error", "Accepted", "accepted")},
	{msg: "update changefeed checkpointTs", files: files("etcd_backend.go"), kind: spec.CheckpointStored, v: "cdcspec (TiCDC: DEBUG only)",
		keys: m("Changefeed", cfKeys, "Checkpoint", "checkpointTs")},
	{msg: "changefeed instance created", files: files("changefeed.go"), kind: spec.ChangefeedCreated, v: "HEAD",
		keys: m("Changefeed", "id,"+cfKeys, "Checkpoint", "checkpointTs", "State", "state", "Tables", "tables")},
	{msg: "resume changefeed", files: files("controller.go"), kind: spec.ChangefeedResumed, v: "cdcspec",
		keys: m("Changefeed", cfKeys, "Checkpoint", "checkpointTs,overwriteCheckpointTs")},
	{msg: "resume changefeed successfully", files: files("changefeed.go"), kind: spec.ChangefeedResumed, v: "HEAD (api/v2)",
		keys: m("Changefeed", cfKeys)},
	{msg: "remove changefeed", files: files("changefeed_db.go"), kind: spec.ChangefeedRemoved, v: "HEAD",
		keys: m("Changefeed", cfKeys)},
	{msg: "changefeed epoch bumped", files: files("operator_controller.go"), kind: spec.EpochBumped, v: "cdcspec",
		keys: m("Changefeed", cfKeys, "Epoch", "maintainerEpoch,epoch")},
	// coordinator and maintainer operators share the two messages; role
	// (or the operator text) tells them apart.
	{msg: "add operator to running queue", files: files("operator_controller.go"), kind: spec.MaintainerOpStarted, v: "HEAD, v8.5",
		keys: opKeys, conv: convOperator(spec.MaintainerOpStarted, spec.DispatcherOpStarted)},
	{msg: "operator finished", files: files("operator_controller.go"), kind: spec.MaintainerOpFinished, v: "HEAD, v8.5",
		keys: opKeys, conv: convOperator(spec.MaintainerOpFinished, spec.DispatcherOpFinished)},
	{msg: "operator is still in running queue", files: files("operator_controller.go"), sym: SymOperatorStillRunning, v: "HEAD, v8.5",
		keys: m("Changefeed", cfKeys), conv: convStillRunning},
	{msg: "send command to maintainer", files: files("operator_controller.go"), sym: SymContext, v: "HEAD"},
	{msg: "maintainer report working status", files: files("operator_add.go"), sym: SymContext, v: "HEAD"},
	{msg: "maintainer report non-working status", files: files("operator_stop.go"), sym: SymContext, v: "HEAD"},
	{msg: "stop maintainer operator finished", files: files("operator_stop.go"), sym: SymContext, v: "HEAD"},
	{msg: "changefeed removed from origin node", files: files("operator_move.go"), sym: SymContext, v: "HEAD"},
	{msg: "changefeed added to dest node", files: files("operator_move.go"), sym: SymContext, v: "HEAD"},
	{msg: "move maintainer operator aborted, mark changefeed absent", files: files("operator_move.go"), sym: SymContext, v: "HEAD",
		keys: m("Changefeed", cfKeys)},
	{msg: "move changefeed operator finished", files: files("operator_move.go"), sym: SymContext, v: "HEAD"},
	{msg: "add operator failed, cannot bump changefeed epoch", files: files("operator_controller.go"), sym: SymContext, v: "HEAD"},
	{msg: "failed to update checkpointTs", files: files("coordinator.go"), sym: SymContext, v: "HEAD"},
	{msg: "no changefeed found and no operator for it, removing from maintainer", files: files("controller.go"), sym: SymContext, v: "HEAD"},
	{msg: "controller detects node changed", files: files("controller.go"), sym: SymMembership, v: "HEAD", conv: convMembership},
	{msg: "send coordinator bootstrap request", files: files("controller.go"), sym: SymContext, v: "HEAD"},
	{msg: "controller received maintainer bootstrap response", files: files("controller.go"), sym: SymContext, v: "HEAD"},
	{msg: "coordinator bootstrapped", files: files("controller.go"), kind: spec.CoordinatorBootstrapped, v: "HEAD",
		keys: m("Node", "nodeID")},
	{msg: "changefeed maintainer already running in other server", files: files("controller.go"), sym: SymContext, v: "HEAD"},
	{msg: "ignore running maintainer with stale epoch when bootstrapping", files: files("controller.go"), sym: SymContext, v: "HEAD"},
	{msg: "maintainer not found in local, remove it", files: files("controller.go"), sym: SymContext, v: "HEAD"},
	{msg: "move a changefeed to scheduling queue, it will be scheduled later", files: files("changefeed_db.go"), sym: SymContext, v: "HEAD"},
	{msg: "marking changefeed absent", files: files("changefeed_db.go"), sym: SymContext, v: "HEAD"},
	{msg: "bind changefeed to node", files: files("changefeed_db.go"), sym: SymContext, v: "HEAD"},
	{msg: "marking changefeed replicating", files: files("changefeed_db.go"), sym: SymContext, v: "HEAD"},
	{msg: "stop changefeed", files: files("changefeed_db.go"), sym: SymContext, v: "HEAD"},

	// ---- maintainer manager and maintainer ----
	{msg: "changefeed maintainer started", files: files("maintainer.go"), kind: spec.MaintainerCreated, v: "HEAD, v8.5",
		keys: m("Changefeed", cfKeys, "Node", "nodeID", "Epoch", "maintainerEpoch", "Checkpoint", "checkpointTs", "RemovalOnly", "removalOnly"),
		conv: convMaintainerStarted},
	{msg: "changefeed maintainer bootstrapped", files: files("maintainer.go"), kind: spec.MaintainerBootstrapped, v: "HEAD, v8.5",
		keys: m("Changefeed", cfKeys, "Node", "nodeID", "Epoch", "maintainerEpoch", "Checkpoint", "startTs")},
	{msg: "maintainer bootstrap failed", files: files("maintainer.go"), kind: spec.MaintainerBootstrapFailed, v: "HEAD",
		keys: m("Changefeed", cfKeys, "Node", "nodeID", "Err", "error")},
	{msg: "changefeed maintainer closed", files: files("maintainer.go"), kind: spec.MaintainerClosed, v: "HEAD, v8.5",
		keys: m("Changefeed", cfKeys, "Node", "nodeID", "Epoch", "maintainerEpoch", "Checkpoint", "checkpointTs", "Removed", "removed")},
	{msg: "dispatcher report an error", files: files("maintainer.go"), kind: spec.DispatcherErrorReported, v: "HEAD, v8.5",
		keys: m("Changefeed", cfKeys, "Node", "nodeID", "Origin", "sourceNode", "Err", "error")},
	{msg: "reject add maintainer request because existing maintainer is still running", files: files("maintainer_manager_maintainers.go", "maintainer_manager.go"), kind: spec.MaintainerRejectedAdd, v: "HEAD",
		keys: m("Changefeed", cfKeys, "Node", "nodeID", "Epoch", "requestMaintainerEpoch")},
	{msg: "no span found, remove it", files: files("maintainer_controller.go", "controller.go"), kind: spec.SpanNotFound, v: "HEAD, v8.5",
		keys: m("Changefeed", cfKeys, "Node", "from", "Dispatcher", "dispatcherID,dispatcher")},
	{msg: "found a working table that is not in initial table map, just ignore it", files: files("maintainer_controller_bootstrap.go", "maintainer_controller.go", "controller.go"), kind: spec.WorkingTableIgnored, v: "HEAD, v8.5",
		keys: m("Changefeed", cfKeys, "Span", "tableID,table")},
	{msg: "an error occurred in maintainer", files: files("maintainer.go"), sym: SymMaintainerError, v: "HEAD",
		keys: m("Changefeed", cfKeys, "Err", "error")},
	{msg: "maintainer node changed", files: files("maintainer.go"), sym: SymMembership, v: "HEAD, v8.5",
		keys: m("Changefeed", cfKeys), conv: convMembership},
	{msg: "checkpointTs can not be advanced, since missing capture heartbeat", files: files("maintainer.go"), sym: SymCheckpointBlocked, v: "HEAD",
		keys: m("Changefeed", cfKeys, "Node", "node", "Checkpoint", "checkpointTs")},
	{msg: "can not advance checkpointTs since not bootstrapped", files: files("maintainer.go"), sym: SymCheckpointBlocked, v: "HEAD",
		keys: m("Changefeed", cfKeys, "Checkpoint", "checkpointTs")},
	{msg: "remove unexpected overlapping dispatcher reported during bootstrap", files: files("maintainer_controller_bootstrap.go"), sym: SymOverlapRemoved, v: "HEAD",
		keys: m("Changefeed", cfKeys, "Dispatcher", "removedDispatcherID", "Span", "tableID")},
	{msg: "changefeed bootstrap initial nodes", files: files("maintainer.go"), sym: SymContext, v: "HEAD"},
	{msg: "changefeed maintainer initialized", files: files("maintainer.go"), sym: SymContext, v: "HEAD"},
	{msg: "maintainer new bootstrap message to dispatcher orchestrator", files: files("maintainer.go"), sym: SymContext, v: "HEAD"},
	{msg: "maintainer received bootstrap response", files: files("maintainer.go"), sym: SymContext, v: "HEAD"},
	{msg: "all nodes have sent bootstrap response, start to handle them", files: files("maintainer_controller_bootstrap.go"), sym: SymContext, v: "HEAD"},
	{msg: "handle bootstrap response", files: files("maintainer_controller_bootstrap.go"), sym: SymContext, v: "HEAD"},
	{msg: "bootstrap create operator references table missing from schema snapshot, skip restoring it", files: files("maintainer_controller_bootstrap.go"), sym: SymContext, v: "HEAD"},
	{msg: "restore merge operator", files: files("operator_controller.go"), sym: SymContext, v: "HEAD"},
	{msg: "received remove maintainer request", files: files("maintainer_manager_maintainers.go", "maintainer_manager.go"), sym: SymContext, v: "HEAD"},
	{msg: "ignore remove maintainer request, since the maintainer not found", files: files("maintainer_manager_maintainers.go", "maintainer_manager.go"), sym: SymContext, v: "HEAD"},
	{msg: "drop stale remove maintainer request", files: files("maintainer.go"), sym: SymContext, v: "HEAD"},
	{msg: "ignore non-cascade remove request before bootstrap", files: files("maintainer.go"), sym: SymContext, v: "HEAD"},
	{msg: "send maintainer close request to all dispatcher managers", files: files("maintainer.go"), sym: SymContext, v: "HEAD"},
	{msg: "maintainer removed, remove it from dynamic stream", files: files("maintainer_manager_maintainers.go", "maintainer_manager.go"), sym: SymContext, v: "HEAD"},
	{msg: "ignore invalid coordinator id", files: files("maintainer_manager_maintainers.go", "maintainer_manager.go"), sym: SymContext, v: "HEAD"},
	{msg: "new coordinator online, bootstrap response already sent", files: files("maintainer_manager.go"), sym: SymContext, v: "HEAD"},
	{msg: "maintainer is not found", files: files("maintainer_manager_maintainers.go", "maintainer_manager.go"), sym: SymContext, v: "HEAD"},
	{msg: "drop stale maintainer response", files: files("maintainer.go"), sym: SymContext, v: "HEAD"},
	{msg: "dispatcher becomes non-working without operator, mark span absent for rescheduling", files: files("maintainer_controller.go"), sym: SymContext, v: "HEAD"},
	{msg: "nodeID not match", files: files("maintainer_controller.go"), sym: SymContext, v: "HEAD"},
	{msg: "new span replication created", files: files("replication_span.go"), sym: SymContext, v: "HEAD"},
	{msg: "new working span replication created", files: files("replication_span.go"), sym: SymContext, v: "HEAD"},
	{msg: "table already add, ignore", files: files("span_controller.go"), sym: SymContext, v: "HEAD"},
	{msg: "add operator failed, controller is quiescing", files: files("operator_controller.go"), sym: SymContext, v: "HEAD"},
	{msg: "add operator failed, operator already exists", files: files("operator_controller.go"), sym: SymContext, v: "HEAD"},
	{msg: "add operator failed, span not found", files: files("operator_controller.go"), sym: SymContext, v: "HEAD"},
	{msg: "dispatcher report working status", files: files("operator_add.go"), sym: SymContext, v: "HEAD"},
	{msg: "dispatcher report removed status", files: files("operator_add.go"), sym: SymContext, v: "HEAD"},
	{msg: "dispatcher report non-working status", files: files("operator_remove.go"), sym: SymContext, v: "HEAD"},
	{msg: "remove dispatcher operator finished", files: files("operator_remove.go"), sym: SymContext, v: "HEAD"},
	{msg: "replica set removed from origin node", files: files("operator_move.go"), sym: SymContext, v: "HEAD"},
	{msg: "replica set added to dest node", files: files("operator_move.go"), sym: SymContext, v: "HEAD"},
	{msg: "move dispatcher operator aborted, mark span absent for rescheduling", files: files("operator_move.go"), sym: SymContext, v: "HEAD"},
	{msg: "split dispatcher operator post finish finished", files: files("operator_split.go"), sym: SymContext, v: "HEAD"},
	{msg: "new merged replica set created", files: files("operator_merge.go"), sym: SymContext, v: "HEAD"},
	{msg: "merge dispatcher operator finished", files: files("operator_merge.go"), sym: SymContext, v: "HEAD"},
	{msg: "merge dispatcher operator finished due to removed", files: files("operator_merge.go"), sym: SymContext, v: "HEAD"},
	// The two lines that open and close a block event are spec events and
	// feed barrier-stuck (see barrierEntries) in one entry each: a second
	// entry of the same (message, file) would never match.
	{msg: "new block event is created", files: files("barrier_event.go"), kind: spec.BlockEventCreated, sym: SymBarrierCreated, v: "HEAD",
		keys: m("Changefeed", cfKeys, "Node", "nodeID", "Dispatcher", "dispatcher", "Checkpoint", "blockTs", "SyncPoint", "syncPoint", "Influence", "blockedType"), conv: barrierKey("blockTs")},
	{msg: "all dispatcher reported heartbeat, schedule it, and select one to write", files: files("barrier_event.go"), kind: spec.BlockWriterSelected, v: "HEAD",
		keys: m("Changefeed", cfKeys, "Node", "nodeID", "Dispatcher", "dispatcher", "Checkpoint", "commitTs", "Influence", "barrierType")},
	{msg: "schedule block event", files: files("barrier_event.go"), sym: SymContext, v: "HEAD"},
	{msg: "all dispatchers reported event done, remove event", files: files("barrier.go"), kind: spec.BlockEventDone, sym: SymBarrierDone, v: "HEAD",
		keys: m("Changefeed", cfKeys, "Node", "nodeID", "Checkpoint", "commitTs"), conv: barrierKey("commitTs")},

	// ---- dispatcher manager, orchestrator, dispatcher ----
	{msg: "new dispatcher created", files: files("dispatcher_manager.go", "dispatcher_manager_redo.go"), kind: spec.DispatcherCreated, v: "HEAD, v8.5",
		keys: m("Changefeed", cfKeys, "Node", "nodeID", "Dispatcher", "dispatcherID", "Span", "tableSpan", "Checkpoint", "startTs", "Merge", "merge")},
	{msg: "new dispatcher created(merge dispatcher)", files: files("dispatcher_manager.go"), kind: spec.DispatcherCreated, v: "HEAD",
		keys: m("Changefeed", cfKeys, "Node", "nodeID", "Dispatcher", "dispatcherID,mergedDispatcher", "Span", "tableSpan", "Checkpoint", "startTs"), conv: setMerge},
	{msg: "table trigger event dispatcher created", files: files("dispatcher_manager.go"), kind: spec.DispatcherCreated, v: "HEAD, v8.5",
		keys: m("Changefeed", cfKeys, "Node", "nodeID", "Dispatcher", "dispatcherID", "Checkpoint", "startTs")},
	{msg: "update dispatcher status to working", files: files("basic_dispatcher.go", "dispatcher.go"), kind: spec.DispatcherWorking, v: "HEAD, v8.5",
		keys: m("Changefeed", cfKeys, "Node", "nodeID", "Dispatcher", "dispatcher,dispatcherID", "Span", "table,tableSpan")},
	{msg: "event dispatcher completely stopped, and delete it from event dispatcher manager", files: files("dispatcher_manager.go"), kind: spec.DispatcherRemoved, v: "HEAD, v8.5",
		keys: m("Changefeed", cfKeys, "Node", "nodeID", "Dispatcher", "dispatcherID,dispatcher", "Checkpoint", "checkpointTs")},
	{msg: "event dispatcher manager closed", files: files("dispatcher_manager.go"), kind: spec.DispatcherManagerClosed, v: "HEAD, v8.5",
		keys: m("Changefeed", cfKeys, "Node", "nodeID")},
	{msg: "Event Dispatcher Manager Meets Error", files: files("dispatcher_manager.go"), kind: spec.SinkError, v: "HEAD, v8.5",
		keys: m("Changefeed", cfKeys, "Node", "nodeID", "Err", "error")},
	{msg: "closing event dispatcher manager", files: files("dispatcher_manager.go"), sym: SymDispatcherManagerClosing, v: "HEAD, v8.5",
		keys: m("Changefeed", cfKeys)},
	{msg: "dispatcher manager initialized", files: files("dispatcher_manager.go"), sym: SymContext, v: "HEAD, v8.5"},
	{msg: "submitted async remove task", files: files("dispatcher_manager_helper.go"), sym: SymContext, v: "HEAD"},
	{msg: "dispatcher is already in removing state, skip repeated remove request", files: files("dispatcher_manager_helper.go"), sym: SymContext, v: "HEAD"},
	{msg: "dispatcher component has stopped and is ready for cleanup", files: files("basic_dispatcher.go"), sym: SymContext, v: "HEAD"},
	{msg: "dispatcher removed successfully", files: files("task.go"), sym: SymContext, v: "HEAD"},
	{msg: "drop stale schedule dispatcher request", files: files("helper.go"), sym: SymContext, v: "HEAD"},
	{msg: "drop stale heartbeat response", files: files("helper.go"), sym: SymContext, v: "HEAD"},
	{msg: "drop stale merge dispatcher request", files: files("helper.go"), sym: SymContext, v: "HEAD"},
	{msg: "drop stale maintainer bootstrap request", files: files("dispatcher_orchestrator.go"), sym: SymContext, v: "HEAD"},
	{msg: "drop stale maintainer bootstrap request after close", files: files("dispatcher_orchestrator.go"), sym: SymContext, v: "HEAD"},
	{msg: "create new dispatcher manager failed", files: files("dispatcher_orchestrator.go"), sym: SymContext, v: "HEAD"},
	{msg: "try close dispatcher manager", files: files("dispatcher_orchestrator.go"), sym: SymContext, v: "HEAD"},
	{msg: "drop stale maintainer close request", files: files("dispatcher_orchestrator.go"), sym: SymContext, v: "HEAD"},
	{msg: "include stale remove operator in bootstrap response", files: files("dispatcher_orchestrator.go"), sym: SymContext, v: "HEAD"},
	{msg: "do merge", files: files("task.go"), sym: SymContext, v: "HEAD"},
	{msg: "merge dispatcher commit", files: files("task.go"), sym: SymContext, v: "HEAD"},
	{msg: "abort merge", files: files("task.go"), sym: SymContext, v: "HEAD"},
	{msg: "pending event get the action", files: files("basic_dispatcher.go"), kind: spec.BlockActionReceived, v: "HEAD",
		keys: m("Changefeed", cfKeys, "Node", "nodeID", "Dispatcher", "dispatcher", "Checkpoint", "pendingEventCommitTs", "State", "action"), conv: convBlockAction},
	{msg: "batch create new dispatchers", files: files("dispatcher_manager.go"), sym: SymContext, v: "HEAD"},

	// ---- membership and capture ----
	{msg: "session is disconnected", files: files("etcd_watcher.go"), sym: SymSessionLost, v: "HEAD, v8.5",
		keys: m("Err", "error")},
	{msg: "local fence triggered", files: files("server.go"), sym: SymSessionLost, v: "HEAD", keys: m("Reason", "reason")},
	{msg: "dispatcher orchestrator local fence triggered", files: files("dispatcher_orchestrator.go"), sym: SymSessionLost, v: "HEAD"},
	{msg: "cdc server exits with error", files: files("server.go"), kind: spec.CaptureSuicide, v: "HEAD, v8.5, tiflow",
		keys: m("Node", "captureID", "Err", "error")},
	{msg: "server change detected", files: files("module_node_manager.go"), sym: SymMembership, v: "HEAD"},
	{msg: "coordinator changed", files: files("module_node_manager.go"), sym: SymMembership, v: "HEAD"},
	{msg: "Coordinator changed, and I am not the coordinator, stop myself", files: files("coordinator.go"), sym: SymMembership, v: "HEAD"},
	{msg: "capture joined", files: files("module_node_manager.go"), kind: spec.NodeJoined, v: "cdcspec", keys: m("Node", "captureID")},
	{msg: "capture left", files: files("module_node_manager.go"), kind: spec.NodeLeft, v: "cdcspec", keys: m("Node", "captureID")},
	{msg: "Add remote target", files: files("message_center.go"), sym: SymContext, v: "HEAD"},
	{msg: "remove remote target from message center", files: files("message_center.go"), sym: SymContext, v: "HEAD"},
	{msg: "remote target error, reset the connection", files: files("message_center.go"), sym: SymContext, v: "HEAD"},

	// ---- cdcspec-only lines (impl/, spec.LogLines with TiCDC == false) ----
	{msg: "upstream row committed", files: files("upstream.go"), kind: spec.DataWritten, v: "cdcspec",
		keys: m("Changefeed", cfKeys, "Span", "key", "Checkpoint", "commitTs")},
	{msg: "sink flushed", files: files("sink.go"), kind: spec.DataFlushed, v: "cdcspec",
		keys: m("Changefeed", cfKeys, "Node", "nodeID", "Span", "tableSpan", "Checkpoint", "flushedTs")},
	{msg: "upstream table created", files: files("upstream.go"), kind: spec.TableCreated, v: "cdcspec",
		keys: m("Changefeed", cfKeys, "Span", "tableID", "Checkpoint", "commitTs")},
	{msg: "upstream resolved ts stalled", files: files("upstream.go"), kind: spec.UpstreamStalled, v: "cdcspec",
		keys: m("Checkpoint", "resolvedTs")},
	{msg: "upstream resolved ts resumed", files: files("upstream.go"), kind: spec.UpstreamResumed, v: "cdcspec",
		keys: m("Checkpoint", "resolvedTs")},
	{msg: "all faults healed", files: files("sim.go"), kind: spec.FaultsHealed, v: "cdcspec", keys: m("Checkpoint", "resolvedTs")},
	{msg: "cluster quiesced", files: files("sim.go"), kind: spec.Quiesced, v: "cdcspec"},

	// ---- barrier (spec/barrier.go): HEAD's barrier lines and cdcspec's own ----
	{msg: "upstream DDL committed", files: files("upstream.go"), kind: spec.DDLCommitted, v: "cdcspec",
		keys: m("Changefeed", cfKeys, "Checkpoint", "commitTs", "Tables", "blockedTables", "Reason", "query",
			"SyncPoint", "isSyncPoint", "Influence", "blockedType", "Dropped", "droppedTables", "Added", "addedTables")},
	{msg: "dispatcher reported block status", files: files("basic_dispatcher.go"), kind: spec.BlockStatusReported, v: "cdcspec",
		keys: m("Changefeed", cfKeys, "Node", "nodeID", "Dispatcher", "dispatcher", "Span", "tableSpan", "Checkpoint", "blockTs", "State", "stage", "Tables", "blockedTables",
			"SyncPoint", "isSyncPoint", "Influence", "blockedType", "Dropped", "droppedTables", "Added", "addedTables"), conv: convBlockStatus},
	{msg: "sink wrote block event", files: files("sink.go"), kind: spec.DDLWritten, v: "cdcspec",
		keys: m("Changefeed", cfKeys, "Node", "nodeID", "Dispatcher", "dispatcher", "Checkpoint", "commitTs", "SyncPoint", "isSyncPoint")},

	// ---- tiflow (old architecture): owner / processor ----
	{msg: "processor report an error", files: files("feed_state_manager.go"), kind: spec.BackoffErrorSeen, v: "tiflow",
		keys: m("Changefeed", cfKeys, "Node", "captureID", "Err", "error")},
	{msg: "processor reports an error", files: files("feed_state_manager.go"), kind: spec.BackoffErrorSeen, v: "tiflow",
		keys: m("Changefeed", cfKeys, "Node", "captureID", "Err", "error")},
	{msg: "changefeed meets an error", files: files("feed_state_manager.go"), kind: spec.BackoffStarted, v: "tiflow v6.5+",
		keys: m("Changefeed", cfKeys, "Err", "error")},
	{msg: "changefeed will not be restarted because it has been failing for a long time period", files: files("feed_state_manager.go"), kind: spec.BackoffGaveUp, v: "tiflow",
		keys: m("Changefeed", cfKeys)},
	{msg: "changefeed restart backoff interval is changed", files: files("feed_state_manager.go"), sym: SymContext, v: "tiflow"},
	{msg: "handle admin job", files: files("feed_state_manager.go"), sym: SymContext, v: "tiflow"},
	// ---- tiflow (old architecture): the kv client (cdc/kv client.go, region_worker.go at v7.4.0-alpha),
	// region errors and reconnects; runtime/tikv logs the same lines ----
	{msg: "event feed started", files: files("client.go"), sym: SymContext, v: "tiflow"},
	{msg: "region failed", files: files("client.go"), sym: SymContext, v: "tiflow"},
	{msg: "creating new stream to store to send request", files: files("client.go"), sym: SymContext, v: "tiflow"},
	{msg: "get grpc stream client failed", files: files("client.go"), sym: SymContext, v: "tiflow"},
	{msg: "send request to stream failed", files: files("client.go"), sym: SymContext, v: "tiflow"},
	{msg: "get rpc context for region is nil, retry it", files: files("client.go"), sym: SymContext, v: "tiflow"},
	{msg: "stream to store closed", files: files("client.go"), sym: SymContext, v: "tiflow"},
	{msg: "failed to receive from stream", files: files("client.go"), sym: SymContext, v: "tiflow"},
	{msg: "receive from stream canceled", files: files("client.go"), sym: SymContext, v: "tiflow"},
	{msg: "region worker exited with error", files: files("client.go"), sym: SymContext, v: "tiflow"},
	{msg: "drop event due to region feed is removed", files: files("client.go"), sym: SymContext, v: "tiflow"},
	{msg: "drop event due to region feed stopped", files: files("client.go"), sym: SymContext, v: "tiflow"},
	{msg: "drop event due to event belongs to a stale request", files: files("client.go"), sym: SymContext, v: "tiflow"},
	{msg: "single region event feed disconnected", files: files("region_worker.go"), sym: SymContext, v: "tiflow"},
	{msg: "region worker closed by error", files: files("region_worker.go"), sym: SymContext, v: "tiflow"},
	{msg: "subscription client finds a initialized slow region", files: files("span_registry.go"), sym: SymContext, v: "HEAD"},
	{msg: "Redo meta has not changed for a long time, owner may be stuck", files: files("meta_manager.go", "redo_meta.go", "meta.go"), sym: SymRedoMetaStuck, v: "tiflow, HEAD (DEBUG)",
		keys: m("Changefeed", cfKeys), conv: convRedoStuck},
}

type fieldKeys struct {
	name string     // Event field name
	id   eventField // name, as setField switches on it
	keys []string   // log keys, first found wins
}

// eventField names a field of spec.Event that catalogue lines fill in.
type eventField uint8

// eventFields are the names the catalogue's keys may map, in eventField
// order (0 is no field).
var eventFields = []string{"", "Changefeed", "Node", "Origin", "Dispatcher", "State", "Err", "Reason", "Op",
	"Epoch", "Checkpoint", "NextRetry", "Span", "Tables", "BootstrapDone", "Accepted", "RemovalOnly",
	"Removed", "Merge", "SyncPoint", "Influence", "Dropped", "Added"}

const (
	fChangefeed eventField = iota + 1
	fNode
	fOrigin
	fDispatcher
	fState
	fErr
	fReason
	fOp
	fEpoch
	fCheckpoint
	fNextRetry
	fSpan
	fTables
	fBootstrapDone
	fAccepted
	fRemovalOnly
	fRemoved
	fMerge
	fSyncPoint
	fInfluence
	fDropped
	fAdded
)

type keyRef struct {
	key         string
	field, rank int
}

// findKey returns the keyRef of log key k, if the entry reads it: one
// probe of keyTab, and a string comparison only for a key of the slot
// (most of a record's field keys are not the entry's and find an empty
// slot at once).
func (e *entry) findKey(k []byte) (keyRef, bool) {
	if len(k) == 0 {
		return keyRef{}, false
	}
	for h := keySlot(k); ; h = (h + 1) & (keySlots - 1) {
		x := e.keyTab[h]
		if x == 0 {
			return keyRef{}, false
		}
		if r := &e.keyIdx[x-1]; r.key == string(k) {
			return *r, true
		}
	}
}

// keySlots is the size of an entry's key table: a power of two, at least
// twice as many as the keys an entry reads (compileKeys checks).
const keySlots = 64

// keySlot is where the probe for key k (not empty) starts: a hash of its
// length and first and last bytes.
func keySlot(k []byte) uint32 {
	n := len(k)
	return (uint32(n) | uint32(k[0])<<8 | uint32(k[n-1])<<16) * 0x9e3779b1 >> (32 - 6)
}

// findKeyIn is findKey by a scan of refs (compileKeys' and the tests').
func findKeyIn(refs []keyRef, k []byte) (keyRef, bool) {
	for i := range refs {
		if refs[i].key == string(k) {
			return refs[i], true
		}
	}
	return keyRef{}, false
}

// compile sets e's fields, keyIdx and keyTab from its keys.
func (e *entry) compile() {
	e.fields, e.keyIdx = compileKeys(e.keys)
	if len(e.keyIdx) > keySlots/2 {
		panic(fmt.Sprintf("catalogue: %q reads %d keys, more than %d", e.msg, len(e.keyIdx), keySlots/2))
	}
	e.keyTab = [keySlots]uint8{}
	for i, r := range e.keyIdx {
		if r.key == "" || r.key == "keyspace" || r.key == "namespace" {
			// (toItems reads the changefeed's keyspace from these keys
			// only when the entry does not)
			panic(fmt.Sprintf("catalogue: %q maps the key %q", e.msg, r.key))
		}
		h := keySlot([]byte(r.key))
		for e.keyTab[h] != 0 {
			h = (h + 1) & (keySlots - 1)
		}
		e.keyTab[h] = uint8(i + 1)
	}
}

func compileKeys(keys map[string]string) ([]fieldKeys, []keyRef) {
	out := make([]fieldKeys, 0, len(keys))
	for name, ks := range keys {
		id := slices.Index(eventFields, name)
		if id <= 0 {
			panic(fmt.Sprintf("catalogue: keys map %q, which is no event field", name))
		}
		out = append(out, fieldKeys{name: name, id: eventField(id), keys: strings.Split(ks, ",")})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	var idx []keyRef
	for i, fk := range out {
		for r, k := range fk.keys {
			if _, dup := findKeyIn(idx, []byte(k)); !dup {
				idx = append(idx, keyRef{key: k, field: i, rank: r})
			}
		}
	}
	return out, idx
}

// index: message → entries.
var catalogueIndex = func() map[string][]*entry {
	idx := map[string][]*entry{}
	catalogue = append(catalogue, barrierEntries...)
	catalogue = append(catalogue, headEntries()...)
	for i := range catalogue {
		e := &catalogue[i]
		e.compile()
		e.derive()
		idx[e.msg] = append(idx[e.msg], e)
	}
	panicEntry.compile()
	panicEntry.derive()
	return idx
}()

func (e *entry) derive() {
	e.read, e.zeroOK, e.ownLine = contextItems[e.msg], zeroMeansNone[e.msg], strings.HasPrefix(e.v, "cdcspec")
}

func files(names ...string) []string { return names }

func m(kv ...string) map[string]string {
	out := make(map[string]string, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

var opKeys = m("Changefeed", cfKeys, "Op", "type", "Node", "dest", "Origin", "origin", "Epoch", "maintainerEpoch",
	"Removed", "removed", "Dispatcher", "dispatcherID", "Span", "span")

// msgFilter is a cheap pre-check before the map lookup: for each message
// length (mod 256), a bit per first byte (mod 64) of the catalogued
// messages. Most records' messages fail it.
var msgFilter = func() (f [256]uint64) {
	_ = catalogueIndex // the full catalogue
	for i := range catalogue {
		msg := catalogue[i].msg
		if msg != "" {
			f[len(msg)&255] |= 1 << (msg[0] & 63)
		}
	}
	return f
}()

// msgTable is catalogueIndex as an open-addressing table on a cheap hash
// of a message's length and a few of its bytes: lookup runs for every
// record, and most records' messages are catalogued or repeat.
var msgTable = func() (t msgHash) {
	n := 16
	for n < 4*len(catalogueIndex) {
		n *= 2
	}
	t.slots = make([]msgSlot, n)
	t.mask = uint32(n - 1)
	for msg, es := range catalogueIndex {
		i := msgHashOf([]byte(msg)) & t.mask
		for t.slots[i].es != nil {
			i = (i + 1) & t.mask
		}
		t.slots[i] = msgSlot{msg: msg, es: es}
	}
	return t
}()

type msgHash struct {
	slots []msgSlot
	mask  uint32
}

type msgSlot struct {
	msg string
	es  []*entry // nil: an empty slot
}

func msgHashOf(b []byte) uint32 {
	n := len(b)
	h := uint32(n) * 0x9e3779b1
	if n > 0 {
		h ^= (uint32(b[0]) | uint32(b[n/2])<<8 | uint32(b[n-1])<<16 | uint32(b[n/3])<<24) * 0x85ebca6b
	}
	return h ^ h>>15
}

// find returns the entries of message b, nil if it is not catalogued.
func (t *msgHash) find(b []byte) []*entry {
	for i := msgHashOf(b) & t.mask; ; i = (i + 1) & t.mask {
		sl := &t.slots[i]
		if sl.es == nil {
			return nil
		}
		if len(sl.msg) == len(b) && sl.msg == string(b) {
			return sl.es
		}
	}
}

// lookup finds the catalogue entry of a record.
func lookup(r *Record) *entry {
	if r.looked {
		return r.entry
	}
	if len(r.Msg) == 0 || msgFilter[len(r.Msg)&255]&(1<<(r.Msg[0]&63)) == 0 {
		return nil
	}
	es := msgTable.find(r.Msg)
	for _, e := range es {
		if len(e.files) == 0 {
			return e
		}
		for _, f := range e.files {
			if string(r.File) == f {
				return e
			}
		}
	}
	return nil
}

// maxEvidenceText bounds the text kept per evidence line.
const maxEvidenceText = 1024

// isEvidenceText reports whether b is its own evidence text: one short
// valid-UTF-8 line.
func isEvidenceText(b []byte) bool {
	if len(b) > maxEvidenceText {
		return false
	}
	// One pass over 8-byte words: a line of printable ASCII, the common
	// case, has no byte below 0x20 (control bytes, '\n', '\r' and '\t'
	// among them) and none from 0x80 (UTF-8 sequences). A word that may
	// hold one takes the exact check: x|(x-0x20*ones) has the high bit of
	// every byte from 0x80 (x's own) and of the lowest byte below 0x20
	// (its borrow; the borrow may flag the bytes above it too, which can
	// only err towards the exact check).
	const ones = 0x0101010101010101
	i := 0
	for ; i+32 <= len(b); i += 32 {
		// four words a round, one test: the OR of the four words' flags
		w := b[i : i+32 : i+32]
		x0, x1 := binary.LittleEndian.Uint64(w), binary.LittleEndian.Uint64(w[8:])
		x2, x3 := binary.LittleEndian.Uint64(w[16:]), binary.LittleEndian.Uint64(w[24:])
		if (x0|x1|x2|x3|(x0-0x20*ones)|(x1-0x20*ones)|(x2-0x20*ones)|(x3-0x20*ones))&(0x80*ones) != 0 {
			return isEvidenceTextExact(b)
		}
	}
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if (x|(x-0x20*ones))&(0x80*ones) != 0 {
			return isEvidenceTextExact(b)
		}
	}
	if i == len(b) {
		return true
	}
	if len(b) >= 8 {
		// the last word, overlapping the words above (testing a byte
		// twice changes nothing)
		x := binary.LittleEndian.Uint64(b[len(b)-8:])
		if (x|(x-0x20*ones))&(0x80*ones) != 0 {
			return isEvidenceTextExact(b)
		}
		return true
	}
	for _, c := range b[i:] {
		if c < 0x20 || c >= 0x80 {
			return isEvidenceTextExact(b)
		}
	}
	return true
}

// isEvidenceTextExact is isEvidenceText byte by byte.
func isEvidenceTextExact(b []byte) bool {
	return bytes.IndexByte(b, '\n') < 0 && bytes.IndexByte(b, '\r') < 0 && bytes.IndexByte(b, '\t') < 0 && utf8.Valid(b)
}

// evidenceText renders a record's text as one valid-UTF-8 line, cut to
// maxEvidenceText bytes.
func evidenceText(b []byte) string {
	if isEvidenceText(b) {
		return string(b)
	}
	cut := false
	if len(b) > maxEvidenceText {
		b = b[:maxEvidenceText]
		cut = true
	}
	var sb strings.Builder
	sb.Grow(len(b) + 8)
	space := false
	for len(b) > 0 {
		c := b[0]
		if c == '\n' || c == '\r' || c == '\t' {
			if !space {
				sb.WriteByte(' ')
			}
			space = true
			b = b[1:]
			for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
				b = b[1:]
			}
			continue
		}
		space = false
		if c < utf8.RuneSelf {
			sb.WriteByte(c)
			b = b[1:]
			continue
		}
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size <= 1 {
			if cut && len(b) < utf8.UTFMax {
				break // a rune cut by the length limit
			}
			sb.WriteString("\uFFFD")
			b = b[1:]
			continue
		}
		sb.Write(b[:size])
		b = b[size:]
	}
	if cut {
		sb.WriteString(" …")
	}
	return sb.String()
}

// toItems converts a catalogued record into items appended to out.
func toItems(r *Record, e *entry, fileName string, fileIdx int, out []Item) []Item {
	// the new item is built in place: out's spare capacity is a recycled
	// chunk's, so this is no allocation and no temporary Item
	if len(out) < cap(out) {
		out = out[:len(out)+1]
	} else {
		out = append(out, Item{})
	}
	it := &out[len(out)-1]
	// zeroed in place, then set: a composite literal would be built on
	// the stack and copied
	*it = Item{}
	it.Sym, it.Level, it.Msg, it.file = e.sym, r.Level, e.msg, fileIdx
	ev := &it.Event
	ev.Kind = e.kind
	ev.Time = r.Time
	// The string fields are cut from the evidence text when it is the
	// record as written and the value is the record's own bytes: one
	// allocation per item instead of one per field.
	var text string
	if isEvidenceText(r.Text) {
		text = string(r.Text)
		r.own = text
		ev.Source.File, ev.Source.Line, ev.Source.Text = fileName, r.Line, text
	} else {
		ev.Source = spec.Source{File: fileName, Line: r.Line, Text: evidenceText(r.Text)}
	}
	// one pass over the record's fields: for each event field the first
	// listed alternative present wins; of one key, the last occurrence
	const maxFields = 16
	var rank [maxFields]int
	var at [maxFields]int32 // the index in r.fields of the chosen field
	nf := min(len(e.fields), maxFields)
	for i := range nf {
		rank[i] = -1
	}
	var keyspace []byte
	r.parseFields()
	checkTs := !e.ownLine // impossibleTs, in the same pass
	for i := range r.fields {
		f := &r.fields[i]
		if checkTs {
			if s := impossibleField(f, e.zeroOK); s != "" {
				it.impossible, checkTs = s, false
			}
		}
		if ref, ok := e.findKey(f.key); ok {
			if ref.field < maxFields && (rank[ref.field] < 0 || ref.rank <= rank[ref.field]) {
				rank[ref.field], at[ref.field] = ref.rank, int32(i)
			}
		} else if keyspace == nil && (string(f.key) == "keyspace" || string(f.key) == "namespace") {
			// (no entry reads these keys: entry.compile panics otherwise)
			keyspace = f.val
		}
	}
	for i := range nf {
		if rank[i] >= 0 {
			f := &r.fields[at[i]]
			setField(ev, e.fields[i].id, f.val, text, f.off, r.names)
		}
	}
	if ev.Changefeed != "" && len(keyspace) > 0 && strings.IndexByte(ev.Changefeed, '/') < 0 {
		var buf [2 * maxInterned]byte
		full := append(append(append(buf[:0], keyspace...), '/'), ev.Changefeed...)
		ev.Changefeed = r.names.intern(full)
	}
	if e.sym == SymPanic {
		it.caller = string(r.File)
	}
	if e.conv != nil {
		return e.conv(r, it, out)
	}
	return out
}

// tsFields are the fields in which TiCDC reports a changefeed's or a
// dispatcher's checkpoint or start timestamp.
var tsFields = []string{"checkpointTs", "startTs", "checkpoint-ts", "start-ts"}

// tsFieldStart marks the first and the second bytes of tsFields.
var tsFieldStart = func() (t [2][256]bool) {
	for _, f := range tsFields {
		t[0][f[0]], t[1][f[1]] = true, true
	}
	return t
}()

// impossibleTs returns "field=value" for the first timestamp field of r
// whose value no TSO can have: 0, -1 or MaxUint64 (#4703 and #4845: a
// changefeed started or checkpointed at such a value). TiCDC's
// removal-only maintainer reports checkpointTs=1 on purpose; that is not
// impossible.
func impossibleTs(r *Record, zeroOK bool) string {
	if !r.parsed && !mayNameTsField(r.rest) {
		return ""
	}
	r.parseFields()
	for i := range r.fields {
		if s := impossibleField(&r.fields[i], zeroOK); s != "" {
			return s
		}
	}
	return ""
}

// impossibleField is impossibleTs for one field: "field=value" if f is a
// timestamp field with an impossible value, else "".
func impossibleField(f *field, zeroOK bool) string {
	if len(f.val) == 0 || (f.val[0] != '0' && f.val[0] != '-' && f.val[0] != '1') || !isTsField(f.key) {
		return ""
	}
	switch string(f.val) {
	case "0":
		if !zeroOK {
			return string(f.key) + "=0"
		}
	case "-1", "18446744073709551615":
		return string(f.key) + "=" + string(f.val)
	}
	return ""
}

// mayNameTsField is impossibleTs's cheap pre-check on a record's unparsed
// fields: false only if no field key can be one of tsFields. A key starts
// right after a group's '['; a quoted key (which could spell a name with
// \u escapes) always passes.
func mayNameTsField(rest []byte) bool {
	for {
		j := bytes.IndexByte(rest, '[')
		if j < 0 || j+1 >= len(rest) {
			return false
		}
		rest = rest[j+1:]
		if c := rest[0]; c == '"' || len(rest) > 1 && tsFieldStart[0][c] && tsFieldStart[1][rest[1]] && hasTsFieldPrefix(rest) {
			return true
		}
	}
}

// hasTsFieldPrefix reports whether b starts with one of tsFields
// (TestTsFieldPrefix pins it to them), with compares the compiler inlines
// instead of a call per field.
func hasTsFieldPrefix(b []byte) bool {
	switch {
	case len(b) >= 10 && string(b[:10]) == "checkpoint":
		b = b[10:]
	case len(b) >= 5 && string(b[:5]) == "start":
		b = b[5:]
	default:
		return false
	}
	return len(b) >= 2 && string(b[:2]) == "Ts" || len(b) >= 3 && string(b[:3]) == "-ts"
}

func isTsField(k []byte) bool {
	for _, t := range tsFields {
		if string(k) == t {
			return true
		}
	}
	return false
}

// contextItems are the benign (SymContext) lines a monitor still reads:
// they become items; every other benign line is only counted.
var contextItems = map[string]bool{
	"move maintainer operator aborted, mark changefeed absent": true, // markUnsuccessfulOp
	"changefeed bootstrap initial nodes":                       true, // the capture's own node ID
}

// zeroMeansNone lists the lines whose timestamp is 0 when there is none:
// a node without the changefeed's dispatcher manager answers a bootstrap
// with checkpointTs 0 (maintainer_controller_bootstrap.go; only when every
// answer is 0 does TiCDC fail, "can not determine the startTs", #4509).
var zeroMeansNone = map[string]bool{"handle bootstrap response": true}

// maxInterned bounds the identifiers names interns.
const maxInterned = 256

// names interns the identifiers items carry (changefeed, node and
// dispatcher IDs) for one parse worker: a direct-mapped cache, so it stays
// small whatever the log names. The serial checker hashes and compares
// these strings for nearly every item; shared copies are in its cache,
// while each item's own text was just written by another core. A nil
// *names copies.
type names struct {
	slots [1 << namesBits]string
}

// slot picks b's slot from its length and two of its 8-byte words (IDs
// differ in their last digits; changefeed names in their last bytes): a
// collision only costs a copy.
func (n *names) slot(b []byte) *string {
	h := uint64(len(b))
	if len(b) >= 8 {
		h ^= binary.LittleEndian.Uint64(b[len(b)-8:]) ^ binary.LittleEndian.Uint64(b[(len(b)-8)/2:])<<1
	} else {
		for _, c := range b {
			h = h<<8 ^ uint64(c)
		}
	}
	return &n.slots[(h*0x9e3779b97f4a7c15)>>(64-namesBits)]
}

const namesBits = 10

func (n *names) intern(b []byte) string {
	if n == nil || len(b) == 0 || len(b) > maxInterned {
		return string(b)
	}
	sl := n.slot(b)
	if *sl != string(b) {
		*sl = string(b)
	}
	return *sl
}

// textOf returns v as a string: cut from text (the record's evidence
// text, "" if it is not the record as written) when v is text's own bytes
// at off, else copied.
func textOf(text string, v []byte, off int32) string {
	if text != "" && off >= 0 && int(off)+len(v) <= len(text) {
		return text[off : int(off)+len(v)]
	}
	return string(v)
}

// setField sets the event field name from the log value v, which is at
// off in text (see textOf); identifiers are interned in ns.
func setField(ev *spec.Event, name eventField, v []byte, text string, off int32, ns *names) {
	switch name {
	case fChangefeed:
		ev.Changefeed = ns.intern(v)
	case fNode:
		ev.Node = ns.intern(v)
	case fOrigin:
		ev.Origin = ns.intern(v)
	case fDispatcher:
		ev.Dispatcher = ns.intern(v)
	case fState:
		ev.State = strings.ToLower(textOf(text, v, off))
	case fErr:
		if text != "" && off >= 0 {
			ev.Err = textOf(text, v, off) // a piece of evidence text is its own evidence text
		} else {
			ev.Err = evidenceText(v)
		}
	case fReason:
		ev.Reason = textOf(text, v, off)
	case fOp:
		ev.Op = spec.Op(strings.ToLower(textOf(text, v, off)))
	case fEpoch:
		ev.Epoch, _ = strconv.ParseUint(string(v), 10, 64)
	case fCheckpoint:
		ev.Checkpoint = parseTs(v)
	case fNextRetry:
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			ev.NextRetry = n
		} else if t, ok := parseLogTime(v); ok {
			ev.NextRetry = t
		}
	case fSpan:
		ev.Span, _ = parseSpanText(textOf(text, v, off))
	case fTables:
		ev.Tables = parseInts(v)
	case fBootstrapDone:
		ev.BootstrapDone = parseBool(v)
	case fAccepted:
		ev.Accepted = parseBool(v)
	case fRemovalOnly:
		ev.RemovalOnly = parseBool(v)
	case fRemoved:
		ev.Removed = parseBool(v)
	case fMerge:
		ev.Merge = parseBool(v)
	case fSyncPoint:
		ev.SyncPoint = parseBool(v)
	case fInfluence:
		ev.Influence = parseInfluence(v)
	case fDropped:
		ev.Dropped = parseInts(v)
	case fAdded:
		ev.Added = parseInts(v)
	}
}

func parseBool(v []byte) bool { return string(v) == "true" || string(v) == "1" }

// parseTs is strconv.ParseUint(v, 10, 64), 0 on any error, without
// converting v to a string (the conversion allocates: the error keeps it).
// Up to 19 digits cannot overflow: those are read 8 at a time (a TSO has
// 18); longer ones check every digit for overflow.
func parseTs(v []byte) uint64 {
	if len(v) == 0 {
		return 0
	}
	if len(v) > 19 {
		return parseTsLong(v)
	}
	var n uint64
	i := len(v) % 8
	for _, c := range v[:i] {
		d := uint64(c - '0')
		if d > 9 {
			return 0
		}
		n = n*10 + d
	}
	for ; i < len(v); i += 8 {
		d, ok := eightDigits(binary.LittleEndian.Uint64(v[i:]))
		if !ok {
			return 0
		}
		n = n*100_000_000 + d
	}
	return n
}

// eightDigits reads the number of 8 ASCII digits loaded little-endian
// (the first digit in the low byte); ok is false unless every byte is a
// digit: each byte's high nibble is 3, and adding 6 to it carries nothing
// out of its low nibble (a byte that carries into the next fails its own
// test first).
func eightDigits(x uint64) (uint64, bool) {
	const hi = 0xF0F0F0F0F0F0F0F0
	if x&hi|(x+0x0606060606060606)&hi>>4 != 0x3333333333333333 {
		return 0, false
	}
	x -= 0x3030303030303030
	x = x*10 + x>>8 // bytes 0, 2, 4, 6: two-digit numbers
	x = ((x&0x000000FF000000FF)*(100+1_000_000<<32) + (x>>16&0x000000FF000000FF)*(1+10_000<<32)) >> 32
	return x, true
}

// parseTsLong is parseTs digit by digit, with an overflow check.
func parseTsLong(v []byte) uint64 {
	var n uint64
	for _, c := range v {
		d := uint64(c - '0')
		if d > 9 || n > (math.MaxUint64-d)/10 {
			return 0
		}
		n = n*10 + d
	}
	return n
}

func parseInts(v []byte) []int64 {
	v = bytes.Trim(v, "[] ")
	if len(v) == 0 {
		return nil
	}
	var out []int64
	for _, p := range bytes.Split(v, []byte(",")) {
		n, err := strconv.ParseInt(string(bytes.TrimSpace(p)), 10, 64)
		if err == nil {
			out = append(out, n)
		}
	}
	return out
}

// parseSpanText reads a span in cdcspec's form ("t12", "t12[a,m)"), TiCDC's
// FormatTableSpan form ("tableID: 22, startKey: 7480..., endKey: 7480...,
// keyspaceID: 0") or a bare table ID. TiCDC's keys are hex; hex keeps the
// byte order, so Span.Overlaps works on them unchanged.
func parseSpanText(s string) (spec.Span, bool) {
	if len(s) >= 2 && s[0] == 't' && isDigit(s[1]) {
		if sp, err := spec.ParseSpan(s); err == nil {
			return sp, true
		}
	}
	// (ParseInt accepts nothing else; its error would allocate)
	if len(s) > 0 && (isDigit(s[0]) || s[0] == '-' || s[0] == '+') {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return spec.Span{Table: n}, true
		}
	}
	// get returns the value after the first of the spellings of a key
	// ("key: ", "key:", "key=") that s holds.
	get := func(spellings ...string) (string, bool) {
		for _, k := range spellings {
			if i := strings.Index(s, k); i >= 0 {
				rest := s[i+len(k):]
				if j := indexStop(rest, &spanValueStop); j >= 0 {
					rest = rest[:j]
				}
				return strings.Trim(rest, `"`), true
			}
		}
		return "", false
	}
	t, ok := get("tableID: ", "tableID:", "tableID=")
	if !ok {
		t, ok = get("table_id: ", "table_id:", "table_id=")
	}
	if !ok {
		return spec.Span{}, false
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return spec.Span{}, false
	}
	sp := spec.Span{Table: n}
	if k, ok := get("startKey: ", "startKey:", "startKey="); ok {
		sp.Start = k
	} else if k, ok := get("start_key: ", "start_key:", "start_key="); ok {
		sp.Start = k
	}
	if k, ok := get("endKey: ", "endKey:", "endKey="); ok {
		sp.End = k
	} else if k, ok := get("end_key: ", "end_key:", "end_key="); ok {
		sp.End = k
	}
	return sp, true
}

// spanValueStop and opValueStop end a value in a span's and an
// operator's text: strings.IndexAny(s, ", }") and (s, ", ") as indexStop.
var spanValueStop, opValueStop = byteSet(", }"), byteSet(", ")

func byteSet(chars string) (t [256]bool) {
	for i := 0; i < len(chars); i++ {
		t[chars[i]] = true
	}
	return t
}

// indexStop is strings.IndexAny(s, chars) for the byte set of chars
// (TestIndexStop): no set built per call, eight bytes a round.
func indexStop(s string, stop *[256]bool) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8]
		if stop[w[0]] || stop[w[1]] || stop[w[2]] || stop[w[3]] || stop[w[4]] || stop[w[5]] || stop[w[6]] || stop[w[7]] {
			break // the byte-wise loop finds which
		}
	}
	for ; i < len(s); i++ {
		if stop[s[i]] {
			return i
		}
	}
	return -1
}

func reason(why string) func(r *Record, it *Item, out []Item) []Item {
	return func(r *Record, it *Item, out []Item) []Item {
		if it.Event.Reason == "" {
			it.Event.Reason = why
		}
		return out
	}
}

func setMerge(r *Record, it *Item, out []Item) []Item {
	it.Event.Merge = true
	return out
}

// convMaintainerStarted: TiCDC's removal-only maintainer
// (NewMaintainerForRemove) starts with checkpoint 1 and logs no
// removalOnly field; cdcspec's impl logs removalOnly explicitly.
func convMaintainerStarted(r *Record, it *Item, out []Item) []Item {
	if _, ok := r.Field("removalOnly"); !ok && it.Event.Checkpoint == 1 {
		it.Event.RemovalOnly = true
	}
	return out
}

// convOperator reads coordinator and maintainer operator lines. cdcspec's
// impl logs role and type/dest/origin fields; TiCDC logs role and the
// operator's String(), e.g. "add maintainer operator: default/cf, dest:n1",
// "move dispatcher operator: 123, origin:n1, dest:n2".
func convOperator(coordKind, maintKind spec.Kind) func(r *Record, it *Item, out []Item) []Item {
	return func(r *Record, it *Item, out []Item) []Item {
		opText, _ := r.fieldString("operator") // the last "operator" field: the String()
		role := string(fieldOr(r, "role"))
		isCoord := false
		switch {
		case role == "coordinator":
			isCoord = true
		case role == "maintainer":
			isCoord = false
		case strings.Contains(opText, "maintainer operator"):
			isCoord = true
		case strings.Contains(opText, "dispatcher operator"):
			isCoord = false
		default:
			_, hasD := r.Field("dispatcherID")
			_, hasS := r.Field("span")
			isCoord = !hasD && !hasS
		}
		ev := &it.Event
		if isCoord {
			ev.Kind = coordKind
			ev.Dispatcher, ev.Span = "", spec.Span{}
		} else {
			ev.Kind = maintKind
			ev.Removed, ev.Epoch = false, 0
		}
		if len(opText) > 0 {
			parseOperatorText(opText, ev, isCoord)
			if id := firstOperatorField(r); id != "" {
				it.OpID = id
			}
		}
		if it.OpID == "" {
			it.OpID = opIdentity(ev)
		}
		return out
	}
}

func fieldOr(r *Record, key string) []byte {
	v, _ := r.Field(key)
	return v
}

// firstOperatorField returns the first of two "operator" fields (TiCDC logs
// the operator ID, then its String()); "" if there is only one.
func firstOperatorField(r *Record) string {
	r.parseFields()
	var first *field
	count := 0
	for i := range r.fields {
		if f := &r.fields[i]; string(f.key) == "operator" || string(f.key) == "operatorID" {
			if count == 0 {
				first = f
			}
			count++
		}
	}
	if count >= 2 || (count == 1 && len(first.val) > 0 && !bytes.Contains(first.val, []byte(" operator"))) {
		return textOf(r.own, first.val, first.off)
	}
	return ""
}

func opIdentity(ev *spec.Event) string {
	if ev.Dispatcher != "" {
		return ev.Dispatcher
	}
	return ev.Changefeed
}

// parseOperatorText fills Op, Node (dest), Origin, Dispatcher and Removed
// from an operator's String() where the fields were not logged separately.
func parseOperatorText(s string, ev *spec.Event, coord bool) {
	if ev.Op == "" {
		word := s
		if i := strings.IndexByte(s, ' '); i > 0 {
			word = s[:i]
		}
		switch word {
		case "add", "move", "stop", "remove", "split", "merge", "occupy":
			ev.Op = spec.Op(word)
		}
	}
	if ev.Node == "" {
		ev.Node = opTextValue(s, "dest")
	}
	if ev.Origin == "" {
		ev.Origin = opTextValue(s, "origin")
	}
	after := ""
	if i := strings.Index(s, "operator: "); i >= 0 {
		after = s[i+len("operator: "):]
		if j := strings.IndexByte(after, ','); j >= 0 {
			after = after[:j]
		}
	}
	if coord {
		if ev.Changefeed == "" {
			ev.Changefeed = after
		}
		if ev.Op == spec.OpStop && !ev.Removed {
			ev.Removed = opTextValue(s, "remove") == "true"
		}
	} else if ev.Dispatcher == "" {
		if i := strings.Index(s, "dispatcherID: "); i >= 0 {
			after = s[i+len("dispatcherID: "):]
			if j := indexStop(after, &opValueStop); j >= 0 {
				after = after[:j]
			}
		}
		ev.Dispatcher = after
	}
}

// opTextValue returns the value after the first "key:" in an operator's
// text s, else after the first "key " (TiCDC's String() spells both), ""
// if s holds neither: one scan of s for both spellings.
func opTextValue(s, key string) string {
	colon, space := -1, -1 // where the value after each spelling starts
	for from := 0; colon < 0; {
		i := strings.Index(s[from:], key)
		if i < 0 {
			break
		}
		if j := from + i + len(key); j < len(s) {
			switch s[j] {
			case ':':
				colon = j + 1
			case ' ':
				if space < 0 {
					space = j + 1
				}
			}
		}
		from += i + 1
	}
	at := colon
	if at < 0 {
		at = space
	}
	if at < 0 {
		return ""
	}
	rest := strings.TrimLeft(s[at:], " ")
	if j := indexStop(rest, &opValueStop); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// convStillRunning reads "operator is still in running queue": the operator
// ID, its String() and timeSinceCreated (a Go duration).
func convStillRunning(r *Record, it *Item, out []Item) []Item {
	it.OpID = firstOperatorField(r)
	opText, _ := r.Field("operator")
	if it.OpID == "" {
		it.OpID = string(opText)
	}
	if d, ok := r.Field("timeSinceCreated"); ok {
		it.Dur = parseGoDuration(d)
	}
	it.Event.Reason = string(opText)
	return out
}

// convRedoStuck reads tiflow's redo meta warning: lastFlushTime is the time
// since the meta last changed, meta is JSON with the checkpoint.
func convRedoStuck(r *Record, it *Item, out []Item) []Item {
	if d, ok := r.Field("lastFlushTime"); ok {
		it.Dur = parseGoDuration(d)
	}
	if meta, ok := r.Field("meta"); ok {
		if i := bytes.Index(meta, []byte(`"CheckpointTs":`)); i >= 0 {
			rest := meta[i+len(`"CheckpointTs":`):]
			j := 0
			for j < len(rest) && isDigit(rest[j]) {
				j++
			}
			it.Event.Checkpoint = parseTs(rest[:j])
		}
	}
	return out
}

// convMembership turns addedNodes/removedNodes lists into NodeJoined and
// NodeLeft events (one item per node), keeping the membership symptom.
func convMembership(r *Record, it *Item, out []Item) []Item {
	added := parseNodeList(fieldOr(r, "addedNodes"))
	removed := parseNodeList(fieldOr(r, "removedNodes"))
	if len(added) == 0 && len(removed) == 0 {
		return out
	}
	base := *it
	out = out[:len(out)-1]
	for _, n := range added {
		c := base
		c.Event.Kind = spec.NodeJoined
		c.Event.Node = n
		out = append(out, c)
	}
	for _, n := range removed {
		c := base
		c.Event.Kind = spec.NodeLeft
		c.Event.Node = n
		out = append(out, c)
	}
	return out
}

// parseNodeList reads ["a","b"] or [a,b] (zap arrays of strings or of
// node.ID values) into node IDs.
func parseNodeList(v []byte) []string {
	v = bytes.TrimSpace(v)
	if len(v) < 2 || v[0] != '[' {
		return nil
	}
	v = v[1 : len(v)-1]
	var out []string
	for _, p := range bytes.Split(v, []byte(",")) {
		p = bytes.Trim(bytes.TrimSpace(p), `"{}`)
		if i := bytes.IndexByte(p, ':'); i >= 0 && bytes.HasPrefix(p, []byte(`id`)) {
			p = bytes.Trim(p[i+1:], `" `)
		}
		if len(p) > 0 {
			out = append(out, string(p))
		}
	}
	return out
}

// parseGoDuration parses a Go duration ("2h30m11s", "9m21.99436182s") or a
// number of nanoseconds into milliseconds.
func parseGoDuration(v []byte) int64 {
	s := strings.Trim(string(v), `"`)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n / 1e6
	}
	var total float64
	for s != "" {
		i := 0
		for i < len(s) && (isDigit(s[i]) || s[i] == '.') {
			i++
		}
		if i == 0 {
			return int64(total)
		}
		n, err := strconv.ParseFloat(s[:i], 64)
		if err != nil {
			return int64(total)
		}
		s = s[i:]
		j := 0
		for j < len(s) && !isDigit(s[j]) && s[j] != '.' {
			j++
		}
		unit := s[:j]
		s = s[j:]
		switch unit {
		case "h":
			total += n * 3600e3
		case "m":
			total += n * 60e3
		case "s":
			total += n * 1e3
		case "ms":
			total += n
		case "us", "µs":
			total += n / 1e3
		case "ns":
			total += n / 1e6
		default:
			return int64(total)
		}
	}
	return int64(total)
}
