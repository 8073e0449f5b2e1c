package maintainer

import "cdcspec/impl/core"

// The maintainer's gate on its event queue for block statuses
// (maintainer/block_status_dedupe.go at b813e76f9): Maintainer.pushEvent
// admits a block status only while no equivalent one is queued or being
// handled (maintainer.go:1411-1417), and the main loop releases what an
// event admitted once HandleEvent returns (maintainer.go:1396-1399). impl's
// maintainer has no event queue of its own: impl/sim's delivery models the
// queue and gates it with a BlockStatusPendingSet per maintainer, and the
// conformance harness retells HEAD's tests with the same type.

// BlockStatusDedupeKey is blockStatusDedupeKey (block_status_dedupe.go:29-36)
// without the pipeline mode: impl has no redo mode, every status is the
// default mode's.
type BlockStatusDedupeKey struct {
	From        core.NodeID
	ID          core.DispatcherID
	BlockTs     uint64
	IsSyncPoint bool
	Stage       core.BlockStage
}

// BlockStatusPendingSet is blockStatusPendingSet (block_status_dedupe.go:42-
// 77): the statuses one maintainer has admitted into its event queue and not
// yet handled. The zero value is ready to use.
type BlockStatusPendingSet struct {
	pending map[BlockStatusDedupeKey]struct{}
}

// Filter is filterBlockStatusEvent (block_status_dedupe.go:113-180) for a
// message msg from node from. Anything but a BlockStatusRequest with
// statuses passes unchanged (the same message, no keys). Of a block-status
// request it keeps the first of the statuses equal within the request and
// only those no equivalent of which is pending, reserving their keys;
// kept is false when none is left (pushEvent then drops the event). A
// request that passes is a new one (HEAD clones the request), its keys to be
// released once it is handled.
func (s *BlockStatusPendingSet) Filter(from core.NodeID, msg core.Message) (out core.Message, release []BlockStatusDedupeKey, kept bool) {
	req, ok := msg.(*core.BlockStatusRequest)
	if !ok || req == nil || len(req.Statuses) == 0 {
		return msg, nil, true
	}
	if s.pending == nil {
		s.pending = map[BlockStatusDedupeKey]struct{}{}
	}
	seen := map[BlockStatusDedupeKey]bool{}
	var statuses []core.BlockStatus
	for _, st := range req.Statuses {
		k := BlockStatusDedupeKey{From: from, ID: st.ID, BlockTs: st.BlockTs, IsSyncPoint: st.IsSyncPoint, Stage: st.Stage}
		if seen[k] {
			continue
		}
		seen[k] = true
		if _, ok := s.pending[k]; ok {
			continue
		}
		s.pending[k] = struct{}{}
		statuses = append(statuses, st)
		release = append(release, k)
	}
	if len(statuses) == 0 {
		return nil, nil, false
	}
	return &core.BlockStatusRequest{Changefeed: req.Changefeed, Statuses: statuses}, release, true
}

// Release is blockStatusPendingSet.release: the keys an event reserved,
// once the main loop has handled it.
func (s *BlockStatusPendingSet) Release(keys []BlockStatusDedupeKey) {
	for _, k := range keys {
		delete(s.pending, k)
	}
}

// Len is the number of pending statuses.
func (s *BlockStatusPendingSet) Len() int { return len(s.pending) }
