package model

import "fmt"

// Message kinds (heartbeatpb messages, B.2). Payload fields per kind:
const (
	mNone = iota
	// coordinator -> maintainer manager
	mAddMaintainer    // Epoch, A = checkpoint
	mRemoveMaintainer // Epoch, A = cascade, B = removed
	// maintainer manager -> coordinator
	mStatus // MaintainerStatus: Epoch, A = working, B = checkpoint, C = bootstrapDone, D = error source slot+1, E = the error is fast-fail
	// maintainer -> dispatcher orchestrator / manager
	mBootReq  // MaintainerBootstrapRequest: Epoch, A = startTs, B = trigger ID (own node only)
	mSchedule // ScheduleDispatcherRequest: Epoch, A = action, B = ID, C = table, D = startTs, E = operator type
	mCloseReq // MaintainerCloseRequest: Epoch
	mAck      // HeartBeatResponse ACK of a NONE block status: Epoch, A = commitTs
	// dispatcher manager -> maintainer
	mBootResp   // MaintainerBootstrapResponse: Epoch, A (bootRespErr: Err set); the snapshot is cached in the maintainer when answered
	mCloseResp  // MaintainerCloseResponse: Epoch, A = success
	mWatermark  // HeartBeatRequest watermark: A = checkpoint (latest value per channel), B = the trigger's checkpoint (barrier configurations; 0: none)
	mDispStatus // HeartBeatRequest with a TableSpanStatus: A = ID, B = component status, C = checkpoint, D = watermark
	mDMErr      // HeartBeatRequest{Err}: B = fast-fail
	mBlockNone  // BlockStatusRequest, Stage NONE, NeedAddedTables: A = table, B = commitTs
	// barrier (barrier.go)
	mBlockStatus // BlockStatusRequest of a blocking DDL: A = dispatcher ID, B = stage (WAITING, DONE), C = commitTs, D = table
	mBlockAction // HeartBeatResponse with a DispatcherStatus action: Epoch, A = Write or Pass, B = dispatcher ID, C = commitTs
	// merge (merge.go)
	mMerge // MergeDispatcherRequest: Epoch, A = merged dispatcher ID, B and C = the source dispatcher IDs (left, right), D = table
	// coordinator bootstrap after a failover (lifecycle.go)
	mCoordBootReq  // CoordinatorBootstrapRequest: coordinator -> maintainer manager
	mCoordBootResp // CoordinatorBootstrapResponse: A = 1 if the node runs a maintainer of the changefeed, Epoch and B = its epoch and checkpoint
	msgKinds
)

var msgNames = [...]string{
	mNone:             "none",
	mAddMaintainer:    "AddMaintainerRequest",
	mRemoveMaintainer: "RemoveMaintainerRequest",
	mStatus:           "MaintainerStatus",
	mBootReq:          "MaintainerBootstrapRequest",
	mSchedule:         "ScheduleDispatcherRequest",
	mCloseReq:         "MaintainerCloseRequest",
	mAck:              "HeartBeatResponse(ACK)",
	mBootResp:         "MaintainerBootstrapResponse",
	mCloseResp:        "MaintainerCloseResponse",
	mWatermark:        "HeartBeatRequest(watermark)",
	mDispStatus:       "HeartBeatRequest(status)",
	mDMErr:            "HeartBeatRequest(err)",
	mBlockNone:        "BlockStatusRequest(NONE)",
	mBlockStatus:      "BlockStatusRequest",
	mBlockAction:      "HeartBeatResponse(action)",
	mMerge:            "MergeDispatcherRequest",
	mCoordBootReq:     "CoordinatorBootstrapRequest",
	mCoordBootResp:    "CoordinatorBootstrapResponse",
}

// MessageKindNames lists the model's message kinds by name, in kind order
// (without the zero kind). impl/core's registry names, per TiCDC message
// type, the kinds it carries; TestRegistryMatchesModelKinds ties the two.
func MessageKindNames() []string { return append([]string(nil), msgNames[1:]...) }

