package model

import (
	"encoding/json"
	"fmt"

	"cdcspec/spec"
)

// ActKind names an action. Faults are actions; so are timers (ticks) and
// message deliveries.
type ActKind uint8

// Actions.
const (
	aNone ActKind = iota
	// environment and faults
	AUpstreamAdvance // upstream resolved ts advances by one
	ACreateTable     // a DDL creates a table at the next ts
	AUpstreamStall   // fault stall-upstream: every TiKV store fails
	AUpstreamResume  // fault resume-upstream: TiKV recovers
	ACrash           // fault expire-session: capture suicide of Node (the others see it at ADetect)
	ADetect          // the others see Node leave (NodeManager)
	ARestart         // fault restart-capture: Node restarts with a fresh identity
	ASinkError       // fault sink-error: dispatcher Arg's sink fails with a retryable error
	ADeliver         // Msg reaches its destination
	ADrop            // fault drop-messages: Msg is lost
	ADuplicate       // fault duplicate-messages: Msg is delivered and stays in flight
	// coordinator
	ACoordSchedule   // basic scheduler: add maintainer operator to Node
	ACoordTick       // operator Schedule(): re-send its request
	ACoordRetryTimer // backoff nextRetryTime passes
	// maintainer (manager) on Node
	AMaintTick     // checkpoint calculation, MaintainerHeartbeat, re-sends
	AMaintCleanup  // manager tick: delete a removed maintainer
	AMaintSchedule // span Arg (table) absent: add dispatcher operator to node Arg2
	AMaintMove     // span Arg (table) replicating: move dispatcher operator to node Arg2
	// dispatcher manager on Node and dispatchers
	ADMTick     // heartbeat: watermark, first error, NONE block status
	ADMComplete // complete statuses (every 10 s): the status of every dispatcher
	ADispClosed // dispatcher Arg finished closing: Stopped reported once, deleted
	// upstream kv client (seed 004)
	APullResolved     // region worker forwards the region's resolved ts
	APullStreamError  // the store stream's Recv fails (stores down)
	APullRegionError  // the active region fails (stores down): onRegionFail
	APullWorkerExit   // region worker exits (no active region, or cancelled)
	APullRequest      // requestRegionToStore: the queued region is sent on a stream
	APullFirstResp    // the region's first reply: pending -> worker's active set
	APullReceiverExit // receiveFromStream's receive loop exits
	// barrier (barrier.go)
	ABlockDDL // the upstream commits the blocking DDL (or syncpoint) of Config.Barrier at the next ts
	// lifecycle (lifecycle.go) and heartbeat (heartbeat.go)
	AFastFail      // fault fast-fail-error: dispatcher Arg fails with an unretryable error
	APause         // client: pause the changefeed
	AResume        // client: resume the changefeed; Arg = overwritten checkpoint, 0 = keep
	ARemove        // client: remove the changefeed
	ACoordFailover // the coordinator's node resigns; a new coordinator bootstraps (budgeted, not a fault of the vocabulary: kill-owner-capture kills slot 0's components too)
	AMaintApplyWM  // maintainer on Node applies the pending watermark of slot Arg (operator-done-before-watermark only)
	// split (split.go)
	ASplit // maintainer on Node starts a split operator on span key Arg; Arg2 = split mode | right half's target slot<<2
	// maintainer move (movemaintainer.go)
	ACoordMove // the coordinator moves the maintainer to Node (balance, drain; budgeted by Config.MaintMoves)
	// merge (merge.go)
	AMerge           // maintainer on Node starts a merge operator on the two halves of table Arg
	AMergePostFinish // maintainer on Node runs the finished merge's PostFinish for table Arg (merge-occupy-finishes-early only)
	// operator controller (maintainer.go)
	AOpPostFinish // maintainer on Node's operator controller post-finishes the finished remove operator of span key Arg (its next poll)
	actKinds
)

