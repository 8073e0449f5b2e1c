package linearizability

import (
	"sort"
	"sync"
	"time"
)

// Recorder records a history from concurrent clients. It is safe for
// concurrent use. Each operation's Call is taken before the request is
// issued and its Return after the response arrived, on one monotonic clock,
// so real-time order between operations is preserved.
//
// Per porcupine's rules, an operation whose outcome is unknown (the client
// timed out, or an error that is not definite) is recorded with
// Output.Unknown and checked as returning at infinity: it may take effect at
// any point after its call, or never. An operation still in flight when
// History is called is recorded the same way.
type Recorder struct {
	clock func() int64

	mu     sync.Mutex
	ops    []Op
	open   map[int]bool // indexes of operations still in flight
	closed bool
}

// NewRecorder returns a recorder on the process's monotonic clock
// (nanoseconds since the recorder was created).
func NewRecorder() *Recorder {
	start := time.Now()
	return NewRecorderWithClock(func() int64 { return int64(time.Since(start)) })
}

// NewRecorderWithClock returns a recorder on clock, which must be monotonic
// (never decrease) and shared by every recording client. The deterministic
// simulation passes its virtual clock here.
func NewRecorderWithClock(clock func() int64) *Recorder {
	return &Recorder{clock: clock, open: map[int]bool{}}
}

// Call is an operation in flight; finish it with Return exactly once.
type Call struct {
	r   *Recorder
	idx int
}

// Begin records the call of in by client and returns the handle to record
// its return.
func (r *Recorder) Begin(client int, in Input) Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	idx := len(r.ops)
	// Take the time under the lock so that the call times follow the order
	// of the ops slice; the request is issued after Begin returns.
	r.ops = append(r.ops, Op{Client: client, Input: in, Call: r.clock(), Output: Output{Unknown: true}})
	r.open[idx] = true
	return Call{r: r, idx: idx}
}

// Return records the output of the call. A second Return, or a Return after
// History, is ignored (History already recorded the call as unknown).
func (c Call) Return(out Output) {
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	if !c.r.open[c.idx] || c.r.closed {
		return
	}
	delete(c.r.open, c.idx)
	op := &c.r.ops[c.idx]
	op.Return = c.r.clock()
	op.Output = out
}

// RecordFault records an injected fault (OpFault) on changefeed cf by the
// harness, identified as client, whose effect may land at any later time.
// When the harness knows when the effect has landed, record the fault with
// Begin(client, Input{Op: OpFault, Changefeed: cf}) and Return(Output{})
// once it has: a bounded window is much cheaper to check.
func (r *Recorder) RecordFault(client int, cf string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock()
	r.ops = append(r.ops, Op{Client: client, Input: Input{Op: OpFault, Changefeed: cf}, Call: now, Return: now, Output: Output{Unknown: true}})
}

// History returns the recorded history, sorted by call time. Operations
// still in flight are recorded as unknown outcomes with the current time as
// the time the client gave up; later Returns of those calls are ignored.
func (r *Recorder) History(name string) History {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock()
	for idx := range r.open {
		r.ops[idx].Return = now
		r.ops[idx].Output = Output{Unknown: true}
	}
	r.open = map[int]bool{}
	r.closed = true
	ops := append([]Op(nil), r.ops...)
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Call < ops[j].Call })
	return History{Name: name, Ops: ops}
}
