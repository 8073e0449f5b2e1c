// Package model is an explicit-state model of TiCDC's control plane (pingcap/ticdc
// new architecture): the coordinator, the maintainer manager and maintainer of
// one changefeed on every node, the dispatcher managers and their dispatchers,
// a lossy network, node crashes and restarts, sink errors, upstream stalls and
// a table created by DDL.
//
// The model is pure: Step(cfg, state, action) returns the next state and the
// spec.Events the step produced; Actions(cfg, state) lists the enabled
// actions. There are no goroutines, clocks, randomness or IO; time (timers,
// re-sends) and faults are actions. State is a flat value of small integers
// and fixed arrays, so copying it is a memcpy and its bytes are its canonical
// encoding (see State.Bytes); the checker (check.go) explores it breadth-first.
//
// Section references (A.2, C.7, ...) name sections of the TiCDC protocol
// reference that spec/SPEC.md condenses; spec/SPEC.md states the protocol.
package model

import (
	"fmt"
	"strings"
	"unsafe"
)

// Fixed bounds of the state layout. Config bounds must stay within them.
const (
	MaxNodes  = 3  // node slots; slot 0 hosts the coordinator and never crashes
	MaxTables = 3  // table IDs 1..MaxTables; table 0 is the table trigger (DDL span)
	MaxSpans  = 3  // span replications per maintainer (one per table)
	MaxDisp   = 8  // dispatchers over all nodes
	MaxMsgs   = 16 // messages in flight over all channels
	MaxJrnl   = 2  // journaled operators per dispatcher manager
	MaxSnap   = 3  // dispatchers per bootstrap snapshot

	coordSlot = MaxNodes // the coordinator's endpoint in messages
	none      = 0xFF     // "no value" for identities, timestamps, indices
	tsInf     = 0xFE     // an empty dispatcher manager's watermark: no bound
)

// Node slot states.
const (
	nodeAlive    = 0
	nodeDead     = 1 // crashed (capture suicide); the others have not noticed yet
	nodeDetected = 2 // crashed and seen leaving; may restart with a fresh identity
)

// Changefeed states (coordinator, FeedState).
const (
	cfNormal  = 0
	cfWarning = 1
	cfFailed  = 2
	cfStopped = 3 // paused (API)
	cfRemoved = 4 // removed (API): being removed while Op is a stop, deleted once it finished
)

// Coordinator replica states (ReplicationDB) and span states (span controller).
const (
	replAbsent      = 0
	replScheduling  = 1
	replReplicating = 2
)

// Coordinator maintainer operators.
const (
	copNone = 0
	copAdd  = 1
	copStop = 2
	copMove = 3 // movemaintainer.go
)

// Maintainer dispatcher operators.
const (
	mopNone   = 0
	mopAdd    = 1
	mopRemove = 2
	mopMove   = 3
	mopSplit  = 4 // split.go: OpDest = right half's target node (none: no targets), OpPh = split mode
	mopMerge  = 5 // merge.go: the merged span's merge operator; OpPh = merge phase
	mopOccupy = 6 // merge.go: an occupy operator on a source span of a merge
	mopGhost  = 7 // merge.go: not an operator: a removed source resurrected absent (merge-occupy-finishes-early)
)

// Move operator phases.
const (
	movRemoveOrigin = 0
	movAddDest      = 1
)

// Remove operator phases (SpanRep.OpPh of a mopRemove span). A remove is
// finished by the Stopped status that Check takes, and post-finished at the
// operator controller's next poll (operator_controller.go
// pollQueueingOperator and finalizeOperator, 390-393 and 429-454 at
// b813e76f9; AOpPostFinish). In between the operator is still in the
// controller: it holds its span, its BlockTsForward still counts in
// GetMinCheckpointTs, it sends no more requests (operator_remove.go
// Schedule, 108-117) and the node-removal fallback leaves its span alone
// (operator_controller.go OnNodeRemoved, 284-303).
const (
	remRunning  = 0
	remFinished = 1
)

// Dispatcher component states.
const (
	dInit     = 1 // Initializing: created, no event yet
	dWorking  = 2 // Working
	dRemoving = 3 // TryRemoving: closing asynchronously; reported Stopped once when closed
	// dMergeClosed: a merge source closed by doMerge (merge.go): it writes
	// nothing any more and is being removed; reported Stopped once removed.
	dMergeClosed = 4
)

