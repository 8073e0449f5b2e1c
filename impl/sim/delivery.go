package sim

import (
	"fmt"

	"cdcspec/impl/core"
	"cdcspec/impl/dispatcher"
	"cdcspec/impl/maintainer"
	"cdcspec/spec"
)

// The simulation's network under spec.DeliveryMessageCenter: TiCDC HEAD's
// message center (pkg/messaging at b813e76f9) and the queues of the
// components that receive from it. SPEC.md, "Delivery semantics", has the
// argument with TiCDC's files and functions; in short:
//
//   - Every control message travels the command stream of its (sender node,
//     receiver node) pair (remoteMessageTarget.sendCommand -> sendCmdCh ->
//     runSendMessages -> one gRPC stream -> runReceiveMessages ->
//     messageCenter.receiveCmdCh; own-node sends go through
//     localMessageTarget.sendCommand into the same receiveCmdCh). The stream
//     is FIFO; a delay holds back everything behind it on the stream.
//   - One router goroutine (router.runDispatch) hands each message to its
//     topic's handler, which pushes it into a component queue. Queues are
//     FIFO; different queues are drained by different goroutines, so
//     messages of one stream that land in different queues may be handled
//     in either order.
//   - Two sending queues sit before the stream: the heartbeat collector
//     sends HeartBeatRequests and BlockStatusRequests from two goroutines
//     (heartBeatReqQueue, blockStatusReqQueue), so those two may swap with
//     each other, and a later direct send may overtake them within the
//     goroutines' scheduling delay; they never hold a message longer. The
//     block-status queue drops a WAITING or DONE status equal to one still
//     queued or being sent (dispatcher.BlockStatusRequestQueue).
//   - Two receiving queues admit selectively: the dispatcher orchestrator
//     keeps one pending message per (changefeed, message type) and lets a
//     newer epoch replace it in place (pendingMessageQueue.TryEnqueue), and
//     a maintainer drops a block status equivalent to one still queued
//     (Maintainer.filterBlockStatusEvent).
//   - Any message may be lost (send buffer full, stream not ready, target
//     not found, a broken connection's in-flight messages,
//     InjectDropRemoteMessage); the transport never duplicates one.
//
// Hence the order two messages from one node to another are handled in:
// if they land in the same receiving queue and the first entered the stream
// first (it was sent directly, or both wait in the same sending queue), send
// order; otherwise either order. The simulation realizes exactly that: each
// message passes three FIFO stages with their own times, computed when the
// message reaches the stage: its sending queue (direct sends skip it), the
// stream (network delay; everything behind a delayed message waits), and
// its receiving queue, FIFO per stream (the order across senders is free
// anyway), with a 0-2 ms queueing delay so that the queues of one stream
// interleave. A targeted "delay" rule holds its message on the stream (a
// congested connection), where what is behind it waits too; never in a
// sending queue, which TiCDC's collector drains without blocking
// (spec.MessageWaits lists where each message type may wait).

// sendQueue is where a message waits on the sending node before
// messageCenter.SendCommand.
type sendQueue uint8

const (
	// sendDirect: the component calls SendCommand itself.
	sendDirect sendQueue = iota + 1
	// sendHeartbeatQueue: DispatcherManager -> heartBeatReqQueue ->
	// HeartBeatCollector.sendHeartBeatMessages.
	sendHeartbeatQueue
	// sendBlockStatusQueue: DispatcherManager -> blockStatusReqQueue ->
	// HeartBeatCollector.sendBlockStatusMessages.
	sendBlockStatusQueue
)

// recvQueue is the component queue a message's handler pushes it into.
type recvQueue uint8

const (
	// recvCoordinator: coordinator.recvMessages -> coordinator.eventCh.
	recvCoordinator recvQueue = iota + 1
	// recvManager: maintainer Manager.recvMessages -> Manager.msgCh (Add,
	// Remove, CoordinatorBootstrap): one queue per node.
	recvManager
	// recvMaintainer: Manager.dispatcherMaintainerMessage ->
	// Maintainer.pushEvent -> the changefeed's Maintainer.eventCh
	// (bootstrap/close responses, heartbeats, block statuses).
	recvMaintainer
	// recvOrchestrator: DispatcherOrchestrator.RecvMaintainerRequest ->
	// the changefeed's shard pendingMessageQueue (bootstrap, close).
	recvOrchestrator
	// recvSchedule: HeartBeatCollector.RecvMessages ->
	// schedulerDispatcherRequestDynamicStream, path = changefeed.
	recvSchedule
	// recvHeartbeatResponse: HeartBeatCollector.RecvMessages ->
	// heartBeatResponseDynamicStream, path = changefeed.
	recvHeartbeatResponse
	// recvMerge: HeartBeatCollector.RecvMessages ->
	// mergeDispatcherRequestDynamicStream, path = changefeed.
	recvMerge
)

