// Package server runs one capture (a TiCDC process) of impl/ on real IO:
// an etcd session lease with the capture registration, owner election on
// the owner key, capture-set and owner watches, the TCP transport between
// captures, the coordinator's metadata txns as etcd txns, the Kafka sink,
// and a TiCDC-format log with real time.
//
// Goroutine layout: impl's components (coordinator, maintainer manager,
// dispatcher orchestrator) are hosted by ONE loop goroutine per capture
// (Server.loop), because impl.Capture routes between them in-process and
// shares the node's alive list and logger; they still share nothing but
// messages. IO runs beside the loop: one goroutine per transport peer
// connection (decode, then hand to the loop), the etcd watches (capture set,
// owner, upstream), the election campaign, the admin HTTP server (calls
// enter the loop as closures), and one writer goroutine per Kafka sink
// instance (rows are generated and produced there; results re-enter the
// loop). The loop ticks every core.TickInterval ms.
package server

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"cdcspec/impl/capture"
	"cdcspec/impl/coordinator"
	"cdcspec/impl/core"
	"cdcspec/impl/logging"
	"cdcspec/runtime/adminapi"
	"cdcspec/runtime/codec"
	"cdcspec/runtime/etcdmeta"
	"cdcspec/runtime/tikv"
	"cdcspec/runtime/transport"
	"cdcspec/spec"
)

// ErrCaptureSuicide is returned by Run when the etcd session was lost.
var ErrCaptureSuicide = errors.New("[CDC:ErrCaptureSuicide]capture suicide")

// Config of one capture process.
type Config struct {
	Etcd     []string
	Kafka    []string
	Addr     string // transport listen host:port
	APIAddr  string // admin API listen host:port (default 127.0.0.1:0)
	LogFile  string // "" or "-": stderr
	LogLevel string
	Bugs     []string
	Legacy   core.Legacy
	// SessionTTL is the etcd session TTL (default 5 s; TiCDC's is 10 s).
	SessionTTL time.Duration
	Sink       SinkConfig
	// Stdout receives one "ready" line once the capture is registered.
	Stdout io.Writer
}

// CaptureValue is the JSON value of a capture key: TiCDC's CaptureInfo
// fields plus the admin API address and the process id.
type CaptureValue struct {
	ID             string `json:"id"`
	AdvertiseAddr  string `json:"address"`
	APIAddr        string `json:"api-address"`
	Version        string `json:"version"`
	StartTimestamp int64  `json:"start-timestamp"`
	PID            int    `json:"pid"`
}

type wallClock struct{}

func (wallClock) NowMs() int64 { return time.Now().UnixMilli() }

// NewWallClockLogger returns an impl logger (TiCDC's log format) that stamps
// lines with real time and serializes writes from several goroutines; the
// runtime's processes (captures and cdcspec run itself) log through it.
// Its ts fields are TSOs, as in TiCDC's logs (logging.Logger.TSO).
func NewWallClockLogger(w io.Writer, level string) *logging.Logger {
	lg := logging.New(&lockedWriter{w: w}, wallClock{}, level)
	lg.TSO = true
	return lg
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Server is one running capture.
type Server struct {
	cfg   Config
	id    core.NodeID
	opts  core.Options
	lg    *logging.Logger
	etcd  *etcdmeta.Client
	meta  *MetaStore
	up    *Upstream
	tr    *transport.Transport
	sess  *etcdmeta.Session
	elec  *etcdmeta.Election
	cap   *capture.Capture
	sinks *sinks
	api   net.Listener
	kv    *tikv.Client // the kv-client, when the upstream has TiKV stores

	inbox   chan func()
	msgs    chan core.Envelope
	delayed chan core.Envelope
	rules   []rule // loop-owned
	results chan core.SinkResult
	resign  chan struct{}

	malformed atomic.Uint64 // inbound frames that did not decode

	// loop-owned
	alive   []core.NodeID
	lastGC  time.Time
	dropped uint64

	mu    sync.Mutex
	owner core.NodeID
	peers map[core.NodeID]CaptureValue
}

// NewNodeID returns a fresh capture ID (a UUID, as TiCDC's).
func NewNodeID() core.NodeID {
	var b [16]byte
	_, _ = crand.Read(b[:])
	return core.NodeID(fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]))
}