// Operator types carried by ScheduleDispatcherRequest (heartbeatpb OperatorType).
const (
	otAdd    = 1
	otRemove = 2
	otMove   = 3
	otSplit  = 4
)

// Schedule actions.
const (
	schedCreate = 1
	schedRemove = 2
	schedMerge  = 3 // Journal.Action of a mergeOperatorMap entry (merge.go): ID = the merged dispatcher
)

// Upstream puller (tiflow kv client, seed 004) region locations and goroutine states.
const (
	regQueued  = 0
	regPending = 1
	regActive  = 2

	gorRunning = 0
	gorExited  = 1
)

// Coord is the coordinator's view of the one changefeed (A.2).
type Coord struct {
	State      uint8 // cfNormal | cfWarning | cfFailed
	Repl       uint8 // replAbsent | replScheduling | replReplicating
	Node       uint8 // identity of the maintainer node it listens to; none when absent
	Epoch      uint8 // ChangeFeedInfo.Epoch; bumped before every add and on warning
	Ckpt       uint8 // stored checkpoint (status key); never decreases (checkpoint-monotonic)
	BootDone   bool  // BootstrapDone of the last stored status
	Retrying   bool  // backoff.retrying
	Restarting bool  // backoff.isRestarting: cleared by StartFinished (add done)
	Baseline   uint8 // backoff baseline checkpoint (lastRetryCheckpointTs)
	RetryWait  bool  // now < nextRetryTime; cleared by the retry-timer action
	Retries    uint8 // restarts of the current streak: the error-stuck budget spent (lifecycle.go handleErrorBudget); 0 when not retrying
	Op         uint8 // copNone | copAdd | copStop
	OpNode     uint8 // add: destination; stop: node it stops (identity)
	OpEpoch    uint8 // stop: the epoch it stops; add: the bumped epoch
	OpRemove   bool  // stop: the changefeed is removed (RemoveMaintainerRequest.Removed)
	// Move (movemaintainer.go): OpNode is the target, OpEpoch the move's
	// epoch; the origin's identity and epoch, the phase, and whether the
	// origin's node left during the move (originRemoved).
	OpOrigin    uint8
	OpOrigEpoch uint8
	OpPh        uint8
	OpOrigGone  bool
	// The coordinator's bootstrap after a failover (lifecycle.go; HEAD
	// coordinator/controller.go New, onMaintainerBootstrapResponse,
	// finishBootstrap at b813e76f9). Booting: not initialized yet, so no
	// status is handled, nothing is scheduled and no operator runs; it ends
	// when BootWait (the member slots whose CoordinatorBootstrapResponse is
	// still awaited) is empty. BootHas: the slots whose response reported a
	// maintainer of the changefeed, with its epoch and checkpoint in BootEp
	// and BootCk (zero otherwise). Prog: the changefeed's persisted Progress
	// the new coordinator reads (progNone | progStopping | progDeleted). All
	// zero when not booting.
	Booting  bool
	BootWait uint8
	BootHas  uint8
	Prog     uint8
	BootEp   [MaxNodes]uint8
	BootCk   [MaxNodes]uint8
}

// Persisted Progress of the changefeed as a new coordinator reads it
// (Coord.Prog).
const (
	progNone     = 0
	progStopping = 1 // ProgressStopping or ProgressRemoving (the state tells which)
	progDeleted  = 2 // a removed changefeed whose keys are gone
)

// SpanRep is a span replication in a maintainer's span controller (A.5) with
// its operator (A.6); at most one operator per span.
type SpanRep struct {
	ID     uint8 // DispatcherID; 0 = unused slot
	Table  uint8
	State  uint8 // replAbsent | replScheduling | replReplicating
	Node   uint8 // identity it is bound to; none when absent
	Ckpt   uint8 // span checkpoint: from dispatcher statuses only (never lowered)
	Op     uint8 // mopNone | mopAdd | mopRemove | mopMove
	OpDest uint8 // add/move destination identity
	OpPh   uint8 // move phase
	OpAbs  bool  // remove: mark the span absent when done (restored O_Move remove)
	Part   uint8 // partWhole | partLeft | partRight (split.go)
}

