// Package search explores a transition system exhaustively: breadth-first
// over fingerprints of canonical state encodings (a table of 8-byte slots,
// fpset.go), with parallel workers, safety judged on every transition,
// liveness judged by fair settling from every reachable state (memoised
// by round-start state), one representative per orbit when the system is
// Symmetric, a memory budget past which the frontier spills to disk
// (spill.go), and the shortest counterexample rebuilt as a path of
// actions. Simulate runs random walks and SwarmCheck a budgeted swarm
// (swarm.go). It knows nothing of the system it explores beyond System
// (and Fair, for liveness; Symmetric and Named, optionally); the TiCDC
// control-plane model (cdcspec/model) is one such system. This package,
// not the model, owns the goroutines and the clock of a check
// (spec/purity_test.go).
package search

import (
	"fmt"
	"strings"
	"time"

	"cdcspec/spec"
)

// System is a transition system the search can explore. States are values
// of S and actions values of A; the search copies states (a successor starts
// as a copy of its parent) and never keeps a pointer it was given. Every
// method must be safe for concurrent use: the workers call them in parallel
// on distinct states.
type System[S, A any] interface {
	// Initial returns the initial states.
	Initial() []S
	// Actions appends the actions enabled in s to buf, in a fixed order,
	// and returns the extended slice. A state with no enabled action is a
	// final state, not an error.
	Actions(s *S, buf []A) []A
	// Step applies a, which Actions listed for *s, to *s in place.
	Step(s *S, a A)
	// Canonical returns the canonical encoding of s: two states are the
	// same state for the search exactly when their encodings are equal. It
	// may append to buf or return memory that aliases s; the search does
	// not keep the result.
	Canonical(s *S, buf []byte) []byte
	// Cut reports whether s lies on a bound of the system itself (a full
	// network, say): the search neither expands nor judges it, and the
	// result says a bound cut the search.
	Cut(s *S) bool
	// SafetyProperties names the safety properties, in the order Safety
	// checks them.
	SafetyProperties() []spec.Property
	// Safety judges the transition prev -> next: the index into
	// SafetyProperties of the first violated property and its message, or
	// -1 when every property holds.
	Safety(prev, next *S) (int, string)
}

// Bounds are the search's own limits, apart from the system's parameters.
// The zero value checks everything with one worker per CPU and no limit.
type Bounds struct {
	Workers   int // parallel workers; 0 = GOMAXPROCS
	MaxStates int // stop after the level that reaches this many distinct states; 0 = unbounded
	MaxDepth  int // do not expand states at this depth; 0 = unbounded
	// SafetyOnly skips liveness (the fair settling from every state). It
	// is a negative so that the zero value checks every property.
	SafetyOnly bool
	// MaxFairSteps bounds one fair schedule (steps after healing); a
	// schedule that reaches it gives no verdict and the result says a bound
	// cut the search. 0 = DefaultMaxFairSteps.
	MaxFairSteps int
	// NoSymmetry explores every member of a symmetric system's orbits
	// (Symmetric) instead of one representative each. A negative, so that
	// the zero value reduces.
	NoSymmetry bool
	// Memory bounds the bytes the search keeps in memory: the visited set
	// and the verdict memo (which stop the search when they would pass it),
	// the frontier and the counterexample trail (which spill to a file in
	// SpillDir past it). 0 = unbounded, nothing spills.
	Memory int64
	// SpillDir is the directory of the spill file ("" = the system's
	// temporary directory).
	SpillDir string
	// DelayBounded keeps only the schedules within DelayBound delays of
	// the system's default scheduler (delay-bounded search: Emmi, Qadeer
	// and Rakamarić, POPL 2011). In each state the scheduler's choice
	// (Scheduler.DefaultAction; the first enabled action when the system
	// has no Scheduler) costs nothing and every other enabled action costs
	// one delay; a transition past the bound is not taken. A state is
	// expanded again when it is reached with fewer delays than before, so
	// every run within the bound is explored, and the result is "complete
	// up to DelayBound delays" (Stats.CompleteUpToDelays). With symmetry
	// the default scheduler chooses among the representative's actions.
	DelayBounded bool
	DelayBound   int // 0..MaxDelayBound; read only when DelayBounded
	// Stop, when it is closed, stops the search at once (an interrupt):
	// the result is BoundReached with what was explored, and the spill
	// files are removed. nil = never.
	Stop <-chan struct{}
}

