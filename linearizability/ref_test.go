package linearizability

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"cdcspec/spec"
)

// refAdmin is a TEST REFERENCE, not the implementation: an in-memory,
// mutex-protected admin API with the semantics the admin model specifies,
// plus a background "system" goroutine that advances checkpoints, flips
// normal/warning and finishes changefeeds that reached target-ts. Each call
// sleeps a little before and after its critical section so that calls from
// different goroutines overlap. Planted bugs switch on known-wrong variants.
type refAdmin struct {
	bugs refBugs
	// lossy: some calls report an unknown outcome (a timeout), half of them
	// after taking effect and half before.
	lossy bool

	mu  sync.Mutex
	cfs map[string]*refChangefeed // invariant: no entry for a removed changefeed
	// replica is a lagging copy of cfs, read only with bugs.staleRead.
	replica map[string]refChangefeed
	// removing holds changefeeds whose removal was acknowledged but not yet
	// applied, only with bugs.asyncRemove.
	removing map[string]int
}

type refChangefeed struct {
	state      string // spec.State*: normal, warning, stopped, failed, finished
	checkpoint uint64
	targetTs   uint64
}

// refBugs are planted bugs in refAdmin; each must make Check report Illegal.
type refBugs struct {
	// staleRead: half the gets are served from a replica that lags the
	// primary (a non-owner node's cache): the checkpoint can read lower than
	// a value already returned.
	staleRead bool
	// resumeFromRunning: resume skips the IsResumable check and succeeds on
	// a normal/warning changefeed.
	resumeFromRunning bool
	// asyncRemove: remove acknowledges at once and deletes the changefeed a
	// few system ticks later; gets in between still find it.
	asyncRemove bool
	// stoppedKeepsAdvancing: pause returns but the checkpoint of the stopped
	// changefeed keeps advancing (the maintainer was never stopped). Only
	// the FrozenWhileStopped variant can see it: the checkpoint is still
	// monotonic.
	stoppedKeepsAdvancing bool
}

func newRefAdmin(bugs refBugs, lossy bool) *refAdmin {
	return &refAdmin{bugs: bugs, lossy: lossy, cfs: map[string]*refChangefeed{}, replica: map[string]refChangefeed{}, removing: map[string]int{}}
}

var errRefTimeout = fmt.Errorf("refAdmin: %w", context.DeadlineExceeded)

func jitter() {
	if d := rand.IntN(40); d > 20 {
		time.Sleep(time.Duration(d-20) * time.Microsecond)
	}
}

