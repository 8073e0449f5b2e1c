package linearizability

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestRecorderInFlightBecomesUnknown(t *testing.T) {
	var now int64
	rec := NewRecorderWithClock(func() int64 { now++; return now })
	a := rec.Begin(0, Input{Op: OpCreate, Changefeed: "cf", StartTs: 100}) // call 1
	b := rec.Begin(1, Input{Op: OpPause, Changefeed: "cf"})                // call 2
	a.Return(Output{})                                                     // return 3
	a.Return(Output{Err: CodeAlreadyExists})                               // ignored: second return
	h := rec.History("t")                                                  // now 4
	b.Return(Output{})                                                     // ignored: after History
	if len(h.Ops) != 2 {
		t.Fatalf("got %d ops, want 2", len(h.Ops))
	}
	if got := h.Ops[0]; got.Call != 1 || got.Return != 3 || got.Output != (Output{}) {
		t.Errorf("create recorded as %+v, want call 1, return 3, ok", got)
	}
	if got := h.Ops[1]; got.Call != 2 || got.Return != 4 || !got.Output.Unknown {
		t.Errorf("in-flight pause recorded as %+v, want call 2, gave up at 4, unknown", got)
	}
	res, err := Check(AdminModel(), h, time.Second)
	if err != nil || !res.Ok() {
		t.Fatalf("check: %v %v", res, err)
	}
	// The unknown pause is checked as returning at infinity.
	ops := h.operations()
	if ops[1].Return != 1<<63-1 {
		t.Errorf("unknown op checked with return %d, want MaxInt64", ops[1].Return)
	}
}

func TestRecorderConcurrent(t *testing.T) {
	rec := NewRecorder()
	var wg sync.WaitGroup
	for c := 0; c < 16; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				call := rec.Begin(c, Input{Op: OpGet, Changefeed: fmt.Sprintf("cf-%d", c%3)})
				call.Return(Output{Err: CodeNotFound})
			}
		}(c)
	}
	wg.Wait()
	h := rec.History("concurrent")
	if len(h.Ops) != 1600 {
		t.Fatalf("got %d ops, want 1600", len(h.Ops))
	}
	for i, op := range h.Ops {
		if op.Output.Unknown || op.Return < op.Call || (i > 0 && op.Call < h.Ops[i-1].Call) {
			t.Fatalf("op #%d malformed or out of order: %+v", i, op)
		}
	}
}

func TestOutputOf(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want Output
	}{
		{nil, Output{}},
		{fmt.Errorf("get x: %w", ErrChangefeedNotExists), Output{Err: CodeNotFound}},
		{fmt.Errorf("create x: %w", ErrChangefeedAlreadyExists), Output{Err: CodeAlreadyExists}},
		{fmt.Errorf("resume x: %w", ErrChangefeedInvalidState), Output{Err: CodeInvalidState}},
		{fmt.Errorf("bad param: %w", ErrRejected), Output{Err: CodeRejected}},
		{context.DeadlineExceeded, Output{Unknown: true}},
		{errors.New("connection reset by peer"), Output{Unknown: true}},
	} {
		if got := OutputOf(tc.err); got != tc.want {
			t.Errorf("OutputOf(%v) = %+v, want %+v", tc.err, got, tc.want)
		}
	}
}

// blockingClient never answers before its context is done, and counts the
// calls that reached it.
type blockingClient struct{ calls atomic.Int64 }

func (b *blockingClient) wait(ctx context.Context) error {
	b.calls.Add(1)
	<-ctx.Done()
	return ctx.Err()
}
func (b *blockingClient) Create(ctx context.Context, _ string, _, _ uint64) error { return b.wait(ctx) }
func (b *blockingClient) Pause(ctx context.Context, _ string) error               { return b.wait(ctx) }
func (b *blockingClient) Resume(ctx context.Context, _ string, _ uint64) error    { return b.wait(ctx) }
func (b *blockingClient) Remove(ctx context.Context, _ string) error              { return b.wait(ctx) }
func (b *blockingClient) Get(ctx context.Context, _ string) (ChangefeedStatus, error) {
	return ChangefeedStatus{}, b.wait(ctx)
}

// TestRunClientsTimeoutsAreUnknown: calls cut off by the per-op timeout are
// recorded as unknown outcomes, and a history of only unknowns is Ok.
func TestRunClientsTimeoutsAreUnknown(t *testing.T) {
	c := &blockingClient{}
	rec := NewRecorder()
	w := DefaultWorkload(3, 5, 7)
	w.OpTimeout = time.Millisecond
	if err := RunClientsWith(context.Background(), c, rec, w); err != nil {
		t.Fatal(err)
	}
	h := rec.History("timeouts")
	if len(h.Ops) != 15 || c.calls.Load() != 15 {
		t.Fatalf("got %d ops, %d calls; want 15", len(h.Ops), c.calls.Load())
	}
	for i, op := range h.Ops {
		if !op.Output.Unknown {
			t.Fatalf("op #%d not unknown: %+v", i, op)
		}
		if op.Return <= op.Call {
			t.Errorf("op #%d gave up at %d, not after its call at %d", i, op.Return, op.Call)
		}
	}
	res, err := Check(AdminModel(), h, 10*time.Second)
	if err != nil || !res.Ok() {
		t.Fatalf("check: %v %v", res, err)
	}
}
