package spec

import (
	"fmt"
	"strconv"
	"strings"
)

// LogLine is the canonical TiCDC log line for an event kind: the source file
// (without line number), level, message and the field names that carry the
// Event's fields. impl/ logs every event with exactly this file name, message
// and these fields (in TiCDC's unified format via github.com/pingcap/log);
// traces/ must map each of these lines back to its Kind (a traces test
// enforces it). traces/ also knows many more TiCDC messages (other versions,
// the old architecture); this table is only the common core.
//
// TiCDC marks whether the message exists in TiCDC itself. Lines with TiCDC ==
// false are cdcspec's own, for events TiCDC does not log (or logs only at
// DEBUG); real TiCDC logs will not contain them, so monitors relying on them
// report insufficient evidence on production logs.
type LogLine struct {
	Kind    Kind
	File    string
	Level   string
	Message string
	// Fields maps Event field names (as in the Event struct: "Changefeed",
	// "Node", "Epoch", "Checkpoint", "Err", "State", "Dispatcher", "Span",
	// "Op", "Origin", "RemovalOnly", "BootstrapDone", "Removed", "NextRetry",
	// "Tables", "Accepted", "Reason", "Merge", "SyncPoint", "Influence",
	// "Dropped", "Added") to log field keys. Influence is logged as TiCDC
	// spells heartbeatpb.InfluenceType (InfluenceText).
	Fields map[string]string
	TiCDC  bool
}