// call runs f in the critical section with jitter around it, and in lossy
// mode sometimes reports an unknown outcome.
func (r *refAdmin) call(ctx context.Context, f func() error) error {
	jitter()
	if r.lossy && rand.IntN(100) < 2 {
		return errRefTimeout // lost before it reached the server: no effect
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r.mu.Lock()
	err := f()
	r.mu.Unlock()
	jitter()
	if r.lossy && rand.IntN(100) < 2 {
		return errRefTimeout // took effect (or failed), reply lost
	}
	return err
}

func (r *refAdmin) Create(ctx context.Context, id string, startTs, targetTs uint64) error {
	return r.call(ctx, func() error {
		if _, ok := r.cfs[id]; ok {
			return fmt.Errorf("create %s: %w", id, ErrChangefeedAlreadyExists)
		}
		r.cfs[id] = &refChangefeed{state: spec.StateNormal, checkpoint: startTs, targetTs: targetTs}
		return nil
	})
}

func (r *refAdmin) Pause(ctx context.Context, id string) error {
	return r.call(ctx, func() error {
		cf, ok := r.cfs[id]
		if !ok {
			return fmt.Errorf("pause %s: %w", id, ErrChangefeedNotExists)
		}
		if cf.state != spec.StateNormal && cf.state != spec.StateWarning {
			return fmt.Errorf("pause %s in state %s: %w", id, cf.state, ErrChangefeedInvalidState)
		}
		cf.state = spec.StateStopped
		return nil
	})
}

func (r *refAdmin) Resume(ctx context.Context, id string, overwrite uint64) error {
	return r.call(ctx, func() error {
		cf, ok := r.cfs[id]
		if !ok {
			return fmt.Errorf("resume %s: %w", id, ErrChangefeedNotExists)
		}
		resumable := cf.state == spec.StateStopped || cf.state == spec.StateFailed || cf.state == spec.StateFinished
		if !resumable && !r.bugs.resumeFromRunning {
			return fmt.Errorf("resume %s in state %s: %w", id, cf.state, ErrChangefeedInvalidState)
		}
		cf.state = spec.StateNormal
		if overwrite != 0 {
			cf.checkpoint = overwrite
		}
		return nil
	})
}

func (r *refAdmin) Remove(ctx context.Context, id string) error {
	return r.call(ctx, func() error {
		if _, ok := r.cfs[id]; !ok {
			return fmt.Errorf("remove %s: %w", id, ErrChangefeedNotExists)
		}
		if r.bugs.asyncRemove {
			if _, pending := r.removing[id]; !pending {
				r.removing[id] = 3
			}
			return nil
		}
		delete(r.cfs, id)
		return nil
	})
}

func (r *refAdmin) Get(ctx context.Context, id string) (ChangefeedStatus, error) {
	var st ChangefeedStatus
	err := r.call(ctx, func() error {
		var cf refChangefeed
		if r.bugs.staleRead && rand.IntN(2) == 0 {
			c, ok := r.replica[id]
			if !ok {
				return fmt.Errorf("get %s: %w", id, ErrChangefeedNotExists)
			}
			cf = c
		} else {
			c, ok := r.cfs[id]
			if !ok {
				return fmt.Errorf("get %s: %w", id, ErrChangefeedNotExists)
			}
			cf = *c
		}
		st = ChangefeedStatus{State: cf.state, CheckpointTs: cf.checkpoint}
		return nil
	})
	return st, err
}

// failIfRunning applies an injected unretryable error: a running changefeed
// becomes failed. The harness records the fault before calling it.
func (r *refAdmin) failIfRunning(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if cf, ok := r.cfs[id]; ok && (cf.state == spec.StateNormal || cf.state == spec.StateWarning) {
		cf.state = spec.StateFailed
	}
}

// tick is one step of the system: advance running checkpoints, flip
// normal/warning, finish at target-ts, apply pending removals, and refresh
// the lagging replica every 8th tick.
func (r *refAdmin) tick(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, cf := range r.cfs {
		if r.bugs.stoppedKeepsAdvancing && cf.state == spec.StateStopped {
			cf.checkpoint += uint64(rand.IntN(8))
		}
		if cf.state != spec.StateNormal && cf.state != spec.StateWarning {
			continue
		}
		cf.checkpoint += uint64(rand.IntN(8))
		if rand.IntN(10) == 0 {
			if cf.state == spec.StateNormal {
				cf.state = spec.StateWarning
			} else {
				cf.state = spec.StateNormal
			}
		}
		if cf.targetTs != 0 && cf.checkpoint >= cf.targetTs {
			cf.state = spec.StateFinished
		}
	}
	for id, left := range r.removing {
		if left <= 1 {
			delete(r.cfs, id)
			delete(r.removing, id)
		} else {
			r.removing[id] = left - 1
		}
	}
	if n%8 == 0 {
		r.replica = make(map[string]refChangefeed, len(r.cfs))
		for id, cf := range r.cfs {
			r.replica[id] = *cf
		}
	}
}

// runSystem ticks r every ~50µs until ctx is done.
func (r *refAdmin) runSystem(ctx context.Context, wg *sync.WaitGroup) {
	defer wg.Done()
	for n := 1; ctx.Err() == nil; n++ {
		r.tick(n)
		time.Sleep(50 * time.Microsecond)
	}
}
