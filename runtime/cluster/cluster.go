// Package cluster runs a real cdcspec cluster on one machine: an embedded
// etcd and kfake broker (or external ones), N capture processes of the
// cdcspec binary (`cdcspec server`), the shared synthetic upstream and a
// changefeed; it injects faults of the vocabulary (spec.Fault: kill-capture
// and the supervisor's restart, expire-session, sink-error as Kafka produce
// timeouts, stall-upstream, message rules, failpoints; faults.go says which
// and why not the others) and domain actions (pause-changefeed, move-table,
// split-table, create-table), then heals, waits for the checkpoint and
// checks the topic (runtime/datacheck) and the capture logs (cdcspec trace).
package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"

	"cdcspec/impl/coordinator"
	"cdcspec/impl/core"
	"cdcspec/impl/logging"
	"cdcspec/impl/upstream"
	"cdcspec/runtime/adminapi"
	"cdcspec/runtime/etcdmeta"
	"cdcspec/runtime/kafkasink"
	"cdcspec/runtime/server"
	"cdcspec/spec"
)

// Config of a cluster.
type Config struct {
	Nodes  int     // capture processes (default 3)
	Tables int     // initial tables (default 4)
	Rate   float64 // upstream row changes per second, all initial tables together (default 2000; < 0: none)
	Seed   uint64
	Bugs   []string
	// LegacyRawWatermark passes --legacy-raw-watermark to every capture.
	LegacyRawWatermark bool
	// Stores: TiKV stores under the upstream (runtime/tikv; every capture
	// then runs a kv-client); 0: none, spans resolve to the upstream
	// resolved ts.
	Stores int

	Etcd        []string // external etcd; empty: embedded
	Kafka       []string // external brokers; empty: embedded kfake
	KafkaListen string   // kfake's first broker address (e.g. 127.0.0.1:9092)

	Binary string // cdcspec binary (default os.Executable())
	LogDir string // default a new temp dir

	SessionTTL   time.Duration // default 5s
	KafkaTimeout time.Duration // per request, default 2s
	RestartDelay time.Duration // kill -9 -> restart, default 1s
	Changefeed   string        // default "cf-1"

	// LogLevel of the captures (default "debug": the coordinator's status
	// and checkpoint lines, which trace's properties need, are DEBUG lines).
	LogLevel string

	// Progress receives progress lines (nil: none).
	Progress io.Writer
}

func (c Config) withDefaults() (Config, error) {
	if c.Nodes == 0 {
		c.Nodes = 3
	}
	if c.Tables == 0 {
		c.Tables = 4
	}
	if c.Rate == 0 {
		c.Rate = 2000
	}
	if c.SessionTTL == 0 {
		c.SessionTTL = 5 * time.Second
	}
	if c.KafkaTimeout == 0 {
		c.KafkaTimeout = 2 * time.Second
	}
	if c.RestartDelay == 0 {
		c.RestartDelay = time.Second
	}
	if c.LogLevel == "" {
		c.LogLevel = "debug"
	}
	if c.Changefeed == "" {
		c.Changefeed = "cf-1"
	}
	if c.Binary == "" {
		b, err := os.Executable()
		if err != nil {
			return c, fmt.Errorf("cluster: finding the cdcspec binary: %w", err)
		}
		c.Binary = b
	}
	if c.LogDir == "" {
		d, err := os.MkdirTemp("", "cdcspec-run-")
		if err != nil {
			return c, err
		}
		c.LogDir = d
	} else if err := os.MkdirAll(c.LogDir, 0o755); err != nil {
		return c, fmt.Errorf("cluster: log dir: %w", err)
	}
	if c.Nodes < 1 || c.Tables < 1 {
		return c, fmt.Errorf("cluster: need --nodes >= 1 and --tables >= 1 (got %d, %d)", c.Nodes, c.Tables)
	}
	if c.Rate < 0 {
		c.Rate = 0
	}
	return c, nil
}

// proc is one capture slot: a process, restarted after it exits.
type proc struct {
	slot    int
	log     string
	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{}
	starts  int
	hold    bool // do not restart (killed on purpose, restart pending; or cluster stopping)
	lastErr string
}

