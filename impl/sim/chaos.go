package sim

import (
	"fmt"
	"io"
	"math/rand/v2"

	"go.uber.org/zap"

	"cdcspec/impl/core"
	"cdcspec/impl/upstream"
	"cdcspec/spec"
)

// ChaosConfig describes one random-fault run: setup, Steps random actions
// and faults of the vocabulary (each followed by 0.5-3 s of virtual time),
// heal, quiescence.
type ChaosConfig struct {
	Seed        uint64
	Nodes       int // default 3
	Tables      int // default 3 + seed%4
	Changefeeds int // default 1, or 2 for seeds divisible by 3
	Steps       int // default 40
	Options     core.Options
	Log         io.Writer
	LogLevel    string
	// QuiesceMs bounds the run after heal (default 240 s).
	QuiesceMs int64
	// Delivery is the message-delivery assumption ("" = TiCDC's message
	// center).
	Delivery spec.Delivery
	// Faults restricts the faults drawn to these (nil: every fault RunChaos
	// draws; CheckChaosFaults validates a list). Domain actions are always
	// drawn.
	Faults []spec.Fault
	// BlockingDDLs adds blocking DDLs to the domain actions drawn (a random
	// kind of upstream.BlockDDLKinds on random tables). Off by default, so
	// that seeded runs recorded before the barrier keep their draws.
	BlockingDDLs bool
	// observe, if set, sees every message's fate (tests).
	observe func(NetEvent)
}

// Bounds of a ChaosConfig a caller may ask for (Validate); zero is the
// default for Tables, Changefeeds and Steps.
const (
	MaxChaosNodes       = 16
	MaxChaosTables      = 64
	MaxChaosChangefeeds = 8
	MaxChaosSteps       = 10000
)

// Validate reports the first field outside its range, naming it, its value
// and the valid range. RunChaos refuses an invalid config (Why) rather than
// defaulting or panicking.
func (c ChaosConfig) Validate() error {
	check := func(name string, v, lo, hi int) error {
		if v < lo || v > hi {
			return fmt.Errorf("%s %d out of range [%d, %d]", name, v, lo, hi)
		}
		return nil
	}
	if err := check("nodes", c.Nodes, 0, MaxChaosNodes); err != nil {
		return err
	}
	if err := check("tables", c.Tables, 0, MaxChaosTables); err != nil {
		return err
	}
	if err := check("changefeeds", c.Changefeeds, 0, MaxChaosChangefeeds); err != nil {
		return err
	}
	if err := check("steps", c.Steps, 0, MaxChaosSteps); err != nil {
		return err
	}
	if c.QuiesceMs < 0 {
		return fmt.Errorf("quiesce %d ms is negative", c.QuiesceMs)
	}
	switch c.LogLevel {
	case "", "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("log level %q unknown (known: debug, info, warn, error)", c.LogLevel)
	}
	return nil
}

// ChaosResult is the outcome of RunChaos.
type ChaosResult struct {
	Converged  bool
	Why        string // why it did not converge
	Violations []string
	Actions    []string
	Delivered  uint64
	Sim        *Sim
}

// OK reports convergence without violations.
func (r ChaosResult) OK() bool { return r.Converged && len(r.Violations) == 0 }

