package traces

import (
	"strconv"

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