// MaxDelayBound is the largest delay bound: the visited set keeps a
// state's fewest delays in the low delayBits bits of its slot.
const MaxDelayBound = 1<<delayBits - 2

// delayBits are the value bits of a delay-bounded search's visited set.
const delayBits = 6

// MinMemory is the smallest memory budget a search accepts: the empty
// tables and a few frontier blocks.
const MinMemory = 64 << 20

// DefaultMaxFairSteps is the fair-schedule bound when Bounds.MaxFairSteps is 0.
const DefaultMaxFairSteps = 4000

// Validate reports the first bound out of range.
func (b Bounds) Validate() error {
	if b.Workers < 0 || b.MaxStates < 0 || b.MaxDepth < 0 || b.MaxFairSteps < 0 || b.Memory < 0 {
		return fmt.Errorf("search bounds must be >= 0: workers %d, max states %d, max depth %d, max fair steps %d, memory %d",
			b.Workers, b.MaxStates, b.MaxDepth, b.MaxFairSteps, b.Memory)
	}
	if b.DelayBounded && (b.DelayBound < 0 || b.DelayBound > MaxDelayBound) {
		return fmt.Errorf("search delay bound %d is out of range 0..%d", b.DelayBound, MaxDelayBound)
	}
	if b.Memory > 0 && b.Memory < MinMemory {
		return fmt.Errorf("search memory budget %d bytes is below the minimum of %d MB", b.Memory, MinMemory>>20)
	}
	return nil
}

// Liveness reports whether the bounds check the liveness properties.
func (b Bounds) Liveness() bool { return !b.SafetyOnly }

func (b Bounds) fairSteps() int {
	if b.MaxFairSteps == 0 {
		return DefaultMaxFairSteps
	}
	return b.MaxFairSteps
}

// String is a one-line summary of the bounds that shape the result (not
// the worker count, which does not).
func (b Bounds) String() string {
	parts := []string{fmt.Sprintf("liveness=%v", b.Liveness())}
	if b.MaxDepth > 0 {
		parts = append(parts, fmt.Sprintf("depth<=%d", b.MaxDepth))
	}
	if b.MaxStates > 0 {
		parts = append(parts, fmt.Sprintf("states<=%d", b.MaxStates))
	}
	if b.MaxFairSteps > 0 {
		parts = append(parts, fmt.Sprintf("fair-steps<=%d", b.MaxFairSteps))
	}
	if b.NoSymmetry {
		parts = append(parts, "symmetry=off")
	}
	if b.DelayBounded {
		parts = append(parts, fmt.Sprintf("delays<=%d", b.DelayBound))
	}
	if b.Memory > 0 {
		parts = append(parts, fmt.Sprintf("search-memory<=%dMB", b.Memory>>20))
	}
	return strings.Join(parts, " ")
}

// Outcome is what a search established. The zero value is no outcome: it
// is never a pass.
type Outcome uint8

// Outcomes.
const (
	// OK: the whole reachable space was explored and every property holds.
	OK Outcome = iota + 1
	// Violation: a property is violated; Result.Violation shows how.
	Violation
	// BoundReached: a bound (depth, states, a bound of the system, a fair
	// schedule's length) cut the search and no violation was found within
	// it. Result.Reason says which bound.
	BoundReached
	// Inconclusive: random walks found no violation, which proves nothing.
	Inconclusive
)

var outcomeNames = [...]string{"unknown", "ok", "violation", "bound-reached", "inconclusive"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return fmt.Sprintf("outcome(%d)", o)
}

// Complete reports whether the outcome is a verdict about the whole space
// (OK) or a proof of a violation; the others hold only within bounds.
func (o Outcome) Complete() bool { return o == OK || o == Violation }