// Cluster is a running cluster.
type Cluster struct {
	cfg   Config
	emb   *etcdmeta.Embedded
	kf    *kafkasink.Kfake
	Etcd  *etcdmeta.Client
	Up    *server.Upstream
	lg    *logging.Logger
	logf  *os.File
	procs []*proc
	rng   *rand.Rand
	rngMu sync.Mutex

	brokers   []string
	endpoints []string
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup

	closeOnce sync.Once
	// startCtx is Start's context: once it ends (a signal), Close gives
	// the captures only InterruptGrace to exit.
	startCtx context.Context

	mu       sync.Mutex
	stopping bool
	members  map[string]server.CaptureValue
	frozen   []frozenProc
	// lastMaintainer: the maintainer host a scenario targeted last.
	lastMaintainer string
	// path: the outcome the running step's injector saw (notePath).
	path     *pathNote
	timeline []Sample
	StartTs  uint64  // the changefeed's start ts (ms; spec.TSO for a user)
	kv       kvState // the TiKV stores, when Config.Stores > 0
}

type frozenProc struct {
	pid int
	id  string
}

// Sample is one observation of the changefeed's stored state.
type Sample struct {
	At         int64 // ms
	State      string
	Checkpoint uint64
	Err        string
}

// Start brings the cluster up and creates the changefeed.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &Cluster{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x72756e)), members: map[string]server.CaptureValue{}, startCtx: ctx}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	ok := false
	defer func() {
		if !ok {
			c.Close()
		}
	}()
	c.logf, err = os.Create(filepath.Join(cfg.LogDir, "cluster.log"))
	if err != nil {
		return nil, err
	}
	c.lg = server.NewWallClockLogger(c.logf, "info")
	c.endpoints = cfg.Etcd
	if len(c.endpoints) == 0 {
		c.emb, err = etcdmeta.StartEmbedded(etcdmeta.EmbedConfig{})
		if err != nil {
			return nil, fmt.Errorf("cluster: embedded etcd: %w", err)
		}
		c.endpoints = c.emb.Endpoints()
	}
	c.brokers = cfg.Kafka
	if len(c.brokers) == 0 {
		// The broker's segments go to files (removed by Close), so a
		// long run's topic is in the page cache, not in this process.
		c.kf, err = kafkasink.StartKfake(kafkasink.KfakeConfig{ListenAddr: cfg.KafkaListen, DataDir: c.kafkaDir()})
		if err != nil {
			return nil, fmt.Errorf("cluster: embedded kfake: %w", err)
		}
		c.brokers = c.kf.Addrs()
	}
	c.progress("etcd %s, kafka %s, logs in %s", strings.Join(c.endpoints, ","), strings.Join(c.brokers, ","), cfg.LogDir)
	c.progress("admin API of each capture as it registers below: cdcspec cli changefeed get %s --server http://ADDR", cfg.Changefeed)
	c.Etcd, err = etcdmeta.Dial(ctx, etcdmeta.ClientConfig{Endpoints: c.endpoints})
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	ucfg, err := server.PublishUpstream(ctx, c.Etcd, server.UpstreamConfig{Seed: cfg.Seed, Tables: cfg.Tables, RowsPerSec: cfg.Rate / float64(cfg.Tables)})
	if err != nil {
		return nil, err
	}
	var rev int64
	c.Up, rev, err = server.LoadUpstream(ctx, c.Etcd)
	if err != nil {
		return nil, err
	}
	_ = ucfg
	go c.Up.Follow(c.ctx, c.Etcd, rev+1)
	if err := c.startStores(ctx); err != nil {
		return nil, err
	}
	c.wg.Add(2)
	go c.watchMembers()
	go c.sampleChangefeed()
	for i := 0; i < cfg.Nodes; i++ {
		p := &proc{slot: i + 1, log: filepath.Join(cfg.LogDir, fmt.Sprintf("capture-%d.log", i+1))}
		c.procs = append(c.procs, p)
		if err := c.startProc(p); err != nil {
			return nil, err
		}
	}
	if err := c.waitCaptures(ctx, cfg.Nodes, 30*time.Second); err != nil {
		return nil, err
	}
	// Create the changefeed (retried until the coordinator is initialized).
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := c.API().Create(ctx, adminapi.CreateRequest{ChangefeedID: cfg.Changefeed})
		if err == nil {
			c.StartTs = spec.PhysicalMs(info.CheckpointTs)
			break
		}
		if errors.Is(err, adminapi.ErrAlreadyExists) {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("cluster: creating changefeed %s: %w", cfg.Changefeed, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	c.progress("changefeed %s created at start-ts %s over %d tables, %g rows/s", cfg.Changefeed, TsText(c.StartTs), cfg.Tables, cfg.Rate)
	ok = true
	return c, nil
}

// intn and perm draw from the seeded rng; faults and the delayed resume of
// a pause draw from different goroutines.
func (c *Cluster) intn(n int) int {
	c.rngMu.Lock()
	defer c.rngMu.Unlock()
	return c.rng.IntN(n)
}

func (c *Cluster) perm(n int) []int {
	c.rngMu.Lock()
	defer c.rngMu.Unlock()
	return c.rng.Perm(n)
}

// kafkaDir holds the embedded broker's segments while the cluster runs.
func (c *Cluster) kafkaDir() string { return filepath.Join(c.cfg.LogDir, "kafka-data") }

// Endpoints returns the etcd endpoints.
func (c *Cluster) Endpoints() []string { return c.endpoints }

// Brokers returns the Kafka brokers.
func (c *Cluster) Brokers() []string { return c.brokers }

// Kfake returns the embedded broker (nil with external Kafka).
func (c *Cluster) Kfake() *kafkasink.Kfake { return c.kf }

// LogDir returns the log directory.
func (c *Cluster) LogDir() string { return c.cfg.LogDir }

// Topic is the changefeed's topic.
func (c *Cluster) Topic() string { return kafkasink.TopicName("default/" + c.cfg.Changefeed) }

func (c *Cluster) progress(format string, args ...any) {
	if c.cfg.Progress != nil {
		fmt.Fprintf(c.cfg.Progress, "[%s] %s\n", time.Now().UTC().Format("15:04:05.000"), fmt.Sprintf(format, args...))
	}
}

func (c *Cluster) startProc(p *proc) error {
	// Holding c.mu makes start and Close's stopping flag exclusive: no
	// process starts once Close began.
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopping {
		return nil
	}
	args := []string{"server", "--etcd", strings.Join(c.endpoints, ","), "--kafka", strings.Join(c.brokers, ","),
		"--log-file", p.log, "--log-level", c.cfg.LogLevel, "--session-ttl", c.cfg.SessionTTL.String(), "--kafka-timeout", c.cfg.KafkaTimeout.String()}
	for _, b := range c.cfg.Bugs {
		args = append(args, "--bug", b)
	}
	if c.cfg.LegacyRawWatermark {
		args = append(args, "--legacy-raw-watermark")
	}
	cmd := exec.Command(c.cfg.Binary, args...)
	out, err := os.OpenFile(p.log+".stderr", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		return fmt.Errorf("cluster: starting capture %d (%s): %w", p.slot, c.cfg.Binary, err)
	}
	done := make(chan struct{})
	p.mu.Lock()
	p.cmd, p.done, p.hold = cmd, done, false
	p.starts++
	p.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		err := cmd.Wait()
		out.Close()
		close(done)
		p.mu.Lock()
		if err != nil {
			p.lastErr = err.Error()
		}
		hold := p.hold
		p.mu.Unlock()
		c.mu.Lock()
		stopping := c.stopping
		c.mu.Unlock()
		if stopping || hold {
			return
		}
		// Exited by itself (capture suicide): restart, as a supervisor does.
		c.progress("capture %d exited (%v); restarting", p.slot, err)
		select {
		case <-c.ctx.Done():
			return
		case <-time.After(c.cfg.RestartDelay):
		}
		if err := c.startProc(p); err != nil {
			c.progress("restart of capture %d failed: %v", p.slot, err)
		}
	}()
	return nil
}

