package tikv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"cdcspec/impl/logging"
	"cdcspec/spec"
)

// PDSource is how a kv-client reads PD's state (a region cache reload).
type PDSource interface {
	Load(ctx context.Context) (State, error)
}

// PDFunc adapts a function to PDSource.
type PDFunc func(ctx context.Context) (State, error)

// Load implements PDSource.
func (f PDFunc) Load(ctx context.Context) (State, error) { return f(ctx) }

// DecodeState parses PD's state as Publish wrote it.
func DecodeState(b []byte) (State, error) {
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("tikv: bad PD state at %s: %w", PDKey, err)
	}
	return st, nil
}

// The errors a region fails with (tiflow cdc/kv and pkg/errors).
var (
	errPendingRegionCancel = errors.New("[CDC:ErrPendingRegionCancel]pending region cancelled due to stream disconnecting")
	errEventFeedAborted    = errors.New("[CDC:ErrEventFeedAborted]single event feed aborted")
	errRegionWorkerExit    = errors.New("[CDC:ErrRegionWorkerExit]region worker exited")
	errConnectToStore      = errors.New("connect to store error")
	errSendRequestToStore  = errors.New("send request to store error")
	errRPCCtxUnavailable   = errors.New("cannot get rpcCtx for region")
)

// eventError is a region error a store sent
// ([CDC:ErrEventFeedEventError]eventfeed returns event error).
type eventError struct{ err *RegionError }

func (e *eventError) Error() string {
	return "[CDC:ErrEventFeedEventError]eventfeed returns event error: " + e.err.String()
}

// singleRegionInfo is one region to request: its meta from the region
// cache, and where it is sent (rpcCtx).
type singleRegionInfo struct {
	region  Region
	storeID uint64
	addr    string
}

func (s singleRegionInfo) span() spec.Span {
	return spec.Span{Table: s.region.Table, Start: s.region.Start, End: s.region.End}
}

type regionErrorInfo struct {
	singleRegionInfo
	err error
}

// regionLock is a region's range lock with the resolved ts of its range
// (tiflow regionlock.RegionRangeLock keyed by region here: regions never
// split in the runtime's upstream). While locked, exactly one request of
// the region is in flight or active; only onRegionFail unlocks it.
type regionLock struct {
	table      int64
	start, end string
	locked     bool
	resolvedTs uint64
}

// Client is one capture's kv-client: an event feed session over every
// table its dispatchers asked for.
type Client struct {
	pd    PDSource
	lg    *logging.Logger
	logMu sync.Mutex
	// evictInWorker is stuck-after-upstream-failure: evictAllRegions in
	// the region worker's exit (tiflow#9519) instead of after both the
	// worker and the receive loop exited (tiflow#9597).
	evictInWorker bool

	ctx context.Context

	mu         sync.Mutex
	cache      map[uint64]Region // region cache (PD's view when last loaded, plus leader hints)
	addrs      map[uint64]string // store ID -> address
	lastLoad   time.Time
	locks      map[uint64]*regionLock
	subscribed map[int64]bool
	lastTry    map[int64]time.Time
	streams    map[string]*eventFeedStream
	workers    map[*regionWorker]struct{}

	regionCh chan singleRegionInfo // locked regions to route
	routerCh chan singleRegionInfo // routed regions to send
	errCh    chan regionErrorInfo

	// recvDelay is failpoint KVClientRecvDelay: the receive loop holds
	// every message that carries region events this long before handling
	// it, as a CPU-starved TiCDC does while it catches up after a TiKV
	// outage. It widens the window of tiflow#9595 from microseconds (an
	// idle loopback) to the delay; it changes nothing else.
	recvDelay atomic.Int64

	requestID atomic.Uint64
	rng       *rand.Rand
	rngMu     sync.Mutex
}

// NewClient returns a kv-client; Run starts it.
func NewClient(pd PDSource, lg *logging.Logger, bugs spec.BugSet) *Client {
	return &Client{pd: pd, lg: lg, evictInWorker: bugs.Has(spec.BugStuckAfterUpstreamFailure),
		cache: map[uint64]Region{}, addrs: map[uint64]string{}, locks: map[uint64]*regionLock{}, subscribed: map[int64]bool{},
		lastTry: map[int64]time.Time{}, streams: map[string]*eventFeedStream{}, workers: map[*regionWorker]struct{}{},
		regionCh: make(chan singleRegionInfo, 1<<14), routerCh: make(chan singleRegionInfo, 1<<14), errCh: make(chan regionErrorInfo, 1<<14),
		rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x6b76))}
}

