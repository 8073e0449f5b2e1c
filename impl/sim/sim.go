// Package sim is the deterministic simulation runtime: it hosts captures
// (impl/capture) on a virtual clock and a seeded scheduler, executes their
// Effects in the documented order (persist, then send, then sink writes),
// and injects faults: message drops and delays, partitions, capture crashes
// and session expiry (capture suicide, fresh node IDs on restart), sink
// errors and upstream stalls. Messages travel as TiCDC's message center
// carries them (delivery.go); stronger delivery assumptions (duplicates,
// stale copies, reordering) are options (Config.Delivery). The same Config
// (seed included) gives the same run byte for byte, log included.
//
// Every fault and API action is a method, so a property-based test can drive
// the simulation step by step and compare its State with the model.
package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"

	"go.uber.org/zap"

	"cdcspec/impl/capture"
	"cdcspec/impl/coordinator"
	"cdcspec/impl/core"
	"cdcspec/impl/dispatcher"
	"cdcspec/impl/logging"
	"cdcspec/impl/maintainer"
	"cdcspec/impl/upstream"
	"cdcspec/spec"
)

// StartMs is the virtual time origin: 2026-01-01 00:00:00 UTC.
const StartMs = 1767225600000

// Config of a simulation.
type Config struct {
	Seed   uint64
	Nodes  int // initial captures (default 3)
	Tables int // initial upstream tables (default 4)
	// Options: bug switches and component options for every capture.
	Options  core.Options
	Upstream upstream.Config
	// Log receives the TiCDC-format log (nil: no text, events only).
	Log      io.Writer
	LogLevel string // default "info"
	// RecordEvents keeps every spec.Event in Events().
	RecordEvents bool
	// NoChecker disables the online spec monitors.
	NoChecker bool
	// SessionTTLMs: a crashed capture's key vanishes after this (default 10 s).
	SessionTTLMs int64
	// Delivery is the message-delivery assumption ("" = TiCDC's message
	// center, spec.DeliveryMessageCenter).
	Delivery spec.Delivery
	// observe, if set, sees every message's fate from the start (tests).
	observe func(NetEvent)
}

// Faults are the random message faults, applied to every remote send:
// loss, and a delivery delay uniform in [DelayMinMs, DelayMaxMs]. What a
// delay does to the order of later messages is the run's delivery
// assumption (Config.Delivery): under the message center it holds back the
// rest of its stream (a slow or congested connection). DupProb duplicates
// a message, which TiCDC's transport never does: SetFaults refuses it under
// the message center.
type Faults struct {
	DropProb float64
	DupProb  float64
	// Remote delivery delay is uniform in [DelayMinMs, DelayMaxMs].
	DelayMinMs, DelayMaxMs int64
}

// typeStream identifies a FIFO stream under DeliveryPerTypeStreams.
type typeStream struct {
	from, to core.NodeID
	typ      string
}

// Rule is a targeted message fault: the next Count messages of Type (a
// core.Message TypeName, "" = any) from From to To ("" = any) are dropped,
// delayed by DelayMs, or duplicated (the copy delayed by DelayMs: a stale
// copy outside every stream order). AddRule refuses "dup" under the message
// center, whose transport never duplicates.
type Rule struct {
	Type     string
	From, To core.NodeID
	Action   string // "drop" | "delay" | "dup"
	DelayMs  int64
	Count    int
	// HoldInSendQueue (a "delay" of a HeartBeatRequest or
	// BlockStatusRequest under the message center): hold the message in
	// the heartbeat collector's sending queue instead of on its stream, so
	// that later direct sends pass it. At HEAD the collector's SendCommand
	// never blocks (spec.MessageWaits): such an overtaking lasts at most
	// the collector goroutine's scheduling delay. A story that stretches
	// that window must say so; chaos runs never set it.
	HoldInSendQueue bool
}

// ruleActions maps each fault of the vocabulary that is a Rule to the
// rule's Action.
var ruleActions = map[spec.Fault]string{
	spec.FaultDropMessages:      "drop",
	spec.FaultDuplicateMessages: "dup",
	spec.FaultDelayMessages:     "delay",
}

// fault is the rule's fault in the vocabulary; "" for an unknown Action.
func (r Rule) fault() spec.Fault {
	for f, a := range ruleActions {
		if a == r.Action {
			return f
		}
	}
	return ""
}

type itemKind uint8

const (
	itemDeliver itemKind = iota + 1
	itemTick
	itemUpstream
	itemSinkResult
	itemLeaseExpire
	itemEnterStream // a queued message is sent on its stream (delivery.go)
	itemArrive      // a message reaches a selective receiving queue (delivery.go)
)

type item struct {
	at   int64
	seq  uint64
	kind itemKind
	node core.NodeID
	env  core.Envelope
	msg  uint64 // message ID (send order; a duplicate shares its original's)
	sr   core.SinkResult
	from uint64 // a sink result's write's FromTs (a cut reports ToTs = from)
	ls   int64
	// Message-center bookkeeping (delivery.go): flight is a message between
	// stages; slot the orchestrator queue slot a delivery drains (its
	// message may have been replaced since); release the block statuses a
	// delivery releases; gate the delivery an arrival admits or cancels.
	flight     *inFlight
	slot       orchKey
	releaseSet *maintainer.BlockStatusPendingSet
	release    []maintainer.BlockStatusDedupeKey
	gate       *item
	cancelled  bool
}

type simNode struct {
	s     *Sim // the run, for the node's capture.IO
	cap   *capture.Capture
	lease int64
	alive bool
	rnd   *rand.Rand
}

