// Package drive applies recorded domain steps (Step: an API call, a DDL, a
// fault of the vocabulary) to the implementation's deterministic simulation
// (impl/sim), checks every spec property over its event stream and the
// abstract state's invariants after every step, and judges liveness after
// the faults heal (Finish). A Follower runs alongside and is compared at the
// end: refinement.Shadow, a bounded model.
//
// It is the one driver of the simulation by steps: proptest's rapid state
// machine draws Steps, a recorded Story re-runs them (proptest's artifacts,
// its regression stories), and refinement.ReplayModel translates a model
// counterexample into them. It knows nothing of the model, so that package
// refinement, which maps the model onto these steps, can import it.
package drive

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"cdcspec/impl/core"
	"cdcspec/impl/sim"
	"cdcspec/impl/upstream"
	"cdcspec/spec"
)

// Op names a step: a fault of the vocabulary (spec.Fault) or a domain
// action (spec.Action). Names are the rapid action names, so a printed
// counterexample and a recorded story read the same.
type Op string

// Domain actions.
const (
	OpCreateChangefeed = Op(spec.ActionCreateChangefeed)
	OpPauseChangefeed  = Op(spec.ActionPauseChangefeed)
	OpResumeChangefeed = Op(spec.ActionResumeChangefeed)
	OpRemoveChangefeed = Op(spec.ActionRemoveChangefeed)
	OpMoveMaintainer   = Op(spec.ActionMoveMaintainer)
	OpCreateTable      = Op(spec.ActionCreateTable)
	OpMoveTable        = Op(spec.ActionMoveTable)
	OpSplitTable       = Op(spec.ActionSplitTable)
	OpMergeTable       = Op(spec.ActionMergeTable)
	OpRemoveTable      = Op(spec.ActionRemoveTableDispatchers)
	OpAdvanceTime      = Op(spec.ActionAdvanceTime)
	OpBlockingDDL      = Op(spec.ActionBlockingDDL)
)

// Faults.
const (
	OpKillCapture    = Op(spec.FaultKillCapture)
	OpKillMaintainer = Op(spec.FaultKillMaintainerCapture)
	OpRestartCapture = Op(spec.FaultRestartCapture)
	OpAddCapture     = Op(spec.FaultAddCapture)
	OpExpireSession  = Op(spec.FaultExpireSession)
	OpDropMessages   = Op(spec.FaultDropMessages)
	OpDupMessages    = Op(spec.FaultDuplicateMessages)
	OpDelayMessages  = Op(spec.FaultDelayMessages)
	OpRandomFaults   = Op(spec.FaultRandomMessageFaults)
	OpPartition      = Op(spec.FaultPartition)
	OpHealNetwork    = Op(spec.FaultHealNetwork)
	OpSinkError      = Op(spec.FaultSinkError)
	OpFastFail       = Op(spec.FaultFastFailError)
	OpStallUpstream  = Op(spec.FaultStallUpstream)
	OpResumeUpstream = Op(spec.FaultResumeUpstream)
	OpBlockCreate    = Op(spec.FaultBlockCreateDispatcher)
	OpSlowClose      = Op(spec.FaultSlowCloseDispatcher)
)

// Ops lists every step, in a stable order.
var Ops = []Op{
	OpCreateChangefeed, OpPauseChangefeed, OpResumeChangefeed, OpRemoveChangefeed, OpMoveMaintainer,
	OpCreateTable, OpMoveTable, OpSplitTable, OpMergeTable, OpRemoveTable,
	OpKillCapture, OpKillMaintainer, OpRestartCapture, OpAddCapture, OpExpireSession,
	OpDropMessages, OpDupMessages, OpDelayMessages, OpRandomFaults, OpPartition, OpHealNetwork,
	OpSinkError, OpFastFail, OpStallUpstream, OpResumeUpstream, OpBlockCreate, OpSlowClose, OpAdvanceTime,
	OpBlockingDDL,
}

func opNames() string {
	names := make([]string, len(Ops))
	for i, o := range Ops {
		names[i] = string(o)
	}
	return strings.Join(names, ", ")
}

func knownOp(op Op) bool {
	for _, o := range Ops {
		if o == op {
			return true
		}
	}
	return false
}