// Run runs a capture until ctx ends (nil) or the etcd session is lost
// (ErrCaptureSuicide), or setup fails.
func Run(ctx context.Context, cfg Config) error {
	if len(cfg.Etcd) == 0 {
		return errors.New("server: --etcd is required")
	}
	if len(cfg.Kafka) == 0 {
		return errors.New("server: --kafka is required")
	}
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.APIAddr == "" {
		cfg.APIAddr = "127.0.0.1:0"
	}
	if cfg.SessionTTL == 0 {
		cfg.SessionTTL = 5 * time.Second
	}
	if cfg.LogLevel == "" {
		cfg.LogLevel = "info"
	}
	bugs, err := spec.ParseBugs(cfg.Bugs)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	var logw io.Writer = os.Stderr
	if cfg.LogFile != "" && cfg.LogFile != "-" {
		f, err := os.OpenFile(cfg.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("server: opening log file: %w", err)
		}
		defer f.Close()
		logw = f
	}
	s := &Server{cfg: cfg, id: NewNodeID(), inbox: make(chan func(), 256), msgs: make(chan core.Envelope, 8192), delayed: make(chan core.Envelope, 1024),
		results: make(chan core.SinkResult, 8192), resign: make(chan struct{}, 1), peers: map[core.NodeID]CaptureValue{}}
	s.opts = core.Options{Bugs: bugs, Legacy: cfg.Legacy}.WithDefaults()
	s.lg = NewWallClockLogger(logw, cfg.LogLevel)
	s.lg.Info("server.go", 1, "Welcome to Change Data Capture (CDC)", zap.String("release-version", "cdcspec"),
		zap.String("captureID", string(s.id)), zap.Strings("bugs", bugs.Names()))

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.etcd, err = etcdmeta.Dial(ctx, etcdmeta.ClientConfig{Endpoints: cfg.Etcd})
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	defer s.etcd.Close()
	s.meta = &MetaStore{C: s.etcd}
	var upRev int64
	s.up, upRev, err = LoadUpstream(ctx, s.etcd)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	go s.up.Follow(ctx, s.etcd, upRev+1)
	if err := s.startKVClient(ctx); err != nil {
		return err
	}

	s.tr, err = transport.Listen(transport.Config{NodeID: string(s.id), ListenAddr: cfg.Addr, QueueSize: 4096}, s.onFrame)
	if err != nil {
		return fmt.Errorf("server: transport: %w", err)
	}
	defer s.tr.Close()
	s.api, err = net.Listen("tcp", cfg.APIAddr)
	if err != nil {
		return fmt.Errorf("server: admin API listen on %s: %w", cfg.APIAddr, err)
	}
	go func() { _ = adminapi.Serve(ctx, s.api, &backend{s: s}) }()

	cfg.Sink.Brokers = cfg.Kafka
	s.sinks = newSinks(cfg.Sink, s.up, s.id, func(r core.SinkResult) { s.results <- r })
	defer s.sinks.CloseAll()
	s.opts.WriteBlockEvent = s.sinks.WriteBlockEvent

	rnd := rand.New(rand.NewPCG(seed64(), seed64()))
	s.cap = capture.New(s.id, &s.opts, rnd, s.up, s.lg)

	s.sess, err = s.etcd.NewSession(ctx, cfg.SessionTTL)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	val, _ := json.Marshal(CaptureValue{ID: string(s.id), AdvertiseAddr: s.tr.Addr(), APIAddr: s.api.Addr().String(),
		Version: "cdcspec", StartTimestamp: time.Now().UnixMilli(), PID: os.Getpid()})
	if _, err := s.etcd.PutWithLease(ctx, s.etcd.Capture(string(s.id)), val, s.sess.Lease()); err != nil {
		return fmt.Errorf("server: registering capture: %w", err)
	}
	s.lg.Info("capture.go", 1, "capture registered", zap.String("captureID", string(s.id)),
		zap.String("address", s.tr.Addr()), zap.String("apiAddress", s.api.Addr().String()), zap.Int64("lease", s.sess.Lease()))
	if cfg.Stdout != nil {
		fmt.Fprintf(cfg.Stdout, "cdcspec server ready id=%s addr=%s api=http://%s etcd=%s kafka=%s\n", s.id, s.tr.Addr(), s.api.Addr(),
			strings.Join(cfg.Etcd, ","), strings.Join(cfg.Kafka, ","))
	}
	s.elec = s.etcd.NewElection(s.sess)
	go s.watchCaptures(ctx)
	go s.campaign(ctx)
	go s.observeOwner(ctx)

	err = s.loop(ctx)
	if errors.Is(err, ErrCaptureSuicide) {
		return err
	}
	// Graceful exit: give up the session (the capture key vanishes).
	_ = s.sess.Close()
	return err
}

