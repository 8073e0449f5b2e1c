package traces

import "cdcspec/spec"

// This file is the catalogue's data: which log lines mean what. The matcher
// that reads records against it is catalogue.go; the per-line converters
// (entry.conv) are convert.go.

const (
	cfKeys = "changefeedID,changefeed,changefeedid,cf"
)

// catalogue is the message catalogue: TiCDC's new architecture at HEAD and
// release-8.5, and tiflow's old architecture where the same guarantee
// applies. Lines are matched on message and caller file name, never on line
// numbers. cdcspec's own lines are not typed here: ownEntries derives them
// from spec.LogLines; catalogueIndex adds those, barrierEntries and
// headEntries (catalogue_head.go).
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
	{msg: "changefeed instance created", files: files("changefeed.go"), kind: spec.ChangefeedCreated, v: "HEAD",
		keys: m("Changefeed", "id,"+cfKeys, "Checkpoint", "checkpointTs", "State", "state", "Tables", "tables")},
	{msg: "resume changefeed successfully", files: files("changefeed.go"), kind: spec.ChangefeedResumed, v: "HEAD (api/v2)",
		keys: m("Changefeed", cfKeys)},
	{msg: "remove changefeed", files: files("changefeed_db.go"), kind: spec.ChangefeedRemoved, v: "HEAD",
		keys: m("Changefeed", cfKeys)},
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
	{msg: "Add remote target", files: files("message_center.go"), sym: SymContext, v: "HEAD"},
	{msg: "remove remote target from message center", files: files("message_center.go"), sym: SymContext, v: "HEAD"},
	{msg: "remote target error, reset the connection", files: files("message_center.go"), sym: SymContext, v: "HEAD"},

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

// contextItems are the benign (SymContext) lines a monitor still reads:
// they become items; every other benign line is only counted.
var contextItems = map[string]bool{
	"move maintainer operator aborted, mark changefeed absent": true, // markUnsuccessfulOp
	"changefeed bootstrap initial nodes":                       true, // the capture's own node ID
}

// tsMeansNone lists the lines where a timestamp value means "none", so
// it is not impossible there. A node without the changefeed's dispatcher
// manager answers a bootstrap with checkpointTs 0
// (maintainer_controller_bootstrap.go; only when every answer is 0 does
// TiCDC fail, "can not determine the startTs", #4509). The maintainer's
// checkpoint calculation starts its minimums at MaxUint64, and logs them
// as they are when no dispatcher span reported ("global checkpoint is
// invalid", maintainer.go calculateNewCheckpointTs).
var tsMeansNone = map[string]noneTs{
	"handle bootstrap response": noneZero,
	"checkpointTs can not be advanced, since global checkpoint is invalid":           noneMax,
	"redo checkpointTs can not be advanced, since redo global checkpoint is invalid": noneMax,
	"can advance checkpointTs":      noneMax,
	"can advance redo checkpointTs": noneMax,
}

// ownEntries are cdcspec's own lines (spec.LogLines with TiCDC == false:
// events TiCDC does not log, or logs only at DEBUG), read back with exactly
// the file, message and keys impl/logging writes them with.
func ownEntries() []entry {
	var out []entry
	for _, ll := range spec.LogLines() {
		if ll.TiCDC {
			continue
		}
		out = append(out, entry{msg: ll.Message, files: files(ll.File), kind: ll.Kind, v: ownVersion,
			keys: ll.Fields, conv: ownConv[ll.Kind]})
	}
	return out
}

// ownVersion is the version note of cdcspec's own lines (entry.ownLine).
const ownVersion = "cdcspec"

// ownConv post-processes those of cdcspec's own lines that need it.
var ownConv = map[spec.Kind]func(r *Record, it *Item, out []Item) []Item{
	spec.BlockStatusReported: convBlockStatus,
}