func msgKindByName(s string) (uint8, bool) {
	for i, n := range msgNames {
		if n == s && i != 0 {
			return uint8(i), true
		}
	}
	return 0, false
}

func statusName(st uint8) string {
	switch st {
	case dInit:
		return "Initializing"
	case dWorking:
		return "Working"
	case dRemoving:
		return "Removing"
	}
	return "Stopped"
}

// String renders a message with its protocol fields.
func (m Msg) String() string {
	h := fmt.Sprintf("%s %s->%s", msgNames[m.Kind], NodeName(m.Src), NodeName(m.Dst))
	switch m.Kind {
	case mAddMaintainer:
		return fmt.Sprintf("%s epoch=%d checkpoint=%d", h, m.Epoch, m.A)
	case mRemoveMaintainer:
		return fmt.Sprintf("%s epoch=%d cascade=%v removed=%v", h, m.Epoch, m.A == 1, m.B == 1)
	case mStatus:
		st := "Stopped"
		if m.A == 1 {
			st = "Working"
		}
		s := fmt.Sprintf("%s epoch=%d state=%s checkpoint=%d bootstrapDone=%v", h, m.Epoch, st, m.B, m.C == 1)
		if m.D != 0 && m.E == 1 {
			s += fmt.Sprintf(" err=fast-fail error from n%d", m.D-1)
		} else if m.D != 0 {
			s += fmt.Sprintf(" err=sink error from n%d", m.D-1)
		}
		return s
	case mBootReq:
		if m.B != 0 {
			return fmt.Sprintf("%s epoch=%d startTs=%d trigger=%s", h, m.Epoch, m.A, dispName(m.B))
		}
		return fmt.Sprintf("%s epoch=%d startTs=%d", h, m.Epoch, m.A)
	case mSchedule:
		act := "Create"
		if m.A == schedRemove {
			act = "Remove"
		}
		ot := [...]string{"", "O_Add", "O_Remove", "O_Move", "O_Split"}[m.E]
		return fmt.Sprintf("%s epoch=%d %s %s %s startTs=%d %s", h, m.Epoch, act, dispName(m.B), keyName(m.C), m.D, ot)
	case mBootResp:
		if m.A == bootRespErr {
			return fmt.Sprintf("%s epoch=%d err=%s", h, m.Epoch, bootstrapTriggerErrText)
		}
		return fmt.Sprintf("%s epoch=%d", h, m.Epoch)
	case mCloseReq:
		return fmt.Sprintf("%s epoch=%d", h, m.Epoch)
	case mAck:
		return fmt.Sprintf("%s epoch=%d commitTs=%d", h, m.Epoch, m.A)
	case mCloseResp:
		return fmt.Sprintf("%s epoch=%d success=%v", h, m.Epoch, m.A == 1)
	case mWatermark:
		return fmt.Sprintf("%s checkpoint=%s", h, tsString(m.A))
	case mDispStatus:
		return fmt.Sprintf("%s %s %s checkpoint=%d watermark=%s", h, dispName(m.A), statusName(m.B), m.C, tsString(m.D))
	case mDMErr:
		if m.B == 1 {
			return h + " err=fast-fail error"
		}
		return h + " err=sink error"
	case mBlockNone:
		return fmt.Sprintf("%s t%d commitTs=%d", h, m.A, m.B)
	case mBlockStatus:
		return fmt.Sprintf("%s %s t%d %s commitTs=%d", h, dispName(m.A), m.D, stageName(m.B), m.C)
	case mBlockAction:
		act := "Pass"
		if m.A == actWrite {
			act = "Write"
		}
		return fmt.Sprintf("%s epoch=%d %s %s commitTs=%d", h, m.Epoch, act, dispName(m.B), m.C)
	case mMerge:
		return fmt.Sprintf("%s epoch=%d merged=%s sources=[%s %s] t%d", h, m.Epoch, dispName(m.A), dispName(m.B), dispName(m.C), m.D)
	case mCoordBootResp:
		if m.A == 1 {
			return fmt.Sprintf("%s maintainer epoch=%d checkpoint=%d", h, m.Epoch, m.B)
		}
		return h + " no maintainer"
	}
	return h
}