// pidOf returns the pid running slot p (0 if none).
func (p *proc) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	select {
	case <-p.done:
		return 0
	default:
	}
	return p.cmd.Process.Pid
}

func (c *Cluster) watchMembers() {
	defer c.wg.Done()
	prefix := c.Etcd.CapturePrefix()
	for c.ctx.Err() == nil {
		kvs, rev, err := c.Etcd.GetPrefix(c.ctx, prefix)
		if err != nil {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		c.setMembers(kvs)
		for ev := range c.Etcd.Watch(c.ctx, prefix, rev+1) {
			if ev.Err != nil {
				break
			}
			if kvs, _, err := c.Etcd.GetPrefix(c.ctx, prefix); err == nil {
				c.setMembers(kvs)
			}
		}
	}
}

// setMembers logs NodeJoined/NodeLeft (the capture set as etcd shows it;
// one observer, so each change is logged once).
func (c *Cluster) setMembers(kvs []etcdmeta.KV) {
	now := map[string]server.CaptureValue{}
	for _, kv := range kvs {
		var v server.CaptureValue
		if json.Unmarshal(kv.Value, &v) == nil && v.ID != "" {
			now[v.ID] = v
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.members {
		if _, ok := now[id]; !ok {
			c.lg.Event(nil, spec.Event{Kind: spec.NodeLeft, Node: id})
		}
	}
	var joined []string
	for id := range now {
		if _, ok := c.members[id]; !ok {
			joined = append(joined, id)
		}
	}
	sort.Strings(joined)
	for _, id := range joined {
		c.lg.Event(nil, spec.Event{Kind: spec.NodeJoined, Node: id})
		c.progress("capture %s (pid %d) registered: admin API http://%s, transport %s", id, now[id].PID, now[id].APIAddr, now[id].AdvertiseAddr)
	}
	c.members = now
}

// Members returns the registered captures.
func (c *Cluster) Members() map[string]server.CaptureValue {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]server.CaptureValue, len(c.members))
	for k, v := range c.members {
		out[k] = v
	}
	return out
}

func (c *Cluster) waitCaptures(ctx context.Context, n int, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		if len(c.Members()) >= n {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			var errs []string
			for _, p := range c.procs {
				b, _ := os.ReadFile(p.log + ".stderr")
				if len(b) > 0 {
					errs = append(errs, fmt.Sprintf("capture %d: %s", p.slot, strings.TrimSpace(string(b))))
				}
			}
			return fmt.Errorf("cluster: only %d of %d captures registered after %s %s", len(c.Members()), n, d, strings.Join(errs, "; "))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// API returns a client for some live capture's admin API (any capture
// forwards to the owner).
func (c *Cluster) API() *adminapi.Client {
	m := c.Members()
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if len(ids) == 0 {
		return adminapi.NewClient("127.0.0.1:1")
	}
	return adminapi.NewClient(m[ids[c.intn(len(ids))]].APIAddr)
}

// OwnerAPI returns a client for the owner's API.
func (c *Cluster) OwnerAPI(ctx context.Context) (*adminapi.Client, string, error) {
	id, _, err := c.Etcd.Owner(ctx)
	if err != nil {
		return nil, "", err
	}
	v, ok := c.Members()[id]
	if !ok {
		return nil, "", fmt.Errorf("owner %s not registered", id)
	}
	return adminapi.NewClient(v.APIAddr), id, nil
}

// sampleChangefeed records the stored state and checkpoint every 100 ms.
func (c *Cluster) sampleChangefeed() {
	defer c.wg.Done()
	id := core.ChangefeedID("default/" + c.cfg.Changefeed)
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		s, ok := c.stored(id)
		if !ok {
			continue
		}
		c.mu.Lock()
		c.timeline = append(c.timeline, s)
		c.mu.Unlock()
	}
}

func (c *Cluster) stored(id core.ChangefeedID) (Sample, bool) {
	ctx, cancel := context.WithTimeout(c.ctx, 2*time.Second)
	defer cancel()
	ikv, ok, _, err := c.Etcd.Get(ctx, coordinator.InfoKey(id))
	if err != nil || !ok {
		return Sample{}, false
	}
	skv, ok, _, err := c.Etcd.Get(ctx, coordinator.StatusKey(id))
	if err != nil || !ok {
		return Sample{}, false
	}
	var info coordinator.ChangeFeedInfo
	var st coordinator.ChangefeedStatus
	if json.Unmarshal(ikv.Value, &info) != nil || json.Unmarshal(skv.Value, &st) != nil {
		return Sample{}, false
	}
	s := Sample{At: time.Now().UnixMilli(), State: info.State, Checkpoint: st.CheckpointTs}
	if info.Error != nil {
		s.Err = info.Error.Message
	}
	return s, true
}

// Stored reads the changefeed's stored state now.
func (c *Cluster) Stored() (Sample, bool) {
	return c.stored(core.ChangefeedID("default/" + c.cfg.Changefeed))
}

// Timeline returns the samples so far.
func (c *Cluster) Timeline() []Sample {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Sample(nil), c.timeline...)
}

// --- faults ---

// liveSlots lists slots with a running process and a registered capture.
func (c *Cluster) captureOfSlot() map[int]string {
	byPid := map[int]string{}
	for id, v := range c.Members() {
		byPid[v.PID] = id
	}
	out := map[int]string{}
	for _, p := range c.procs {
		if pid := p.pid(); pid != 0 {
			if id, ok := byPid[pid]; ok {
				out[p.slot] = id
			}
		}
	}
	return out
}

func (c *Cluster) pickSlot(avoidOwner bool) (*proc, string, error) {
	owner, _, _ := c.Etcd.Owner(c.ctx)
	slots := c.captureOfSlot()
	var cands []*proc
	for _, p := range c.procs {
		id, ok := slots[p.slot]
		if !ok || (avoidOwner && id == owner && len(slots) > 1) {
			continue
		}
		cands = append(cands, p)
	}
	if len(cands) == 0 {
		return nil, "", errors.New("no running capture to pick")
	}
	p := cands[c.intn(len(cands))]
	return p, slots[p.slot], nil
}

// KillCapture kill -9s a capture (the slot running captureID, or a random
// one when empty) and restarts it after RestartDelay. It returns the
// capture ID it killed.
func (c *Cluster) KillCapture(captureID string) (string, error) {
	var p *proc
	if captureID == "" {
		var err error
		p, captureID, err = c.pickSlot(false)
		if err != nil {
			return "", err
		}
	} else {
		for slot, id := range c.captureOfSlot() {
			if id == captureID {
				p = c.procs[slot-1]
			}
		}
		if p == nil {
			return "", fmt.Errorf("capture %s is not running", captureID)
		}
	}
	p.mu.Lock()
	p.hold = true
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return "", fmt.Errorf("kill -9 capture %d: %w", p.slot, err)
	}
	<-done
	c.lg.Warn("cluster.go", 1, "capture killed", zap.String("captureID", captureID), zap.Int("slot", p.slot))
	go func() {
		select {
		case <-c.ctx.Done():
			return
		case <-time.After(c.cfg.RestartDelay):
		}
		c.mu.Lock()
		stopping := c.stopping
		c.mu.Unlock()
		if !stopping {
			if err := c.startProc(p); err != nil {
				c.progress("restart of capture %d failed: %v", p.slot, err)
			}
		}
	}()
	return captureID, nil
}