// Sim is one simulation run. Not safe for concurrent use.
type Sim struct {
	cfg   Config
	opts  core.Options
	rng   *rand.Rand
	now   int64
	seq   uint64
	q     []*item
	store *MemStore
	sink  *MemSink
	up    *upstream.Upstream
	lg    *logging.Logger

	nodes   map[core.NodeID]*simNode
	order   []core.NodeID // every node ever created, in creation order
	owner   core.NodeID
	nodeSeq uint64

	faults    Faults
	rules     []Rule
	partition map[core.NodeID]int

	// The network (delivery.go). streams: last arrival per stream under the
	// message center; typeStreams: last delivery per per-type stream;
	// lanes: last handling per lane; orch, blockPending: the gated queues.
	delivery     spec.Delivery
	laneRng      *rand.Rand
	sendQueues   map[sendQueueKey]int64
	streams      map[streamKey]int64
	typeStreams  map[typeStream]int64
	lanes        map[laneKey]int64
	orch         map[orchKey]*orchSlot
	blockPending map[pendingKey]*maintainer.BlockStatusPendingSet
	// blockSendQueues: each node's block-status sending queue.
	blockSendQueues map[core.NodeID]*dispatcher.BlockStatusRequestQueue
	msgID           uint64
	// observe, if set, sees every send, delivery and network drop (tests).
	observe func(NetEvent)

	events      []spec.Event
	checker     *spec.Checker
	changefeeds map[string]bool
	healTarget  uint64
	members     []core.NodeID // capture set last announced

	// Delivered counts handled messages.
	Delivered uint64
	observer  func(Step)
	lastLeft  []core.NodeID
	bufs      []*core.Effects
	depth     int
}

// New builds a simulation with cfg.Nodes captures and cfg.Tables tables and
// runs it until the coordinator is bootstrapped.
func New(cfg Config) *Sim {
	if cfg.Nodes == 0 {
		cfg.Nodes = 3
	}
	if cfg.Tables == 0 {
		cfg.Tables = 4
	}
	if cfg.LogLevel == "" {
		cfg.LogLevel = "info"
	}
	if cfg.SessionTTLMs == 0 {
		cfg.SessionTTLMs = 10_000
	}
	opts := cfg.Options.WithDefaults()
	opts.Delivery = cfg.Delivery.OrDefault()
	s := &Sim{cfg: cfg, opts: opts, rng: rand.New(rand.NewPCG(cfg.Seed, 0x73696d)), now: StartMs,
		store: NewMemStore(), sink: NewMemSink(), nodes: map[core.NodeID]*simNode{}, partition: map[core.NodeID]int{},
		delivery: cfg.Delivery.OrDefault(), laneRng: rand.New(rand.NewPCG(cfg.Seed, 0x6c616e65)),
		sendQueues: map[sendQueueKey]int64{}, streams: map[streamKey]int64{}, typeStreams: map[typeStream]int64{}, lanes: map[laneKey]int64{},
		orch: map[orchKey]*orchSlot{}, blockPending: map[pendingKey]*maintainer.BlockStatusPendingSet{}, blockSendQueues: map[core.NodeID]*dispatcher.BlockStatusRequestQueue{},
		changefeeds: map[string]bool{}, faults: Faults{DelayMinMs: 1, DelayMaxMs: 5}, observe: cfg.observe}
	s.lg = logging.New(cfg.Log, s, cfg.LogLevel)
	if !cfg.NoChecker {
		s.checker = spec.NewChecker(spec.Config{ErrorStuckMs: opts.ErrorStuckDurationMs})
	}
	s.lg.OnEvent = s.onEvent
	s.up = upstream.New(cfg.Seed, cfg.Tables, s.now, cfg.Upstream, &s.opts.Bugs, s.lg)
	s.up.Feeds = s.feeds
	s.push(&item{at: s.now, kind: itemUpstream})
	for i := 0; i < cfg.Nodes; i++ {
		s.AddCapture()
	}
	s.RunFor(1000)
	return s
}

// NowMs implements core.Clock (virtual time).
func (s *Sim) NowMs() int64 { return s.now }

func (s *Sim) onEvent(e spec.Event) {
	switch e.Kind {
	case spec.ChangefeedCreated:
		s.changefeeds[e.Changefeed] = true
	case spec.ChangefeedRemoved:
		delete(s.changefeeds, e.Changefeed)
	}
	if s.cfg.RecordEvents {
		s.events = append(s.events, e)
	}
	if s.checker != nil {
		s.checker.Observe(e)
	}
}

func (s *Sim) feeds() []string {
	out := make([]string, 0, len(s.changefeeds))
	for cf := range s.changefeeds {
		out = append(out, cf)
	}
	sort.Strings(out)
	return out
}

// --- queue ---

func (s *Sim) push(it *item) {
	s.seq++
	it.seq = s.seq
	s.q = append(s.q, it)
	i := len(s.q) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !less(s.q[i], s.q[p]) {
			break
		}
		s.q[i], s.q[p] = s.q[p], s.q[i]
		i = p
	}
}

func less(a, b *item) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

func (s *Sim) pop() *item {
	n := len(s.q) - 1
	top := s.q[0]
	s.q[0] = s.q[n]
	s.q[n] = nil
	s.q = s.q[:n]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && less(s.q[l], s.q[m]) {
			m = l
		}
		if r < n && less(s.q[r], s.q[m]) {
			m = r
		}
		if m == i {
			break
		}
		s.q[i], s.q[m] = s.q[m], s.q[i]
		i = m
	}
	return top
}

// Step handles the next queued item and reports whether there was one.
func (s *Sim) Step() bool {
	if len(s.q) == 0 {
		return false
	}
	it := s.pop()
	if it.at > s.now {
		s.now = it.at
	}
	s.handle(it)
	return true
}

// RunFor advances virtual time by ms, handling everything due.
func (s *Sim) RunFor(ms int64) {
	end := s.now + ms
	for len(s.q) > 0 && s.q[0].at <= end {
		s.Step()
	}
	s.now = end
}