// SnapDisp is a dispatcher in a bootstrap snapshot.
type SnapDisp struct {
	ID, Table, Status, Ckpt uint8
	Blk                     uint8 // the dispatcher's block stage (GetBlockEventStatus): blkWaiting or 0
	Part                    uint8 // the dispatcher's span: partWhole | partLeft | partRight
}

// Journal is one currentOperatorMap entry: an in-flight ScheduleDispatcherRequest (#3691).
type Journal struct {
	ID, Table, Action, OpType uint8
}

// Snapshot is what one dispatcher manager reported in its
// MaintainerBootstrapResponse: its dispatchers, the trigger's checkpoint (own
// node only) and its journal.
type Snapshot struct {
	TrigCkpt uint8 // none unless the trigger lives there
	TrigBlk  uint8 // the trigger's block stage (blkWaiting or 0)
	D        [MaxSnap]SnapDisp
	J        [MaxJrnl]Journal
}

// Maint is the maintainer of the changefeed on one node (A.4), including the
// manager's bookkeeping for it (A.3).
type Maint struct {
	Exists       bool
	RemovalOnly  bool // NewMaintainerForRemove: Working, never bootstraps
	Bootstrapped bool // initialized == BootstrapDone
	Removing     bool
	Removed      bool // closed: Stopped, deleted by the manager's cleanup
	// StopReported: the manager's heartbeat carried this closed
	// maintainer's Stopped status. HEAD reports a closed maintainer in the
	// tick that unregisters it (maintainer_manager.go:146-149 at
	// b813e76f9: sendHeartbeat, then cleanupRemovedMaintainers), so at
	// most once; the model's cleanup is an action of its own.
	StopReported bool
	Epoch        uint8
	StartTs      uint8 // checkpoint of the add request
	Committed    uint8 // maintainerCommittedCheckpointTs (monotonic, #4548)
	Reported     uint8 // checkpoint in MaintainerStatus
	Bootstrapper uint8 // bitmask of node slots asked to bootstrap
	Answered     uint8 // bitmask of slots that answered
	CloseAcked   uint8 // bitmask of slots that ACKed MaintainerCloseRequest
	Err          uint8 // runningErrors: source slot+1, 0 = none; drained by each status
	ErrFast      bool  // the error is a fast-fail error (spec.IsFastFailError)
	TriggerID    uint8
	WM           [MaxNodes]uint8 // checkpointTsByCapture; none = no entry
	Spans        [MaxSpans]SpanRep
	Boot         [MaxNodes]Snapshot // cached bootstrap responses until bootstrap succeeds
	Bar          BarEv              // the barrier's block event (barrier.go); T == 0: none
	TrigCk       uint8              // the table trigger's checkpoint (the DDL span's status) as barrier.go abstracts it (1: passed the barrier DDL, 0: below it), barrier configurations only
	// PendWM: a heartbeat's watermark not applied yet (0 = none); only with
	// the catalogue entry operator-done-before-watermark, where the statuses
	// of a HeartBeatRequest are applied first and its watermark after
	// (heartbeat.go).
	PendWM [MaxNodes]uint8
}

// DM is the dispatcher manager of the changefeed on one node (A.9).
type DM struct {
	Exists     bool
	Owner      uint8 // maintainer identity (meta.maintainerID)
	OwnerEpoch uint8
	Err        bool  // first error, re-sent every 5 s until the DM closes
	ErrFast    bool  // the first error is a fast-fail error
	NoneT      uint8 // trigger: commitTs of a CREATE TABLE reported NONE, awaiting ACK; 0 = none
	NoneTable  uint8
	AckedT     uint8 // trigger: last ACKed add-table DDL commitTs
	J          [MaxJrnl]Journal
	// ClosedEpoch is the orchestrator's tombstone while no manager exists
	// (closedMaintainerEpochs, dispatcher_orchestrator.go:48-51 and
	// recordClosedMaintainerEpochLocked :765-780 at b813e76f9): the
	// highest epoch of a close that closed the manager or found none. A
	// bootstrap request of that epoch or an older one does not create a
	// manager again (:197-208); creating one clears it (:264).
	ClosedEpoch uint8
}