// actNames: a fault action is named by its fault (actFaults), a create-table
// by its domain action; the rest are the model's own.
var actNames = [...]string{
	aNone:             "none",
	AUpstreamAdvance:  "upstream-advance",
	ACreateTable:      string(spec.ActionCreateTable),
	AUpstreamStall:    string(actFaults[AUpstreamStall]),
	AUpstreamResume:   string(actFaults[AUpstreamResume]),
	ACrash:            string(actFaults[ACrash]),
	ADetect:           "detect-node-left",
	ARestart:          string(actFaults[ARestart]),
	ASinkError:        string(actFaults[ASinkError]),
	ADeliver:          "deliver",
	ADrop:             string(actFaults[ADrop]),
	ADuplicate:        string(actFaults[ADuplicate]),
	ACoordSchedule:    "coordinator-schedule",
	ACoordTick:        "coordinator-tick",
	ACoordRetryTimer:  "coordinator-retry-timer",
	AMaintTick:        "maintainer-tick",
	AMaintCleanup:     "manager-cleanup",
	AMaintSchedule:    "maintainer-schedule",
	AMaintMove:        "maintainer-move",
	ADMTick:           "dm-tick",
	ADMComplete:       "dm-complete-status",
	ADispClosed:       "dispatcher-closed",
	APullResolved:     "puller-resolved",
	APullStreamError:  "puller-stream-error",
	APullRegionError:  "puller-region-error",
	APullWorkerExit:   "puller-worker-exit",
	APullRequest:      "puller-request-region",
	APullFirstResp:    "puller-first-response",
	APullReceiverExit: "puller-receiver-exit",
	ABlockDDL:         "blocking-ddl",
	AFastFail:         string(actFaults[AFastFail]),
	APause:            string(spec.ActionPauseChangefeed),
	AResume:           string(spec.ActionResumeChangefeed),
	ARemove:           string(spec.ActionRemoveChangefeed),
	ACoordFailover:    "coordinator-failover",
	AMaintApplyWM:     "maintainer-apply-watermark",
	ASplit:            "maintainer-split",
	ACoordMove:        string(spec.ActionMoveMaintainer),
	AMerge:            "maintainer-merge",
	AMergePostFinish:  "maintainer-merge-post-finish",
	AOpPostFinish:     "maintainer-operator-post-finish",
}

// actFaults names the model's fault actions in the fault vocabulary.
// ACrash is TiCDC's capture suicide on session expiry; the others see the
// node leave only at ADetect, a separate action, so expire-session (the
// others see it at once) is ACrash then ADetect, and kill-capture (the
// others see it after the session TTL) is ACrash, other actions, ADetect.
var actFaults = map[ActKind]spec.Fault{
	AUpstreamStall:  spec.FaultStallUpstream,
	AUpstreamResume: spec.FaultResumeUpstream,
	ACrash:          spec.FaultExpireSession,
	ARestart:        spec.FaultRestartCapture,
	ASinkError:      spec.FaultSinkError,
	AFastFail:       spec.FaultFastFailError,
	ADrop:           spec.FaultDropMessages,
	ADuplicate:      spec.FaultDuplicateMessages,
}

// Fault is the fault of the vocabulary a fault action injects.
func (k ActKind) Fault() (spec.Fault, bool) {
	f, ok := actFaults[k]
	return f, ok
}