// bystander picks a running capture that is neither the owner nor the
// changefeed's maintainer host (any non-owner if there is none).
func (c *Cluster) bystander(ctx context.Context) (*proc, string, error) {
	owner, _, _ := c.Etcd.Owner(ctx)
	maint := ""
	if info, err := c.API().Get(ctx, c.cfg.Changefeed); err == nil {
		for id, v := range c.Members() {
			if v.APIAddr == info.MaintainerOn {
				maint = id
			}
		}
	}
	slots := c.captureOfSlot()
	var fallback *proc
	for _, p := range c.procs {
		id, ok := slots[p.slot]
		if !ok || id == owner {
			continue
		}
		if id != maint {
			return p, id, nil
		}
		fallback = p
	}
	if fallback != nil {
		return fallback, slots[fallback.slot], nil
	}
	return nil, "", errors.New("no capture other than the owner")
}

// maintainerHost returns the capture running the changefeed's maintainer.
func (c *Cluster) maintainerHost(ctx context.Context) (string, error) {
	info, err := c.API().Get(ctx, c.cfg.Changefeed)
	if err != nil {
		return "", err
	}
	for id, v := range c.Members() {
		if v.APIAddr == info.MaintainerOn {
			return id, nil
		}
	}
	return "", fmt.Errorf("maintainer of %s not found (api %q)", c.cfg.Changefeed, info.MaintainerOn)
}