func seed64() uint64 {
	var b [8]byte
	_, _ = crand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

func (s *Server) onFrame(from string, payload []byte) {
	env, err := codec.Decode(payload)
	if err != nil {
		// A malformed frame is logged and dropped; the first and then
		// every 1000th, so a flood cannot fill the log.
		if n := s.malformed.Add(1); n == 1 || n%1000 == 0 {
			s.lg.Warn("message_center.go", 1, "drop malformed message", zap.String("from", from), zap.Int("bytes", len(payload)),
				zap.Uint64("malformedSoFar", n), zap.String("error", err.Error()))
		}
		return
	}
	select {
	case s.msgs <- env:
	default:
		// Congested: drop, as TiCDC's message center does.
	}
}

func (s *Server) post(f func()) bool {
	select {
	case s.inbox <- f:
		return true
	default:
		return false
	}
}

func (s *Server) loop(ctx context.Context) error {
	tick := time.NewTicker(core.TickInterval * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.sess.Done():
			return s.suicide()
		case <-tick.C:
			out := &core.Effects{}
			s.cap.OnTick(time.Now().UnixMilli(), out)
			s.exec(out)
			s.gcSinks()
		case env := <-s.msgs:
			if s.applyRules(env) {
				continue
			}
			out := &core.Effects{}
			s.cap.OnMessage(time.Now().UnixMilli(), env.From, env.Msg, out)
			s.exec(out)
		case env := <-s.delayed:
			out := &core.Effects{}
			s.cap.OnMessage(time.Now().UnixMilli(), env.From, env.Msg, out)
			s.exec(out)
		case r := <-s.results:
			out := &core.Effects{}
			s.cap.OnSinkResult(time.Now().UnixMilli(), r, out)
			s.exec(out)
		case f := <-s.inbox:
			f()
		}
	}
}

// rule is an installed debug delay rule; a rule with ForMs ends at until.
type rule struct {
	adminapi.DelayRule
	until time.Time
}

// applyRules applies the debug delay rules to an inbound message; it
// reports whether the message was held back or lost.
func (s *Server) applyRules(env core.Envelope) bool {
	now := time.Now()
	for i := range s.rules {
		r := &s.rules[i]
		if r.Count <= 0 || (r.Type != "" && r.Type != env.Msg.TypeName()) || (!r.until.IsZero() && now.After(r.until)) {
			continue
		}
		r.Count--
		if r.Action == "drop" {
			s.lg.Info("message_center.go", 1, "debug rule drops a message", zap.String("type", env.Msg.TypeName()),
				zap.String("from", string(env.From)))
			return true
		}
		s.lg.Info("message_center.go", 1, "debug rule holds a message", zap.String("type", env.Msg.TypeName()),
			zap.String("from", string(env.From)), zap.String("action", r.Action), zap.Int64("delayMs", r.DelayMs))
		time.AfterFunc(time.Duration(r.DelayMs)*time.Millisecond, func() {
			select {
			case s.delayed <- env:
			default:
			}
		})
		return r.Action != "dup"
	}
	return false
}

// suicide is TiCDC's session-lost path: fence, log, exit.
func (s *Server) suicide() error {
	s.lg.Warn("capture.go", 1, "session is disconnected", zap.String("error", etcdmeta.ErrEtcdSessionDone.Error()))
	s.cap.LocalFence()
	s.sinks.CloseAll()
	s.lg.Event(nil, spec.Event{Kind: spec.CaptureSuicide, Node: string(s.id), Err: ErrCaptureSuicide.Error()})
	return ErrCaptureSuicide
}

