package spec

// Where a control message can wait at TiCDC HEAD (pingcap/ticdc at
// b813e76f9), per message type: SPEC.md section 8.1 argues each row. The
// simulation's delivery (impl/sim route, and its delay rule) and the
// model's network (model/net.go recvQueue, sendQueue) follow this table,
// and their tests check each against it.
//
// A message can wait in two places only:
//   - on its command stream (pkg/messaging remoteMessageTarget: sendCmdCh,
//     the gRPC stream, runReceiveMessages), FIFO per (sender node,
//     receiver node): a slow or congested connection holds back everything
//     behind it on the stream, and a broken one loses what it carried
//     (checkRemoteTarget reconnects within 1 s);
//   - in its receiving component's queue, FIFO: behind what that component
//     has not handled yet, for as long as its goroutine is busy.
//
// A sending queue is not a place to wait: the heartbeat collector's
// goroutines only dequeue and call SendCommand, which never blocks
// (remote_target.go:133-150: a select with a congested default that drops
// the message). So a message that passes a sending queue is on its stream
// within the collector's scheduling delay (microseconds to milliseconds);
// a later direct send from the same node may overtake it only within that
// window, never for seconds.

// WaitStream and WaitRecvQueue are the places a message may be delayed.
const (
	WaitStream    = "stream"
	WaitRecvQueue = "receiving-queue"
)

// MessageWait is one message type's route and where it may wait.
type MessageWait struct {
	Type      string   // TiCDC's message type (heartbeatpb), as impl/core names it
	SendQueue string   // "" (the sender calls SendCommand) or the sending queue it passes without waiting
	RecvQueue string   // the receiving component's queue
	WaitAt    []string // where it may be delayed: WaitStream, WaitRecvQueue
	Head      string   // HEAD lines of the route
}

// Sending queues (pass-through, never a wait).
const (
	SendHeartbeatQueue   = "heartbeat-collector heartBeatReqQueue"
	SendBlockStatusQueue = "heartbeat-collector blockStatusReqQueue"
)

// Receiving queues.
const (
	RecvCoordinator     = "coordinator"
	RecvManager         = "maintainer-manager"
	RecvMaintainer      = "maintainer"
	RecvOrchestrator    = "dispatcher-orchestrator"
	RecvSchedule        = "schedule-dispatcher"
	RecvHeartbeatResp   = "heartbeat-response"
	RecvMergeDispatcher = "merge-dispatcher"
)

var bothWaits = []string{WaitStream, WaitRecvQueue}

// MessageWaits is the table, one row per message type.
var MessageWaits = []MessageWait{
	{"CoordinatorBootstrapRequest", "", RecvManager, bothWaits, "maintainer/maintainer_manager.go:89-101 (recvMessages -> msgCh)"},
	{"AddMaintainerRequest", "", RecvManager, bothWaits, "maintainer/maintainer_manager.go:89-101"},
	{"RemoveMaintainerRequest", "", RecvManager, bothWaits, "maintainer/maintainer_manager.go:89-101"},
	{"CoordinatorBootstrapResponse", "", RecvCoordinator, bothWaits, "maintainer/maintainer_manager.go:194-195 (SendCommand); coordinator eventCh"},
	{"MaintainerHeartbeat", "", RecvCoordinator, bothWaits, "maintainer/maintainer_manager.go:162-171 (SendCommand); coordinator eventCh"},
	{"MaintainerBootstrapRequest", "", RecvOrchestrator, bothWaits, "dispatcherorchestrator pendingMessageQueue (one pending per changefeed and type)"},
	{"MaintainerCloseRequest", "", RecvOrchestrator, bothWaits, "dispatcherorchestrator pendingMessageQueue"},
	{"MaintainerBootstrapResponse", "", RecvMaintainer, bothWaits, "dispatcher_orchestrator.go sendResponse; maintainer_manager.go:104-106 -> Maintainer.eventCh"},
	{"MaintainerCloseResponse", "", RecvMaintainer, bothWaits, "dispatcher_orchestrator.go:700 sendResponse; maintainer_manager.go:80-84"},
	{"HeartBeatRequest", SendHeartbeatQueue, RecvMaintainer, bothWaits, "heartbeat_collector.go sendHeartBeatMessages -> SendCommand (pkg/messaging/remote_target.go:133-150); maintainer_manager.go:111-113"},
	{"BlockStatusRequest", SendBlockStatusQueue, RecvMaintainer, bothWaits, "heartbeat_collector.go sendBlockStatusMessages -> SendCommand; maintainer_manager.go:114-116"},
	{"ScheduleDispatcherRequest", "", RecvSchedule, bothWaits, "maintainer/operator/operator_controller.go scheduleOperator; heartbeat_collector.go schedulerDispatcherRequestDynamicStream"},
	{"HeartBeatResponse", "", RecvHeartbeatResp, bothWaits, "heartbeat_collector.go heartBeatResponseDynamicStream"},
	{"MergeDispatcherRequest", "", RecvMergeDispatcher, bothWaits, "heartbeat_collector.go mergeDispatcherRequestDynamicStream"},
}

// MayBeLost reports whether a message of this row may be lost on its way.
// Every control message may (SPEC.md 8.1, Loss): SendCommand drops it when
// the target is unknown, the stream is not ready or congested, a broken
// connection loses what it carried, and a receiver without a handler, path
// or maintainer drops it; every sender relies on its re-sends.
func (w MessageWait) MayBeLost() bool { return true }

// MessageWaitOf returns the row of a message type.
func MessageWaitOf(typ string) (MessageWait, bool) {
	for _, w := range MessageWaits {
		if w.Type == typ {
			return w, true
		}
	}
	return MessageWait{}, false
}