// setFailpoint switches a failpoint on one capture.
func (c *Cluster) setFailpoint(ctx context.Context, id, name string, on bool) error {
	v, ok := c.Members()[id]
	if !ok {
		return fmt.Errorf("capture %s not registered", id)
	}
	return adminapi.NewClient(v.APIAddr).SetFailpoint(ctx, name, on)
}

// delayRule installs an inbound message rule on one capture.
func (c *Cluster) delayRule(ctx context.Context, id string, r adminapi.DelayRule) error {
	v, ok := c.Members()[id]
	if !ok {
		return fmt.Errorf("capture %s not registered", id)
	}
	return adminapi.NewClient(v.APIAddr).AddDelayRule(ctx, r)
}

// StaleCreate moves a table to a capture that holds the move's Create for
// d, then kill -9s the maintainer's capture: the Create of the old
// maintainer generation lands after the next maintainer took over (#5083).
func (c *Cluster) StaleCreate(ctx context.Context, d time.Duration) (string, error) {
	maint, err := c.maintainerHost(ctx)
	if err != nil {
		return "", err
	}
	var others []string
	for id := range c.Members() {
		if id != maint {
			others = append(others, id)
		}
	}
	if len(others) == 0 {
		return "", errors.New("stale-create needs 2 captures")
	}
	sort.Strings(others)
	dest := others[c.intn(len(others))]
	if err := c.delayRule(ctx, dest, adminapi.DelayRule{Type: "ScheduleDispatcherRequest", Action: "delay", DelayMs: d.Milliseconds(), Count: 1}); err != nil {
		return "", err
	}
	moved := int64(0)
	for _, t := range c.Up.TablesAt(uint64(time.Now().UnixMilli()) - 2000) {
		if n, err := c.API().MoveTable(ctx, c.cfg.Changefeed, t, dest); err == nil && n > 0 {
			moved = t
			break
		}
	}
	if moved == 0 {
		return "", fmt.Errorf("no table could move to %s", dest)
	}
	time.Sleep(time.Second)
	if _, err := c.KillCapture(maint); err != nil {
		return "", err
	}
	return fmt.Sprintf("table %d -> %s (Create held %s), maintainer %s killed", moved, dest, d, maint), nil
}

