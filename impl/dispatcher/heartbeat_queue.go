package dispatcher

import "cdcspec/impl/core"

// BlockStatusRequestWithTarget is BlockStatusRequestWithTargetID
// (downstreamadapter/dispatchermanager/heartbeat_queue.go:59-62 at
// b813e76f9): a block-status request and the maintainer's node.
type BlockStatusRequestWithTarget struct {
	Target  core.NodeID
	Request *core.BlockStatusRequest
}

// blockStatusRequestKey is blockStatusRequestDedupeKey
// (heartbeat_queue.go:138-145) without the pipeline mode: impl has no redo
// mode.
type blockStatusRequestKey struct {
	target      core.NodeID
	id          core.DispatcherID
	blockTs     uint64
	isSyncPoint bool
	stage       core.BlockStage
}

// BlockStatusRequestQueue is the node's blockStatusReqQueue between the
// dispatcher managers and HeartBeatCollector.sendBlockStatusMessages
// (heartbeat_queue.go:64-227): a WAITING or DONE status equal to one still
// queued or being sent is dropped at Enqueue; NONE statuses always pass
// (they carry the one-shot NeedAdded). A status's key is queued from Enqueue
// to Dequeue, in flight from Dequeue to OnSendComplete. The zero value is
// ready to use.
type BlockStatusRequestQueue struct {
	queue    []*BlockStatusRequestWithTarget
	keys     map[*BlockStatusRequestWithTarget][]blockStatusRequestKey
	queued   map[blockStatusRequestKey]struct{}
	inFlight map[blockStatusRequestKey]struct{}
}

// Enqueue is BlockStatusRequestQueue.Enqueue (heartbeat_queue.go:90-103,
// trackPendingStatuses 156-195): it replaces r.Request by the request
// without the suppressed statuses and reports whether anything is left to
// queue (HEAD drops the request otherwise).
func (q *BlockStatusRequestQueue) Enqueue(r *BlockStatusRequestWithTarget) bool {
	if r == nil || r.Request == nil {
		return false
	}
	if q.keys == nil {
		q.keys = map[*BlockStatusRequestWithTarget][]blockStatusRequestKey{}
		q.queued = map[blockStatusRequestKey]struct{}{}
		q.inFlight = map[blockStatusRequestKey]struct{}{}
	}
	var kept []core.BlockStatus
	var keys []blockStatusRequestKey
	for _, st := range r.Request.Statuses {
		if st.Stage != core.StageWaiting && st.Stage != core.StageDone {
			kept = append(kept, st)
			continue
		}
		k := blockStatusRequestKey{target: r.Target, id: st.ID, blockTs: st.BlockTs, isSyncPoint: st.IsSyncPoint, stage: st.Stage}
		if _, ok := q.queued[k]; ok {
			continue
		}
		if _, ok := q.inFlight[k]; ok {
			continue
		}
		q.queued[k] = struct{}{}
		kept = append(kept, st)
		keys = append(keys, k)
	}
	if len(kept) < len(r.Request.Statuses) {
		r.Request = &core.BlockStatusRequest{Changefeed: r.Request.Changefeed, Statuses: kept}
	}
	if len(keys) > 0 {
		q.keys[r] = keys
	}
	if len(kept) == 0 {
		return false
	}
	q.queue = append(q.queue, r)
	return true
}

// Dequeue is BlockStatusRequestQueue.Dequeue (heartbeat_queue.go:105-116):
// the oldest request, its statuses now in flight; nil when the queue is
// empty (HEAD waits for one or for its context).
func (q *BlockStatusRequestQueue) Dequeue() *BlockStatusRequestWithTarget {
	if len(q.queue) == 0 {
		return nil
	}
	return q.Take(q.queue[0])
}

// Take dequeues r wherever it is in the queue. impl/sim's sending
// goroutine uses it: its per-node sending order is computed in virtual time
// and may hand two requests of the same instant to the stream in either
// order.
func (q *BlockStatusRequestQueue) Take(r *BlockStatusRequestWithTarget) *BlockStatusRequestWithTarget {
	for i, x := range q.queue {
		if x == r {
			q.queue = append(q.queue[:i:i], q.queue[i+1:]...)
			// markInFlight (heartbeat_queue.go:199-206).
			for _, k := range q.keys[r] {
				delete(q.queued, k)
				q.inFlight[k] = struct{}{}
			}
			return r
		}
	}
	return nil
}

// OnSendComplete is BlockStatusRequestQueue.OnSendComplete
// (heartbeat_queue.go:121-132): the send returned (sent or failed), its
// statuses may be queued again.
func (q *BlockStatusRequestQueue) OnSendComplete(r *BlockStatusRequestWithTarget) {
	for _, k := range q.keys[r] {
		delete(q.inFlight, k)
	}
	delete(q.keys, r)
}

// Len is the number of queued requests.
func (q *BlockStatusRequestQueue) Len() int { return len(q.queue) }
