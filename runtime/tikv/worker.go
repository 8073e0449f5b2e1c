package tikv

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"cdcspec/spec"
)

// regionFeedState is one region's request on a stream.
type regionFeedState struct {
	sri         singleRegionInfo
	requestID   uint64
	stopped     atomic.Bool
	initialized atomic.Bool
}

// pendingRegions are the requests of one stream whose first response has
// not arrived (tiflow syncRegionFeedStateMap).
type pendingRegions struct {
	mu sync.Mutex
	m  map[uint64]*regionFeedState
}

func newPendingRegions() *pendingRegions {
	return &pendingRegions{m: map[uint64]*regionFeedState{}}
}

func (p *pendingRegions) set(requestID uint64, s *regionFeedState) {
	p.mu.Lock()
	p.m[requestID] = s
	p.mu.Unlock()
}

func (p *pendingRegions) take(requestID uint64) (*regionFeedState, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.m[requestID]
	delete(p.m, requestID)
	return s, ok
}

func (p *pendingRegions) takeAll() []*regionFeedState {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*regionFeedState, 0, len(p.m))
	for _, s := range p.m {
		out = append(out, s)
	}
	p.m = map[uint64]*regionFeedState{}
	return out
}

// regionStatefulEvent is what the receive loop hands the worker: one
// region's event, a batch resolved ts, or nil (exit).
type regionStatefulEvent struct {
	state      *regionFeedState
	event      *Event
	resolvedTs uint64
	resolved   []*regionFeedState
}

// regionInputChanSize is tiflow's regionWorkerInputChanSize.
const regionInputChanSize = 32

// regionWorker holds a stream's active regions (tiflow regionWorker): it
// handles their events and resolved ts, fails a region on its error, and
// exits when it has no region left (checkShouldExit) or on the receive
// loop's nil.
type regionWorker struct {
	c       *Client
	stream  *eventFeedStream
	inputCh chan []*regionStatefulEvent

	mu     sync.Mutex
	states map[uint64]*regionFeedState

	exited         atomic.Bool
	receiverExited atomic.Bool
}

func (w *regionWorker) getRegionState(region uint64) (*regionFeedState, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s, ok := w.states[region]
	return s, ok
}

func (w *regionWorker) setRegionState(region uint64, s *regionFeedState) {
	w.mu.Lock()
	w.states[region] = s
	w.mu.Unlock()
}

func (w *regionWorker) delRegionState(region uint64) {
	w.mu.Lock()
	delete(w.states, region)
	w.mu.Unlock()
}

func (w *regionWorker) activeRegions() []uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []uint64
	for id, s := range w.states {
		if !s.stopped.Load() {
			out = append(out, id)
		}
	}
	return out
}

// sendEvents puts events into inputCh (or fails when ctx ended).
func (w *regionWorker) sendEvents(ctx context.Context, evs []*regionStatefulEvent) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case w.inputCh <- evs:
		return nil
	}
}

// run is the worker's event loop. With stuck-after-upstream-failure it
// evicts every region on its own exit (tiflow#9519's regionWorker.run
// defer).
func (w *regionWorker) run(ctx context.Context) error {
	defer func() {
		if w.c.evictInWorker {
			w.evictAllRegions()
		}
		w.exited.Store(true)
	}()
	for {
		var evs []*regionStatefulEvent
		select {
		case <-ctx.Done():
			return ctx.Err()
		case evs = <-w.inputCh:
		}
		for _, ev := range evs {
			if ev == nil {
				w.c.log(zapcore.InfoLevel, "region_worker.go", 421, "region worker closed by error", zap.String("addr", w.stream.addr))
				return nil
			}
			if err := w.processEvent(ev); err != nil {
				if errors.Is(err, errRegionWorkerExit) {
					return nil
				}
				return err
			}
		}
	}
}

func (w *regionWorker) processEvent(ev *regionStatefulEvent) error {
	if ev.state != nil && ev.state.stopped.Load() {
		return nil
	}
	if ev.event != nil {
		switch {
		case ev.event.Initialized:
			ev.state.initialized.Store(true)
		case ev.event.Error != nil:
			return w.handleSingleRegionError(&eventError{err: ev.event.Error}, ev.state)
		}
		return nil
	}
	for _, s := range ev.resolved {
		if s.stopped.Load() || !s.initialized.Load() {
			continue
		}
		w.c.advance(s.sri.region.ID, ev.resolvedTs)
	}
	return nil
}

// checkShouldExit: a worker with no region left cancels its stream and
// exits.
func (w *regionWorker) checkShouldExit() error {
	w.mu.Lock()
	empty := len(w.states) == 0
	w.mu.Unlock()
	if empty {
		w.stream.cancel()
		return errRegionWorkerExit
	}
	return nil
}

func (w *regionWorker) handleSingleRegionError(err error, state *regionFeedState) error {
	region := state.sri.region.ID
	w.c.log(zapcore.InfoLevel, "region_worker.go", 198, "single region event feed disconnected", zap.Uint64("regionID", region),
		zap.Uint64("requestID", state.requestID), zap.String("span", spec.SpanText(state.sri.span())),
		zap.Uint64("resolvedTs", w.c.resolvedTsOf(region)), zap.String("error", err.Error()))
	if state.stopped.Load() {
		return w.checkShouldExit()
	}
	state.stopped.Store(true)
	w.delRegionState(region)
	retErr := w.checkShouldExit()
	w.c.onRegionFail(regionErrorInfo{singleRegionInfo: state.sri, err: err})
	return retErr
}