// LogLines lists the canonical line of every event kind that has one.
func LogLines() []LogLine {
	return []LogLine{
		{StatusReceived, "controller.go", "DEBUG", "coordinator received maintainer status",
			map[string]string{"Changefeed": "changefeed", "Node": "node", "Epoch": "statusMaintainerEpoch", "Checkpoint": "checkpointTs", "BootstrapDone": "bootstrapDone", "State": "state", "Err": "error", "Accepted": "accepted"}, false},
		{StatusIgnored, "controller.go", "WARN", "drop stale maintainer status",
			map[string]string{"Changefeed": "changefeed", "Node": "node", "Epoch": "statusMaintainerEpoch"}, true},
		{CheckpointStored, "etcd_backend.go", "DEBUG", "update changefeed checkpointTs",
			map[string]string{"Changefeed": "changefeed", "Checkpoint": "checkpointTs"}, false},
		{StateChanged, "controller.go", "INFO", "changefeed status changed",
			map[string]string{"Changefeed": "changefeed", "State": "state", "Err": "error"}, true},
		{BackoffErrorSeen, "backoff.go", "ERROR", "changefeed maintainer report an error",
			map[string]string{"Changefeed": "changefeed", "Checkpoint": "checkpointTs", "Node": "node", "State": "state", "Err": "error"}, true},
		{BackoffStarted, "backoff.go", "WARN", "changefeed meets an error, will be stopped",
			map[string]string{"Changefeed": "changefeed", "Checkpoint": "checkpointTs", "NextRetry": "nextRetryTime", "Err": "error"}, true},
		{BackoffIgnored, "backoff.go", "INFO", "changefeed is already in restarting progress, ignore the error",
			map[string]string{"Changefeed": "changefeed", "Err": "err"}, true},
		{BootstrapDoneChanged, "changefeed.go", "INFO", "Received changefeed status with bootstrapDone",
			map[string]string{"Changefeed": "changefeed", "BootstrapDone": "bootstrapDone"}, true},
		{BackoffRecovered, "backoff.go", "INFO", "changefeed is recovered from warning state,its checkpointTs is greater than lastRetryCheckpointTs,it will be changed to normal state",
			map[string]string{"Changefeed": "changefeed", "Checkpoint": "checkpointTs"}, true},
		{CoordinatorBootstrapped, "controller.go", "INFO", "coordinator bootstrapped",
			map[string]string{"Node": "nodeID"}, true},
		{BackoffGaveUp, "backoff.go", "ERROR", "The changefeed won't be restarted as it has been experiencing failures for an extended duration",
			map[string]string{"Changefeed": "changefeed", "Checkpoint": "checkpointTs"}, true},
		{MaintainerOpStarted, "operator_controller.go", "INFO", "add operator to running queue",
			map[string]string{"Changefeed": "changefeedID", "Op": "type", "Node": "dest", "Origin": "origin", "Epoch": "maintainerEpoch", "Removed": "removed"}, true},
		{MaintainerOpFinished, "operator_controller.go", "INFO", "operator finished",
			map[string]string{"Changefeed": "changefeedID", "Op": "type", "Node": "dest", "Origin": "origin", "Epoch": "maintainerEpoch", "Removed": "removed"}, true},
		{EpochBumped, "operator_controller.go", "INFO", "changefeed epoch bumped",
			map[string]string{"Changefeed": "changefeed", "Epoch": "maintainerEpoch"}, false},
		{ChangefeedCreated, "changefeed.go", "INFO", "changefeed instance created",
			map[string]string{"Changefeed": "id", "Checkpoint": "checkpointTs", "State": "state", "Tables": "tables"}, true},
		{ChangefeedResumed, "controller.go", "INFO", "resume changefeed",
			map[string]string{"Changefeed": "changefeed", "Checkpoint": "checkpointTs"}, false},
		{ChangefeedRemoved, "changefeed_db.go", "INFO", "remove changefeed",
			map[string]string{"Changefeed": "changefeed"}, true},
		{MaintainerCreated, "maintainer.go", "INFO", "changefeed maintainer started",
			map[string]string{"Changefeed": "changefeedID", "Node": "nodeID", "Epoch": "maintainerEpoch", "Checkpoint": "checkpointTs", "RemovalOnly": "removalOnly"}, true},
		{MaintainerBootstrapped, "maintainer.go", "INFO", "changefeed maintainer bootstrapped",
			map[string]string{"Changefeed": "changefeedID", "Node": "nodeID", "Epoch": "maintainerEpoch", "Checkpoint": "startTs"}, true},
		{MaintainerBootstrapFailed, "maintainer.go", "WARN", "maintainer bootstrap failed",
			map[string]string{"Changefeed": "changefeedID", "Node": "nodeID", "Err": "error"}, true},
		{MaintainerClosed, "maintainer.go", "INFO", "changefeed maintainer closed",
			map[string]string{"Changefeed": "changefeedID", "Node": "nodeID", "Epoch": "maintainerEpoch", "Checkpoint": "checkpointTs", "Removed": "removed"}, true},
		{DispatcherErrorReported, "maintainer.go", "ERROR", "dispatcher report an error",
			map[string]string{"Changefeed": "changefeedID", "Node": "nodeID", "Origin": "sourceNode", "Err": "error"}, true},
		{MaintainerRejectedAdd, "maintainer_manager_maintainers.go", "WARN", "reject add maintainer request because existing maintainer is still running",
			map[string]string{"Changefeed": "changefeedID", "Node": "nodeID", "Epoch": "requestMaintainerEpoch"}, true},
		{DispatcherCreated, "dispatcher_manager.go", "INFO", "new dispatcher created",
			map[string]string{"Changefeed": "changefeedID", "Node": "nodeID", "Dispatcher": "dispatcherID", "Span": "tableSpan", "Checkpoint": "startTs", "Merge": "merge"}, true},
		{DispatcherWorking, "basic_dispatcher.go", "INFO", "update dispatcher status to working",
			map[string]string{"Changefeed": "changefeedID", "Node": "nodeID", "Dispatcher": "dispatcher", "Span": "table"}, true},
		{DispatcherRemoved, "dispatcher_manager.go", "INFO", "event dispatcher completely stopped, and delete it from event dispatcher manager",
			map[string]string{"Changefeed": "changefeedID", "Node": "nodeID", "Dispatcher": "dispatcherID", "Checkpoint": "checkpointTs"}, true},
		{DispatcherManagerClosed, "dispatcher_manager.go", "INFO", "event dispatcher manager closed",
			map[string]string{"Changefeed": "changefeedID", "Node": "nodeID"}, true},
		{DispatcherOpStarted, "operator_controller.go", "INFO", "add operator to running queue",
			map[string]string{"Changefeed": "changefeedID", "Op": "type", "Dispatcher": "dispatcherID", "Span": "span", "Node": "dest", "Origin": "origin"}, true},
		{DispatcherOpFinished, "operator_controller.go", "INFO", "operator finished",
			map[string]string{"Changefeed": "changefeedID", "Op": "type", "Dispatcher": "dispatcherID", "Span": "span", "Node": "dest", "Origin": "origin"}, true},
		{SpanNotFound, "maintainer_controller.go", "WARN", "no span found, remove it",
			map[string]string{"Changefeed": "changefeed", "Node": "from", "Dispatcher": "dispatcherID"}, true},
		{WorkingTableIgnored, "maintainer_controller_bootstrap.go", "WARN", "found a working table that is not in initial table map, just ignore it",
			map[string]string{"Changefeed": "changefeed", "Span": "tableID"}, true},
		{SinkError, "dispatcher_manager.go", "ERROR", "Event Dispatcher Manager Meets Error",
			map[string]string{"Changefeed": "changefeedID", "Node": "nodeID", "Err": "error"}, true},
		{DataWritten, "upstream.go", "DEBUG", "upstream row committed",
			map[string]string{"Changefeed": "changefeedID", "Span": "key", "Checkpoint": "commitTs"}, false},
		{DataFlushed, "sink.go", "DEBUG", "sink flushed",
			map[string]string{"Changefeed": "changefeedID", "Node": "nodeID", "Span": "tableSpan", "Checkpoint": "flushedTs"}, false},
		{NodeJoined, "module_node_manager.go", "INFO", "capture joined",
			map[string]string{"Node": "captureID"}, false},
		{NodeLeft, "module_node_manager.go", "INFO", "capture left",
			map[string]string{"Node": "captureID"}, false},
		{CaptureSuicide, "server.go", "ERROR", "cdc server exits with error",
			map[string]string{"Node": "captureID", "Err": "error"}, true},
		{TableCreated, "upstream.go", "INFO", "upstream table created",
			map[string]string{"Span": "tableID", "Checkpoint": "commitTs"}, false},
		{UpstreamStalled, "upstream.go", "WARN", "upstream resolved ts stalled",
			map[string]string{"Checkpoint": "resolvedTs"}, false},
		{UpstreamResumed, "upstream.go", "INFO", "upstream resolved ts resumed",
			map[string]string{"Checkpoint": "resolvedTs"}, false},
		{FaultsHealed, "sim.go", "INFO", "all faults healed",
			map[string]string{"Checkpoint": "resolvedTs"}, false},
		{Quiesced, "sim.go", "INFO", "cluster quiesced", map[string]string{}, false},
		// barrier (spec/barrier.go). TiCDC's own lines are HEAD's messages
		// and keys (maintainer/barrier.go, barrier_event.go,
		// downstreamadapter/dispatcher/basic_dispatcher.go at b813e76f9).
		{DDLCommitted, "upstream.go", "INFO", "upstream DDL committed",
			map[string]string{"Changefeed": "changefeedID", "Checkpoint": "commitTs", "Tables": "blockedTables", "Reason": "query",
				"SyncPoint": "isSyncPoint", "Influence": "blockedType", "Dropped": "droppedTables", "Added": "addedTables"}, false},
		{BlockStatusReported, "basic_dispatcher.go", "INFO", "dispatcher reported block status",
			map[string]string{"Changefeed": "changefeedID", "Node": "nodeID", "Dispatcher": "dispatcher", "Span": "tableSpan", "Checkpoint": "blockTs", "State": "stage", "Tables": "blockedTables",
				"SyncPoint": "isSyncPoint", "Influence": "blockedType", "Dropped": "droppedTables", "Added": "addedTables"}, false},
		{BlockEventCreated, "barrier_event.go", "INFO", "new block event is created",
			map[string]string{"Changefeed": "changefeedID", "Node": "nodeID", "Dispatcher": "dispatcher", "Checkpoint": "blockTs", "SyncPoint": "syncPoint", "Influence": "blockedType"}, true},
		{BlockWriterSelected, "barrier_event.go", "INFO", "all dispatcher reported heartbeat, schedule it, and select one to write",
			map[string]string{"Changefeed": "changefeed", "Node": "nodeID", "Dispatcher": "dispatcher", "Checkpoint": "commitTs", "Influence": "barrierType"}, true},
		{BlockActionReceived, "basic_dispatcher.go", "INFO", "pending event get the action",
			map[string]string{"Changefeed": "changefeedID", "Node": "nodeID", "Dispatcher": "dispatcher", "Checkpoint": "pendingEventCommitTs", "State": "action"}, true},
		{BlockEventDone, "barrier.go", "INFO", "all dispatchers reported event done, remove event",
			map[string]string{"Changefeed": "changefeed", "Node": "nodeID", "Checkpoint": "commitTs"}, true},
		{DDLWritten, "sink.go", "INFO", "sink wrote block event",
			map[string]string{"Changefeed": "changefeedID", "Node": "nodeID", "Dispatcher": "dispatcher", "Checkpoint": "commitTs", "SyncPoint": "isSyncPoint"}, false},
	}
}

