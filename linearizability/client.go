package linearizability

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// ChangefeedStatus is what GET /api/v2/changefeeds/{id} returns that the
// models check.
type ChangefeedStatus struct {
	// State is the FeedState: normal, warning, failed, stopped, finished
	// (spec.State*). "removed" is treated as not-found.
	State string
	// CheckpointTs is the checkpoint the coordinator reports.
	CheckpointTs uint64
}

// Client is the admin API under test: the real runtime (HTTP client against
// the coordinator's /api/v2/changefeeds) and the deterministic simulation
// implement it. Every call must return once ctx is done.
//
// Error contract (what makes the history sound):
//   - nil: the call took effect (or, for Get, the status was read).
//   - an error wrapping ErrChangefeedNotExists, ErrChangefeedAlreadyExists,
//     ErrChangefeedInvalidState or ErrRejected: the call definitely did NOT
//     take effect. Only return these when the server said so.
//   - any other error (ctx deadline, connection reset, HTTP 5xx after the
//     request may have reached the coordinator): outcome unknown. When in
//     doubt, return an unknown error: it weakens the check but never causes
//     a false alarm; a definite error that in fact took effect does.
type Client interface {
	// Create: POST /api/v2/changefeeds with changefeed_id, start_ts and
	// target_ts (0 = none).
	Create(ctx context.Context, id string, startTs, targetTs uint64) error
	// Pause: POST /api/v2/changefeeds/{id}/pause.
	Pause(ctx context.Context, id string) error
	// Resume: POST /api/v2/changefeeds/{id}/resume with
	// overwrite_checkpoint_ts (0 = keep the checkpoint).
	Resume(ctx context.Context, id string, overwriteCheckpointTs uint64) error
	// Remove: DELETE /api/v2/changefeeds/{id}.
	Remove(ctx context.Context, id string) error
	// Get: GET /api/v2/changefeeds/{id}.
	Get(ctx context.Context, id string) (ChangefeedStatus, error)
}

// Definite errors a Client returns (wrapped with %w) when the server
// refused the call without any effect.
var (
	ErrChangefeedNotExists     = errors.New("changefeed not exists (CDC:ErrChangeFeedNotExists)")
	ErrChangefeedAlreadyExists = errors.New("changefeed already exists (CDC:ErrChangeFeedAlreadyExists)")
	ErrChangefeedInvalidState  = errors.New("operation not allowed in the changefeed's state")
	ErrRejected                = errors.New("request rejected before it took effect")
)

// OutputOf classifies a Client call's error into an Output (see Client for
// the contract). Unrecognised errors are unknown outcomes.
func OutputOf(err error) Output {
	switch {
	case err == nil:
		return Output{}
	case errors.Is(err, ErrChangefeedNotExists):
		return Output{Err: CodeNotFound}
	case errors.Is(err, ErrChangefeedAlreadyExists):
		return Output{Err: CodeAlreadyExists}
	case errors.Is(err, ErrChangefeedInvalidState):
		return Output{Err: CodeInvalidState}
	case errors.Is(err, ErrRejected):
		return Output{Err: CodeRejected}
	}
	return Output{Unknown: true}
}

// Invoke performs in through c and records it in rec as client. It is the
// one place that maps Input to Client calls.
func Invoke(ctx context.Context, c Client, rec *Recorder, client int, in Input) Output {
	call := rec.Begin(client, in)
	var out Output
	switch in.Op {
	case OpCreate:
		out = OutputOf(c.Create(ctx, in.Changefeed, in.StartTs, in.TargetTs))
	case OpPause:
		out = OutputOf(c.Pause(ctx, in.Changefeed))
	case OpResume:
		out = OutputOf(c.Resume(ctx, in.Changefeed, in.OverwriteCheckpointTs))
	case OpRemove:
		out = OutputOf(c.Remove(ctx, in.Changefeed))
	case OpGet:
		st, err := c.Get(ctx, in.Changefeed)
		out = OutputOf(err)
		if err == nil {
			out.State, out.CheckpointTs = st.State, st.CheckpointTs
		}
	default:
		// Not a client call; record it as unknown so the history stays sound.
		out = Output{Unknown: true}
	}
	call.Return(out)
	return out
}