// UnsupportedFaults are the faults of the vocabulary that are no model
// action, with the reason (how the model covers them, if it does); each
// other fault is the name of one action (ActKind.Fault).
var UnsupportedFaults = map[spec.Fault]string{
	spec.FaultKillCapture: "expire-session stands for it: the node stops at once either way, and detect-node-left comes " +
		"whenever the others notice; the model does not tell a kill from a suicide",
	spec.FaultKillMaintainerCapture: "expire-session of the maintainer's slot is one of the interleavings the checker explores",
	spec.FaultKillOwnerCapture: "slot 0 hosts the coordinator and never dies; coordinator-failover (Config.CoordFailovers) stands for it: " +
		"the coordinator's memory is lost and a new one bootstraps, while slot 0's maintainer and dispatchers keep running (an owner resign)",
	spec.FaultKillMoveDestination:       "compound: maintainer-move then expire-session of the destination is one of the explored interleavings",
	spec.FaultKillMaintainerInflight:    "compound: the checker explores expire-session of the maintainer's slot while its operators are in flight",
	spec.FaultKillMaintainerStaleCreate: "compound: the checker explores a Create in flight while its maintainer's slot expires",
	spec.FaultKillCaptureDuringDDL:      "compound: the checker explores expire-session of every slot while a blocking DDL's barrier is open",
	spec.FaultMoveWriterDuringDDL:       "compound: the checker explores every order of the barrier's actions, moves and delivery (its configuration barrier-writer-move)",
	spec.FaultDropAddTableStatus:        "compound: the checker explores every order of the table trigger's NONE and WAITING statuses (its configuration barrier-create-syncpoint)",
	spec.FaultFreezeCapture:             "a frozen capture is one whose actions are not scheduled; the checker explores every such schedule",
	spec.FaultExpireFrozenSession:       "expire-session of a node whose actions were not scheduled is one of the explored interleavings",
	spec.FaultAddCapture:                "node slots are fixed at Init; restart-capture reuses a dead slot",
	spec.FaultDelayMessages:             "a message stays in flight while any other action runs: every delay is an interleaving the checker explores",
	spec.FaultRandomMessageFaults:       "drop-messages and duplicate-messages on every message, within their budgets (Config.Drops, Config.Dups)",
	spec.FaultPartition:                 "a partition is drop-messages on the cut channels",
	spec.FaultHealNetwork:               "the liveness check stops every fault, then runs a fair schedule",
	spec.FaultBlockCreateDispatcher:     "a Create is handled at its delivery, which the checker delays arbitrarily",
	spec.FaultSlowCloseDispatcher:       "dispatcher-closed is an action the checker delays arbitrarily",
	spec.FaultHeal:                      "the liveness check stops every fault (faults-healed), then runs a fair schedule",
	spec.FaultStore: "the upstream-outage puller has no stores: stall-upstream breaks every stream at once, which covers one " +
		"store's streams breaking",
}

func (k ActKind) String() string {
	if int(k) < len(actNames) {
		return actNames[k]
	}
	return fmt.Sprintf("action(%d)", k)
}

// IsFault reports whether the action spends a fault budget.
func (k ActKind) IsFault() bool {
	switch k {
	case AUpstreamStall, ACrash, ASinkError, ADrop, ADuplicate, ARestart, AFastFail:
		return true
	}
	return false
}

// Action is one step of some actor. Node is a node slot; Arg and Arg2 depend
// on Kind (see the constants); Msg identifies a message by value.
type Action struct {
	Kind ActKind
	Node uint8
	Arg  uint8
	Arg2 uint8
	Msg  Msg
}

// Actor names who takes the action, for counterexample stories.
func (a Action) Actor(s *State) string {
	switch a.Kind {
	case AUpstreamAdvance, ACreateTable, AUpstreamStall, AUpstreamResume, ABlockDDL:
		return "upstream"
	case ACrash, ARestart:
		return "node " + NodeName(s.Ident(a.Node))
	case ADetect:
		return "cluster"
	case ASinkError, ADispClosed, AFastFail:
		for _, d := range s.Disp {
			if d.ID == a.Arg && d.ID != 0 {
				return fmt.Sprintf("dispatcher %s@%s", dispName(d.ID), NodeName(s.Ident(d.Node)))
			}
		}
		return "dispatcher " + dispName(a.Arg)
	case ADeliver, ADrop, ADuplicate:
		if a.Kind != ADeliver {
			return "network"
		}
		return receiverName(a.Msg)
	case ACoordSchedule, ACoordTick, ACoordRetryTimer, ACoordFailover, ACoordMove:
		return "coordinator"
	case APause, AResume, ARemove:
		return "client"
	case AMaintTick, AMaintSchedule, AMaintMove, AMaintApplyWM, ASplit, AMerge, AMergePostFinish, AOpPostFinish:
		return "maintainer@" + NodeName(s.Ident(a.Node))
	case AMaintCleanup:
		return "maintainer-manager@" + NodeName(s.Ident(a.Node))
	case ADMTick, ADMComplete:
		return "dispatcher-manager@" + NodeName(s.Ident(a.Node))
	}
	return "upstream-puller"
}

func receiverName(m Msg) string {
	switch m.Kind {
	case mStatus, mCoordBootResp:
		return "coordinator"
	case mAddMaintainer, mRemoveMaintainer, mCoordBootReq:
		return "maintainer-manager@" + NodeName(m.Dst)
	case mBootReq, mSchedule, mCloseReq, mAck, mBlockAction, mMerge:
		return "dispatcher-manager@" + NodeName(m.Dst)
	}
	return "maintainer@" + NodeName(m.Dst)
}