// InfluenceText spells an influence type (InfluenceNormal, InfluenceDB,
// InfluenceAll) as TiCDC logs heartbeatpb.InfluenceType ("Normal", "DB",
// "All"); traces reads either spelling back case-insensitively.
func InfluenceText(inf string) string {
	switch inf {
	case InfluenceNormal:
		return "Normal"
	case InfluenceDB:
		return "DB"
	case InfluenceAll:
		return "All"
	}
	return inf
}

// SpanText renders a span as impl logs it in the tableSpan field and traces
// parses it back: "t<table>" for a whole table, "t<table>[start,end)" for a
// part, as Span.String.
func SpanText(s Span) string { return s.String() }

// ParseSpan parses Span.String's output: "t12", "t12[a,m)", "t12[m,+inf)".
func ParseSpan(s string) (Span, error) {
	if len(s) < 2 || s[0] != 't' {
		return Span{}, fmt.Errorf("span %q: want t<table> or t<table>[start,end)", s)
	}
	rest := s[1:]
	i := strings.IndexByte(rest, '[')
	num := rest
	if i >= 0 {
		num = rest[:i]
	}
	t, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return Span{}, fmt.Errorf("span %q: table id: %v", s, err)
	}
	sp := Span{Table: t}
	if i < 0 {
		return sp, nil
	}
	body := rest[i+1:]
	if !strings.HasSuffix(body, ")") {
		return Span{}, fmt.Errorf("span %q: missing closing ')'", s)
	}
	body = body[:len(body)-1]
	j := strings.IndexByte(body, ',')
	if j < 0 {
		return Span{}, fmt.Errorf("span %q: missing ',' between start and end", s)
	}
	sp.Start, sp.End = body[:j], body[j+1:]
	if sp.End == "+inf" {
		sp.End = ""
	}
	return sp, nil
}