// Step is one recorded domain action with its drawn parameters. Node is an
// index into the running captures (creation order) at the time of the step;
// To is -1 for "any node". The zero values of unused fields are ignored.
type Step struct {
	Op      Op     `json:"op"`
	Feed    string `json:"feed,omitempty"`
	Node    int    `json:"node,omitempty"`
	To      int    `json:"to,omitempty"`
	From    *int   `json:"from,omitempty"` // rules: sender index; nil = any
	Table   int64  `json:"table,omitempty"`
	DDL     string `json:"ddl,omitempty"` // blocking-ddl: the kind (upstream.BlockDDLKinds); it names Table and, for two, the next table
	MsgType string `json:"msg_type,omitempty"`
	Count   int    `json:"count,omitempty"`
	DelayMs int64  `json:"delay_ms,omitempty"`
	Ms      int64  `json:"ms,omitempty"`
	Prob    int    `json:"prob_pct,omitempty"` // random faults: drop/dup probability in percent
	On      bool   `json:"on,omitempty"`
}

func (st Step) String() string {
	var b strings.Builder
	b.WriteString(string(st.Op))
	if st.Feed != "" {
		fmt.Fprintf(&b, " feed=%s", st.Feed)
	}
	switch st.Op {
	case OpMoveMaintainer, OpMoveTable, OpKillCapture, OpExpireSession, OpPartition, OpSinkError, OpFastFail, OpBlockCreate, OpSlowClose:
		fmt.Fprintf(&b, " node=#%d", st.Node)
	}
	if st.DDL != "" {
		fmt.Fprintf(&b, " ddl=%s", st.DDL)
	}
	if st.Table != 0 {
		fmt.Fprintf(&b, " table=%d", st.Table)
	}
	if st.MsgType != "" {
		fmt.Fprintf(&b, " msg=%s", st.MsgType)
		if st.From != nil {
			fmt.Fprintf(&b, " from=#%d", *st.From)
		}
		if st.To >= 0 {
			fmt.Fprintf(&b, " to=#%d", st.To)
		}
	}
	if st.Count != 0 {
		fmt.Fprintf(&b, " count=%d", st.Count)
	}
	if st.DelayMs != 0 {
		fmt.Fprintf(&b, " delay=%dms", st.DelayMs)
	}
	if st.Prob != 0 {
		fmt.Fprintf(&b, " prob=%d%%", st.Prob)
	}
	if st.Ms != 0 {
		fmt.Fprintf(&b, " for=%dms", st.Ms)
	}
	if st.Op == OpBlockCreate || st.Op == OpSlowClose {
		fmt.Fprintf(&b, " on=%v", st.On)
	}
	return b.String()
}

// Setup is the initial configuration of one run.
type Setup struct {
	Seed   uint64   `json:"seed"`
	Nodes  int      `json:"nodes"`
	Tables int      `json:"tables"`
	Bugs   []string `json:"bugs,omitempty"`
	// RawWatermark switches core.Legacy.RawWatermarkCheckpoint (before #4548),
	// which regressed-checkpoint-drops-error needs to be reachable.
	RawWatermark bool `json:"raw_watermark,omitempty"`
	// MinCaptures: kill-capture and expire-session keep at least this many
	// captures running (0 = 2).
	MinCaptures int `json:"min_captures,omitempty"`
	// Delivery is the message-delivery assumption ("" = TiCDC's message
	// center). Under it duplicate-messages is skipped and random message
	// faults lose and delay but never duplicate; a failure found under a
	// stronger one is labelled with it (Failure.Delivery).
	Delivery spec.Delivery `json:"delivery,omitempty"`
}

// SettleMs is the virtual time every step lets pass after its action (an
// action is a call into the cluster; time moves on as it would between two
// operator commands). advance-time adds more.
const SettleMs = 100

// QuiesceMaxMs bounds the run to quiescence after the faults heal.
const QuiesceMaxMs = 120_000

// Follower runs alongside a Driver (refinement.Shadow, a bounded model):
// Do hands it every step it applied, before the step's settle time passes,
// with the running captures as they were before the step (Step.Node indexes
// them); Finish, after the faults healed and the cluster quiesced with no
// failure, asks it to compare. Compare returns "" when the two agree or the
// follower stopped following, else the disagreement (a Conformance failure).
type Follower interface {
	Mirror(d *Driver, st Step, before []core.NodeID)
	Compare(d *Driver) string
}