// RunChaos runs one seed of random actions and faults with cfg.Options (the
// soak test uses every fix on), then heals, quiesces and reports.
func RunChaos(cfg ChaosConfig) ChaosResult {
	if err := cfg.Validate(); err != nil {
		return ChaosResult{Why: "invalid config: " + err.Error()}
	}
	seed := cfg.Seed
	if cfg.Nodes == 0 {
		cfg.Nodes = 3
	}
	if cfg.Tables == 0 {
		cfg.Tables = 3 + int(seed%4)
	}
	if cfg.Changefeeds == 0 {
		cfg.Changefeeds = 1
		if seed%3 == 0 {
			cfg.Changefeeds = 2
		}
	}
	if cfg.Steps == 0 {
		cfg.Steps = 40
	}
	if cfg.QuiesceMs == 0 {
		cfg.QuiesceMs = 240_000
	}
	s := New(Config{Seed: seed, Nodes: cfg.Nodes, Tables: cfg.Tables, Options: cfg.Options, Log: cfg.Log, LogLevel: cfg.LogLevel, Delivery: cfg.Delivery, observe: cfg.observe})
	res := ChaosResult{Sim: s}
	r := rand.New(rand.NewPCG(seed, 0x736f616b))
	var feeds []string
	for i := 1; i <= cfg.Changefeeds; i++ {
		f := fmt.Sprintf("cf%d", i)
		feeds = append(feeds, f)
		if err := s.CreateChangefeed(f); err != nil {
			res.Why = "create: " + err.Error()
			return res
		}
	}
	s.RunFor(3000)
	c, err := newChaos(s, r, feeds, cfg.Faults)
	if err != nil {
		res.Why = err.Error()
		return res
	}
	if cfg.BlockingDDLs {
		c.menu = append(append([]chaosEntry(nil), c.menu...), blockingDDLEntry)
	}
	for step := 0; step < cfg.Steps; step++ {
		a, _ := c.step()
		s.lg.Info("sim.go", 1, "chaos action", zap.String("action", a))
		res.Actions = append(res.Actions, a)
		s.RunFor(500 + r.Int64N(2500))
	}
	for _, f := range feeds {
		if c.paused[f] {
			_ = s.ResumeChangefeed(f, 0)
		}
	}
	s.Heal()
	res.Converged, res.Why = s.RunUntilQuiet(cfg.QuiesceMs)
	for _, v := range s.Violations() {
		res.Violations = append(res.Violations, v.String())
	}
	res.Delivered = s.Delivered
	return res
}

// DumpState writes the abstract state (changefeeds, maintainers with their
// spans, dispatcher managers, dispatchers) for failure artifacts.
func (s *Sim) DumpState(w io.Writer) {
	st := s.State()
	fmt.Fprintf(w, "=== state at %d (owner %s)\n", st.Now, st.Owner)
	for _, cf := range st.Changefeeds {
		fmt.Fprintf(w, "%+v\n", cf)
	}
	for _, n := range st.Nodes {
		fmt.Fprintf(w, "node %s maintainers %+v\n", n.ID, n.Maintainers)
		for _, m := range n.Maintainers {
			if mt := s.Capture(n.ID).Maintainers.Get(m.Changefeed); mt != nil {
				for _, sp := range mt.Spans() {
					fmt.Fprintf(w, "  span %+v\n", sp)
				}
			}
		}
		for _, m := range n.Managers {
			fmt.Fprintf(w, "  dm %+v\n", m)
		}
		for _, d := range n.Dispatchers {
			fmt.Fprintf(w, "  %s %s %s %d %v\n", d.Changefeed, d.Span, d.State, d.Checkpoint, d.PendingDDLs)
		}
	}
}

// ChaosUnsupported are the faults of the vocabulary RunChaos never draws,
// with the reason; it draws every other one.
var ChaosUnsupported = map[spec.Fault]string{
	spec.FaultKillMaintainerCapture:     "kill-capture draws any capture, the maintainer's among them",
	spec.FaultKillOwnerCapture:          "kill-capture draws any capture, the owner's among them",
	spec.FaultKillMoveDestination:       "compound: RunChaos draws its parts (move-table, kill-capture) independently",
	spec.FaultKillMaintainerInflight:    "compound: RunChaos draws its parts (failpoints, move-table, kill-capture) independently",
	spec.FaultKillMaintainerStaleCreate: "compound: RunChaos draws its parts (delay-messages, move-table, kill-capture) independently",
	spec.FaultKillCaptureDuringDDL:      "compound: RunChaos draws its parts (blocking-ddl with -ddls, kill-capture) independently",
	spec.FaultMoveWriterDuringDDL:       "compound: RunChaos draws its parts (message delays, blocking-ddl with -ddls, move-table) independently",
	spec.FaultDropAddTableStatus:        "compound: RunChaos draws its parts (message loss, create-table, blocking-ddl with -ddls) independently",
	spec.FaultFreezeCapture:             UnsupportedFaults[spec.FaultFreezeCapture],
	spec.FaultExpireFrozenSession:       UnsupportedFaults[spec.FaultExpireFrozenSession],
	spec.FaultStore:                     UnsupportedFaults[spec.FaultStore],
	spec.FaultRestartCapture:            "add-capture starts a capture with a fresh ID, which is all a restart is to the others",
	spec.FaultDropMessages:              "random-message-faults loses messages at random; targeted drops are proptest's and the stories'",
	spec.FaultDuplicateMessages:         "random-message-faults duplicates where the delivery assumption allows it",
	spec.FaultHeal:                      "RunChaos heals once, after its random steps",
	spec.FaultFastFailError:             "a fast-fail error fails the changefeed for good; chaos runs judge liveness of a running changefeed, so proptest and the scenarios inject it",
}

