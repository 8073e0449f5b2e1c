package model

import (
	"cdcspec/search"
	"cdcspec/spec"
)

// system is the model as the search (cdcspec/search) explores it: the
// initial state, the enabled actions with faults, Step without events, the
// state's memory as its canonical encoding, the safety properties of
// props.go, the fair schedule of liveness.go, and the symmetry of
// symmetry.go. It holds no mutable state, so the search's workers share it.
type system struct {
	cfg *Config
	sym *symmetry
}

func newSystem(cfg *Config) system { return system{cfg: cfg, sym: newSymmetry(cfg)} }

// ActionName is the action's kind, for a swarm's coverage.
func (m system) ActionName(a Action) string { return a.Kind.String() }

var _ search.Fair[State, Action] = system{}

func (m system) Initial() []State                        { return []State{Init(m.cfg)} }
func (m system) Actions(s *State, buf []Action) []Action { return appendActions(m.cfg, s, buf, true) }
func (m system) Step(s *State, a Action)                 { step(m.cfg, s, a, nil) }

// Canonical is the state's memory: step leaves every state canonical
// (canonicalize). Symmetry is the search's business (Represent).
func (m system) Canonical(s *State, _ []byte) []byte { return s.Bytes() }

// Cut: the network is full (the model's bound on messages in flight).
func (m system) Cut(s *State) bool { return s.Overflow }

func (m system) SafetyProperties() []spec.Property { return safetyNames }
func (m system) Safety(prev, next *State) (int, string) {
	return checkSafetyIndex(m.cfg, prev, next)
}

func (m system) LivenessProperties() []spec.Property { return livenessNames }
func (m system) HealAction(s *State) (Action, bool)  { return healAction(m.cfg, s) }
func (m system) FairRound(s *State, buf []Action) []Action {
	return fairRound(m.cfg, s, buf)
}
func (m system) StillEnabled(s *State, a Action) bool { return stillEnabled(m.cfg, s, &a) }
func (m system) Goals(healed, final *State) (int, string) {
	return checkGoals(m.cfg, healed, final)
}

// Result is a check's outcome: the search's numbers and, on a violation,
// the counterexample as a story.
type Result struct {
	Config Config
	Bounds search.Bounds
	search.Stats
	Violation *Counterexample
	Coverage  *search.Coverage // a swarm's (Swarm); nil otherwise
}

// Check explores the configuration exhaustively within b (see search.Check:
// breadth-first, so a counterexample is a shortest one). progress may be
// nil. The error reports an invalid configuration or bounds.
func Check(cfg Config, b search.Bounds, progress func(search.Progress)) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{Config: cfg, Bounds: b}, err
	}
	r, err := search.Check[State, Action](newSystem(&cfg), b, progress)
	return result(&cfg, b, r), err
}

// CheckDelays runs delay-bounded searches for k = b.DelayBound, k+1, ...
// within budget (see search.CheckDelays) and returns the one of the
// largest k that completed, or the first violation, with the numbers of
// every search run.
func CheckDelays(cfg Config, b search.Bounds, budget search.Budget, progress func(search.Progress)) (Result, []search.Stats, error) {
	if err := cfg.Validate(); err != nil {
		return Result{Config: cfg, Bounds: b}, nil, err
	}
	r, tries, err := search.CheckDelays[State, Action](newSystem(&cfg), b, budget, progress)
	b.DelayBounded, b.DelayBound = true, r.DelayBound
	return result(&cfg, b, r), tries, err
}

// Simulate runs random walks (see search.Simulate); the outcome is
// search.Inconclusive unless a walk finds a violation.
func Simulate(cfg Config, b search.Bounds, w search.Walks) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{Config: cfg, Bounds: b}, err
	}
	r, err := search.Simulate[State, Action](newSystem(&cfg), b, w)
	return result(&cfg, b, r), err
}

// Swarm runs a budgeted swarm (see search.SwarmCheck): random walks and
// bounded searches until sw.Time is spent or a violation is found; the
// outcome is search.Inconclusive unless one is, and Coverage says what the
// swarm exercised.
func Swarm(cfg Config, b search.Bounds, sw search.Swarm, progress func(search.Progress)) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{Config: cfg, Bounds: b}, err
	}
	r, cov, err := search.SwarmCheck[State, Action](newSystem(&cfg), b, sw, progress)
	res := result(&cfg, b, r)
	res.Coverage = &cov
	return res, err
}

func result(cfg *Config, b search.Bounds, r search.Result[State, Action]) Result {
	res := Result{Config: *cfg, Bounds: b, Stats: r.Stats}
	if r.Violation != nil {
		res.Violation = buildCounterexample(cfg, r.Violation)
	}
	return res
}