func (c *Client) intn(n int) int {
	c.rngMu.Lock()
	defer c.rngMu.Unlock()
	return c.rng.IntN(n)
}

func (c *Client) log(lv zapcore.Level, file string, line int, msg string, fields ...zap.Field) {
	if c.lg == nil {
		return
	}
	c.logMu.Lock()
	defer c.logMu.Unlock()
	c.lg.Log(lv, file, line, msg, fields...)
}

// Run loads the region cache and runs the session's goroutines until ctx
// ends.
func (c *Client) Run(ctx context.Context) error {
	c.mu.Lock()
	c.ctx = ctx
	c.mu.Unlock()
	for {
		err := c.reload(ctx, true)
		if err == nil {
			break
		}
		c.log(zapcore.WarnLevel, "client.go", 1, "load regions failed", zap.String("error", err.Error()))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	var wg sync.WaitGroup
	wg.Add(4)
	go func() { defer wg.Done(); c.logSlowRegions(ctx) }()
	go func() { defer wg.Done(); c.dispatchRequest(ctx) }()
	go func() { defer wg.Done(); c.requestRegionToStore(ctx) }()
	go func() { defer wg.Done(); c.errLoop(ctx) }()
	wg.Wait()
	return ctx.Err()
}

// reload refreshes the region cache from PD (at most every 50 ms unless
// forced).
func (c *Client) reload(ctx context.Context, force bool) error {
	c.mu.Lock()
	if !force && time.Since(c.lastLoad) < 50*time.Millisecond {
		c.mu.Unlock()
		return nil
	}
	c.lastLoad = time.Now()
	c.mu.Unlock()
	lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	st, err := c.pd.Load(lctx)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range st.Stores {
		c.addrs[s.ID] = s.Addr
	}
	for _, r := range st.Regions {
		c.cache[r.ID] = r
	}
	return nil
}

// ResolvedTs is the resolved ts of span: the lowest resolved ts of the
// table's regions that overlap it (the puller's frontier). The first call
// for a table subscribes to its regions from startTs. 0 until the table's
// regions are known.
func (c *Client) ResolvedTs(span spec.Span, startTs uint64) uint64 {
	c.mu.Lock()
	if !c.subscribed[span.Table] {
		c.subscribeLocked(span.Table, startTs)
	}
	min, found := uint64(0), false
	for _, l := range c.locks {
		if l.table != span.Table || !overlaps(l.start, l.end, span.Start, span.End) {
			continue
		}
		if !found || l.resolvedTs < min {
			min, found = l.resolvedTs, true
		}
	}
	c.mu.Unlock()
	return min
}

// subscribeLocked locks and schedules every region of table, or asks PD
// again later when the cache has none.
func (c *Client) subscribeLocked(table int64, startTs uint64) {
	var regions []Region
	for _, r := range c.cache {
		if r.Table == table {
			regions = append(regions, r)
		}
	}
	if len(regions) == 0 {
		if time.Since(c.lastTry[table]) > 500*time.Millisecond && c.ctx != nil {
			c.lastTry[table] = time.Now()
			go func() { _ = c.reload(c.ctx, true) }()
		}
		return
	}
	c.subscribed[table] = true
	c.log(zapcore.InfoLevel, "client.go", 467, "event feed started", zap.Int64("tableID", table), zap.Uint64("startTs", startTs),
		zap.Int("regions", len(regions)))
	for _, r := range regions {
		c.locks[r.ID] = &regionLock{table: table, start: r.Start, end: r.End, resolvedTs: startTs}
		c.scheduleLocked(singleRegionInfo{region: r})
	}
}

// scheduleLocked locks the region's range and queues it for routing.
func (c *Client) scheduleLocked(sri singleRegionInfo) {
	l := c.locks[sri.region.ID]
	if l == nil || l.locked {
		// Another request of the region holds the range (LockRangeStatusCancel).
		return
	}
	l.locked = true
	select {
	case c.regionCh <- sri:
	default:
		l.locked = false
		c.log(zapcore.WarnLevel, "client.go", 1, "region channel full, drop region request", zap.Uint64("regionID", sri.region.ID))
	}
}

func (c *Client) resolvedTsOf(region uint64) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if l := c.locks[region]; l != nil {
		return l.resolvedTs
	}
	return 0
}

// advance raises a region's resolved ts (frontier forward).
func (c *Client) advance(region, ts uint64) {
	c.mu.Lock()
	if l := c.locks[region]; l != nil && ts > l.resolvedTs {
		l.resolvedTs = ts
	}
	c.mu.Unlock()
}