// chaosEntry is one item of RunChaos's menu: what it injects (faults, or a
// domain action) and how it draws targets and parameters. do returns the
// fault or action it applied ("noop" when its precondition failed) and the
// error of the call, which RunChaos ignores (a refused call is part of the
// chaos).
type chaosEntry struct {
	faults []spec.Fault // what it may inject; nil for a domain action
	action spec.Action
	do     func(c *chaos, caps []core.NodeID, feed string) (string, error)
}

// chaosMenu is drawn uniformly; delay-messages is listed twice (a long
// delay is the fault that most often reorders the protocol).
var chaosMenu = []chaosEntry{
	{faults: []spec.Fault{spec.FaultRandomMessageFaults}, do: func(c *chaos, _ []core.NodeID, _ string) (string, error) {
		f := Faults{DropProb: c.r.Float64() * 0.1, DupProb: c.r.Float64() * 0.05, DelayMinMs: 1, DelayMaxMs: 1 + c.r.Int64N(100)}
		if !c.s.Delivery().Duplicates() {
			f.DupProb = 0 // TiCDC's transport never duplicates
		}
		return c.inject(Injection{Fault: spec.FaultRandomMessageFaults, Faults: f})
	}},
	{faults: []spec.Fault{spec.FaultPartition}, do: func(c *chaos, caps []core.NodeID, _ string) (string, error) {
		if len(caps) <= 2 {
			return noop, nil
		}
		return c.inject(Injection{Fault: spec.FaultPartition, Node: c.pick(caps)})
	}},
	{faults: []spec.Fault{spec.FaultHealNetwork}, do: func(c *chaos, _ []core.NodeID, _ string) (string, error) {
		return c.inject(Injection{Fault: spec.FaultHealNetwork})
	}},
	{faults: []spec.Fault{spec.FaultKillCapture}, do: func(c *chaos, caps []core.NodeID, _ string) (string, error) {
		if len(caps) <= 2 {
			return noop, nil
		}
		return c.inject(Injection{Fault: spec.FaultKillCapture, Node: c.pick(caps)})
	}},
	{faults: []spec.Fault{spec.FaultAddCapture}, do: func(c *chaos, caps []core.NodeID, _ string) (string, error) {
		if len(caps) >= 5 {
			return noop, nil
		}
		return c.inject(Injection{Fault: spec.FaultAddCapture})
	}},
	{faults: []spec.Fault{spec.FaultExpireSession}, do: func(c *chaos, caps []core.NodeID, _ string) (string, error) {
		if len(caps) <= 2 {
			return noop, nil
		}
		return c.inject(Injection{Fault: spec.FaultExpireSession, Node: c.pick(caps)})
	}},
	{faults: []spec.Fault{spec.FaultSinkError}, do: func(c *chaos, caps []core.NodeID, feed string) (string, error) {
		return c.inject(Injection{Fault: spec.FaultSinkError, Changefeed: feed, Node: c.pick(caps)})
	}},
	{faults: []spec.Fault{spec.FaultStallUpstream, spec.FaultResumeUpstream}, do: func(c *chaos, _ []core.NodeID, _ string) (string, error) {
		f := spec.FaultStallUpstream
		if c.stalled {
			f = spec.FaultResumeUpstream
		}
		c.stalled = !c.stalled
		return c.inject(Injection{Fault: f})
	}},
	{action: spec.ActionMoveTable, do: func(c *chaos, caps []core.NodeID, feed string) (string, error) {
		tables := c.s.Upstream().Tables()
		_, err := c.s.MoveTable(feed, tables[c.r.IntN(len(tables))], c.pick(caps))
		return string(spec.ActionMoveTable), err
	}},
	{action: spec.ActionSplitTable, do: func(c *chaos, _ []core.NodeID, feed string) (string, error) {
		tables := c.s.Upstream().Tables()
		_, err := c.s.SplitTable(feed, tables[c.r.IntN(len(tables))])
		return string(spec.ActionSplitTable), err
	}},
	{action: spec.ActionCreateTable, do: func(c *chaos, _ []core.NodeID, _ string) (string, error) {
		if len(c.s.Upstream().Tables()) >= 10 {
			return noop, nil
		}
		c.s.CreateTable()
		return string(spec.ActionCreateTable), nil
	}},
	{action: spec.ActionMoveMaintainer, do: func(c *chaos, caps []core.NodeID, feed string) (string, error) {
		return string(spec.ActionMoveMaintainer), c.s.MoveMaintainer(feed, c.pick(caps))
	}},
	{action: spec.ActionPauseChangefeed, do: func(c *chaos, _ []core.NodeID, feed string) (string, error) {
		if c.paused[feed] {
			err := c.s.ResumeChangefeed(feed, 0)
			if err == nil {
				delete(c.paused, feed)
			}
			return string(spec.ActionResumeChangefeed), err
		}
		err := c.s.PauseChangefeed(feed)
		if err == nil {
			c.paused[feed] = true
		}
		return string(spec.ActionPauseChangefeed), err
	}},
	{faults: []spec.Fault{spec.FaultBlockCreateDispatcher}, do: func(c *chaos, caps []core.NodeID, _ string) (string, error) {
		n := c.pick(caps)
		return c.inject(Injection{Fault: spec.FaultBlockCreateDispatcher, Node: n, Off: c.r.IntN(2) != 0})
	}},
	{faults: []spec.Fault{spec.FaultSlowCloseDispatcher}, do: func(c *chaos, caps []core.NodeID, _ string) (string, error) {
		n := c.pick(caps)
		return c.inject(Injection{Fault: spec.FaultSlowCloseDispatcher, Node: n, Off: c.r.IntN(2) != 0})
	}},
	{action: spec.ActionRemoveTableDispatchers, do: func(c *chaos, _ []core.NodeID, feed string) (string, error) {
		tables := c.s.Upstream().Tables()
		_, err := c.s.RemoveTableDispatchers(feed, tables[c.r.IntN(len(tables))])
		return string(spec.ActionRemoveTableDispatchers), err
	}},
	{faults: []spec.Fault{spec.FaultDelayMessages}, do: delayMessages},
	{faults: []spec.Fault{spec.FaultDelayMessages}, do: delayMessages},
}

