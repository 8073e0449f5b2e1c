package main

import (
	"fmt"
	"math/rand/v2"
	"time"

	"cdcspec/impl/core"
	"cdcspec/impl/sim"
	"cdcspec/model"
	"cdcspec/refinement"
	"cdcspec/spec"
	"cdcspec/tools/mutate/mutant"
)

// The refinement killer, refine@N (route 2 of the mutation score, SPEC.md
// 10.1): N seeded runs of the implementation (impl/sim, which follows TiCDC
// HEAD), each followed step by step by the model (refinement.Follow, the
// same per-step check as proptest's TestProtocolPerStep). The model's
// steps come from the mutant schema, so a mutant that changes a step the
// implementation takes leaves the Tracker without a model run matching
// the implementation's View: a divergence kills it. A mutant that only
// widens the model (an extra action, a weaker guard) keeps the original's
// runs among its candidates and is not noticed.
//
// Run i (1-based) is the story of one profile (refineProfiles, i modulo
// their count), drawn by a PCG seeded with i: deterministic, whatever the
// machine. The runs stop at the first divergence, or when the killer's
// time budget (--time-per-config) runs out.

// refineKiller is the pseudo-row of the refinement killer.
const refineKiller = "refine"

// refineProperty is the property a divergence reports.
const refineProperty = "per-step-refinement"

// refineSteps is the number of drawn actions a run takes.
const refineSteps = 12

// refineCandidates bounds the model states a run keeps (refinement.Tracker.MaxCandidates).
var refineCandidates = refinement.DefaultMaxCandidates

// refineMoveMs: a maintainer move's time to finish.
const refineMoveMs = 5000

// refineMaxMoves bounds the maintainer moves of a run.
const refineMaxMoves = 2

// refineRejoinMs: a crashed capture restarts only after this much virtual
// time, when its session has expired and the model saw it leave.
const refineRejoinMs = 20_000

// refineProfile is one kind of run: its cluster and the actions it draws.
type refineProfile struct {
	name   string
	nodes  int
	tables func(r *rand.Rand) int
	// setup adjusts the simulation's options and the model's configuration.
	setup func(opt *core.Options, cfg *model.Config)
	// act takes one drawn action on s.
	act func(r *rand.Rand, s *sim.Sim, st *refineState)
}

// refineState is what a run's actions remember (the driver's
// bookkeeping, kept small).
type refineState struct {
	stalled  bool
	killed   int
	killedAt int64 // the last crash's virtual time
	ddls     int
	moves    int
}

var refineDelays = []int64{100, 500, 1000, 3000}

