package model

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/spec"
)

// TestNetworkFollowsMessageWaits ties the model's channels to
// spec.MessageWaits: every message kind's receiving queue and sending queue
// are its TiCDC type's row. The model has no durations; its only extra
// order, a heartbeat or block status overtaken by a later direct send of its
// channel (mustPrecede), is the window of the collector's non-blocking
// SendCommand that the table allows.
func TestNetworkFollowsMessageWaits(t *testing.T) {
	recvNames := map[uint8]string{rqManager: spec.RecvManager, rqCoordinator: spec.RecvCoordinator, rqMaintainer: spec.RecvMaintainer,
		rqOrchestrator: spec.RecvOrchestrator, rqSchedule: spec.RecvSchedule, rqHeartbeatResp: spec.RecvHeartbeatResp}
	sendNames := map[uint8]string{sqDirect: "", sqHeartbeat: spec.SendHeartbeatQueue, sqBlockStatus: spec.SendBlockStatusQueue}
	for k := uint8(1); k < msgKinds; k++ {
		typ := msgNames[k]
		if i := strings.IndexByte(typ, '('); i >= 0 {
			typ = typ[:i]
		}
		if typ == "MaintainerStatus" {
			typ = "MaintainerHeartbeat" // the model's status is one entry of it
		}
		w, ok := spec.MessageWaitOf(typ)
		require.True(t, ok, "model message %s (%s) has no row in spec.MessageWaits", msgNames[k], typ)
		assert.Equal(t, w.SendQueue, sendNames[sendQueue(k)], "%s: sending queue", msgNames[k])
		want := w.RecvQueue
		if k == mMerge {
			// SPEC.md 8.4: the model queues the merge request behind the
			// schedule requests of its channel (an abstraction; TiCDC's
			// has a dynstream of its own).
			want = spec.RecvSchedule
		}
		assert.Equal(t, want, recvNames[recvQueue(k)], "%s: receiving queue", msgNames[k])
	}
}