func (s *Sim) handle(it *item) {
	switch it.kind {
	case itemDeliver:
		env, id := it.env, it.msg
		if it.slot.typ != "" {
			slot := s.orch[it.slot]
			delete(s.orch, it.slot)
			env, id = slot.env, slot.id
		}
		if it.releaseSet != nil {
			it.releaseSet.Release(it.release)
		}
		if it.cancelled {
			return
		}
		n := s.nodes[env.To]
		if n == nil || !n.alive {
			s.observeDrop(env, id, "receiver is not running")
			return
		}
		s.Delivered++
		if s.observe != nil {
			s.observe(NetEvent{Kind: NetDelivered, ID: id, Env: env})
		}
		out := s.buf()
		n.cap.OnMessage(s.now, env.From, env.Msg, out)
		s.exec(n, out)
		s.release()
		s.notify(Step{Kind: StepDeliver, Node: env.To, From: env.From, Msg: env.Msg})
	case itemEnterStream:
		s.enterStream(it.flight)
	case itemArrive:
		s.arrive(it)
	case itemTick:
		n := s.nodes[it.node]
		if n == nil || !n.alive {
			return
		}
		out := s.buf()
		n.cap.OnTick(s.now, out)
		s.exec(n, out)
		s.release()
		s.push(&item{at: s.now + core.TickInterval, kind: itemTick, node: it.node})
		s.notify(Step{Kind: StepTick, Node: it.node})
	case itemUpstream:
		s.up.Advance(s.now, nil)
		s.push(&item{at: s.now + core.TickInterval, kind: itemUpstream})
		s.notify(Step{Kind: StepUpstream})
	case itemSinkResult:
		n := s.nodes[it.node]
		if n == nil || !n.alive {
			return
		}
		out := s.buf()
		n.cap.OnSinkResult(s.now, it.sr, out)
		s.exec(n, out)
		s.release()
		s.notify(Step{Kind: StepSinkResult, Node: it.node})
	case itemLeaseExpire:
		if _, ok := s.store.leases[it.ls]; ok {
			s.store.Revoke(it.ls)
			s.membershipChanged()
			s.notify(Step{Kind: StepMembership, Left: s.lastLeft})
		}
	}
}

// StepKind names what one observed step of the simulation was.
type StepKind uint8

// Observed steps: everything that can change a component's state.
const (
	StepDeliver    StepKind = iota + 1 // Msg from From handled by Node
	StepTick                           // Node's OnTick
	StepUpstream                       // the upstream advanced
	StepSinkResult                     // a sink write's outcome reached Node
	StepMembership                     // capture keys expired: Left seen leaving
	StepFault                          // a fault or domain action, named by Name
)

func (k StepKind) String() string {
	return [...]string{"?", "deliver", "tick", "upstream", "sink-result", "membership", "fault"}[k]
}

// Step is one observed step, reported after its effects were executed.
type Step struct {
	Kind StepKind
	Node core.NodeID   // the node that handled it, or the fault's target
	From core.NodeID   // StepDeliver: the sender
	Msg  core.Message  // StepDeliver
	Left []core.NodeID // StepMembership, and a session expiry: nodes seen leaving
	Name string        // StepFault: the fault (a spec.Fault) or the domain action (a spec.Action)
	Arg  int64         // StepFault: a table for create-table, else 0
}

// Observe registers f to be called after every step that can change a
// component's state: deliveries, ticks, upstream and sink progress,
// membership changes, and every fault and API call made through Sim's
// methods. One observer; nil removes it.
func (s *Sim) Observe(f func(Step)) { s.observer = f }

func (s *Sim) notify(st Step) {
	if s.observer != nil {
		s.observer(st)
	}
}

func (s *Sim) buf() *core.Effects {
	if s.depth == len(s.bufs) {
		s.bufs = append(s.bufs, &core.Effects{})
	}
	b := s.bufs[s.depth]
	b.Reset()
	s.depth++
	return b
}

func (s *Sim) release() { s.depth-- }

// exec runs a handler's Effects on n (capture.Apply, with n as its IO).
func (s *Sim) exec(n *simNode, out *core.Effects) { n.cap.Apply(out, n) }

// Txn applies a txn to the run's metadata store (capture.IO).
func (n *simNode) Txn(t core.MetaTxn) core.MetaResult { return n.s.store.Txn(t) }

// Send sends through the simulated network (capture.IO).
func (n *simNode) Send(env core.Envelope) { n.s.send(env) }

// SinkWrite writes to the in-memory sink at once and reports the outcome
// 5-20 ms later (capture.IO).
func (n *simNode) SinkWrite(w core.SinkWrite) {
	s := n.s
	r := s.sink.Write(w)
	s.push(&item{at: s.now + 5 + s.rng.Int64N(15), kind: itemSinkResult, node: n.cap.ID, sr: r, from: w.FromTs})
}

// SinkCancel cuts the dispatcher's write in flight (capture.IO): its rows
// are in the sink already (at-least-once duplicates for the span's next
// replicator), and its result, still due at its time, reports nothing
// newly flushed (ToTs = FromTs).
func (n *simNode) SinkCancel(c core.SinkCancel) {
	for _, it := range n.s.q {
		if it.kind == itemSinkResult && it.node == n.cap.ID && it.sr.Sink == c.Sink && it.sr.Dispatcher == c.Dispatcher {
			it.sr.ToTs = it.from
		}
	}
}

// CoordinatorExited resigns ownership if n still holds it (capture.IO).
func (n *simNode) CoordinatorExited() {
	if n.s.owner == n.cap.ID {
		n.s.resign(n)
	}
}