// Stats are the numbers of a search.
type Stats struct {
	Outcome     Outcome
	Reason      string // why the search stopped short (BoundReached, Inconclusive)
	Distinct    int64  // distinct states (random walks: visited states)
	Transitions int64  // transitions taken
	Depth       int    // depth of the deepest level explored
	Seconds     float64
	// Symmetry is the number of permutations of the system's symmetry
	// group the search reduced by (1 = none): Distinct counts orbits.
	Symmetry int
	// Collision is the probability that two distinct states explored
	// share a fingerprint (CollisionProbability of Distinct, plus the
	// verdict memo's keys).
	Collision float64
	// Spilled is the bytes the frontier and the trail wrote to disk.
	Spilled int64
	// PeakMemory is the most bytes the search's tables and in-memory
	// frontier held (its own accounting, not the process's RSS).
	PeakMemory int64
	// Reduction names the reduction of the state space the search ran
	// beside symmetry: "none", or "delay-bound k=K".
	Reduction string
	// DelayPruned is the transitions a delay bound kept the search from
	// taking; 0 with a delay bound means the bound cut nothing, and the
	// search was exhaustive.
	DelayPruned int64
	// Reexpanded is the states a delay-bounded search expanded again,
	// reached with fewer delays than before (not counted in Distinct).
	Reexpanded int64
	// DelayBounded and DelayBound: the search kept only the schedules
	// within DelayBound delays (Bounds.DelayBounded).
	DelayBounded bool
	DelayBound   int
}

// CompleteUpToDelays reports the delay bound k when the search explored
// every schedule within k delays of the default scheduler and found no
// violation, and nothing but the delay bound cut it: a verdict "complete up
// to k delays". It is false for a search without a delay bound (OK is its
// completion) and for one cut by another bound.
func (s *Stats) CompleteUpToDelays() (int, bool) {
	if !s.DelayBounded || s.Outcome != BoundReached || s.Reason != delayReason(s.DelayBound) {
		return 0, false
	}
	return s.DelayBound, true
}

// delayReason is the Reason of a search that only its delay bound k cut.
func delayReason(k int) string {
	return fmt.Sprintf("complete up to %d delays: every schedule within %d delays of the default scheduler was explored", k, k)
}

// StatesPerSecond is distinct states per wall-clock second.
func (s *Stats) StatesPerSecond() float64 {
	if s.Seconds == 0 {
		return 0
	}
	return float64(s.Distinct) / s.Seconds
}

// Result is the outcome of a search and, on a violation, its counterexample.
type Result[S, A any] struct {
	Stats
	Violation *Counterexample[S, A]
}

// Counterexample is a violated property with the shortest path to it. For
// a safety property Path ends with the violating step. For a liveness
// property (and for a safety property broken inside a fair schedule) Path
// leads to the state the fair schedule starts from, and Schedule is that
// schedule: Healing heal actions, then the fair rounds.
type Counterexample[S, A any] struct {
	Property spec.Property
	Message  string
	Liveness bool // found by fair settling
	Start    S    // the initial state Path starts from
	Path     []A
	Schedule []A
	Healing  int
	Verdict  Verdict // of the fair schedule (Liveness only)
}

// Progress is a snapshot of a running search.
type Progress struct {
	Distinct     int64
	Queue        int64 // states of the level being expanded, not yet expanded
	Depth        int
	Elapsed      time.Duration
	StatesPerSec float64
	Memory       int64         // bytes the Go runtime holds from the OS
	ETA          time.Duration // time left when a bound makes it known (MaxStates, a swarm's budget); 0 = unknown
}

// Symmetric is a System whose states have interchangeable parts (nodes,
// tables): a permutation of them maps states to states, transitions to
// transitions, and keeps every property's verdict. The search then keeps
// one representative of each orbit: it fingerprints, stores and expands
// representatives, judges liveness from representatives, and tells
// counterexamples in the original names (the path is re-derived from the
// concrete initial state, a fair schedule is mapped back by
// UnpermuteAction).
type Symmetric[S, A any] interface {
	// Represent replaces *s by its orbit's representative (the same state
	// for every member of the orbit) and returns the permutation p applied:
	// the new *s is p(old *s).
	Represent(s *S) Perm
	// UnpermuteAction returns p⁻¹(a): the action of the original state that
	// a, an action of the representative p(s), stands for.
	UnpermuteAction(p Perm, a A) A
	// SymmetryGroup is the number of permutations Represent chooses from
	// (1: the configuration has no symmetry).
	SymmetryGroup() int
}

// Scheduler is a System with a deterministic default scheduler, for
// delay-bounded search (Bounds.DelayBounded).
type Scheduler[S, A any] interface {
	// DefaultAction returns the index into acts (the actions Actions
	// listed for *s, in its order) of the scheduler's choice in *s, or -1
	// when every choice costs a delay.
	DefaultAction(s *S, acts []A) int
}

// Perm identifies a permutation of a Symmetric system; its meaning is the
// system's.
type Perm uint64

// Named is a System that names its actions' kinds, for the coverage of a
// swarm (Swarm).
type Named[A any] interface {
	ActionName(a A) string
}