// clearFailpoints switches every failpoint off on every capture.
func (c *Cluster) clearFailpoints() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for id := range c.Members() {
		_ = c.setFailpoint(ctx, id, "BlockCreateDispatcher", false)
		_ = c.setFailpoint(ctx, id, "NotReadyToCloseDispatcher", false)
		_ = c.delayRule(ctx, id, adminapi.DelayRule{Clear: true})
	}
}

// FailoverInflight keeps dispatcher operators in flight (one capture does
// not create dispatchers, another does not finish closing them), moves
// every table to the first one and splits one, then kill -9s the
// maintainer's capture: the next maintainer must restore the in-flight
// operators from the dispatcher managers' journals (#3411/#3691).
func (c *Cluster) FailoverInflight(ctx context.Context) (string, error) {
	maint, err := c.maintainerHost(ctx)
	if err != nil {
		return "", err
	}
	var others []string
	for id := range c.Members() {
		if id != maint {
			others = append(others, id)
		}
	}
	sort.Strings(others)
	if len(others) < 2 {
		return "", errors.New("failover-inflight needs 3 captures")
	}
	dest, closer := others[0], others[1]
	if err := c.setFailpoint(ctx, dest, "BlockCreateDispatcher", true); err != nil {
		return "", err
	}
	if err := c.setFailpoint(ctx, closer, "NotReadyToCloseDispatcher", true); err != nil {
		return "", err
	}
	moved := 0
	for _, t := range c.Up.TablesAt(uint64(time.Now().UnixMilli()) - 2000) {
		if n, err := c.API().MoveTable(ctx, c.cfg.Changefeed, t, dest); err == nil {
			moved += n
		}
	}
	time.Sleep(300 * time.Millisecond)
	if _, err := c.KillCapture(maint); err != nil {
		return "", err
	}
	return fmt.Sprintf("maintainer %s killed with %d moves to %s in flight", maint, moved, dest), nil
}

// Freeze SIGSTOPs a bystander capture (no heartbeats, its session lease
// still alive until expired): a process stall, as in a long GC pause.
func (c *Cluster) Freeze(ctx context.Context) (string, error) {
	p, id, err := c.bystander(ctx)
	if err != nil {
		return "", err
	}
	pid := p.pid()
	if pid == 0 {
		return "", fmt.Errorf("capture %d is not running", p.slot)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return "", err
	}
	c.mu.Lock()
	c.frozen = append(c.frozen, frozenProc{pid: pid, id: id})
	c.mu.Unlock()
	c.lg.Warn("cluster.go", 1, "capture frozen (SIGSTOP)", zap.String("captureID", id), zap.Int("slot", p.slot))
	return id, nil
}

// ExpireFrozen expires the sessions of the frozen captures, then lets them
// run again (SIGCONT): they find their session gone and kill themselves.
func (c *Cluster) ExpireFrozen() ([]string, error) {
	c.mu.Lock()
	fr := c.frozen
	c.frozen = nil
	c.mu.Unlock()
	if len(fr) == 0 {
		return nil, errors.New("no frozen capture (freeze-capture first)")
	}
	var ids []string
	var firstErr error
	for _, f := range fr {
		kv, ok, _, err := c.Etcd.Get(c.ctx, c.Etcd.Capture(f.id))
		switch {
		case err != nil:
			firstErr = err
		case !ok:
			// Its lease already expired while it was frozen: same effect.
			c.lg.Warn("cluster.go", 1, "capture session already expired", zap.String("captureID", f.id))
		default:
			c.lg.Warn("cluster.go", 1, "expire capture session", zap.String("captureID", f.id), zap.Int64("lease", kv.Lease))
			if err := c.Etcd.Revoke(c.ctx, kv.Lease); err != nil && firstErr == nil {
				firstErr = err
			}
		}
		_ = syscall.Kill(f.pid, syscall.SIGCONT)
		ids = append(ids, f.id)
	}
	return ids, firstErr
}

func (c *Cluster) thawAll() {
	c.mu.Lock()
	fr := c.frozen
	c.frozen = nil
	c.mu.Unlock()
	for _, f := range fr {
		_ = syscall.Kill(f.pid, syscall.SIGCONT)
	}
}