// blockingDDLEntry commits a blocking DDL of a random kind on random
// existing tables (ChaosConfig.BlockingDDLs).
var blockingDDLEntry = chaosEntry{action: spec.ActionBlockingDDL, do: func(c *chaos, _ []core.NodeID, _ string) (string, error) {
	kinds := []string{upstream.DDLNormal, upstream.DDLDrop, upstream.DDLTruncate, upstream.DDLRename, upstream.DDLDB, upstream.DDLSyncPoint}
	kind := kinds[c.r.IntN(len(kinds))]
	tables := c.s.Upstream().TablesAt(^uint64(0))
	n := upstream.BlockDDLKinds[kind]
	if len(tables) < n+1 || (kind == upstream.DDLTruncate && len(c.s.Upstream().Tables()) >= 10) {
		return noop, nil // keep a table that no DDL names
	}
	c.r.Shuffle(len(tables), func(i, j int) { tables[i], tables[j] = tables[j], tables[i] })
	if _, err := c.s.BlockingDDL(kind, tables[:n]...); err != nil {
		return noop, err
	}
	return string(spec.ActionBlockingDDL) + " " + kind, nil
}}

const noop = "noop"

// delayMessages: a long delay of a few messages of one type. Under the
// message center the delayed message holds back what is behind it in its
// sending queue or on its stream (a congested connection); under the
// stronger deliveries it holds back its type only.
func delayMessages(c *chaos, _ []core.NodeID, _ string) (string, error) {
	typ := delayableTypes[c.r.IntN(len(delayableTypes))]
	r := Rule{Type: typ, DelayMs: 5000 + c.r.Int64N(35000), Count: 1 + c.r.IntN(3)}
	return c.inject(Injection{Fault: spec.FaultDelayMessages, Rule: r})
}