// Describe renders the action in words.
func (a Action) Describe(s *State) string {
	switch a.Kind {
	case ADeliver:
		if (a.Msg.Kind == mAddMaintainer || a.Msg.Kind == mRemoveMaintainer) && !managerFromCoordinator(s, a.Msg) {
			return "receives " + a.Msg.String() + ` and ignores it: "ignore invalid coordinator id" (its coordinator is ` + NodeName(s.MgrCoord[slotOf(a.Msg.Dst)]) + ")"
		}
		return "receives " + a.Msg.String()
	case ADrop:
		return "loses " + a.Msg.String()
	case ADuplicate:
		return "delivers twice " + a.Msg.String()
	case ACrash:
		return "loses its etcd session and commits suicide"
	case ADetect:
		return "sees node " + NodeName(s.Ident(a.Node)) + " leave"
	case ARestart:
		return fmt.Sprintf("restarts as %s", NodeName(ident(a.Node, s.Inc[a.Node]+1)))
	case ASinkError:
		return "sink fails: ErrKafkaAsyncSendMessage (retryable)"
	case AFastFail:
		return "fails with an unretryable error: ErrGCTTLExceeded (fast-fail)"
	case APause:
		return "pauses the changefeed"
	case ARemove:
		return "removes the changefeed"
	case AResume:
		if a.Arg != 0 {
			return fmt.Sprintf("resumes the changefeed with its checkpoint overwritten to %d", a.Arg)
		}
		return "resumes the changefeed"
	case ACoordFailover:
		return "resigns; " + NodeName(ident(coordSlot, s.CoordFails+1)) + " is elected and sends CoordinatorBootstrapRequest to every node"
	case AMaintApplyWM:
		return fmt.Sprintf("applies the watermark of n%d's heartbeat", a.Arg)
	case ACoordSchedule:
		return "adds maintainer operator to " + NodeName(s.Ident(a.Node))
	case ACoordMove:
		return "moves the maintainer from " + NodeName(s.Coord.Node) + " to " + NodeName(s.Ident(a.Node))
	case AMaintSchedule:
		return fmt.Sprintf("adds dispatcher operator for %s to %s", keyName(a.Arg), NodeName(s.Ident(a.Arg2)))
	case AMaintMove:
		return fmt.Sprintf("moves %s to %s", keyName(a.Arg), NodeName(s.Ident(a.Arg2)))
	case ASplit:
		return fmt.Sprintf("splits %s at key %q (%s)", keyName(a.Arg), splitKey, splitModeName(a.Arg2))
	case AMerge:
		return fmt.Sprintf("merges %s and %s into %s (occupy operators on both, MergeDispatcherRequest)", keyName(spanKey(a.Arg, partLeft)), keyName(spanKey(a.Arg, partRight)), keyName(a.Arg))
	case AMergePostFinish:
		return fmt.Sprintf("runs the merge's PostFinish for %s: removes the source spans, marks the merged span replicating", keyName(a.Arg))
	case AOpPostFinish:
		return fmt.Sprintf("post-finishes the finished remove operator of %s (operator controller poll)", keyName(a.Arg))
	case ADispClosed:
		return "finishes closing"
	case APullResolved:
		return "region worker forwards the region's resolved ts"
	case APullStreamError:
		return "store stream's Recv fails (stores down)"
	case APullRegionError:
		return "region fails (stores down): onRegionFail re-queues it; the worker has no region left"
	case APullWorkerExit:
		if s.Pull.Receiver == gorExited {
			return "region worker exits; the receive loop has exited too"
		}
		return "region worker exits and cancels the stream; the receive loop still runs"
	case APullRequest:
		if s.Pull.Receiver == gorRunning {
			return "requests the region on the stream whose receive loop still runs"
		}
		return "requests the region on a new stream (new worker and receive loop)"
	case APullFirstResp:
		if s.Pull.Worker == gorExited {
			return "first reply: the region joins the active set of the worker, which has exited"
		}
		return "first reply: the region joins the worker's active set"
	case APullReceiverExit:
		return "receive loop exits (stream cancelled); pending regions are re-queued"
	}
	return a.Kind.String()
}