// ExpireSession revokes a capture's etcd session lease from outside (as
// etcd expiring it would): its key vanishes, the capture fences itself and
// exits (capture suicide), and the supervisor restarts it. avoidOwner picks
// a non-owner when captureID is empty.
func (c *Cluster) ExpireSession(captureID string, avoidOwner bool) (string, error) {
	if captureID == "" {
		var err error
		_, captureID, err = c.pickSlot(avoidOwner)
		if err != nil {
			return "", err
		}
	}
	kv, ok, _, err := c.Etcd.Get(c.ctx, c.Etcd.Capture(captureID))
	if err != nil {
		return "", err
	}
	if !ok || kv.Lease == 0 {
		return "", fmt.Errorf("capture %s has no session key", captureID)
	}
	c.lg.Warn("cluster.go", 1, "expire capture session", zap.String("captureID", captureID), zap.Int64("lease", kv.Lease))
	if err := c.Etcd.Revoke(c.ctx, kv.Lease); err != nil {
		return "", err
	}
	return captureID, nil
}

// KafkaTimeout makes every produce request hang for d (embedded kfake only).
func (c *Cluster) KafkaTimeout(d time.Duration) error {
	if c.kf == nil {
		return errors.New("kafka timeouts need the embedded kfake broker (no --kafka)")
	}
	c.lg.Warn("cluster.go", 1, "kafka produce requests time out", zap.Duration("duration", d))
	c.kf.TimeoutProduce(d)
	return nil
}

// CreateTable runs CREATE TABLE upstream.
func (c *Cluster) CreateTable() (int64, error) {
	id, _, err := c.createTable()
	return id, err
}

// createTable runs CREATE TABLE upstream; it returns the table and the
// DDL's commit ts.
func (c *Cluster) createTable() (int64, uint64, error) {
	id, ts, err := server.CreateTable(c.ctx, c.Etcd)
	if err != nil {
		return 0, 0, err
	}
	c.lg.Event(nil, spec.Event{Kind: spec.TableCreated, Span: spec.WholeTable(id), Checkpoint: ts})
	if err := c.addTableRegions(id); err != nil {
		return id, ts, err
	}
	return id, ts, nil
}

// CommitBlockDDL commits a blocking DDL of the kind ("": one of
// server.RuntimeBlockDDLKinds drawn at random) in the shared upstream and
// logs it (DDLCommitted) for the changefeed; it returns the event.
func (c *Cluster) CommitBlockDDL(kind string) (core.BlockEvent, error) {
	c.rngMu.Lock()
	if kind == "" {
		kind = server.RuntimeBlockDDLKinds[c.rng.IntN(len(server.RuntimeBlockDDLKinds))]
	}
	rnd := rand.New(rand.NewPCG(c.rng.Uint64(), 0x646463))
	c.rngMu.Unlock()
	ev, err := server.CommitBlockDDL(c.ctx, c.Etcd, kind, rnd)
	if err != nil {
		return ev, err
	}
	c.lg.Event(nil, upstream.DDLCommittedEvent("default/"+c.cfg.Changefeed, ev))
	return ev, nil
}

// Stall stalls (or resumes) the upstream.
func (c *Cluster) Stall(on bool) error {
	return server.SetStall(c.ctx, c.Etcd, on, c.Up.Config().LagMs)
}

// MoveTable moves a random table of the changefeed to a random other
// capture; it returns the table and the target.
func (c *Cluster) MoveTable(ctx context.Context) (int64, string, error) {
	tables := c.Up.TablesAt(uint64(time.Now().UnixMilli()) - 2000)
	ids := c.captureOfSlot()
	var targets []string
	for _, id := range ids {
		targets = append(targets, id)
	}
	if len(tables) == 0 || len(targets) == 0 {
		return 0, "", errors.New("nothing to move")
	}
	sort.Strings(targets)
	t := tables[c.intn(len(tables))]
	var lastErr error
	// The maintainer may be restarting (backoff, failover): retry for 10 s.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(300 * time.Millisecond) {
		for _, i := range c.perm(len(targets)) {
			n, err := c.API().MoveTable(ctx, c.cfg.Changefeed, t, targets[i])
			if err == nil && n > 0 {
				return t, targets[i], nil
			}
			lastErr = err
		}
	}
	if lastErr == nil {
		lastErr = fmt.Errorf("no span of table %d could move", t)
	}
	return t, "", lastErr
}

// SplitTable splits a random table's spans.
func (c *Cluster) SplitTable(ctx context.Context) (int64, int, error) {
	tables := c.Up.TablesAt(uint64(time.Now().UnixMilli()) - 2000)
	if len(tables) == 0 {
		return 0, 0, errors.New("no table")
	}
	t := tables[c.intn(len(tables))]
	var n int
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(300 * time.Millisecond) {
		if n, err = c.API().SplitTable(ctx, c.cfg.Changefeed, t); err == nil && n > 0 {
			break
		}
	}
	return t, n, err
}