// exec runs Effects on the capture (capture.Apply) with real IO, and
// reports whether every txn applied.
func (s *Server) exec(out *core.Effects) bool { return s.cap.Apply(out, serverIO{s}) }

// serverIO is the server's capture.IO: etcd, the TCP transport, the Kafka
// sinks, the election.
type serverIO struct{ s *Server }

func (io serverIO) Txn(t core.MetaTxn) core.MetaResult {
	r := io.s.meta.Txn(t)
	if !r.OK {
		io.s.lg.Warn("etcd_backend.go", 1, "meta txn failed", zap.Uint64("token", t.Token), zap.String("error", r.Err))
	}
	return r
}

func (io serverIO) Send(env core.Envelope)       { io.s.send(env) }
func (io serverIO) SinkWrite(w core.SinkWrite)   { io.s.sinks.Submit(w) }
func (io serverIO) SinkCancel(c core.SinkCancel) { io.s.sinks.Cancel(c) }

// CoordinatorExited drops the exited coordinator and asks the election
// loop to resign.
func (io serverIO) CoordinatorExited() {
	io.s.cap.Coordinator = nil
	select {
	case io.s.resign <- struct{}{}:
	default:
	}
}

func (s *Server) send(env core.Envelope) {
	b, err := codec.Encode(env)
	if err != nil {
		s.lg.Warn("message_center.go", 1, "encode message failed", zap.String("error", err.Error()))
		return
	}
	if err := s.tr.Send(string(env.To), b); err != nil {
		s.dropped++
	}
}

// gcSinks closes sink instances whose dispatcher manager is gone (every 2 s).
func (s *Server) gcSinks() {
	if time.Since(s.lastGC) < 2*time.Second {
		return
	}
	s.lastGC = time.Now()
	live := map[uint64]bool{}
	for _, m := range s.cap.Orchestrator.Managers() {
		if dm := s.cap.Orchestrator.Get(m.Changefeed); dm != nil {
			live[dm.SinkID()] = true
		}
	}
	s.sinks.Retain(live)
}

// --- membership and election ---