// onRegionFail unlocks the region's range and hands the error to the error
// loop, which requests the region again.
func (c *Client) onRegionFail(info regionErrorInfo) {
	c.mu.Lock()
	if l := c.locks[info.region.ID]; l != nil {
		l.locked = false
	}
	c.mu.Unlock()
	c.log(zapcore.InfoLevel, "client.go", 556, "region failed", zap.String("span", spec.SpanText(info.span())),
		zap.Uint64("regionId", info.region.ID), zap.String("error", info.err.Error()))
	select {
	case c.errCh <- info:
	case <-c.ctx.Done():
	}
}

// dispatchRequest routes each locked region to its leader's store.
func (c *Client) dispatchRequest(ctx context.Context) {
	for {
		var sri singleRegionInfo
		select {
		case <-ctx.Done():
			return
		case sri = <-c.regionCh:
		}
		c.mu.Lock()
		r, ok := c.cache[sri.region.ID]
		addr := c.addrs[r.Leader]
		c.mu.Unlock()
		if !ok || r.Leader == 0 || addr == "" {
			c.log(zapcore.InfoLevel, "client.go", 829, "get rpc context for region is nil, retry it",
				zap.Uint64("regionID", sri.region.ID), zap.String("span", spec.SpanText(sri.span())), zap.Uint64("resolvedTs", c.resolvedTsOf(sri.region.ID)))
			c.onRegionFail(regionErrorInfo{singleRegionInfo: sri, err: errRPCCtxUnavailable})
			continue
		}
		sri.region, sri.storeID, sri.addr = r, r.Leader, addr
		select {
		case c.routerCh <- sri:
		case <-ctx.Done():
			return
		}
	}
}

func (c *Client) getStream(addr string) (*eventFeedStream, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.streams[addr]
	return s, ok
}

// deleteStream forgets s as the stream of its store and cancels it.
func (c *Client) deleteStream(s *eventFeedStream) {
	c.mu.Lock()
	if c.streams[s.addr] == s {
		delete(c.streams, s.addr)
	}
	c.mu.Unlock()
	s.cancel()
}

// requestRegionToStore sends each routed region's request on its store's
// stream, creating the stream (with its receive loop and region worker)
// when there is none.
func (c *Client) requestRegionToStore(ctx context.Context) {
	storePending := map[*eventFeedStream]*pendingRegions{}
	for {
		var sri singleRegionInfo
		select {
		case <-ctx.Done():
			return
		case sri = <-c.routerCh:
		}
		requestID := c.requestID.Add(1)
		stream, ok := c.getStream(sri.addr)
		if !ok {
			var err error
			stream, err = dialStream(ctx, sri.addr, sri.storeID)
			if err != nil {
				c.log(zapcore.WarnLevel, "client.go", 627, "get grpc stream client failed", zap.Uint64("regionID", sri.region.ID),
					zap.Uint64("requestID", requestID), zap.Uint64("storeID", sri.storeID), zap.String("error", err.Error()))
				c.onRegionFail(regionErrorInfo{singleRegionInfo: sri, err: errConnectToStore})
				continue
			}
			c.mu.Lock()
			c.streams[sri.addr] = stream
			c.mu.Unlock()
			c.log(zapcore.InfoLevel, "client.go", 656, "creating new stream to store to send request", zap.Uint64("regionID", sri.region.ID),
				zap.Uint64("requestID", requestID), zap.Uint64("storeID", sri.storeID), zap.String("addr", sri.addr))
			pending := newPendingRegions()
			storePending[stream] = pending
			go func() {
				defer c.deleteStream(stream)
				c.receiveFromStream(stream, pending)
			}()
		}
		pending := storePending[stream]
		state := &regionFeedState{sri: sri, requestID: requestID}
		pending.set(requestID, state)
		err := stream.Send(ChangeDataRequest{RegionID: sri.region.ID, RequestID: requestID, Ver: sri.region.Ver,
			CheckpointTs: c.resolvedTsOf(sri.region.ID), Start: sri.region.Start, End: sri.region.End})
		if err != nil {
			c.log(zapcore.WarnLevel, "client.go", 690, "send request to stream failed", zap.String("addr", sri.addr),
				zap.Uint64("storeID", sri.storeID), zap.Uint64("regionID", sri.region.ID), zap.Uint64("requestID", requestID),
				zap.String("error", err.Error()))
			c.deleteStream(stream)
			delete(storePending, stream)
			if _, ok := pending.take(requestID); ok {
				c.onRegionFail(regionErrorInfo{singleRegionInfo: sri, err: errSendRequestToStore})
			}
		}
		// Forget the pending maps of streams that are gone.
		for s := range storePending {
			if cur, ok := c.getStream(s.addr); !ok || cur != s {
				if s != stream {
					delete(storePending, s)
				}
			}
		}
	}
}