// Disp is a dispatcher (A.10). Table 0 is the table trigger.
type Disp struct {
	ID      uint8 // 0 = unused slot
	Node    uint8 // slot
	Table   uint8
	St      uint8 // dInit | dWorking | dRemoving | dMergeClosed
	StartTs uint8
	Ckpt    uint8
	SinkErr bool  // the sink failed; the dispatcher no longer advances
	Blk     uint8 // block stage at the barrier DDL (barrier.go): 0, blkWaiting, blkPassed
	Part    uint8 // its span: the whole table, or a half after a split (split.go)
}

// Msg is a message in flight. Channels are FIFO per (Src, Dst) identity pair,
// different pairs reorder freely (B.1).
type Msg struct {
	Kind  uint8 // msgKind; 0 = unused slot
	Src   uint8 // identity (slot | inc<<2); coordSlot | generation<<2 for the coordinator (coordID)
	Dst   uint8
	Epoch uint8
	A     uint8
	B     uint8
	C     uint8
	D     uint8
	E     uint8
}

// Puller is the upstream kv client of seed 004 (tiflow #9595): one region
// and the current stream generation's region worker and receive loop.
type Puller struct {
	Down      bool  // every TiKV store is unavailable
	Worker    uint8 // gorRunning | gorExited
	Receiver  uint8
	Cancelled bool  // the stream's context was cancelled (Recv fails)
	Region    uint8 // regQueued | regPending | regActive (in the current generation)
	Started   bool  // a stream generation exists
	WorkerErr bool  // every region of the current worker failed: checkShouldExit says exit
}

// State is the whole system. Every field is a byte, so the struct has no
// padding and its memory is its canonical encoding.
type State struct {
	Inc     [MaxNodes]uint8      // incarnation of each slot: identity = slot | Inc<<2
	NodeSt  [MaxNodes]uint8      // nodeAlive | nodeDead | nodeDetected
	UpTs    uint8                // upstream resolved ts (TiKV)
	PullTs  uint8                // resolved ts the dispatchers see (== UpTs unless the puller is modeled)
	Stalled bool                 // upstream resolved ts stopped advancing
	TableT  [MaxTables + 1]uint8 // creation commitTs of each table; none = not created
	NextID  uint8                // next DispatcherID

	// Fault budgets used.
	Crashes, Drops, Dups, SinkErrs, Stalls, DDLs, Restarts uint8
	Moves                                                  uint8 // balance moves, counted only under Config.MaxMoves
	Splits                                                 uint8 // split operators started (Config.Splits)
	Merges                                                 uint8 // merge operators started (Config.Merges)
	// Budgets of lifecycle.go: fast-fail errors, client requests (pause,
	// resume, remove), coordinator failovers.
	FastFails, ClientOps, CoordFails uint8
	MaintMoves                       uint8 // maintainer moves (movemaintainer.go)

	Overflow bool // a send found the network full: the state is outside the bounds

	Coord Coord
	// MgrCoord: the coordinator identity each node's maintainer manager
	// takes Add and Remove requests from (Manager.coordinatorID, set by the
	// CoordinatorBootstrapRequest it answered last): coordSlot | generation<<2
	// (coordID). A request from any other coordinator is ignored
	// (maintainer_manager_maintainers.go:105-123 at b813e76f9).
	MgrCoord [MaxNodes]uint8
	Maint    [MaxNodes]Maint
	DMs      [MaxNodes]DM
	Disp     [MaxDisp]Disp
	Net      [MaxMsgs]Msg
	Pull     Puller

	// Ghost variables (history the properties need).
	Flushed [MaxTables + 1]uint8 // highest ts up to which every row of the table reached the sink with no gap
	// FlushedPart: Flushed of each half of a table (left, right); Flushed
	// is their minimum (split.go).
	FlushedPart [MaxTables + 1][2]uint8
	ErrDrop     ErrDropGhost
	Hand        HandoffGhost // handoff-keeps-checkpoint (movemaintainer.go)

	// The blocking DDL of Config.Barrier (barrier.go): its commitTs (0: not
	// committed yet), and ghosts: how often the sink wrote it (saturating at
	// 2), the node identity and table of its last writer, and whether it was
	// written again while that writer still ran.
	BlkT     uint8
	DropTab  uint8 // the table the barrier DDL dropped (drop, truncate); 0: none
	DDLWrit  uint8
	WrNode   uint8
	WrTable  uint8
	DDLTwice bool
}