// Driver applies Steps to a simulation; the simulation's spec.Checker sees
// every event as it is emitted, Check collects its new violations and checks
// the abstract state after every step.
type Driver struct {
	Setup Setup
	Sim   *sim.Sim
	Steps []Step // applied steps (skipped ones excluded), in order
	// MinCaptures: kill-capture and expire-session keep at least this many
	// captures running (Setup.MinCaptures, default 2).
	MinCaptures int
	// HealTarget is the upstream resolved ts when Finish healed the faults.
	HealTarget uint64
	Shadow     Follower // the model run alongside (refinement.Shadow); nil when disabled
	// Failures of the run so far, in the order found.
	Failures    []Failure
	brokenState bool
	fed         int
	stalled     bool
	killed      int // crashed captures that may restart
	feeds       map[string]string
}

// Feed states as the driver tracks them (what the API calls succeeded with).
const (
	FeedRunning = "running"
	FeedPaused  = "paused"
)

// NewDriver builds the simulation. log (may be nil) receives the
// TiCDC-format log at debug level.
func NewDriver(su Setup, log io.Writer) (*Driver, error) {
	bugs, err := spec.ParseBugs(append(append([]string(nil), su.Bugs...), hardwired()...))
	if err != nil {
		return nil, err
	}
	// The simulation's own spec.Checker (every monitor, spec.Config{}) sees
	// each event as it is emitted; Check reads its new violations. Events
	// are recorded only when a log is asked for (artifacts), to keep checks
	// cheap.
	cfg := sim.Config{Seed: su.Seed, Nodes: su.Nodes, Tables: su.Tables, RecordEvents: log != nil, Delivery: su.Delivery,
		Options: core.Options{Bugs: bugs, Legacy: core.Legacy{RawWatermarkCheckpoint: su.RawWatermark}}}
	if log != nil {
		cfg.Log, cfg.LogLevel = log, "debug"
	}
	d := &Driver{Setup: su, feeds: map[string]string{}, MinCaptures: su.MinCaptures}
	if d.MinCaptures <= 0 {
		d.MinCaptures = 2
	}
	d.Sim = sim.New(cfg)
	return d, nil
}

