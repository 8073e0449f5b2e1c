package sim

import (
	"fmt"
	"io"
	"math/rand/v2"

	"go.uber.org/zap"

	"cdcspec/impl/core"
	"cdcspec/spec"
)

// ChaosConfig describes one random-fault run: setup, Steps random actions
// and faults (each followed by 0.5-3 s of virtual time), heal, quiescence.
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
	// observe, if set, sees every message's fate (tests).
	observe func(NetEvent)
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
	stalled, paused := false, map[string]bool{}
	for step := 0; step < cfg.Steps; step++ {
		a := RandomAction(s, r, feeds, &stalled, paused)
		s.lg.Info("sim.go", 1, "chaos action", zap.String("action", a))
		res.Actions = append(res.Actions, a)
		s.RunFor(500 + r.Int64N(2500))
	}
	for _, f := range feeds {
		if paused[f] {
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

// RandomAction applies one random action or fault (a rapid test would draw
// the same menu).
func RandomAction(s *Sim, r *rand.Rand, feeds []string, stalled *bool, paused map[string]bool) string {
	caps := s.Captures()
	pick := func() core.NodeID { return caps[r.IntN(len(caps))] }
	f := feeds[r.IntN(len(feeds))]
	switch k := r.IntN(18); k {
	case 0:
		f := Faults{DropProb: r.Float64() * 0.1, DupProb: r.Float64() * 0.05, DelayMinMs: 1, DelayMaxMs: 1 + r.Int64N(100)}
		if !s.Delivery().Duplicates() {
			f.DupProb = 0 // TiCDC's transport never duplicates
		}
		if err := s.SetFaults(f); err != nil {
			panic(err) // unreachable: duplicates only where the delivery allows them
		}
		return "faults"
	case 1:
		if len(caps) > 2 {
			a := pick()
			s.Partition([]core.NodeID{a})
			return "partition"
		}
	case 2:
		s.Partition()
		_ = s.SetFaults(Faults{DelayMinMs: 1, DelayMaxMs: 5})
		return "heal-network"
	case 3:
		if len(caps) > 2 {
			_ = s.KillCapture(pick())
			return "kill"
		}
	case 4:
		if len(caps) < 5 {
			s.AddCapture()
			return "add-capture"
		}
	case 5:
		if len(caps) > 2 {
			_ = s.ExpireSession(pick())
			return "expire"
		}
	case 6:
		_ = s.SinkError(CfID(f), pick())
		return "sink-error"
	case 7:
		if !*stalled {
			s.StallUpstream()
		} else {
			s.ResumeUpstream()
		}
		*stalled = !*stalled
		return "stall"
	case 8:
		tables := s.Upstream().Tables()
		_, _ = s.MoveTable(f, tables[r.IntN(len(tables))], pick())
		return "move-table"
	case 9:
		tables := s.Upstream().Tables()
		_, _ = s.SplitTable(f, tables[r.IntN(len(tables))])
		return "split-table"
	case 10:
		if len(s.Upstream().Tables()) < 10 {
			s.CreateTable()
			return "create-table"
		}
	case 11:
		_ = s.MoveMaintainer(f, pick())
		return "move-maintainer"
	case 12:
		if paused[f] {
			if s.ResumeChangefeed(f, 0) == nil {
				delete(paused, f)
			}
		} else if s.PauseChangefeed(f) == nil {
			paused[f] = true
		}
		return "pause-resume"
	case 13:
		_ = s.SetFailpoint(pick(), "BlockCreateDispatcher", r.IntN(2) == 0)
		return "failpoint"
	case 14:
		_ = s.SetFailpoint(pick(), "NotReadyToCloseDispatcher", r.IntN(2) == 0)
		return "failpoint"
	case 15:
		tables := s.Upstream().Tables()
		_, _ = s.RemoveTableDispatchers(f, tables[r.IntN(len(tables))])
		return "remove-table"
	case 16, 17:
		// A long delay of a few messages of one type. Under the message
		// center the delayed message holds back what is behind it in its
		// sending queue or on its stream (a congested connection); under the
		// stronger deliveries it holds back its type only.
		typ := delayableTypes[r.IntN(len(delayableTypes))]
		_ = s.AddRule(Rule{Type: typ, Action: "delay", DelayMs: 5000 + r.Int64N(35000), Count: 1 + r.IntN(3)}) // a delay rule is always accepted
		return "delay " + typ
	}
	return "noop"
}

var delayableTypes = []string{"AddMaintainerRequest", "RemoveMaintainerRequest", "MaintainerHeartbeat", "MaintainerBootstrapRequest",
	"MaintainerBootstrapResponse", "MaintainerCloseRequest", "MaintainerCloseResponse", "ScheduleDispatcherRequest",
	"HeartBeatRequest", "BlockStatusRequest", "HeartBeatResponse", "CoordinatorBootstrapRequest", "CoordinatorBootstrapResponse"}