// send applies partitions, rules and random faults, then schedules
// delivery by the run's delivery assumption. Own-node sends (a local
// channel in TiCDC) see only targeted rules, never random faults or
// partitions.
func (s *Sim) send(env core.Envelope) {
	s.msgID++
	if s.observe != nil {
		s.observe(NetEvent{Kind: NetSent, ID: s.msgID, Env: env})
	}
	local := env.From == env.To
	if !local && s.partition[env.From] != s.partition[env.To] {
		s.observeDrop(env, s.msgID, "partition")
		return
	}
	var delay int64
	if local {
		delay = s.rng.Int64N(2)
	} else {
		delay = s.faults.DelayMinMs
		if s.faults.DelayMaxMs > s.faults.DelayMinMs {
			delay += s.rng.Int64N(s.faults.DelayMaxMs - s.faults.DelayMinMs + 1)
		}
	}
	dup := false
	var ruleDelay int64
	ruleHold := false
	var staleCopyAt int64 // a rule's "dup" with DelayMs: a stale copy outside the stream order
rules:
	for i := range s.rules {
		r := &s.rules[i]
		if r.Count <= 0 || (r.Type != "" && r.Type != env.Msg.TypeName()) || (r.From != "" && r.From != env.From) || (r.To != "" && r.To != env.To) {
			continue
		}
		r.Count--
		switch r.Action {
		case "drop":
			s.observeDrop(env, s.msgID, "rule")
			return
		case "delay":
			ruleDelay, ruleHold = r.DelayMs, r.HoldInSendQueue
		case "dup":
			if r.DelayMs > 0 {
				staleCopyAt = s.now + delay + r.DelayMs
			} else {
				dup = true
			}
		}
		break rules
	}
	if !local && s.faults.DropProb > 0 && s.rng.Float64() < s.faults.DropProb {
		s.observeDrop(env, s.msgID, "random loss")
		return
	}
	if !local && s.faults.DupProb > 0 && s.rng.Float64() < s.faults.DupProb {
		dup = true
	}
	if s.delivery == spec.DeliveryMessageCenter {
		// AddRule and SetFaults refuse duplicates under the message center.
		s.sendMessageCenter(env, delay, ruleDelay, ruleHold)
		return
	}
	delay += ruleDelay
	at := s.now + delay
	reorder := s.delivery == spec.DeliveryReordering
	if !reorder || local {
		// FIFO per (sender, receiver, type): never overtake an earlier
		// message of the same type.
		k := typeStream{env.From, env.To, env.Msg.TypeName()}
		if last, ok := s.typeStreams[k]; ok && last > at {
			at = last
		}
		s.typeStreams[k] = at
	}
	s.push(&item{at: at, kind: itemDeliver, env: env, msg: s.msgID})
	if dup {
		dupAt := at
		if reorder && !local {
			dupAt += s.rng.Int64N(2000)
		}
		s.push(&item{at: dupAt, kind: itemDeliver, env: env, msg: s.msgID})
	}
	if staleCopyAt > 0 {
		s.push(&item{at: staleCopyAt, kind: itemDeliver, env: env, msg: s.msgID})
	}
}

// NetEventKind classifies what the network did with a message.
type NetEventKind uint8

const (
	NetSent      NetEventKind = iota + 1 // a component sent it (ID assigned)
	NetDelivered                         // its handler ran
	NetDropped                           // lost (Why says where)
)

// NetEvent is one message's fate, for tests that check delivery rules.
type NetEvent struct {
	Kind NetEventKind
	ID   uint64 // send order over the run; a duplicate shares its original's
	Env  core.Envelope
	Why  string
}

func (s *Sim) observeDrop(env core.Envelope, id uint64, why string) {
	if s.observe != nil {
		s.observe(NetEvent{Kind: NetDropped, ID: id, Env: env, Why: why})
	}
}

// Delivery is the run's delivery assumption.
func (s *Sim) Delivery() spec.Delivery { return s.delivery }

// --- membership ---