// ErrDropGhost records an accepted status whose error never reached the
// backoff while the checkpoint was stuck (error-never-dropped).
type ErrDropGhost struct {
	Set      bool
	Node     uint8
	Epoch    uint8
	Reported uint8
	Stored   uint8
	Fast     bool // the error was a fast-fail error and the changefeed did not fail
}

// StateSize is the size in bytes of a state's canonical encoding.
const StateSize = int(unsafe.Sizeof(State{}))

// Bytes returns the canonical encoding of s: its memory. It aliases s.
func (s *State) Bytes() []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(s)), StateSize)
}

func ident(slot, inc uint8) uint8 { return slot | inc<<2 }

// coordID is the current coordinator's identity: coordSlot | generation<<2,
// the generation counting failovers. It stands for TiCDC's (capture ID,
// owner revision): each elected coordinator is a new sender, whose requests
// a manager takes only once it answered that coordinator's bootstrap. Two
// generations are two channels even when TiCDC re-elects the same capture
// (whose requests share one stream, FIFO): the model's extra order, an old
// coordinator's Add arriving after the new coordinator's bootstrap request,
// ends in "ignore invalid coordinator id" exactly as it does at HEAD when
// another capture won the election.
func (s *State) coordID() uint8 { return ident(coordSlot, s.CoordFails) }

// isCoord reports whether identity id names a coordinator (any generation).
func isCoord(id uint8) bool { return id != none && slotOf(id) == coordSlot }
func slotOf(id uint8) uint8 { return id & 3 }

// Ident returns the current identity of a node slot.
func (s *State) Ident(slot uint8) uint8 { return ident(slot, s.Inc[slot]) }

// live reports whether identity id is a node that runs now.
func (s *State) live(id uint8) bool {
	if id == none || slotOf(id) >= MaxNodes {
		return false
	}
	sl := slotOf(id)
	return s.NodeSt[sl] == nodeAlive && s.Inc[sl] == id>>2
}

// member reports whether identity id is in the node set as the others see
// it: running, or crashed but not yet seen leaving.
func (s *State) member(id uint8) bool {
	if id == none || slotOf(id) >= MaxNodes {
		return false
	}
	sl := slotOf(id)
	return s.NodeSt[sl] != nodeDetected && s.NodeSt[sl] != nodeUnused && s.Inc[sl] == id>>2
}

// schedulable reports whether a scheduler may pick slot as a target. The
// coordinator's and the maintainer's schedulers choose among NodeManager's
// alive nodes (at b813e76f9: coordinator/scheduler/basic.go:81,
// balance.go:98, drain.go:86; maintainer/scheduler/basic.go:141,
// maintainer/replica/split_span_checker.go:327), the captures whose etcd
// key exists (server/watcher/module_node_manager.go:108-118, 144-146): a
// crashed capture stays a target until its key expires (ADetect). The
// coordinator's liveness filter marks a silent node unknown only after 30 s
// (coordinator/drain/controller.go:29, 444), longer than the session TTL.
// Scheduling onto such a node reaches no new state: crash purges what was
// sent to it, so crash-then-schedule ends where schedule-then-crash does
// (TestPinnedStateCounts keeps its counts).
func (s *State) schedulable(slot uint8) bool { return s.member(s.Ident(slot)) }

// NodeName renders an identity as TiCDC would show a node: "n1" for the
// first incarnation of slot 1, "n1#2" after a restart.
func NodeName(id uint8) string { return nodeNames[id] }

var nodeNames, dispNames = func() (n, d [256]string) {
	for i := range n {
		n[i] = nodeName(uint8(i))
		d[i] = fmt.Sprintf("d%d", i)
	}
	return
}()

func nodeName(id uint8) string {
	if id == none {
		return ""
	}
	if id == coordSlot {
		return "coordinator"
	}
	if slotOf(id) == coordSlot {
		return fmt.Sprintf("coordinator#%d", id>>2+1)
	}
	if id>>2 == 0 {
		return fmt.Sprintf("n%d", id&3)
	}
	return fmt.Sprintf("n%d#%d", id&3, id>>2+1)
}

func dispName(id uint8) string { return dispNames[id] }

func tsString(t uint8) string {
	switch t {
	case none:
		return "-"
	case tsInf:
		return "inf"
	}
	return fmt.Sprint(t)
}