func (s *Server) watchCaptures(ctx context.Context) {
	prefix := s.etcd.CapturePrefix()
	for ctx.Err() == nil {
		kvs, rev, err := s.etcd.GetPrefix(ctx, prefix)
		if err != nil {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		s.postCaptures(kvs)
		for ev := range s.etcd.Watch(ctx, prefix, rev+1) {
			if ev.Err != nil {
				break
			}
			kvs, _, err := s.etcd.GetPrefix(ctx, prefix)
			if err == nil {
				s.postCaptures(kvs)
			}
		}
	}
}

func (s *Server) postCaptures(kvs []etcdmeta.KV) {
	peers := map[core.NodeID]CaptureValue{}
	var alive []core.NodeID
	for _, kv := range kvs {
		var v CaptureValue
		if json.Unmarshal(kv.Value, &v) != nil || v.ID == "" {
			continue
		}
		peers[core.NodeID(v.ID)] = v
		alive = append(alive, core.NodeID(v.ID))
	}
	sort.Slice(alive, func(i, j int) bool { return alive[i] < alive[j] })
	f := func() {
		s.mu.Lock()
		s.peers = peers
		s.mu.Unlock()
		addrs := map[string]string{}
		for id, v := range peers {
			addrs[string(id)] = v.AdvertiseAddr
		}
		s.tr.SetPeers(addrs)
		s.alive = alive
		out := &core.Effects{}
		s.cap.OnNodesChanged(time.Now().UnixMilli(), alive, out)
		s.exec(out)
	}
	for !s.post(f) {
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *Server) campaign(ctx context.Context) {
	for ctx.Err() == nil {
		select {
		case <-s.sess.Done():
			return
		default:
		}
		if err := s.elec.Campaign(ctx, string(s.id)); err != nil {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		rev := s.elec.Rev()
		done := make(chan struct{})
		for !s.post(func() { s.becomeOwner(rev); close(done) }) {
			time.Sleep(10 * time.Millisecond)
		}
		select {
		case <-ctx.Done():
			return
		case <-s.sess.Done():
			return
		case <-s.resign:
		}
		rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		_ = s.elec.Resign(rctx)
		cancel()
		s.lg.Info("coordinator.go", 1, "coordinator resigned", zap.String("captureID", string(s.id)))
	}
}

func (s *Server) becomeOwner(rev int64) {
	snap, _, err := s.meta.Snapshot("/tidb/cdc/default/")
	if err != nil {
		s.lg.Warn("coordinator.go", 1, "read changefeed snapshot failed, resign", zap.String("error", err.Error()))
		select {
		case s.resign <- struct{}{}:
		default:
		}
		return
	}
	s.lg.Info("module_node_manager.go", 102, "coordinator changed", zap.String("newID", string(s.id)), zap.Int64("version", rev))
	s.mu.Lock()
	s.owner = s.id
	s.mu.Unlock()
	out := &core.Effects{}
	s.cap.BecomeOwner(time.Now().UnixMilli(), rev, snap, out)
	s.exec(out)
}

func (s *Server) observeOwner(ctx context.Context) {
	for ctx.Err() == nil {
		for id := range s.elec.Observe(ctx) {
			id := core.NodeID(id)
			for !s.post(func() {
				s.mu.Lock()
				s.owner = id
				s.mu.Unlock()
				s.cap.OwnerChanged(id)
			}) {
				time.Sleep(10 * time.Millisecond)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// --- admin API backend ---

type backend struct{ s *Server }

// call runs f in the loop and waits for its answer.
func (b *backend) call(ctx context.Context, f func(now int64) error) error {
	done := make(chan error, 1)
	select {
	case b.s.inbox <- func() { done <- f(time.Now().UnixMilli()) }:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func cfID(name string) core.ChangefeedID { return core.ChangefeedID("default/" + name) }

// classify maps the coordinator's refusals to the API's errors.
func classify(err error) error {
	if err == nil {
		return nil
	}
	for _, known := range []error{adminapi.ErrNotFound, adminapi.ErrAlreadyExists, adminapi.ErrInvalidState, adminapi.ErrInvalidParam,
		adminapi.ErrNodeNotFound, adminapi.ErrNotReady, adminapi.ErrNotOwner} {
		if errors.Is(err, known) {
			return err // classified already
		}
	}
	msg := err.Error()
	switch {
	case errors.Is(err, coordinator.ErrNotInitialized):
		return fmt.Errorf("%w: %v", adminapi.ErrNotReady, err)
	case strings.Contains(msg, "not found"):
		return fmt.Errorf("%w: %v", adminapi.ErrNotFound, err)
	case strings.Contains(msg, "already exists"):
		return fmt.Errorf("%w: %v", adminapi.ErrAlreadyExists, err)
	case strings.Contains(msg, "cannot be resumed"), strings.Contains(msg, "is not running"), strings.Contains(msg, "still being stopped"):
		return fmt.Errorf("%w: %v", adminapi.ErrInvalidState, err)
	}
	return err
}

var errPersist = errors.New("persisting the change in etcd failed; the outcome is unknown")

// owned runs f on the coordinator and executes its effects.
func (b *backend) owned(ctx context.Context, f func(now int64, c *coordinator.Coordinator, out *core.Effects) error) error {
	return b.call(ctx, func(now int64) error {
		c := b.s.cap.Coordinator
		if c == nil {
			return adminapi.ErrNotOwner
		}
		if !c.Initialized() {
			return adminapi.ErrNotReady
		}
		out := &core.Effects{}
		if err := classify(f(now, c, out)); err != nil {
			return err
		}
		if !b.s.exec(out) {
			return errPersist
		}
		return nil
	})
}

func (b *backend) info(c *coordinator.Coordinator, name string) (adminapi.ChangefeedInfo, bool) {
	for _, cf := range c.Changefeeds() {
		if cf.ID != cfID(name) || cf.State == spec.StateRemoved {
			continue
		}
		b.s.mu.Lock()
		api := b.s.peers[cf.Node].APIAddr
		b.s.mu.Unlock()
		return adminapi.ChangefeedInfo{ID: cf.ID.Name(), Namespace: "default", State: cf.State, CheckpointTs: spec.TSO(cf.Checkpoint),
			CheckpointTime: adminapi.TSOTime(spec.TSO(cf.Checkpoint)), StoredTs: spec.TSO(cf.Stored), Epoch: cf.Epoch,
			Operator: cf.Operator, Sched: cf.Sched, MaintainerOn: api}, true
	}
	return adminapi.ChangefeedInfo{}, false
}

func (b *backend) Create(ctx context.Context, req adminapi.CreateRequest) (adminapi.ChangefeedInfo, error) {
	var info adminapi.ChangefeedInfo
	err := b.owned(ctx, func(now int64, c *coordinator.Coordinator, out *core.Effects) error {
		// TiCDC's create (api/v2 createChangefeed at b813e76f9): start-ts 0
		// is the current TSO, one above it is refused. Here the current
		// TSO is the wall clock (the upstream's PD). The API speaks TSOs;
		// the runtime counts in ms, so a logical part is dropped (the
		// changefeed starts up to 1 ms earlier: rows again, never a gap).
		if current := spec.TSO(uint64(now)); req.StartTs > current {
			return fmt.Errorf("%w: invalid start-ts %d, larger than current tso %d", adminapi.ErrInvalidParam, req.StartTs, current)
		}
		if err := notATSO("start-ts", req.StartTs); err != nil {
			return err
		}
		start := spec.PhysicalMs(req.StartTs)
		if start == 0 {
			start = b.s.up.GlobalResolvedTs()
		}
		if err := c.CreateChangefeed(now, cfID(req.ChangefeedID), start, b.s.up.TablesAt(start), out); err != nil {
			return err
		}
		info = adminapi.ChangefeedInfo{ID: req.ChangefeedID, Namespace: "default", State: spec.StateNormal,
			CheckpointTs: spec.TSO(start), CheckpointTime: adminapi.TSOTime(spec.TSO(start)), StoredTs: spec.TSO(start)}
		return nil
	})
	return info, err
}

func (b *backend) List(ctx context.Context) ([]adminapi.ChangefeedInfo, error) {
	var out []adminapi.ChangefeedInfo
	err := b.owned(ctx, func(now int64, c *coordinator.Coordinator, _ *core.Effects) error {
		for _, cf := range c.Changefeeds() {
			if i, ok := b.info(c, cf.ID.Name()); ok {
				out = append(out, i)
			}
		}
		return nil
	})
	return out, err
}

func (b *backend) Get(ctx context.Context, id string) (adminapi.ChangefeedInfo, error) {
	var info adminapi.ChangefeedInfo
	err := b.owned(ctx, func(now int64, c *coordinator.Coordinator, _ *core.Effects) error {
		i, ok := b.info(c, id)
		if !ok {
			return fmt.Errorf("%w: %s", adminapi.ErrNotFound, id)
		}
		info = i
		return nil
	})
	return info, err
}

func (b *backend) Pause(ctx context.Context, id string) error {
	err := b.owned(ctx, func(now int64, c *coordinator.Coordinator, out *core.Effects) error {
		return c.PauseChangefeed(now, cfID(id), out)
	})
	if errors.Is(err, adminapi.ErrInvalidState) {
		return nil // TiCDC's pause has no state check: pausing a stopped changefeed succeeds.
	}
	return err
}

func (b *backend) Resume(ctx context.Context, id string, overwrite uint64) error {
	return b.owned(ctx, func(now int64, c *coordinator.Coordinator, out *core.Effects) error {
		// As TiCDC's resume (verifyResumeChangefeedConfig): an overwrite
		// checkpoint above the current TSO is refused. A logical part is
		// dropped, as in Create.
		if current := spec.TSO(uint64(now)); overwrite > current {
			return fmt.Errorf("%w: invalid checkpoint-ts %d, larger than current tso %d", adminapi.ErrInvalidParam, overwrite, current)
		}
		if err := notATSO("checkpoint-ts", overwrite); err != nil {
			return err
		}
		return c.ResumeChangefeed(now, cfID(id), spec.PhysicalMs(overwrite), out)
	})
}

func (b *backend) Remove(ctx context.Context, id string) error {
	err := b.owned(ctx, func(now int64, c *coordinator.Coordinator, out *core.Effects) error {
		return c.RemoveChangefeed(now, cfID(id), out)
	})
	if errors.Is(err, adminapi.ErrNotFound) {
		return nil // TiCDC answers 200 for a missing changefeed.
	}
	if err != nil {
		return err
	}
	// As TiCDC's Controller.RemoveChangefeed: answer once the stop
	// operator has finished, so a create of the same ID that follows
	// finds the old changefeed gone, maintainer and dispatchers closed.
	for {
		pending := false
		err := b.call(ctx, func(int64) error {
			c := b.s.cap.Coordinator
			if c == nil {
				return fmt.Errorf("%w: this capture lost the ownership while %s was being removed; the next owner finishes the removal", adminapi.ErrNotOwner, id)
			}
			for _, cf := range c.Changefeeds() {
				pending = pending || (cf.ID == cfID(id) && cf.State == spec.StateRemoved)
			}
			return nil
		})
		if err != nil || !pending {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// MoveMaintainer starts the coordinator's MoveMaintainerOperator (the
// debug endpoint move_maintainer).
func (b *backend) MoveMaintainer(ctx context.Context, id, target string) error {
	if err := b.livePeer(target); err != nil {
		return err
	}
	return b.owned(ctx, func(now int64, c *coordinator.Coordinator, out *core.Effects) error {
		if _, ok := b.info(c, id); !ok {
			return fmt.Errorf("%w: %s", adminapi.ErrNotFound, id)
		}
		err := c.MoveChangefeed(now, cfID(id), core.NodeID(target), out)
		switch {
		case err == nil:
			return nil
		case strings.Contains(err.Error(), "not a valid move target"):
			return fmt.Errorf("%w: %v (it has not answered the coordinator's bootstrap, or it runs the maintainer already)", adminapi.ErrNodeNotFound, err)
		default: // not replicating, or an operator in flight
			return fmt.Errorf("%w: %v", adminapi.ErrInvalidState, err)
		}
	})
}

// livePeer refuses a target that is not a live capture (TiCDC's
// ErrNodeIsNotFound).
func (b *backend) livePeer(target string) error {
	b.s.mu.Lock()
	_, known := b.s.peers[core.NodeID(target)]
	var ids []string
	for p := range b.s.peers {
		ids = append(ids, string(p))
	}
	b.s.mu.Unlock()
	if known {
		return nil
	}
	sort.Strings(ids)
	return fmt.Errorf("%w: target node %q is not a live capture (captures: %s)", adminapi.ErrNodeNotFound, target, strings.Join(ids, ", "))
}

func (b *backend) maintained(ctx context.Context, id string, f func(out *core.Effects) int) (int, error) {
	n := 0
	err := b.call(ctx, func(now int64) error {
		m := b.s.cap.Maintainers.Get(cfID(id))
		ok := false
		for _, mi := range b.s.cap.Maintainers.Maintainers() {
			if mi.Changefeed == cfID(id) && mi.Bootstrapped && !mi.Removing {
				ok = true
			}
		}
		if m == nil || !ok {
			return adminapi.ErrNoMaintainer
		}
		out := &core.Effects{}
		n = f(out)
		b.s.exec(out)
		return nil
	})
	return n, err
}

func (b *backend) MoveTable(ctx context.Context, id string, table int64, target string) (int, error) {
	// TiCDC's move table refuses a target that is not a live capture.
	if err := b.livePeer(target); err != nil {
		return 0, err
	}
	return b.maintained(ctx, id, func(out *core.Effects) int {
		return b.s.cap.Maintainers.Get(cfID(id)).MoveTable(table, core.NodeID(target), out)
	})
}

func (b *backend) SplitTable(ctx context.Context, id string, table int64) (int, error) {
	return b.maintained(ctx, id, func(out *core.Effects) int {
		return b.s.cap.Maintainers.Get(cfID(id)).SplitTable(table, out)
	})
}

func (b *backend) Captures(ctx context.Context) ([]adminapi.Capture, error) {
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	var out []adminapi.Capture
	for id, v := range b.s.peers {
		out = append(out, adminapi.Capture{ID: string(id), Address: v.AdvertiseAddr, APIAddr: v.APIAddr, IsOwner: id == b.s.owner})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (b *backend) OwnerAPIAddr() string {
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	if b.s.owner == "" {
		return ""
	}
	return b.s.peers[b.s.owner].APIAddr
}

func (b *backend) MaintainerAPIAddr(ctx context.Context, id string) string {
	owner := b.OwnerAPIAddr()
	if owner == "" {
		return ""
	}
	info, err := adminapi.NewClient(owner).Get(ctx, id)
	if err != nil {
		return ""
	}
	return info.MaintainerOn
}

// LogBadRequest logs an admin API request refused as malformed.
func (b *backend) LogBadRequest(method, path string, err error) {
	b.s.lg.Warn("open_api.go", 1, "drop malformed admin API request", zap.String("method", method), zap.String("path", path),
		zap.String("error", err.Error()))
}

func (b *backend) SetFailpoint(ctx context.Context, name string, on bool) error {
	return b.call(ctx, func(now int64) error {
		switch name {
		case "BlockCreateDispatcher":
			b.s.cap.Orchestrator.BlockCreateDispatcher = on
		case "NotReadyToCloseDispatcher":
			b.s.cap.Orchestrator.NotReadyToCloseDispatcher = on
		default:
			if known, err := b.s.setKVFailpoint(name, on); !known {
				return fmt.Errorf("%w: unknown failpoint %q (known: BlockCreateDispatcher, NotReadyToCloseDispatcher, %s)", adminapi.ErrInvalidParam, name, KVClientRecvDelay)
			} else if err != nil {
				return fmt.Errorf("%w: %v", adminapi.ErrInvalidParam, err)
			}
		}
		b.s.lg.Warn("failpoint.go", 1, "failpoint switched", zap.String("name", name), zap.Bool("on", on))
		return nil
	})
}

// checkRule refuses a rule that cannot be applied as asked: a clear, or
// count > 0, for_ms >= 0 and action delay or dup with delay_ms > 0, or
// action drop without delay_ms.
func checkRule(r adminapi.DelayRule) error {
	if r.Clear && r.Count == 0 {
		return nil
	}
	ok := r.Count > 0 && r.ForMs >= 0
	switch r.Action {
	case "delay", "dup":
		ok = ok && r.DelayMs > 0
	case "drop":
		ok = ok && r.DelayMs == 0
	default:
		ok = false
	}
	if !ok {
		return fmt.Errorf("%w: a delay rule needs count > 0, for_ms >= 0 and action delay or dup with delay_ms > 0, or action drop without delay_ms", adminapi.ErrInvalidParam)
	}
	return nil
}

func (b *backend) AddDelayRule(ctx context.Context, r adminapi.DelayRule) error {
	if err := checkRule(r); err != nil {
		return err
	}
	return b.call(ctx, func(now int64) error {
		if r.Clear {
			b.s.rules = nil
		}
		// Forget spent and ended rules (a fault may renew its rule often).
		kept := b.s.rules[:0]
		for _, old := range b.s.rules {
			if old.Count > 0 && (old.until.IsZero() || time.Now().Before(old.until)) {
				kept = append(kept, old)
			}
		}
		b.s.rules = kept
		if r.Count > 0 {
			nr := rule{DelayRule: r}
			if r.ForMs > 0 {
				nr.until = time.Now().Add(time.Duration(r.ForMs) * time.Millisecond)
			}
			b.s.rules = append(b.s.rules, nr)
		}
		return nil
	})
}

// notATSO refuses a ts whose physical part is 0 ms but which is not 0: the
// runtime counts in ms and would read it as 0 (now, or keep).
func notATSO(name string, ts uint64) error {
	if ts != 0 && spec.PhysicalMs(ts) == 0 {
		return fmt.Errorf("%w: invalid %s %d: not a TSO, its physical part (ts >> %d) is 0 ms", adminapi.ErrInvalidParam, name, ts, spec.TSOLogicalBits)
	}
	return nil
}