// evictAllRegions fails every region still active in the worker.
func (w *regionWorker) evictAllRegions() {
	w.mu.Lock()
	var evict []*regionFeedState
	for id, s := range w.states {
		if s.stopped.Load() {
			continue
		}
		s.stopped.Store(true)
		evict = append(evict, s)
		delete(w.states, id)
	}
	w.mu.Unlock()
	for _, s := range evict {
		w.c.onRegionFail(regionErrorInfo{singleRegionInfo: s.sri, err: errEventFeedAborted})
	}
}

// receiveFromStream runs a stream's region worker and receive loop
// (tiflow eventFeedSession.receiveFromStream after #9519): the first of the
// two to end cancels the other; pending regions are failed when it
// returns; without stuck-after-upstream-failure the worker's regions are
// evicted after both ended (#9597).
func (c *Client) receiveFromStream(stream *eventFeedStream, pending *pendingRegions) {
	defer func() {
		c.log(zapcore.InfoLevel, "client.go", 980, "stream to store closed", zap.String("addr", stream.addr), zap.Uint64("storeID", stream.storeID))
		for _, s := range pending.takeAll() {
			c.onRegionFail(regionErrorInfo{singleRegionInfo: s.sri, err: errPendingRegionCancel})
		}
	}()
	w := &regionWorker{c: c, stream: stream, inputCh: make(chan []*regionStatefulEvent, regionInputChanSize), states: map[uint64]*regionFeedState{}}
	c.mu.Lock()
	c.workers[w] = struct{}{}
	c.mu.Unlock()
	defer func() {
		w.receiverExited.Store(true)
		c.mu.Lock()
		if len(w.activeRegions()) == 0 {
			delete(c.workers, w)
		}
		c.mu.Unlock()
	}()
	if !c.evictInWorker {
		defer w.evictAllRegions()
	}

	ctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	var once sync.Once
	handleExit := func() { once.Do(cancel) }
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		err := w.run(ctx)
		handleExit()
		if err != nil && !errors.Is(err, context.Canceled) {
			c.log(zapcore.ErrorLevel, "client.go", 1012, "region worker exited with error", zap.String("addr", stream.addr),
				zap.Uint64("storeID", stream.storeID), zap.String("error", err.Error()))
		}
	}()
	go func() {
		defer wg.Done()
		_ = c.receiveEvents(ctx, stream, w, pending)
		handleExit()
	}()
	wg.Wait()
}

// receiveEvents reads the stream: a region's first response moves it from
// pending into the worker; events and resolved ts go to the worker.
func (c *Client) receiveEvents(ctx context.Context, stream *eventFeedStream, w *regionWorker, pending *pendingRegions) error {
	for {
		cev, err := stream.Recv()
		if err != nil {
			if errors.Is(err, errStreamCanceled) {
				c.log(zapcore.DebugLevel, "client.go", 1044, "receive from stream canceled", zap.String("addr", stream.addr),
					zap.Uint64("storeID", stream.storeID))
			} else {
				c.log(zapcore.WarnLevel, "client.go", 1052, "failed to receive from stream", zap.String("addr", stream.addr),
					zap.Uint64("storeID", stream.storeID), zap.String("error", err.Error()))
			}
			time.Sleep(time.Duration(c.intn(100)) * time.Millisecond)
			c.deleteStream(stream)
			_ = w.sendEvents(ctx, []*regionStatefulEvent{nil})
			return nil
		}
		if d := c.recvDelay.Load(); d > 0 && len(cev.Events) > 0 {
			time.Sleep(time.Duration(d))
		}
		var batch []*regionStatefulEvent
		for i := range cev.Events {
			ev := &cev.Events[i]
			state, valid := w.getRegionState(ev.RegionID)
			if valid {
				if state.requestID < ev.RequestID {
					valid = false
				} else if state.requestID > ev.RequestID {
					c.log(zapcore.WarnLevel, "client.go", 1177, "drop event due to event belongs to a stale request",
						zap.Uint64("regionID", ev.RegionID), zap.Uint64("requestID", ev.RequestID), zap.Uint64("currRequestID", state.requestID),
						zap.String("addr", stream.addr))
					continue
				}
			}
			if !valid {
				// The region's first response: load it from pending.
				state, valid = pending.take(ev.RequestID)
				if !valid {
					c.log(zapcore.WarnLevel, "client.go", 1193, "drop event due to region feed is removed",
						zap.Uint64("regionID", ev.RegionID), zap.Uint64("requestID", ev.RequestID), zap.String("addr", stream.addr))
					continue
				}
				w.setRegionState(ev.RegionID, state)
			} else if state.stopped.Load() {
				c.log(zapcore.WarnLevel, "client.go", 1203, "drop event due to region feed stopped",
					zap.Uint64("regionID", ev.RegionID), zap.Uint64("requestID", ev.RequestID), zap.String("addr", stream.addr))
				continue
			}
			batch = append(batch, &regionStatefulEvent{state: state, event: ev})
		}
		if len(batch) > 0 {
			if err := w.sendEvents(ctx, batch); err != nil {
				return err
			}
		}
		if rts := cev.ResolvedTs; rts != nil {
			ev := &regionStatefulEvent{resolvedTs: rts.Ts}
			for _, id := range rts.Regions {
				if s, ok := w.getRegionState(id); ok {
					ev.resolved = append(ev.resolved, s)
				}
			}
			if len(ev.resolved) > 0 {
				if err := w.sendEvents(ctx, []*regionStatefulEvent{ev}); err != nil {
					return err
				}
			}
		}
	}
}