// Workload configures RunClientsWith.
type Workload struct {
	Clients      int // concurrent client goroutines (>= 1)
	OpsPerClient int // operations each client performs (>= 1)
	// Changefeeds is how many changefeed IDs ("cf-0", ...) the clients share.
	// Keep Clients/Changefeeds small (a few): porcupine's search cost grows
	// with concurrent operations per changefeed.
	Changefeeds int
	Seed        uint64
	// OpTimeout bounds each call (default 2s); a call that hits it is
	// recorded as an unknown outcome.
	OpTimeout time.Duration
	// TargetTs, if non-zero, is passed to every create, so changefeeds may
	// finish.
	TargetTs uint64
	// NoOverwrite disables resume with overwrite_checkpoint_ts.
	NoOverwrite bool
}

// DefaultWorkload is RunClients' workload shape: 3 changefeeds.
func DefaultWorkload(nClients, nOps int, seed uint64) Workload {
	return Workload{Clients: nClients, OpsPerClient: nOps, Changefeeds: 3, Seed: seed, OpTimeout: 2 * time.Second}
}

// RunClients runs nClients goroutines, each performing nOps random admin
// operations over 3 changefeeds through c, and returns the recorded history.
// The workload is a function of seed; the interleaving is whatever c does.
func RunClients(ctx context.Context, c Client, nClients, nOps int, seed uint64) (History, error) {
	rec := NewRecorder()
	if err := RunClientsWith(ctx, c, rec, DefaultWorkload(nClients, nOps, seed)); err != nil {
		return History{}, err
	}
	return rec.History(fmt.Sprintf("clients%d-ops%d-seed%d", nClients, nOps, seed)), nil
}

// RunClientsWith runs workload w through c, recording into rec (which the
// caller may share with a fault injector calling rec.RecordFault). It
// returns when every client finished or ctx is done; calls cut off by ctx
// are recorded as unknown outcomes.
func RunClientsWith(ctx context.Context, c Client, rec *Recorder, w Workload) error {
	if w.Clients < 1 || w.OpsPerClient < 1 || w.Changefeeds < 1 {
		return fmt.Errorf("linearizability: workload needs Clients, OpsPerClient and Changefeeds >= 1, got %d, %d, %d", w.Clients, w.OpsPerClient, w.Changefeeds)
	}
	if w.OpTimeout <= 0 {
		w.OpTimeout = 2 * time.Second
	}
	var wg sync.WaitGroup
	for i := 0; i < w.Clients; i++ {
		wg.Add(1)
		go func(client int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(w.Seed, uint64(client)))
			for n := 0; n < w.OpsPerClient && ctx.Err() == nil; n++ {
				in := randomInput(rng, w)
				opCtx, cancel := context.WithTimeout(ctx, w.OpTimeout)
				Invoke(opCtx, c, rec, client, in)
				cancel()
			}
		}(i)
	}
	wg.Wait()
	return nil
}

// randomInput draws one admin operation. Gets dominate (they are what
// detects violations); every mutation is frequent enough that each state
// is visited in short runs.
func randomInput(rng *rand.Rand, w Workload) Input {
	in := Input{Changefeed: fmt.Sprintf("cf-%d", rng.IntN(w.Changefeeds))}
	switch p := rng.IntN(100); {
	case p < 40:
		in.Op = OpGet
	case p < 55:
		in.Op = OpCreate
		in.StartTs = 100 * uint64(1+rng.IntN(5))
		in.TargetTs = w.TargetTs
	case p < 70:
		in.Op = OpPause
	case p < 88:
		in.Op = OpResume
		if !w.NoOverwrite && rng.IntN(3) == 0 {
			in.OverwriteCheckpointTs = 100 * uint64(1+rng.IntN(10))
		}
	default:
		in.Op = OpRemove
	}
	return in
}