// The network is TiCDC HEAD's message center (pkg/messaging at b813e76f9;
// spec/SPEC.md, "Delivery semantics"), on the model's endpoints: a message
// travels the command stream of its (sender, receiver) pair, FIFO, into one
// component queue of the receiver (recvQueue), FIFO; a few kinds first wait
// in one of the sender's own queues (sendQueue: the heartbeat collector's
// two sending goroutines). So a message must be handled after an earlier
// one of its channel (same Src, Dst and receiving queue) when that one
// entered the stream first for sure: it was sent directly, or both wait in
// the same sending queue. Channels reorder freely. Any message may be lost
// (Drops); the transport never duplicates one, so Dups > 0 is a fault
// stronger than TiCDC's.

// Receiving queues (the topic handler's push target).
const (
	rqManager       = iota + 1 // maintainer Manager.msgCh: Add, Remove, CoordinatorBootstrapRequest
	rqCoordinator              // coordinator.eventCh: MaintainerHeartbeat, CoordinatorBootstrapResponse
	rqMaintainer               // the changefeed's Maintainer.eventCh: DM responses and reports
	rqOrchestrator             // DispatcherOrchestrator pendingMessageQueue: bootstrap, close
	rqSchedule                 // heartbeat collector's schedule-dispatcher dynstream
	rqHeartbeatResp            // heartbeat collector's heartbeat-response dynstream
)

// Sending queues before the stream (0: the component calls SendCommand).
const (
	sqDirect      = iota
	sqHeartbeat   // HeartBeatCollector.heartBeatReqQueue
	sqBlockStatus // HeartBeatCollector.blockStatusReqQueue
)

// recvQueue is the receiving queue of a message kind.
func recvQueue(kind uint8) uint8 {
	switch kind {
	case mAddMaintainer, mRemoveMaintainer, mCoordBootReq:
		return rqManager
	case mStatus, mCoordBootResp:
		return rqCoordinator
	case mBootReq, mCloseReq:
		return rqOrchestrator
	case mSchedule, mMerge:
		// An abstraction: TiCDC's MergeDispatcherRequest has a dynstream
		// of its own (heartbeat_collector.go), so it may overtake an
		// earlier re-sent Create of a source, which then recreates the
		// merged-away source after the merge (at-most-one-dispatcher-per-
		// span; README, candidate TiCDC issues). The model keeps it FIFO
		// behind the schedule requests of its channel.
		return rqSchedule
	case mAck, mBlockAction:
		return rqHeartbeatResp
	}
	return rqMaintainer
}

// sendQueue is the sending queue of a message kind.
func sendQueue(kind uint8) uint8 {
	switch kind {
	case mWatermark, mDispStatus, mDMErr:
		return sqHeartbeat
	case mBlockNone, mBlockStatus:
		return sqBlockStatus
	}
	return sqDirect
}

// chanLess orders channels: (Src, Dst, receiving queue).
func chanLess(a, b *Msg) bool {
	if a.Src != b.Src {
		return a.Src < b.Src
	}
	if a.Dst != b.Dst {
		return a.Dst < b.Dst
	}
	return recvQueue(a.Kind) < recvQueue(b.Kind)
}

// sameChan: same sender, receiver and receiving queue.
func sameChan(a, b *Msg) bool {
	return a.Src == b.Src && a.Dst == b.Dst && recvQueue(a.Kind) == recvQueue(b.Kind)
}

// mustPrecede reports whether earlier, sent before later on the same
// channel, is handled before it: it entered the stream first for sure.
func mustPrecede(earlier, later *Msg) bool {
	q := sendQueue(earlier.Kind)
	return q == sqDirect || q == sendQueue(later.Kind)
}