func (a Action) String() string {
	switch a.Kind {
	case ADeliver, ADrop, ADuplicate:
		return a.Kind.String() + " " + a.Msg.String()
	case ACrash, ADetect, ARestart, ACoordSchedule, AMaintTick, AMaintCleanup, ADMTick, ADMComplete, ACoordMove:
		return fmt.Sprintf("%s n%d", a.Kind, a.Node)
	case ASinkError, ADispClosed, AFastFail:
		return fmt.Sprintf("%s %s", a.Kind, dispName(a.Arg))
	case AResume:
		if a.Arg != 0 {
			return fmt.Sprintf("%s checkpoint=%d", a.Kind, a.Arg)
		}
	case AMaintApplyWM:
		return fmt.Sprintf("%s n%d from n%d", a.Kind, a.Node, a.Arg)
	case AMaintSchedule, AMaintMove:
		return fmt.Sprintf("%s n%d %s -> n%d", a.Kind, a.Node, keyName(a.Arg), a.Arg2)
	case ASplit:
		return fmt.Sprintf("%s n%d %s mode=%d target=n%d", a.Kind, a.Node, keyName(a.Arg), a.Arg2&3, a.Arg2>>2)
	case AMerge, AMergePostFinish:
		return fmt.Sprintf("%s n%d t%d", a.Kind, a.Node, a.Arg)
	case AOpPostFinish:
		return fmt.Sprintf("%s n%d %s", a.Kind, a.Node, keyName(a.Arg))
	}
	return a.Kind.String()
}

// actionJSON is the exported form of an action: stable names, so a later
// tool can replay a counterexample on the implementation.
type actionJSON struct {
	Kind string   `json:"kind"`
	Node *uint8   `json:"node,omitempty"`
	Arg  *uint8   `json:"arg,omitempty"`
	Arg2 *uint8   `json:"arg2,omitempty"`
	Msg  *msgJSON `json:"msg,omitempty"`
}

type msgJSON struct {
	Kind  string `json:"kind"`
	Src   uint8  `json:"src"`
	Dst   uint8  `json:"dst"`
	Epoch uint8  `json:"epoch"`
	A     uint8  `json:"a"`
	B     uint8  `json:"b"`
	C     uint8  `json:"c"`
	D     uint8  `json:"d"`
	E     uint8  `json:"e"`
	Text  string `json:"text,omitempty"`
}

// MarshalJSON exports the action with named kinds.
func (a Action) MarshalJSON() ([]byte, error) {
	j := actionJSON{Kind: a.Kind.String()}
	n, x, y := a.Node, a.Arg, a.Arg2
	j.Node, j.Arg, j.Arg2 = &n, &x, &y
	if a.Kind == ADeliver || a.Kind == ADrop || a.Kind == ADuplicate {
		m := a.Msg
		j.Msg = &msgJSON{Kind: msgNames[m.Kind], Src: m.Src, Dst: m.Dst, Epoch: m.Epoch, A: m.A, B: m.B, C: m.C, D: m.D, E: m.E, Text: m.String()}
	}
	return json.Marshal(j)
}

// UnmarshalJSON is the inverse of MarshalJSON.
func (a *Action) UnmarshalJSON(b []byte) error {
	var j actionJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	k := aNone
	for i, n := range actNames {
		if n == j.Kind && i != 0 {
			k = ActKind(i)
		}
	}
	if k == aNone {
		return fmt.Errorf("unknown action kind %q", j.Kind)
	}
	*a = Action{Kind: k}
	if j.Node != nil {
		a.Node = *j.Node
	}
	if j.Arg != nil {
		a.Arg = *j.Arg
	}
	if j.Arg2 != nil {
		a.Arg2 = *j.Arg2
	}
	if j.Msg != nil {
		mk, ok := msgKindByName(j.Msg.Kind)
		if !ok {
			return fmt.Errorf("action %s: unknown message kind %q", j.Kind, j.Msg.Kind)
		}
		a.Msg = Msg{Kind: mk, Src: j.Msg.Src, Dst: j.Msg.Dst, Epoch: j.Msg.Epoch, A: j.Msg.A, B: j.Msg.B, C: j.Msg.C, D: j.Msg.D, E: j.Msg.E}
	}
	return nil
}