// String renders the state for debugging and test output (only live parts).
func (s *State) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "upstream ts=%d pulled=%d stalled=%v%s", s.UpTs, s.PullTs, s.Stalled, barrierString(s))
	for t := 1; t <= MaxTables; t++ {
		if s.TableT[t] != none {
			fmt.Fprintf(&b, " t%d@%d(flushed %d)", t, s.TableT[t], s.Flushed[t])
		}
	}
	b.WriteString("\n")
	for i := uint8(0); i < MaxNodes; i++ {
		st := [...]string{"alive", "dead", "left", "unused"}[s.NodeSt[i]]
		fmt.Fprintf(&b, "node %s %s\n", NodeName(s.Ident(i)), st)
	}
	c := &s.Coord
	fmt.Fprintf(&b, "%s: state=%s repl=%s node=%s epoch=%d checkpoint=%d bootDone=%v retrying=%v retries=%d restarting=%v retryWait=%v op=%s\n",
		NodeName(s.coordID()), cfStateName(c.State), replName(c.Repl), NodeName(c.Node), c.Epoch, c.Ckpt, c.BootDone, c.Retrying, c.Retries, c.Restarting, c.RetryWait, copName(c))
	if c.Booting {
		fmt.Fprintf(&b, "  bootstrapping: awaiting %03b, maintainers reported by %03b epochs=%v checkpoints=%v progress=%d\n", c.BootWait, c.BootHas, c.BootEp, c.BootCk, c.Prog)
	}
	for i := range s.Maint {
		m := &s.Maint[i]
		if !m.Exists {
			continue
		}
		fmt.Fprintf(&b, "maintainer@%s: epoch=%d removalOnly=%v bootstrapped=%v removing=%v removed=%v committed=%d reported=%d err=%d wm=%v\n",
			NodeName(s.Ident(uint8(i))), m.Epoch, m.RemovalOnly, m.Bootstrapped, m.Removing, m.Removed, m.Committed, m.Reported, m.Err, m.WM)
		for _, sp := range m.Spans {
			if sp.ID != 0 {
				fmt.Fprintf(&b, "  span %s %s %s node=%s ckpt=%d op=%d\n", dispName(sp.ID), keyName(sp.key()), replName(sp.State), NodeName(sp.Node), sp.Ckpt, sp.Op)
			}
		}
		if m.Bar.T != 0 {
			fmt.Fprintf(&b, "  barrier %s\n", m.Bar)
		}
	}
	for i := range s.DMs {
		d := &s.DMs[i]
		if d.Exists {
			fmt.Fprintf(&b, "dm@%s: owner=%s/%d err=%v none=%d acked=%d journal=%v\n", NodeName(s.Ident(uint8(i))), NodeName(d.Owner), d.OwnerEpoch, d.Err, d.NoneT, d.AckedT, d.J)
		}
	}
	for _, d := range s.Disp {
		if d.ID != 0 {
			fmt.Fprintf(&b, "dispatcher %s %s on %s st=%d start=%d ckpt=%d sinkErr=%v blk=%d\n", dispName(d.ID), keyName(spanKey(d.Table, d.Part)), NodeName(s.Ident(d.Node)), d.St, d.StartTs, d.Ckpt, d.SinkErr, d.Blk)
		}
	}
	for _, m := range s.Net {
		if m.Kind != 0 {
			fmt.Fprintf(&b, "msg %s\n", m.String())
		}
	}
	return b.String()
}

func cfStateName(st uint8) string {
	return [...]string{"normal", "warning", "failed", "stopped", "removed"}[st]
}

func replName(r uint8) string {
	return [...]string{"absent", "scheduling", "replicating"}[r]
}

func copName(c *Coord) string {
	switch c.Op {
	case copAdd:
		return fmt.Sprintf("add(%s,epoch %d)", NodeName(c.OpNode), c.OpEpoch)
	case copStop:
		return fmt.Sprintf("stop(%s,epoch %d)", NodeName(c.OpNode), c.OpEpoch)
	case copMove:
		return fmt.Sprintf("move(%s/epoch %d -> %s/epoch %d, %s)", NodeName(c.OpOrigin), c.OpOrigEpoch, NodeName(c.OpNode), c.OpEpoch,
			[...]string{"remove origin", "origin stopped", "add target"}[c.OpPh])
	}
	return "none"
}