var recvQueueNames = [...]string{recvCoordinator: spec.RecvCoordinator, recvManager: spec.RecvManager, recvMaintainer: spec.RecvMaintainer,
	recvOrchestrator: spec.RecvOrchestrator, recvSchedule: spec.RecvSchedule, recvHeartbeatResponse: spec.RecvHeartbeatResp, recvMerge: spec.RecvMergeDispatcher}

func (q recvQueue) String() string { return recvQueueNames[q] }

// nodeWide: the queue is one per node, not one per changefeed.
func (q recvQueue) nodeWide() bool { return q == recvCoordinator || q == recvManager }

// sendQueues and recvQueues name the simulation's queues by the
// spec.MessageWaits names.
var (
	sendQueues = map[string]sendQueue{"": sendDirect, spec.SendHeartbeatQueue: sendHeartbeatQueue, spec.SendBlockStatusQueue: sendBlockStatusQueue}
	recvQueues = func() map[string]recvQueue {
		out := map[string]recvQueue{}
		for q, n := range recvQueueNames {
			if n != "" {
				out[n] = recvQueue(q)
			}
		}
		return out
	}()
)

// route is where a message waits on both nodes: its sending queue, its
// receiving queue and the changefeed that keys the receiving queue ("" for
// node-wide queues). Each message type has exactly one route in TiCDC: its
// registry row (core.MessageKind.Wait, spec.MessageWaits).
func route(msg core.Message) (sendQueue, recvQueue, core.ChangefeedID) {
	k, ok := core.KindOf(msg)
	if !ok {
		panic(fmt.Sprintf("sim: message %T is not in the message registry (impl/core/registry.go)", msg))
	}
	sq, rq := sendQueues[k.Wait.SendQueue], recvQueues[k.Wait.RecvQueue]
	if sq == 0 || rq == 0 {
		panic(fmt.Sprintf("sim: %s's route (%q, %q) names a queue the simulation does not have", k.Name, k.Wait.SendQueue, k.Wait.RecvQueue))
	}
	if rq.nodeWide() {
		return sq, rq, ""
	}
	return sq, rq, k.Changefeed(msg)
}

// streamKey is one command stream (or the local channel when from == to).
type streamKey struct{ from, to core.NodeID }

// sendQueueKey is one sending queue of a node.
type sendQueueKey struct {
	from core.NodeID
	q    sendQueue
}

// laneKey is one receiving queue as fed by one stream (FIFO in stream
// order). from is "" for the orchestrator's queue, whose admission is
// decided at arrival across senders: its order is arrival order.
type laneKey struct {
	from, to core.NodeID
	recv     recvQueue
	cf       core.ChangefeedID
}

// inFlight is a message on its way under DeliveryMessageCenter.
type inFlight struct {
	env  core.Envelope
	id   uint64
	net  int64 // stream delay (network delay, plus a rule's delay for a direct send)
	send sendQueue
	recv recvQueue
	cf   core.ChangefeedID
	// blockReq: a block-status request's entry in its node's
	// BlockStatusRequestQueue.
	blockReq *dispatcher.BlockStatusRequestWithTarget
}

// orchSlot is the dispatcher orchestrator's one pending message per
// (node, changefeed, message type).
type orchSlot struct {
	env core.Envelope
	id  uint64
}

type orchKey struct {
	to  core.NodeID
	cf  core.ChangefeedID
	typ string
}

// pendingKey names one maintainer's block-status gate: the changefeed's
// maintainer on the receiving node.
type pendingKey struct {
	to core.NodeID
	cf core.ChangefeedID
}

// sendMessageCenter takes a message into its sending queue (or straight
// onto its stream). net is the network delay, ruleDelay a targeted rule's,
// held on the stream unless hold (Rule.HoldInSendQueue).
func (s *Sim) sendMessageCenter(env core.Envelope, net, ruleDelay int64, hold bool) {
	sq, rq, cf := route(env.Msg)
	f := &inFlight{env: env, id: s.msgID, net: net, send: sq, recv: rq, cf: cf}
	if sq == sendDirect {
		f.net += ruleDelay
		s.enterStream(f)
		return
	}
	// HeartBeatCollector's sending goroutines: FIFO per queue and a little
	// scheduling delay; they never hold a message (SendCommand does not
	// block, spec.MessageWaits), so a rule's delay waits on the stream.
	holdMs := int64(0)
	if hold {
		holdMs = ruleDelay
	} else {
		f.net += ruleDelay
	}
	if m, ok := env.Msg.(*core.BlockStatusRequest); ok && sq == sendBlockStatusQueue {
		// BlockStatusRequestQueue.Enqueue: a WAITING or DONE status equal
		// to one still queued or being sent on this node is dropped.
		q := s.blockSendQueues[env.From]
		if q == nil {
			q = &dispatcher.BlockStatusRequestQueue{}
			s.blockSendQueues[env.From] = q
		}
		r := &dispatcher.BlockStatusRequestWithTarget{Target: env.To, Request: m}
		if !q.Enqueue(r) {
			s.observeDrop(env, f.id, "an equivalent block status is queued or being sent on the sending node")
			return
		}
		f.env.Msg, f.blockReq = r.Request, r
	}
	k := sendQueueKey{env.From, sq}
	at := s.now + s.laneRng.Int64N(3) + holdMs
	if last, ok := s.sendQueues[k]; ok && last > at {
		at = last
	}
	s.sendQueues[k] = at
	if at == s.now {
		s.enterStream(f)
		return
	}
	s.push(&item{at: at, kind: itemEnterStream, flight: f})
}

