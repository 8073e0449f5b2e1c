package capture

import (
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"

	"cdcspec/impl/core"
	"cdcspec/impl/logging"
)

// recIO records the calls Apply makes, in order; txns whose token is in
// fail fail.
type recIO struct {
	calls []string
	fail  map[uint64]bool
}

func (r *recIO) Txn(t core.MetaTxn) core.MetaResult {
	r.calls = append(r.calls, fmt.Sprintf("txn %d", t.Token))
	return core.MetaResult{Token: t.Token, OK: !r.fail[t.Token]}
}
func (r *recIO) Send(env core.Envelope) { r.calls = append(r.calls, "send "+string(env.To)) }
func (r *recIO) SinkWrite(w core.SinkWrite) {
	r.calls = append(r.calls, "write "+string(w.Dispatcher))
}
func (r *recIO) SinkCancel(c core.SinkCancel) {
	r.calls = append(r.calls, "cancel "+string(c.Dispatcher))
}
func (r *recIO) CoordinatorExited() { r.calls = append(r.calls, "coordinator exited") }

type zeroClock struct{}

func (zeroClock) NowMs() int64 { return 0 }

func newTestCapture() *Capture {
	lg := logging.New(io.Discard, zeroClock{}, "info")
	return New("n1", &core.Options{}, rand.New(rand.NewPCG(1, 2)), nil, lg)
}

func effects() *core.Effects {
	out := &core.Effects{
		Persist:     []core.MetaTxn{{Token: 1}, {Token: 2}, {Token: 3}},
		SinkWrites:  []core.SinkWrite{{Dispatcher: "d1"}},
		SinkCancels: []core.SinkCancel{{Dispatcher: "d2"}},
	}
	out.SendTo("n1", "n2", &core.HeartBeatRequest{})
	out.SendTo("n1", "n3", &core.HeartBeatRequest{})
	return out
}

// TestApplyOrder: Persist, then Send, then SinkWrites and SinkCancels,
// each in order (core.Effects).
func TestApplyOrder(t *testing.T) {
	r := &recIO{}
	ok := newTestCapture().Apply(effects(), r)
	assert.True(t, ok)
	assert.Equal(t, []string{"txn 1", "txn 2", "txn 3", "send n2", "send n3", "write d1", "cancel d2"}, r.calls)
}

// TestApplyFailedTxn: a failed txn stops Persist and drops the batch's
// sends; the sink writes and cancels still run.
func TestApplyFailedTxn(t *testing.T) {
	r := &recIO{fail: map[uint64]bool{2: true}}
	ok := newTestCapture().Apply(effects(), r)
	assert.False(t, ok)
	assert.Equal(t, []string{"txn 1", "txn 2", "write d1", "cancel d2"}, r.calls)
}