// Heal ends every fault and restarts every capture that is down; it logs
// FaultsHealed with the upstream resolved ts (the liveness target) and
// returns that target.
func (c *Cluster) Heal() uint64 {
	if c.kf != nil {
		c.kf.Heal()
	}
	_ = c.Stall(false)
	c.thawAll()
	c.clearFailpoints()
	c.healStores()
	target := c.Up.GlobalResolvedTs()
	c.lg.Event(nil, spec.Event{Kind: spec.FaultsHealed, Checkpoint: target})
	return target
}

// Quiesced logs the Quiesced event (liveness properties are judged at it).
func (c *Cluster) Quiesced() { c.lg.Event(nil, spec.Event{Kind: spec.Quiesced}) }

// WaitCheckpoint waits until the stored checkpoint reaches target and the
// changefeed is normal; it returns the last sample.
func (c *Cluster) WaitCheckpoint(ctx context.Context, target uint64, timeout time.Duration) (Sample, error) {
	deadline := time.Now().Add(timeout)
	var s Sample
	for {
		var ok bool
		s, ok = c.Stored()
		if ok && s.Checkpoint >= target && s.State == spec.StateNormal {
			return s, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return s, fmt.Errorf("checkpoint %d (state %s) did not reach %d within %s", spec.TSO(s.Checkpoint), s.State, spec.TSO(target), timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// StopCaptures stops every capture process (SIGTERM, then SIGKILL after
// 5 s) and restarts none; etcd and Kafka keep running (for the checks).
func (c *Cluster) StopCaptures() { c.stopCaptures(context.Background()) }

// stopCaptures sends SIGTERM to every capture at once and waits for them
// to exit: 5 s, or InterruptGrace once ctx ends (a signal, now or while
// waiting); then SIGKILL to the rest.
func (c *Cluster) stopCaptures(ctx context.Context) {
	c.thawAll()
	c.mu.Lock()
	c.stopping = true
	c.mu.Unlock()
	var running []*exec.Cmd
	var dones []chan struct{}
	for _, p := range c.procs {
		p.mu.Lock()
		p.hold = true
		cmd, done := p.cmd, p.done
		p.mu.Unlock()
		if cmd == nil || cmd.Process == nil {
			continue
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		running = append(running, cmd)
		dones = append(dones, done)
	}
	all := make(chan struct{})
	go func() {
		for _, d := range dones {
			<-d
		}
		close(all)
	}()
	select {
	case <-all:
		return
	case <-time.After(5 * time.Second):
	case <-ctx.Done():
		select {
		case <-all:
			return
		case <-time.After(InterruptGrace):
		}
	}
	for _, cmd := range running {
		_ = cmd.Process.Kill()
	}
	<-all
}

// healLocal ends the faults that hold processes or the embedded broker
// (SIGSTOP, Kafka timeouts) without a network call, so an interrupted run
// can stop its captures at once.
func (c *Cluster) healLocal() {
	if c.kf != nil {
		c.kf.Heal()
	}
	c.thawAll()
}

// Close stops every capture, the broker and etcd; calls after the first
// do nothing.
func (c *Cluster) Close() {
	c.closeOnce.Do(c.close)
}

func (c *Cluster) close() {
	c.stopCaptures(c.startCtx)
	c.cancel()
	c.wg.Wait()
	c.closeStores()
	if c.Etcd != nil {
		_ = c.Etcd.Close()
	}
	if c.kf != nil {
		c.kf.Close()
		_ = os.RemoveAll(c.kafkaDir())
	}
	if c.emb != nil {
		_ = c.emb.Close()
	}
	if c.logf != nil {
		_ = c.logf.Close()
	}
}

// Panics returns, per capture slot whose process panicked or died of a Go
// fatal error during the run, the first line of it (from the process's
// stderr file).
func (c *Cluster) Panics() []string {
	var out []string
	for _, p := range c.procs {
		f, err := os.Open(p.log + ".stderr")
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: ") {
				out = append(out, fmt.Sprintf("capture %d: %s", p.slot, l))
				break
			}
		}
		f.Close()
	}
	return out
}

// LogFiles lists the TiCDC-format logs of the run (captures and cluster).
func (c *Cluster) LogFiles() []string {
	var out []string
	for _, p := range c.procs {
		out = append(out, p.log)
	}
	return append(out, filepath.Join(c.cfg.LogDir, "cluster.log"))
}

// Starts returns how many times each slot was started.
func (c *Cluster) Starts() []int {
	var out []int
	for _, p := range c.procs {
		p.mu.Lock()
		out = append(out, p.starts)
		p.mu.Unlock()
	}
	return out
}