// enterStream: SendCommand now. The stream is FIFO; the message arrives
// after its network delay and after everything ahead of it.
func (s *Sim) enterStream(f *inFlight) {
	if f.blockReq != nil {
		// HeartBeatCollector.sendBlockStatusMessages: Dequeue, SendCommand
		// (which does not block), OnSendComplete.
		q := s.blockSendQueues[f.env.From]
		q.Take(f.blockReq)
		q.OnSendComplete(f.blockReq)
	}
	k := streamKey{f.env.From, f.env.To}
	arrive := s.now + f.net
	if last, ok := s.streams[k]; ok && last > arrive {
		arrive = last
	}
	s.streams[k] = arrive
	if f.recv == recvOrchestrator {
		s.push(&item{at: arrive, kind: itemArrive, flight: f})
		return
	}
	lane := laneKey{f.env.From, f.env.To, f.recv, f.cf}
	if _, ok := f.env.Msg.(*core.BlockStatusRequest); ok {
		// The maintainer's admission runs at arrival, before the handling
		// even at the same instant: pushed first, it comes first.
		a := &item{at: arrive, kind: itemArrive, flight: f}
		s.push(a)
		a.gate = s.schedule(lane, f.env, f.id, arrive)
		return
	}
	s.schedule(lane, f.env, f.id, arrive)
}

// schedule queues env's handling in its receiving queue, no earlier than
// arrive plus the queueing delay and no earlier than the queue's previous
// message from the same stream.
func (s *Sim) schedule(lane laneKey, env core.Envelope, id uint64, arrive int64) *item {
	at := arrive + s.laneRng.Int64N(3)
	if last, ok := s.lanes[lane]; ok && last > at {
		at = last
	}
	s.lanes[lane] = at
	it := &item{at: at, kind: itemDeliver, env: env, msg: id}
	s.push(it)
	return it
}

// arrive runs a selective receiving queue's admission, which TiCDC does in
// the topic handler when the message arrives.
func (s *Sim) arrive(it *item) {
	f := it.flight
	n := s.nodes[f.env.To]
	if n == nil || !n.alive {
		if it.gate != nil {
			it.gate.cancelled = true
		}
		s.observeDrop(f.env, f.id, "receiver is not running")
		return
	}
	if m, ok := f.env.Msg.(*core.BlockStatusRequest); ok {
		// Maintainer.filterBlockStatusEvent: a status equivalent to one
		// still queued (or being handled) is suppressed; released once the
		// kept one is handled. Its handling time was fixed in stream order.
		pk := pendingKey{to: f.env.To, cf: m.Changefeed}
		set := s.blockPending[pk]
		if set == nil {
			set = &maintainer.BlockStatusPendingSet{}
			s.blockPending[pk] = set
		}
		out, keys, kept := set.Filter(f.env.From, m)
		if !kept {
			it.gate.cancelled = true
			s.observeDrop(f.env, f.id, "an equivalent block status is still queued")
			return
		}
		it.gate.env.Msg = out
		it.gate.releaseSet, it.gate.release = set, keys
		return
	}
	// DispatcherOrchestrator.RecvMaintainerRequest ->
	// pendingMessageQueue.TryEnqueue: one pending message per (changefeed,
	// type); a newer maintainer epoch (or a removed close over a plain one
	// of an epoch not newer) replaces it in place; anything else is dropped
	// while one is pending. Shards are FIFO across senders in arrival order.
	k := orchKey{to: f.env.To, cf: f.cf, typ: f.env.Msg.TypeName()}
	if slot, ok := s.orch[k]; ok {
		if dispatcher.ShouldReplacePendingMessage(slot.env.Msg, f.env.Msg) {
			s.observeDrop(slot.env, slot.id, "replaced in the dispatcher orchestrator's queue")
			slot.env, slot.id = f.env, f.id
			return
		}
		s.observeDrop(f.env, f.id, "the dispatcher orchestrator's queue holds one already")
		return
	}
	s.orch[k] = &orchSlot{env: f.env, id: f.id}
	d := s.schedule(laneKey{to: f.env.To, recv: f.recv, cf: f.cf}, f.env, f.id, s.now)
	d.slot = k
}

// deliveryAllows reports an error if a fault needs duplicate deliveries the
// run's delivery assumption rules out.
func (s *Sim) deliveryAllows(what string) error {
	if s.delivery.Duplicates() {
		return nil
	}
	return fmt.Errorf("%s needs a delivery that duplicates messages; TiCDC's message center never does (this run: %s; use %s or %s)",
		what, s.delivery, spec.DeliveryPerTypeStreams, spec.DeliveryReordering)
}