// Feeds lists the changefeeds the driver created and did not remove, sorted.
func (d *Driver) Feeds() []string {
	out := make([]string, 0, len(d.feeds))
	for f := range d.feeds {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// FeedState returns "running", "paused" or "" (unknown / removed).
func (d *Driver) FeedState(name string) string { return d.feeds[name] }

// Stalled reports whether the driver stalled the upstream.
func (d *Driver) Stalled() bool { return d.stalled }

// Killed is the number of crashed captures that have not restarted.
func (d *Driver) Killed() int { return d.killed }

// hardwired emulates a catalogued bug switched on inside the implementation
// (CDCSPEC_HARDWIRE_BUG=name[,name]): every Driver gets it whatever the test
// asked for, and no Setup records it. It exists to check the acceptance rule
// "turning a catalogued bug on in the impl without touching tests makes
// `make test` fail with a message naming the property".
func hardwired() []string {
	v := os.Getenv("CDCSPEC_HARDWIRE_BUG")
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// ErrSkip marks a step whose precondition does not hold; it changed nothing.
type ErrSkip struct{ Why string }

func (e ErrSkip) Error() string { return "skip: " + e.Why }

func skip(format string, args ...any) error { return ErrSkip{Why: fmt.Sprintf(format, args...)} }

func (d *Driver) node(i int) (core.NodeID, error) {
	caps := d.Sim.Captures()
	if i < 0 || i >= len(caps) {
		return "", skip("node #%d: only %d captures run", i, len(caps))
	}
	return caps[i], nil
}

// Do applies one step. An ErrSkip means the precondition failed and nothing
// changed; other errors are the API's answer (the step still happened: time
// passed). Applied steps are appended to Steps and mirrored on the shadow.
func (d *Driver) Do(st Step) error {
	before := d.Sim.Captures()
	apiErr, err := d.apply(st)
	if err != nil {
		return err
	}
	d.Steps = append(d.Steps, st)
	if d.Shadow != nil {
		d.Shadow.Mirror(d, st, before)
	}
	d.Sim.RunFor(SettleMs + st.Ms)
	return apiErr
}

func (d *Driver) apply(st Step) (apiErr, err error) {
	switch st.Op {
	case OpCreateChangefeed, OpPauseChangefeed, OpResumeChangefeed, OpRemoveChangefeed, OpMoveMaintainer:
		return d.applyChangefeed(st)
	case OpCreateTable, OpBlockingDDL, OpMoveTable, OpSplitTable, OpMergeTable, OpRemoveTable:
		return d.applyTable(st)
	case OpKillCapture, OpExpireSession, OpKillMaintainer, OpRestartCapture, OpAddCapture:
		return d.applyCapture(st)
	case OpDropMessages, OpDupMessages, OpDelayMessages, OpRandomFaults, OpPartition, OpHealNetwork:
		return d.applyNetwork(st)
	}
	s := d.Sim
	switch st.Op {
	case OpSinkError, OpFastFail:
		if d.feeds[st.Feed] == "" {
			return nil, skip("changefeed %s does not exist", st.Feed)
		}
		n, err := d.node(st.Node)
		if err != nil {
			return nil, err
		}
		if _, err := s.Inject(sim.Injection{Fault: spec.Fault(st.Op), Changefeed: st.Feed, Node: n}); err != nil {
			return nil, skip("no dispatcher manager of %s on node #%d", st.Feed, st.Node)
		}
	case OpStallUpstream:
		if d.stalled {
			return nil, skip("upstream already stalled")
		}
		d.stalled = true
		_, apiErr = s.Inject(sim.Injection{Fault: spec.FaultStallUpstream})
	case OpResumeUpstream:
		if !d.stalled {
			return nil, skip("upstream not stalled")
		}
		d.stalled = false
		_, apiErr = s.Inject(sim.Injection{Fault: spec.FaultResumeUpstream})
	case OpBlockCreate, OpSlowClose:
		n, err := d.node(st.Node)
		if err != nil {
			return nil, err
		}
		_, apiErr = s.Inject(sim.Injection{Fault: spec.Fault(st.Op), Node: n, Off: !st.On})
	case OpAdvanceTime:
		if st.Ms <= 0 {
			return nil, skip("advance-time needs ms > 0")
		}
	default:
		return nil, fmt.Errorf("unknown step op %q", st.Op)
	}
	return apiErr, nil
}

// applyChangefeed applies a changefeed API call (create, pause, resume,
// remove, move its maintainer).
func (d *Driver) applyChangefeed(st Step) (apiErr, err error) {
	s := d.Sim
	switch st.Op {
	case OpCreateChangefeed:
		if _, ok := d.feeds[st.Feed]; ok {
			return nil, skip("changefeed %s exists", st.Feed)
		}
		if apiErr = s.CreateChangefeed(st.Feed); apiErr == nil {
			d.feeds[st.Feed] = FeedRunning
		}
	case OpPauseChangefeed:
		if d.feeds[st.Feed] != FeedRunning {
			return nil, skip("changefeed %s is not running", st.Feed)
		}
		if apiErr = s.PauseChangefeed(st.Feed); apiErr == nil {
			d.feeds[st.Feed] = FeedPaused
		}
	case OpResumeChangefeed:
		if d.feeds[st.Feed] != FeedPaused {
			return nil, skip("changefeed %s is not paused", st.Feed)
		}
		if apiErr = s.ResumeChangefeed(st.Feed, 0); apiErr == nil {
			d.feeds[st.Feed] = FeedRunning
		}
	case OpRemoveChangefeed:
		if _, ok := d.feeds[st.Feed]; !ok {
			return nil, skip("changefeed %s does not exist", st.Feed)
		}
		if apiErr = s.RemoveChangefeed(st.Feed); apiErr == nil {
			delete(d.feeds, st.Feed)
		}
	case OpMoveMaintainer:
		if d.feeds[st.Feed] != FeedRunning {
			return nil, skip("changefeed %s is not running", st.Feed)
		}
		n, err := d.node(st.Node)
		if err != nil {
			return nil, err
		}
		apiErr = s.MoveMaintainer(st.Feed, n)
	}
	return apiErr, nil
}

// applyTable applies an upstream DDL or a table API call of the
// maintainer (move, split, merge, remove its dispatchers).
func (d *Driver) applyTable(st Step) (apiErr, err error) {
	s := d.Sim
	switch st.Op {
	case OpCreateTable:
		if len(s.Upstream().Tables()) >= 8 {
			return nil, skip("enough tables")
		}
		s.CreateTable()
	case OpBlockingDDL:
		if len(s.Upstream().Tables()) >= 8 && st.DDL == upstream.DDLTruncate {
			return nil, skip("enough tables")
		}
		tables := []int64{st.Table, st.Table + 1}[:upstream.BlockDDLKinds[st.DDL]]
		if _, err := s.BlockingDDL(st.DDL, tables...); err != nil {
			return nil, skip("%v", err)
		}
	case OpMoveTable, OpSplitTable, OpMergeTable, OpRemoveTable:
		if d.feeds[st.Feed] != FeedRunning {
			return nil, skip("changefeed %s is not running", st.Feed)
		}
		if _, ok := s.Upstream().TableCreateTs(st.Table); !ok {
			return nil, skip("table %d does not exist", st.Table)
		}
		switch st.Op {
		case OpMoveTable:
			n, err := d.node(st.Node)
			if err != nil {
				return nil, err
			}
			_, apiErr = s.MoveTable(st.Feed, st.Table, n)
		case OpSplitTable:
			_, apiErr = s.SplitTable(st.Feed, st.Table)
		case OpMergeTable:
			_, apiErr = s.MergeTable(st.Feed, st.Table)
		default:
			_, apiErr = s.RemoveTableDispatchers(st.Feed, st.Table)
		}
	}
	return apiErr, nil
}

// applyCapture kills, restarts or adds a capture.
func (d *Driver) applyCapture(st Step) (apiErr, err error) {
	s := d.Sim
	switch st.Op {
	case OpKillCapture, OpExpireSession, OpKillMaintainer:
		if len(s.Captures()) <= d.MinCaptures {
			return nil, skip("keep %d captures running", d.MinCaptures)
		}
		var n core.NodeID
		if st.Op == OpKillMaintainer {
			if n = s.MaintainerNode(st.Feed); n == "" {
				return nil, skip("no bootstrapped maintainer of %s runs", st.Feed)
			}
		} else if n, err = d.node(st.Node); err != nil {
			return nil, err
		}
		if _, apiErr = s.Inject(sim.Injection{Fault: spec.Fault(st.Op), Node: n}); apiErr == nil {
			d.killed++
		}
	case OpRestartCapture:
		if d.killed == 0 {
			return nil, skip("no crashed capture")
		}
		d.killed--
		_, apiErr = s.Inject(sim.Injection{Fault: spec.FaultRestartCapture})
	case OpAddCapture:
		if len(s.Captures()) >= 5 {
			return nil, skip("five captures run")
		}
		_, apiErr = s.Inject(sim.Injection{Fault: spec.FaultAddCapture})
	}
	return apiErr, nil
}

// applyNetwork injects a message fault: a rule (drop, duplicate,
// delay), random faults, a partition or its heal.
func (d *Driver) applyNetwork(st Step) (apiErr, err error) {
	s := d.Sim
	switch st.Op {
	case OpDropMessages, OpDupMessages, OpDelayMessages:
		r := sim.Rule{Type: st.MsgType, Count: st.Count, DelayMs: st.DelayMs}
		if st.Op == OpDelayMessages && st.MsgType == "BlockStatusRequest" {
			// The one stretched window the search keeps (SPEC.md 8.6): a
			// block status held in the heartbeat collector's queue while
			// the other collector goroutine's heartbeats pass. At HEAD
			// that lasts a goroutine's scheduling delay; #5401's story
			// (trigger-passes-add-table-ddl) needs it. Every other delay
			// waits on the stream.
			r.HoldInSendQueue = true
		}
		if st.To >= 0 {
			n, err := d.node(st.To)
			if err != nil {
				return nil, err
			}
			r.To = n
		}
		if st.From != nil {
			n, err := d.node(*st.From)
			if err != nil {
				return nil, err
			}
			r.From = n
		}
		_, apiErr = s.Inject(sim.Injection{Fault: spec.Fault(st.Op), Rule: r})
	case OpRandomFaults:
		f := sim.Faults{DropProb: float64(st.Prob) / 100, DelayMinMs: 1, DelayMaxMs: 1 + st.DelayMs}
		if s.Delivery().Duplicates() {
			// TiCDC's message center never duplicates; the simulation
			// refuses the whole setting if asked to.
			f.DupProb = float64(st.Prob) / 200
		}
		_, apiErr = s.Inject(sim.Injection{Fault: spec.FaultRandomMessageFaults, Faults: f})
	case OpPartition:
		n, err := d.node(st.Node)
		if err != nil {
			return nil, err
		}
		_, apiErr = s.Inject(sim.Injection{Fault: spec.FaultPartition, Node: n})
	case OpHealNetwork:
		_, apiErr = s.Inject(sim.Injection{Fault: spec.FaultHealNetwork})
	}
	return apiErr, nil
}

// Failure is what a run found: a violated property (or a broken state
// invariant, Property "state-invariant", or "quiescence" when the cluster did
// not converge though no property fired) and the message.
type Failure struct {
	Property spec.Property
	Message  string
	Step     int // index into Steps after which it was found; -1 = at the end
	// Delivery is the run's delivery assumption: a failure found under one
	// stronger than TiCDC's message center is labelled as such.
	Delivery spec.Delivery
}

func (f *Failure) Error() string {
	if !f.Delivery.TiCDC() {
		return fmt.Sprintf("%s [delivery %s]: %s", f.Property, f.Delivery.Label(), f.Message)
	}
	return fmt.Sprintf("%s: %s", f.Property, f.Message)
}

// Non-spec failure classes.
const (
	StateInvariant spec.Property = "state-invariant"
	Quiescence     spec.Property = "quiescence"
	Conformance    spec.Property = "model-conformance"
)

// Check collects the violations the simulation's spec.Checker found since
// the last call (every property, over every event) and checks the abstract
// state. It returns the first new failure; every failure
// of the run is kept in Failures.
func (d *Driver) Check() *Failure {
	n := len(d.Failures)
	vs := d.Sim.Violations()
	for ; d.fed < len(vs); d.fed++ {
		v := vs[d.fed]
		d.Failures = append(d.Failures, Failure{Property: v.Property, Message: v.Message, Step: len(d.Steps) - 1, Delivery: d.Setup.Delivery.OrDefault()})
	}
	if !d.brokenState {
		if msg := d.stateInvariants(); msg != "" {
			d.brokenState = true // report once: a broken invariant tends to stay broken
			d.Failures = append(d.Failures, Failure{Property: StateInvariant, Message: msg, Step: len(d.Steps) - 1, Delivery: d.Setup.Delivery.OrDefault()})
		}
	}
	if len(d.Failures) > n {
		return &d.Failures[n]
	}
	return nil
}

// Violated returns the first failure of the run with property p.
func (d *Driver) Violated(p spec.Property) *Failure {
	for i := range d.Failures {
		if d.Failures[i].Property == p {
			return &d.Failures[i]
		}
	}
	return nil
}

// stateInvariants checks the implementation's abstract state (sim.State and
// the etcd store) against invariants that must hold at every instant:
//   - at most one running capture acts as coordinator;
//   - the stored checkpoint of a changefeed never exceeds the upstream
//     resolved ts (nothing can be flushed beyond what TiKV resolved);
//   - at most one bootstrapped, non-removing maintainer of a changefeed runs
//     on the running captures (single-maintainer-generation, on state);
//   - no two working table dispatchers of a changefeed on running captures
//     overlap (at-most-one-dispatcher-per-span, on state).
func (d *Driver) stateInvariants() string {
	s := d.Sim
	st := s.State()
	caps := map[core.NodeID]bool{}
	for _, n := range st.Nodes {
		caps[n.ID] = true
	}
	var coords []core.NodeID
	for id := range caps {
		if c := s.Capture(id); c != nil && c.Coordinator != nil {
			coords = append(coords, id)
		}
	}
	if len(coords) > 1 {
		sort.Slice(coords, func(i, j int) bool { return coords[i] < coords[j] })
		return fmt.Sprintf("%d running captures act as coordinator: %v", len(coords), coords)
	}
	resolved := s.Upstream().GlobalResolvedTs()
	for _, f := range d.Feeds() {
		if sc, ok := s.Stored(sim.CfID(f)); ok && sc.Status.CheckpointTs > resolved {
			return fmt.Sprintf("changefeed %s: stored checkpoint %d is above the upstream resolved ts %d", f, sc.Status.CheckpointTs, resolved)
		}
	}
	maint := map[core.ChangefeedID][]core.NodeID{}
	type wd struct {
		node core.NodeID
		span spec.Span
	}
	working := map[core.ChangefeedID][]wd{}
	for _, n := range st.Nodes {
		for _, m := range n.Maintainers {
			if m.Bootstrapped && !m.Removing && !m.Removed && !m.RemovalOnly {
				maint[m.Changefeed] = append(maint[m.Changefeed], n.ID)
			}
		}
		for _, dd := range n.Dispatchers {
			if dd.Trigger || dd.State != "Working" {
				continue
			}
			for _, o := range working[dd.Changefeed] {
				if o.span.Overlaps(dd.Span) {
					return fmt.Sprintf("changefeed %s: working dispatchers for %s on %s and %s on %s overlap", dd.Changefeed, o.span, o.node, dd.Span, n.ID)
				}
			}
			working[dd.Changefeed] = append(working[dd.Changefeed], wd{n.ID, dd.Span})
		}
	}
	for cf, ns := range maint {
		if len(ns) > 1 {
			return fmt.Sprintf("changefeed %s: %d bootstrapped maintainers run (on %v)", cf, len(ns), ns)
		}
	}
	return ""
}

// Finish ends a run: heal every fault (FaultsHealed), run to quiescence
// (Quiesced), feed the rest of the stream and judge the liveness
// properties; then compare with the shadow model. Paused changefeeds stay
// paused (they are not expected to progress). A run that did not converge
// although no property fired is a Quiescence failure. It returns the first
// failure of the whole run (Failures has them all).
func (d *Driver) Finish() *Failure {
	d.Check()
	n := len(d.Failures)
	d.Sim.Heal()
	d.HealTarget = d.Sim.Upstream().GlobalResolvedTs()
	d.stalled = false
	ok, why := d.Sim.RunUntilQuiet(QuiesceMaxMs) // emits Quiesced and finishes the monitors
	d.Check()
	for i := n; i < len(d.Failures); i++ {
		d.Failures[i].Step = -1
	}
	if !ok && len(d.Failures) == 0 {
		d.Failures = append(d.Failures, Failure{Property: Quiescence, Message: "the cluster did not converge after faults healed: " + why, Step: -1, Delivery: d.Setup.Delivery.OrDefault()})
	}
	if d.Shadow != nil && len(d.Failures) == 0 {
		if msg := d.Shadow.Compare(d); msg != "" {
			d.Failures = append(d.Failures, Failure{Property: Conformance, Message: msg, Step: -1, Delivery: d.Setup.Delivery.OrDefault()})
		}
	}
	if len(d.Failures) > 0 {
		return &d.Failures[0]
	}
	return nil
}

// Story is a recorded run: the setup and its steps, JSON-encodable.
type Story struct {
	Setup Setup  `json:"setup"`
	Steps []Step `json:"steps"`
}

// Run replays a story from scratch and returns the driver and the first
// failure (during the steps or at the end). log (may be nil) receives the
// TiCDC-format log; shadow (may be nil) follows the run
// (refinement.NewShadow(story.Setup)). Steps that are skipped on replay are
// an error: a story is replayed exactly or not at all.
func Run(story Story, log io.Writer, shadow Follower) (*Driver, *Failure, error) {
	d, err := NewDriver(story.Setup, log)
	if err != nil {
		return nil, nil, err
	}
	d.Shadow = shadow
	for i, st := range story.Steps {
		if !knownOp(st.Op) {
			return d, nil, fmt.Errorf("story step %d: unknown op %q (known: %s)", i+1, st.Op, opNames())
		}
		if err := d.Do(st); err != nil {
			if _, ok := err.(ErrSkip); ok {
				return d, nil, fmt.Errorf("story step %d (%s): %v", i+1, st, err)
			}
		}
		if f := d.Check(); f != nil {
			return d, f, nil
		}
	}
	return d, d.Finish(), nil
}

// MarshalStory renders a story as indented JSON.
func MarshalStory(s Story) []byte {
	b, _ := json.MarshalIndent(s, "", "  ")
	return b
}

// UnmarshalStory parses a story, naming what is wrong.
func UnmarshalStory(b []byte) (Story, error) {
	var s Story
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Story{}, fmt.Errorf("story: %v", err)
	}
	return s, nil
}