// chaos draws RunChaos's random actions and faults from its menu.
type chaos struct {
	s       *Sim
	r       *rand.Rand
	feeds   []string
	menu    []chaosEntry
	stalled bool
	paused  map[string]bool
}

// newChaos builds the menu: every entry, or (faults non-nil) the domain
// actions and the entries that inject one of faults. The full menu keeps
// each seed's sequence of draws.
func newChaos(s *Sim, r *rand.Rand, feeds []string, faults []spec.Fault) (*chaos, error) {
	c := &chaos{s: s, r: r, feeds: feeds, paused: map[string]bool{}}
	if faults == nil {
		c.menu = chaosMenu
		return c, nil
	}
	want := map[spec.Fault]bool{}
	for _, f := range faults {
		if why, ok := ChaosUnsupported[f]; ok {
			return nil, fmt.Errorf("%s: RunChaos does not draw it: %s", f, why)
		}
		if !f.Known() {
			_, err := spec.ParseFault(string(f))
			return nil, err
		}
		want[f] = true
	}
	for _, e := range chaosMenu {
		keep := e.faults == nil
		for _, f := range e.faults {
			keep = keep || want[f]
		}
		if keep {
			c.menu = append(c.menu, e)
		}
	}
	return c, nil
}

// CheckChaosFaults says whether RunChaos can restrict its faults to these
// (ChaosConfig.Faults); the error names the first it cannot draw and why.
func CheckChaosFaults(faults []spec.Fault) error {
	_, err := newChaos(nil, nil, nil, faults)
	return err
}

func (c *chaos) pick(caps []core.NodeID) core.NodeID { return caps[c.r.IntN(len(caps))] }

func (c *chaos) inject(in Injection) (string, error) {
	_, err := c.s.Inject(in)
	return string(in.Fault), err
}

// step applies one random entry of the menu and returns what it applied
// ("noop" when the entry's precondition failed) and the call's error.
func (c *chaos) step() (string, error) {
	caps := c.s.Captures()
	feed := c.feeds[c.r.IntN(len(c.feeds))]
	return c.menu[c.r.IntN(len(c.menu))].do(c, caps, feed)
}

// delayableTypes are the message types delayMessages draws from: every
// registered type that may wait on its way (core.MessageKind.Delayable),
// except those RunChaos never sends. The first ones keep their recorded
// order so that every chaos seed draws what it drew before; a new type is
// appended by core.DrawOrder.
var delayableTypes = core.MustDrawOrder([]string{"AddMaintainerRequest", "RemoveMaintainerRequest", "MaintainerHeartbeat", "MaintainerBootstrapRequest",
	"MaintainerBootstrapResponse", "MaintainerCloseRequest", "MaintainerCloseResponse", "ScheduleDispatcherRequest",
	"HeartBeatRequest", "BlockStatusRequest", "HeartBeatResponse", "CoordinatorBootstrapRequest", "CoordinatorBootstrapResponse"},
	func(k core.MessageKind) bool { return k.Delayable() && chaosNeverSends[k.Name] == "" })

// chaosNeverSends: registered message types no RunChaos run sends, with the
// reason; delaying one would be a noop draw.
var chaosNeverSends = map[string]string{
	"MergeDispatcherRequest": "chaosMenu has no merge-table entry (merges are proptest's and the scenarios')",
}