// errLoop handles region errors: update the region cache, then lock and
// request the region again (tiflow eventFeedSession.handleError).
func (c *Client) errLoop(ctx context.Context) {
	for {
		var info regionErrorInfo
		select {
		case <-ctx.Done():
			return
		case info = <-c.errCh:
		}
		// Pacing: gRPC's connect backoff for a store that refuses
		// connections; a short wait while no leader is known.
		delay := time.Duration(0)
		var ee *eventError
		switch {
		case errors.As(info.err, &ee) && ee.err.NotLeader != nil && ee.err.NotLeader.Leader != 0:
			c.mu.Lock()
			if r, ok := c.cache[info.region.ID]; ok {
				r.Leader = ee.err.NotLeader.Leader // regionCache.UpdateLeader
				c.cache[info.region.ID] = r
			}
			c.mu.Unlock()
		case errors.As(info.err, &ee) && ee.err.NotLeader != nil:
			_ = c.reload(ctx, false)
			delay = 20 * time.Millisecond
		case errors.Is(info.err, errConnectToStore):
			_ = c.reload(ctx, true)
			delay = time.Duration(300+c.intn(200)) * time.Millisecond
		case errors.Is(info.err, errRPCCtxUnavailable):
			_ = c.reload(ctx, true)
			delay = 100 * time.Millisecond
		default:
			// EpochNotMatch, RegionNotFound, aborted and cancelled feeds:
			// regionCache.OnSendFail reloads the region.
			_ = c.reload(ctx, false)
		}
		sri := singleRegionInfo{region: info.region}
		if delay == 0 {
			c.mu.Lock()
			c.scheduleLocked(sri)
			c.mu.Unlock()
			continue
		}
		time.AfterFunc(delay, func() {
			c.mu.Lock()
			c.scheduleLocked(sri)
			c.mu.Unlock()
		})
	}
}

// slowRegionLag: a table's slowest region this far behind the wall clock
// is logged (TiCDC HEAD's span_registry.go logSlowRegions, every 30 s
// there, every 5 s here).
const slowRegionLag = 10 * time.Second

// logSlowRegions logs, for every subscribed table, its slowest region when
// its resolved ts lags more than slowRegionLag.
func (c *Client) logSlowRegions(ctx context.Context) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := uint64(time.Now().UnixMilli())
		type slow struct {
			table  int64
			region uint64
			l      regionLock
		}
		var out []slow
		c.mu.Lock()
		slowest := map[int64]slow{}
		for id, l := range c.locks {
			if s, ok := slowest[l.table]; !ok || l.resolvedTs < s.l.resolvedTs {
				slowest[l.table] = slow{table: l.table, region: id, l: *l}
			}
		}
		c.mu.Unlock()
		for _, s := range slowest {
			if s.l.resolvedTs+uint64(slowRegionLag.Milliseconds()) < now {
				out = append(out, s)
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].table < out[j].table })
		for _, s := range out {
			c.log(zapcore.InfoLevel, "span_registry.go", 328, "subscription client finds a initialized slow region",
				zap.Int64("subscriptionID", s.table), zap.Uint64("regionID", s.region), zap.Uint64("resolvedTs", s.l.resolvedTs),
				zap.Bool("locked", s.l.locked), zap.Duration("lag", time.Duration(now-s.l.resolvedTs)*time.Millisecond))
		}
	}
}

// SetRecvDelay switches failpoint KVClientRecvDelay (0: off).
func (c *Client) SetRecvDelay(d time.Duration) { c.recvDelay.Store(int64(d)) }

// StuckRegions lists the regions whose state is held by a region worker
// that exited, on a stream whose receive loop exited too: no goroutine will
// ever fail them, their range stays locked and their resolved ts frozen
// (the state of tiflow#9595). Observability for tests and reports.
func (c *Client) StuckRegions() []uint64 {
	c.mu.Lock()
	ws := make([]*regionWorker, 0, len(c.workers))
	for w := range c.workers {
		ws = append(ws, w)
	}
	c.mu.Unlock()
	var out []uint64
	for _, w := range ws {
		if !w.exited.Load() || !w.receiverExited.Load() {
			continue
		}
		out = append(out, w.activeRegions()...)
	}
	return out
}