// nmsgs returns the number of messages in flight; they fill Net from the
// front, grouped by channel in chanLess order, in send order within a
// channel.
func (s *State) nmsgs() int {
	for i := range s.Net {
		if s.Net[i].Kind == 0 {
			return i
		}
	}
	return MaxMsgs
}

// send queues m at the tail of its channel. A message to a node that is not
// running is dropped (the message center has no target for it); a message
// identical to one already queued on the channel is not queued again (re-sends
// are idempotent: the bounded network holds one copy). A full network marks
// the state as out of bounds.
func (s *State) send(m Msg) {
	if isCoord(m.Dst) {
		if m.Dst != s.coordID() {
			return // a resigned coordinator: no handler any more
		}
	} else if !s.live(m.Dst) {
		return
	}
	n := s.nmsgs()
	pos := n
	for i := 0; i < n; i++ {
		q := &s.Net[i]
		if sameChan(q, &m) && *q == m {
			return
		}
		if chanLess(&m, q) {
			pos = i
			break
		}
	}
	// identical copies later in the same channel were checked above only up to pos
	for i := pos; i < n && sameChan(&s.Net[i], &m); i++ {
		if s.Net[i] == m {
			return
		}
	}
	if n == MaxMsgs {
		s.Overflow = true
		return
	}
	copy(s.Net[pos+1:n+1], s.Net[pos:n])
	s.Net[pos] = m
}

// sendLatest replaces any queued message of the same kind on m's channel by
// m: the receiver keeps only the newest watermark.
func (s *State) sendLatest(m Msg) {
	n := s.nmsgs()
	for i := 0; i < n; i++ {
		if sameChan(&s.Net[i], &m) && s.Net[i].Kind == m.Kind {
			if s.Net[i] == m {
				return
			}
			s.removeMsg(i)
			break
		}
	}
	s.send(m)
}

func (s *State) removeMsg(i int) {
	n := s.nmsgs()
	copy(s.Net[i:n-1], s.Net[i+1:n])
	s.Net[n-1] = Msg{}
}

// isHead reports whether message i can be handled next: no earlier message
// of its channel must precede it (mustPrecede).
func (s *State) isHead(i int) bool {
	if s.Net[i].Kind == 0 {
		return false
	}
	for j := i - 1; j >= 0 && sameChan(&s.Net[j], &s.Net[i]); j-- {
		if mustPrecede(&s.Net[j], &s.Net[i]) {
			return false
		}
	}
	return true
}

// findHead returns the index of a deliverable message equal to m, or -1.
func (s *State) findHead(m Msg) int {
	n := s.nmsgs()
	for i := 0; i < n; i++ {
		if s.Net[i] == m && s.isHead(i) {
			return i
		}
	}
	return -1
}

// purgeTo drops every message addressed to a node slot (it crashed: its
// receive queues are gone).
func (s *State) purgeTo(slot uint8) {
	for i := 0; i < s.nmsgs(); {
		if s.Net[i].Dst != coordSlot && slotOf(s.Net[i].Dst) == slot {
			s.removeMsg(i)
			continue
		}
		i++
	}
}

// sendStatus queues a MaintainerStatus. An error-free status still queued
// at the channel's tail is overwritten: the coordinator would process it and
// then the newer one, which supersedes it (checkpoint, state, bootstrapDone).
// A status carrying an error is never overwritten.
func (s *State) sendStatus(m Msg) {
	n := s.nmsgs()
	for i := n - 1; i >= 0; i-- {
		q := &s.Net[i]
		if !sameChan(q, &m) {
			continue
		}
		if q.Kind == mStatus && q.D == 0 && (i == n-1 || !sameChan(&s.Net[i+1], &m)) {
			*q = m
			return
		}
		break
	}
	s.send(m)
}