func (s *Sim) newNodeID() core.NodeID {
	a, b := s.rng.Uint64(), s.rng.Uint64()
	return core.NodeID(fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", uint32(a>>32), uint16(a>>16), uint16(a), uint16(b>>48), b&0xffffffffffff))
}

func captureKey(id core.NodeID) string { return "/tidb/cdc/default/__cdc_meta__/capture/" + string(id) }

// AddCapture starts a capture with a fresh node ID (also the restart of a
// crashed capture) and returns its ID.
func (s *Sim) AddCapture() core.NodeID {
	id := s.newNodeID()
	s.nodeSeq++
	rnd := rand.New(rand.NewPCG(s.cfg.Seed, 0x6e6f6465+s.nodeSeq))
	n := &simNode{s: s, alive: true, rnd: rnd}
	n.cap = capture.New(id, &s.opts, rnd, s.up, s.lg)
	n.lease = s.store.Grant(s.cfg.SessionTTLMs)
	if _, err := s.store.PutWithLease(captureKey(id), []byte(`{"id":"`+string(id)+`"}`), n.lease); err != nil {
		s.lg.Warn("server.go", 1, "register capture failed", zap.String("error", err.Error()))
	}
	s.nodes[id] = n
	s.order = append(s.order, id)
	s.push(&item{at: s.now + s.rng.Int64N(core.TickInterval), kind: itemTick, node: id})
	s.membershipChanged()
	s.notify(Step{Kind: StepFault, Name: string(spec.FaultAddCapture), Node: id})
	return id
}

// KillCapture crashes a capture: the process stops at once; its capture key
// vanishes when the session TTL expires.
func (s *Sim) KillCapture(id core.NodeID) error {
	n := s.nodes[id]
	if n == nil || !n.alive {
		return fmt.Errorf("capture %s is not running", id)
	}
	n.alive = false
	s.push(&item{at: s.now + s.cfg.SessionTTLMs, kind: itemLeaseExpire, ls: n.lease})
	s.notify(Step{Kind: StepFault, Name: string(spec.FaultKillCapture), Node: id})
	return nil
}

// ExpireSession revokes a capture's etcd session: it fences locally and
// kills itself (capture suicide); other captures see it leave at once.
func (s *Sim) ExpireSession(id core.NodeID) error {
	n := s.nodes[id]
	if n == nil || !n.alive {
		return fmt.Errorf("capture %s is not running", id)
	}
	s.lg.Warn("etcd_watcher.go", 70, "session is disconnected", zap.String("error", "[CDC:ErrEtcdSessionDone]etcd session is done"))
	n.cap.LocalFence()
	n.alive = false
	s.lg.Event(nil, spec.Event{Kind: spec.CaptureSuicide, Node: string(id), Err: "[CDC:ErrCaptureSuicide]capture suicide"})
	s.store.Revoke(n.lease)
	s.membershipChanged()
	s.notify(Step{Kind: StepFault, Name: string(spec.FaultExpireSession), Node: id, Left: s.lastLeft})
	return nil
}

// alive lists captures whose key exists, sorted.
func (s *Sim) aliveKeys() []core.NodeID {
	var out []core.NodeID
	for _, kv := range s.store.GetPrefix("/tidb/cdc/default/__cdc_meta__/capture/") {
		out = append(out, core.NodeID(kv.Key[len("/tidb/cdc/default/__cdc_meta__/capture/"):]))
	}
	return out
}

// membershipChanged is every NodeManager's reaction to the capture set
// changing, plus the owner election.
func (s *Sim) membershipChanged() {
	alive := s.aliveKeys()
	prev := s.members
	set := map[core.NodeID]bool{}
	for _, n := range alive {
		set[n] = true
	}
	old := map[core.NodeID]bool{}
	for _, n := range prev {
		old[n] = true
	}
	s.lastLeft = nil
	for _, n := range prev {
		if !set[n] {
			s.lg.Event(nil, spec.Event{Kind: spec.NodeLeft, Node: string(n)})
			s.lastLeft = append(s.lastLeft, n)
		}
	}
	for _, n := range alive {
		if !old[n] {
			s.lg.Event(nil, spec.Event{Kind: spec.NodeJoined, Node: string(n)})
		}
	}
	s.members = alive
	s.elect()
	for _, id := range alive {
		n := s.nodes[id]
		if n == nil || !n.alive {
			continue
		}
		out := s.buf()
		n.cap.OnNodesChanged(s.now, alive, out)
		s.exec(n, out)
		s.release()
	}
}

const ownerKey = "/tidb/cdc/default/__cdc_meta__/owner"

// elect keeps the owner while its capture key lives; otherwise the capture
// with the oldest key campaigns and wins; the owner key's revision is the
// coordinator version.
func (s *Sim) elect() {
	if s.owner != "" {
		if _, ok := s.store.Get(captureKey(s.owner)); ok {
			return
		}
	}
	var best *core.KV
	for _, kv := range s.store.GetPrefix("/tidb/cdc/default/__cdc_meta__/capture/") {
		kv := kv
		id := core.NodeID(kv.Key[len("/tidb/cdc/default/__cdc_meta__/capture/"):])
		if n := s.nodes[id]; n == nil || !n.alive {
			continue
		}
		if best == nil || kv.CreateRev < best.CreateRev {
			best = &kv
		}
	}
	s.owner = ""
	if best == nil {
		return
	}
	id := core.NodeID(best.Key[len("/tidb/cdc/default/__cdc_meta__/capture/"):])
	n := s.nodes[id]
	rev, err := s.store.PutWithLease(ownerKey, []byte(id), n.lease)
	if err != nil {
		return
	}
	s.owner = id
	s.lg.Info("module_node_manager.go", 102, "coordinator changed", zap.String("newID", string(id)))
	for _, oid := range s.order {
		if o := s.nodes[oid]; o.alive {
			o.cap.OwnerChanged(id)
		}
	}
	out := s.buf()
	n.cap.OnNodesChanged(s.now, s.aliveKeys(), out)
	n.cap.BecomeOwner(s.now, rev, s.store.GetPrefix("/tidb/cdc/default/"), out)
	s.exec(n, out)
	s.release()
}

func (s *Sim) resign(n *simNode) {
	n.cap.Coordinator = nil
	s.owner = ""
	s.elect()
}

// --- faults ---

// SetFaults sets the random message faults. Duplicates (DupProb > 0) need
// a delivery assumption that allows them; otherwise nothing changes and the
// error says why.
func (s *Sim) SetFaults(f Faults) error {
	if f.DupProb > 0 {
		if err := s.deliveryAllows("random duplicates"); err != nil {
			return err
		}
	}
	s.faults = f
	s.notify(Step{Kind: StepFault, Name: string(spec.FaultRandomMessageFaults)})
	return nil
}

// AddRule adds a targeted message fault. A "dup" rule needs a delivery
// assumption that allows duplicates; otherwise it is not added and the
// error says why.
func (s *Sim) AddRule(r Rule) error {
	if r.fault() == "" {
		return fmt.Errorf("rule action %q: want drop, delay or dup", r.Action)
	}
	if r.Action == "dup" {
		if err := s.deliveryAllows(fmt.Sprintf("a dup rule (%s)", r.Type)); err != nil {
			return err
		}
	}
	s.rules = append(s.rules, r)
	s.notify(Step{Kind: StepFault, Name: string(r.fault())})
	return nil
}

// Partition splits the captures into groups; messages cross no group
// boundary. Captures not listed are in group 0.
func (s *Sim) Partition(groups ...[]core.NodeID) {
	s.partition = map[core.NodeID]int{}
	for i, g := range groups {
		for _, n := range g {
			s.partition[n] = i + 1
		}
	}
	s.notify(Step{Kind: StepFault, Name: string(spec.FaultPartition)})
}

// SinkError breaks the sink instance of the changefeed's dispatcher manager
// on node: every write fails with a retryable Kafka error until the DM is
// recreated.
func (s *Sim) SinkError(cf core.ChangefeedID, node core.NodeID) error {
	return s.breakSink(cf, node, spec.FaultSinkError, "CDC:ErrChangefeedRetryable",
		"[CDC:ErrKafkaAsyncSendMessage]kafka async send message failed: i/o timeout")
}

// FastFailError breaks the sink instance of the changefeed's dispatcher
// manager on node with an unretryable error (a GC error): the changefeed
// must fail.
func (s *Sim) FastFailError(cf core.ChangefeedID, node core.NodeID) error {
	return s.breakSink(cf, node, spec.FaultFastFailError, "CDC:ErrGCTTLExceeded", spec.FastFailErrText)
}

// breakSink makes every write of the DM's sink instance on node fail with
// the error code and message, reported as fault f.
func (s *Sim) breakSink(cf core.ChangefeedID, node core.NodeID, f spec.Fault, code, msg string) error {
	n := s.nodes[node]
	if n == nil || !n.alive {
		return fmt.Errorf("capture %s is not running", node)
	}
	dm := n.cap.Orchestrator.Get(cf)
	if dm == nil {
		return fmt.Errorf("no dispatcher manager of %s on %s", cf, node)
	}
	s.sink.Break(dm.SinkID(), core.RunningError{Time: s.now, Node: node, Code: code, Message: msg})
	s.notify(Step{Kind: StepFault, Name: string(f), Node: node})
	return nil
}

// StallUpstream makes every TiKV unavailable; ResumeUpstream brings it back.
func (s *Sim) StallUpstream() {
	s.up.Stall(nil)
	s.notify(Step{Kind: StepFault, Name: string(spec.FaultStallUpstream)})
}

func (s *Sim) ResumeUpstream() {
	s.up.Resume(nil)
	s.notify(Step{Kind: StepFault, Name: string(spec.FaultResumeUpstream)})
}

// SetFailpoint switches BlockCreateDispatcher / NotReadyToCloseDispatcher on
// a capture.
func (s *Sim) SetFailpoint(node core.NodeID, name string, on bool) error {
	n := s.nodes[node]
	if n == nil {
		return fmt.Errorf("capture %s not found", node)
	}
	switch name {
	case "BlockCreateDispatcher":
		n.cap.Orchestrator.BlockCreateDispatcher = on
	case "NotReadyToCloseDispatcher":
		n.cap.Orchestrator.NotReadyToCloseDispatcher = on
	default:
		return fmt.Errorf("unknown failpoint %q (known: BlockCreateDispatcher, NotReadyToCloseDispatcher)", name)
	}
	s.notify(Step{Kind: StepFault, Name: string(failpointFault[name]), Node: node})
	return nil
}

// failpointFault names each failpoint's fault in the vocabulary.
var failpointFault = map[string]spec.Fault{
	"BlockCreateDispatcher":     spec.FaultBlockCreateDispatcher,
	"NotReadyToCloseDispatcher": spec.FaultSlowCloseDispatcher,
}

// Heal stops every fault: message faults, rules, partitions, failpoints,
// the upstream stall. It emits FaultsHealed with the upstream resolved ts,
// the liveness target.
func (s *Sim) Heal() {
	s.faults = Faults{DelayMinMs: 1, DelayMaxMs: 5}
	s.rules = nil
	s.partition = map[core.NodeID]int{}
	for _, id := range s.order {
		n := s.nodes[id]
		n.cap.Orchestrator.BlockCreateDispatcher = false
		n.cap.Orchestrator.NotReadyToCloseDispatcher = false
	}
	s.up.Resume(nil)
	s.healTarget = s.up.GlobalResolvedTs()
	s.lg.Event(nil, spec.Event{Kind: spec.FaultsHealed, Checkpoint: s.healTarget})
	s.notify(Step{Kind: StepFault, Name: string(spec.FaultHeal)})
}

// --- API ---

func (s *Sim) coordinator() (*coordinator.Coordinator, *simNode, error) {
	n := s.nodes[s.owner]
	if n == nil || n.cap.Coordinator == nil {
		return nil, nil, fmt.Errorf("no coordinator")
	}
	return n.cap.Coordinator, n, nil
}

func (s *Sim) api(name spec.Action, f func(c *coordinator.Coordinator, out *core.Effects) error) error {
	c, n, err := s.coordinator()
	if err != nil {
		return err
	}
	out := s.buf()
	defer s.release()
	if err := f(c, out); err != nil {
		return err
	}
	s.exec(n, out)
	if err := c.TakeAPIError(); err != nil {
		// The call's write failed: nothing changed.
		return err
	}
	s.notify(Step{Kind: StepFault, Name: string(name), Node: s.owner})
	return nil
}

// CfID is "default/<name>".
func CfID(name string) core.ChangefeedID { return core.ChangefeedID("default/" + name) }

// CreateChangefeed creates a changefeed starting at the upstream resolved ts.
func (s *Sim) CreateChangefeed(name string) error {
	start := s.up.GlobalResolvedTs()
	return s.api(spec.ActionCreateChangefeed, func(c *coordinator.Coordinator, out *core.Effects) error {
		return c.CreateChangefeed(s.now, CfID(name), start, s.up.TablesAt(start), out)
	})
}

// PauseChangefeed pauses a changefeed.
func (s *Sim) PauseChangefeed(name string) error {
	return s.api(spec.ActionPauseChangefeed, func(c *coordinator.Coordinator, out *core.Effects) error {
		return c.PauseChangefeed(s.now, CfID(name), out)
	})
}

// ResumeChangefeed resumes a changefeed (checkpoint 0: keep it).
func (s *Sim) ResumeChangefeed(name string, checkpoint uint64) error {
	return s.api(spec.ActionResumeChangefeed, func(c *coordinator.Coordinator, out *core.Effects) error {
		return c.ResumeChangefeed(s.now, CfID(name), checkpoint, out)
	})
}

// RemoveChangefeed removes a changefeed.
func (s *Sim) RemoveChangefeed(name string) error {
	return s.api(spec.ActionRemoveChangefeed, func(c *coordinator.Coordinator, out *core.Effects) error {
		return c.RemoveChangefeed(s.now, CfID(name), out)
	})
}

// MoveMaintainer moves a changefeed's maintainer to node.
func (s *Sim) MoveMaintainer(name string, node core.NodeID) error {
	return s.api(spec.ActionMoveMaintainer, func(c *coordinator.Coordinator, out *core.Effects) error {
		return c.MoveChangefeed(s.now, CfID(name), node, out)
	})
}

// CreateTable runs CREATE TABLE upstream and returns the table ID.
func (s *Sim) CreateTable() int64 {
	t, _ := s.up.CreateTable(nil)
	s.notify(Step{Kind: StepFault, Name: string(spec.ActionCreateTable), Arg: t})
	return t
}

// BlockingDDL commits a blocking DDL upstream (upstream.BlockDDLKinds: a
// kind and the tables it names) and returns the block event.
func (s *Sim) BlockingDDL(kind string, tables ...int64) (core.BlockEvent, error) {
	ev, err := s.up.CommitBlockDDL(kind, tables, nil)
	if err != nil {
		return ev, err
	}
	s.notify(Step{Kind: StepFault, Name: string(spec.ActionBlockingDDL), Arg: int64(ev.CommitTs)})
	return ev, nil
}

func (s *Sim) maintainerOf(name string) (*maintainer.Maintainer, *simNode, error) {
	for _, id := range s.order {
		n := s.nodes[id]
		if !n.alive {
			continue
		}
		if m := n.cap.Maintainers.Get(CfID(name)); m != nil {
			for _, mi := range n.cap.Maintainers.Maintainers() {
				if mi.Changefeed == CfID(name) && mi.Bootstrapped && !mi.Removing {
					return m, n, nil
				}
			}
		}
	}
	return nil, nil, fmt.Errorf("no bootstrapped maintainer of %s", name)
}

// tableOp runs one maintainer-side table operation of changefeed name on
// the node that hosts its bootstrapped maintainer, executes its effects and
// reports the step as action; op returns how many operations started.
func (s *Sim) tableOp(name string, table int64, action spec.Action, op func(*maintainer.Maintainer, *core.Effects) int) (int, error) {
	m, n, err := s.maintainerOf(name)
	if err != nil {
		return 0, err
	}
	out := s.buf()
	defer s.release()
	k := op(m, out)
	s.exec(n, out)
	s.notify(Step{Kind: StepFault, Name: string(action), Node: n.cap.ID, Arg: table})
	return k, nil
}

// MoveTable moves the spans of a table to node; it returns how many moves
// started.
func (s *Sim) MoveTable(name string, table int64, node core.NodeID) (int, error) {
	return s.tableOp(name, table, spec.ActionMoveTable, func(m *maintainer.Maintainer, out *core.Effects) int {
		return m.MoveTable(table, node, out)
	})
}

// SplitTable splits the spans of a table in two.
func (s *Sim) SplitTable(name string, table int64) (int, error) {
	return s.tableOp(name, table, spec.ActionSplitTable, func(m *maintainer.Maintainer, out *core.Effects) int {
		return m.SplitTable(table, out)
	})
}

// MergeTable merges adjacent replicating spans of a table on one capture
// (the merge scheduler's pick); it reports how many merges started.
func (s *Sim) MergeTable(name string, table int64) (int, error) {
	return s.tableOp(name, table, spec.ActionMergeTable, func(m *maintainer.Maintainer, out *core.Effects) int {
		return m.MergeTable(table, out)
	})
}

// RemoveTableDispatchers removes a table's dispatchers (they are
// recreated by the scheduler).
func (s *Sim) RemoveTableDispatchers(name string, table int64) (int, error) {
	return s.tableOp(name, table, spec.ActionRemoveTableDispatchers, func(m *maintainer.Maintainer, out *core.Effects) int {
		return m.RemoveTableDispatchers(table, out)
	})
}

// --- observation ---

// Events returns the recorded events (Config.RecordEvents).
func (s *Sim) Events() []spec.Event { return s.events }

// Violations returns what the online monitors found so far.
func (s *Sim) Violations() []spec.Violation {
	if s.checker == nil {
		return nil
	}
	return s.checker.Violations
}

// Owner returns the owner capture.
func (s *Sim) Owner() core.NodeID { return s.owner }

// Captures returns the running captures in creation order.
func (s *Sim) Captures() []core.NodeID {
	var out []core.NodeID
	for _, id := range s.order {
		if s.nodes[id].alive {
			out = append(out, id)
		}
	}
	return out
}

// Capture returns a capture (alive or not) for inspection.
func (s *Sim) Capture(id core.NodeID) *capture.Capture {
	if n := s.nodes[id]; n != nil {
		return n.cap
	}
	return nil
}

// Upstream returns the synthetic upstream.
func (s *Sim) Upstream() *upstream.Upstream { return s.up }

// Now returns virtual time in ms.
func (s *Sim) Now() int64 { return s.now }

// StoredChangefeed is what etcd holds for a changefeed.
type StoredChangefeed struct {
	Info   coordinator.ChangeFeedInfo
	Status coordinator.ChangefeedStatus
}

// Stored reads a changefeed's keys from the MemStore.
func (s *Sim) Stored(id core.ChangefeedID) (StoredChangefeed, bool) {
	var sc StoredChangefeed
	info, ok := s.store.Get(coordinator.InfoKey(id))
	if !ok {
		return sc, false
	}
	_ = jsonUnmarshal(info.Value, &sc.Info)
	if st, ok := s.store.Get(coordinator.StatusKey(id)); ok {
		_ = jsonUnmarshal(st.Value, &sc.Status)
	}
	return sc, true
}

// NodeState is one capture's abstract state.
type NodeState struct {
	ID          core.NodeID
	Owner       bool
	Maintainers []maintainer.MaintainerInfo
	Dispatchers []dispatcher.DispatcherInfo
	Managers    []dispatcher.DMInfo
}

// State is the abstract state the model also has.
type State struct {
	Now         int64
	Owner       core.NodeID
	Changefeeds []coordinator.ChangefeedState
	Nodes       []NodeState
}

// State returns the current abstract state.
func (s *Sim) State() State {
	st := State{Now: s.now, Owner: s.owner}
	if c, _, err := s.coordinator(); err == nil {
		st.Changefeeds = c.Changefeeds()
	}
	for _, id := range s.Captures() {
		c := s.nodes[id].cap
		st.Nodes = append(st.Nodes, NodeState{ID: id, Owner: id == s.owner, Maintainers: c.Maintainers.Maintainers(),
			Dispatchers: c.Orchestrator.Dispatchers(), Managers: c.Orchestrator.Managers()})
	}
	return st
}

// --- quiescence ---

// Converged reports whether every running changefeed is replicating with
// no operator, has its stored checkpoint at or past target, and every table
// span has exactly one working dispatcher.
func (s *Sim) Converged(target uint64) (bool, string) {
	c, _, err := s.coordinator()
	if err != nil || !c.Initialized() {
		return false, "no initialized coordinator"
	}
	for _, cf := range c.Changefeeds() {
		if cf.State != spec.StateNormal && cf.State != spec.StateWarning {
			if cf.Operator != "" {
				return false, fmt.Sprintf("%s: operator %s", cf.ID, cf.Operator)
			}
			continue
		}
		if cf.Sched != "replicating" || cf.Operator != "" {
			return false, fmt.Sprintf("%s: %s %s", cf.ID, cf.Sched, cf.Operator)
		}
		stored, _ := s.Stored(cf.ID)
		if stored.Status.CheckpointTs < target {
			return false, fmt.Sprintf("%s: stored checkpoint %d < target %d", cf.ID, stored.Status.CheckpointTs, target)
		}
		if msg := s.coverage(cf.ID); msg != "" {
			return false, msg
		}
		for _, id := range s.Captures() {
			for _, dm := range s.nodes[id].cap.Orchestrator.Managers() {
				if dm.Changefeed == cf.ID && dm.Err != "" {
					return false, fmt.Sprintf("%s: dispatcher manager on %s has error %q", cf.ID, id, dm.Err)
				}
			}
			for _, m := range s.nodes[id].cap.Maintainers.Maintainers() {
				if m.Changefeed == cf.ID && (m.Removing || !m.Bootstrapped) {
					return false, fmt.Sprintf("%s: maintainer on %s is removing or not bootstrapped", cf.ID, id)
				}
			}
		}
	}
	return true, ""
}

// coverage checks that every table of cf has working dispatchers tiling it.
func (s *Sim) coverage(cf core.ChangefeedID) string {
	stored, _ := s.Stored(cf)
	tables := s.up.TablesAt(^uint64(0))
	byTable := map[int64][]dispatcher.DispatcherInfo{}
	for _, id := range s.Captures() {
		for _, d := range s.nodes[id].cap.Orchestrator.Dispatchers() {
			if d.Changefeed == cf && !d.Trigger && d.State == "Working" {
				byTable[d.Span.Table] = append(byTable[d.Span.Table], d)
			}
		}
	}
	for _, t := range tables {
		if ct, _ := s.up.TableCreateTs(t); ct > stored.Status.CheckpointTs && ct > stored.Info.StartTs {
			continue
		}
		ds := byTable[t]
		sort.Slice(ds, func(i, j int) bool { return ds[i].Span.Start < ds[j].Span.Start })
		pos, end := "", false
		for _, d := range ds {
			if end || d.Span.Start != pos {
				return fmt.Sprintf("%s: table %d not tiled by working dispatchers", cf, t)
			}
			if d.Span.End == "" {
				end = true
			} else {
				pos = d.Span.End
			}
		}
		if !end {
			return fmt.Sprintf("%s: table %d not tiled by working dispatchers", cf, t)
		}
	}
	return ""
}

// RunUntilQuiet runs (checking every 500 ms) until Converged(heal target)
// holds twice, 3 s apart, or maxMs passes; then it emits Quiesced and
// finishes the monitors. It reports convergence.
func (s *Sim) RunUntilQuiet(maxMs int64) (bool, string) {
	deadline := s.now + maxMs
	var ok bool
	var why string
	// The stored checkpoint must also have caught up with the upstream as
	// it is now (within 3 s), not only with the heal target: a target taken
	// while the upstream was stalled is low, and DDLs and re-sends (5 s,
	// 10 s) may still be pending.
	target := func() uint64 {
		t := s.up.GlobalResolvedTs() - 3000
		if t < s.healTarget {
			t = s.healTarget
		}
		return t
	}
	for {
		ok, why = s.Converged(target())
		if ok {
			s.RunFor(3000)
			if ok, why = s.Converged(target()); ok {
				break
			}
		}
		if s.now >= deadline {
			break
		}
		s.RunFor(500)
	}
	s.lg.Event(nil, spec.Event{Kind: spec.Quiesced})
	if s.checker != nil {
		s.checker.Finish()
	}
	return ok, why
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