// nonOwner picks a capture other than the coordinator's (a crash of the
// coordinator's capture stops the Tracker).
func nonOwner(r *rand.Rand, s *sim.Sim) (core.NodeID, bool) {
	var out []core.NodeID
	for _, n := range s.Captures() {
		if n != s.Owner() {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return "", false
	}
	return out[r.IntN(len(out))], true
}

func anyCapture(r *rand.Rand, s *sim.Sim) core.NodeID {
	caps := s.Captures()
	return caps[r.IntN(len(caps))]
}

func anyTable(r *rand.Rand, s *sim.Sim) int64 {
	ts := s.Upstream().Tables()
	return ts[r.IntN(len(ts))]
}

// refineProfiles: the faults the per-step mapping follows (crashes,
// session expiry, restarts, stalls, one CREATE TABLE), the maintainer's and
// the tables' moves, and a split of a table (Config.Splits).
var refineProfiles = []refineProfile{
	{
		name: "faults", nodes: 3,
		tables: func(r *rand.Rand) int { return 1 + r.IntN(3) },
		act: func(r *rand.Rand, s *sim.Sim, st *refineState) {
			switch r.IntN(7) {
			case 0:
				if !st.stalled && st.ddls == 0 && len(s.Upstream().Tables()) < model.MaxTables {
					st.ddls++
					s.CreateTable()
				}
			case 1, 2:
				if n, ok := nonOwner(r, s); ok && len(s.Captures()) > 2 {
					f := spec.FaultKillCapture
					if r.IntN(2) == 0 {
						f = spec.FaultExpireSession
					}
					if _, err := s.Inject(sim.Injection{Fault: f, Node: n}); err == nil {
						st.killed++
						st.killedAt = s.Now()
					}
				}
			case 3:
				// A capture joins in the slot of one seen leaving: after its
				// session expired (the model restarts a detected slot).
				if st.killed > 0 && s.Now()-st.killedAt > refineRejoinMs {
					if _, err := s.Inject(sim.Injection{Fault: spec.FaultRestartCapture}); err == nil {
						st.killed--
					}
				}
			case 4:
				if st.stalled {
					s.ResumeUpstream()
				} else {
					s.StallUpstream()
				}
				st.stalled = !st.stalled
			}
		},
	},
	{
		name: "moves", nodes: 3,
		tables: func(r *rand.Rand) int { return 1 + r.IntN(2) },
		act: func(r *rand.Rand, s *sim.Sim, st *refineState) {
			switch r.IntN(4) {
			case 0, 1:
				// Up to refineMaxMoves moves, each run to its end before
				// the next action, from any capture (the coordinator's
				// too): a second move's origin is the first one's target.
				// Half of them with a table move at the origin while it
				// closes its table trigger.
				from := s.MaintainerNode("cf1")
				if to := anyCapture(r, s); st.moves < refineMaxMoves && from != "" && to != from && s.MoveMaintainer("cf1", to) == nil {
					st.moves++
					if r.IntN(2) == 0 {
						s.RunFor(refineDelays[r.IntN(2)])
						_, _ = s.MoveTable("cf1", anyTable(r, s), anyCapture(r, s))
					}
					s.RunFor(refineMoveMs)
				}
			case 2:
				if st.ddls == 0 && len(s.Upstream().Tables()) < model.MaxTables {
					st.ddls++
					s.CreateTable()
				}
			case 3:
				_, _ = s.MoveTable("cf1", anyTable(r, s), anyCapture(r, s))
			}
		},
	},
	{
		name: "split", nodes: 3,
		tables: func(*rand.Rand) int { return 1 },
		setup:  func(_ *core.Options, cfg *model.Config) { *cfg = refinement.WithSplits(*cfg, 1) },
		act: func(r *rand.Rand, s *sim.Sim, st *refineState) {
			switch r.IntN(4) {
			case 0:
				if st.ddls == 0 {
					st.ddls++
					_, _ = s.SplitTable("cf1", 1)
				}
			case 1:
				_, _ = s.MoveTable("cf1", 1, anyCapture(r, s))
			}
		},
	},
}

// refinePlant, when set (tests), changes the model's configuration of
// every run: a planted change of the model alone, as a mutant is.
var refinePlant func(*model.Config)

// refineRun is the outcome of one run.
type refineRun struct {
	steps      int                    // implementation steps compared
	followed   bool                   // followed to the end (not stopped)
	divergence *refinement.Divergence // nil: the model followed
	stopped    string                 // why the Tracker stopped following
}

// runRefineStory runs story i (1-based) with the model following.
func runRefineStory(i int) (refineRun, error) {
	p := refineProfiles[(i-1)%len(refineProfiles)]
	r := rand.New(rand.NewPCG(uint64(i), 0x5eed))
	tables := p.tables(r)
	opt := core.Options{}
	cfg := refinement.Config(p.nodes, tables, model.Config{Features: model.Base().Features})
	if p.setup != nil {
		p.setup(&opt, &cfg)
	}
	if refinePlant != nil {
		refinePlant(&cfg)
	}
	s := sim.New(sim.Config{Seed: uint64(i), Nodes: p.nodes, Tables: tables, Options: opt})
	if err := s.CreateChangefeed("cf1"); err != nil {
		return refineRun{}, fmt.Errorf("refine run %d: create cf1: %v", i, err)
	}
	tr := refinement.Follow(s, "cf1", cfg)
	tr.MaxCandidates = refineCandidates
	s.RunFor(3000)
	st := &refineState{}
	for k := 0; k < refineSteps && tr.Following(); k++ {
		p.act(r, s, st)
		s.RunFor(refineDelays[r.IntN(len(refineDelays))])
	}
	if tr.Following() {
		if st.stalled {
			s.ResumeUpstream()
		}
		if st.killed > 0 {
			s.RunFor(refineRejoinMs)
		}
		for ; st.killed > 0; st.killed-- {
			_, _ = s.Inject(sim.Injection{Fault: spec.FaultRestartCapture})
		}
		s.RunFor(5000)
	}
	return refineRun{steps: tr.Steps, followed: tr.Following(), divergence: tr.Divergence, stopped: tr.Stopped}, nil
}

// defaultRefineRuns is the refinement killer's runs in the default list
// (refine@N): one run of each profile, 3 to 5 s of one core a mutant on an
// idle machine, 20 to 40 s at load average 25 (refine@9 took 50 to 90 s
// there: SPEC.md 10.1).
const defaultRefineRuns = 3

// maxRefineRuns bounds refine@N.
const maxRefineRuns = 100_000

// runRefine runs the refinement killer k: runs 1..k.N until one diverges,
// or stop closes (then the outcome is "bound"). The line counts the runs
// (Distinct), the implementation steps compared (Transitions) and the runs
// followed to their end (Depth); Detail names the diverging run.
func runRefine(k killer, stop <-chan struct{}) (checkLine, error) {
	t0 := time.Now()
	l := checkLine{Killer: k.String(), Config: refineKiller, Outcome: "inconclusive"}
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	for i := 1; i <= k.N && l.Outcome != "violation"; i++ {
		if stopped() {
			l.Outcome = "bound"
			break
		}
		run, err := runRefineStory(i)
		if err != nil {
			return checkLine{}, err
		}
		l.Distinct++
		l.Transitions += int64(run.steps)
		if run.followed {
			l.Depth++
		}
		if d := run.divergence; d != nil {
			l.Outcome, l.Property = "violation", refineProperty
			l.Detail = fmt.Sprintf("run %d (%s): step %d (%s): %s", i, refineProfiles[(i-1)%len(refineProfiles)].name, d.Step, d.What, d.Field)
		}
	}
	l.Seconds = time.Since(t0).Seconds()
	l.Infected = mutant.Infected()
	return l, nil
}
