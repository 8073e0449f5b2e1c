package search

import (
	"cdcspec/spec"
)

// Fair is a System with liveness properties, judged by fair settling: from
// a state, faults stop (the heal actions), then a deterministic fair
// schedule runs the system until it repeats itself, and the liveness goals
// must hold there.
//
// The schedule runs in rounds. A round takes the candidates FairRound lists
// at its start, in that order, skipping those an earlier action of the same
// round disabled (StillEnabled). A round is a function of the state at its
// start, so the sequence of round-start states is eventually periodic;
// Brent's algorithm finds the period (the system quiesced), and the verdict
// of a round-start state is exactly what a fresh schedule from it yields,
// which is what lets the search remember verdicts by fingerprint. Safety is
// judged on every step of the rounds (not of healing); a liveness failure at
// quiescence is reported in preference to a safety violation met on the way.
type Fair[S, A any] interface {
	System[S, A]
	// LivenessProperties names the liveness properties, in the order
	// Goals checks them.
	LivenessProperties() []spec.Property
	// HealAction returns the next action that stops the faults in s, or
	// false when s is healed. Heal actions are not judged for safety.
	HealAction(s *S) (A, bool)
	// FairRound appends a round's candidates in s to buf, in the
	// schedule's fixed order: the enabled actions that are neither faults
	// nor left to the environment's choice.
	FairRound(s *S, buf []A) []A
	// StillEnabled reports whether a, a candidate of the current round, is
	// still enabled in s after earlier actions of the round.
	StillEnabled(s *S, a A) bool
	// Goals judges the liveness properties at quiescence: the index into
	// LivenessProperties of the first that fails and its message, or -1.
	// healed is the state right after healing (the goals' reference).
	Goals(healed, final *S) (int, string)
}

// Verdict is the outcome of one fair schedule.
type Verdict uint8

// Verdicts.
const (
	Holds        Verdict = iota + 1 // quiesced with every liveness goal met and no safety violation on the way
	GoalMissed                      // quiesced with a liveness goal unmet
	SafetyBroken                    // a safety property broke on the way; the goals held at quiescence
	Unsettled                       // a bound (the system's, or MaxFairSteps) stopped the schedule: no verdict
)

var verdictNames = [...]string{"unknown", "holds", "goal-missed", "safety-broken", "unsettled"}

func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return "verdict(?)"
}

// Settlement is one fair schedule from a state.
type Settlement[S, A any] struct {
	Verdict  Verdict
	Property spec.Property // GoalMissed, SafetyBroken: which
	Message  string
	Healed   S   // the state after healing
	Final    S   // the state where the schedule stopped
	Steps    int // steps of the rounds (healing not counted)
	Schedule []A // heal actions, then the rounds' actions
	Healing  int // heal actions at the start of Schedule
}

// Settle runs the fair schedule from s and records it.
func Settle[S, A any](sys Fair[S, A], s S, b Bounds) Settlement[S, A] {
	l := newLiveness(sys, b)
	st := l.settle(s)
	return l.settlement(st)
}

// code is a compact verdict, as the memo stores it: codeUnknown (not
// judged), codeHolds, codeUnsettled, then one code per liveness property
// (GoalMissed), then one per safety property (SafetyBroken).
type code uint8

const (
	codeUnknown code = iota
	codeHolds
	codeUnsettled
	codeGoal0
)

// liveness is the fair settling of one search.
type liveness[S, A any] struct {
	sys      Fair[S, A]
	maxSteps int
	live     []spec.Property
	safety   []spec.Property
	safety0  code // code of the first safety property
}

func newLiveness[S, A any](sys Fair[S, A], b Bounds) *liveness[S, A] {
	l := &liveness[S, A]{sys: sys, maxSteps: b.fairSteps(), live: sys.LivenessProperties(), safety: sys.SafetyProperties()}
	if int(codeGoal0)+len(l.live)+len(l.safety) >= 1<<memoBits {
		panic("search: too many properties for a verdict code")
	}
	l.safety0 = codeGoal0 + code(len(l.live))
	return l
}

func (l *liveness[S, A]) verdict(c code) Verdict {
	switch {
	case c == codeUnknown:
		return 0
	case c == codeHolds:
		return Holds
	case c == codeUnsettled:
		return Unsettled
	case c < l.safety0:
		return GoalMissed
	}
	return SafetyBroken
}

func (l *liveness[S, A]) property(c code) spec.Property {
	switch {
	case c < codeGoal0:
		return ""
	case c < l.safety0:
		return l.live[c-codeGoal0]
	}
	return l.safety[c-l.safety0]
}

// settled is the result of settle.
type settled[S, A any] struct {
	code     code
	msg      string
	healed   S
	final    S
	steps    int
	schedule []A
	healing  int
}

func (l *liveness[S, A]) settlement(st settled[S, A]) Settlement[S, A] {
	return Settlement[S, A]{
		Verdict: l.verdict(st.code), Property: l.property(st.code), Message: st.msg,
		Healed: st.healed, Final: st.final, Steps: st.steps, Schedule: st.schedule, Healing: st.healing,
	}
}

// fairScratch is one goroutine's reusable memory for fair settling: the
// states and buffers of a schedule, so that judging a state allocates
// nothing (the search settles from every reachable state). The zero value
// is ready to use; it must not be shared between goroutines.
type fairScratch[S, A any] struct {
	s, prev, healed S
	round           []A
	visited         []uint64
	canon           []byte
	schedule        []A // recorded runs only
	steps, healing  int
	msg             string
}

// settle heals s and runs the fair schedule from it, recording it (the
// schedule, the healed and the final state) without the memo: the
// counterexample's run.
func (l *liveness[S, A]) settle(s S) settled[S, A] {
	sc := &fairScratch[S, A]{}
	c := l.judge(sc, &s, 0, nil, true)
	return settled[S, A]{code: c, msg: sc.msg, healed: sc.healed, final: sc.s, steps: sc.steps,
		schedule: sc.schedule, healing: sc.healing}
}

// judge heals a copy of *s and runs the fair schedule from it in sc, and
// returns the verdict; sc then holds the healed and the final state, the
// steps and the message (and with record, the schedule). memo (may be nil)
// short-cuts round-start states already judged, and every round-start
// state visited is recorded into it; a recorded run (record) neither reads
// nor writes the memo.
//
// fp0, when not 0, is the fingerprint of *s0 that the caller already
// looked up in memo and did not find: if healing leaves the state as it
// is, the first round-start state is *s0 and is not fingerprinted again.
func (l *liveness[S, A]) judge(sc *fairScratch[S, A], s0 *S, fp0 uint64, memo *fpTable, record bool) code {
	sys := l.sys
	sc.s = *s0
	s := &sc.s
	sc.schedule, sc.steps, sc.healing, sc.msg = sc.schedule[:0], 0, 0, ""
	for {
		a, ok := sys.HealAction(s)
		if !ok {
			break
		}
		sys.Step(s, a)
		sc.healing++
		if record {
			sc.schedule = append(sc.schedule, a)
		}
	}
	sc.healed = *s
	if record {
		memo = nil
	}
	sc.visited = sc.visited[:0]
	savedFP := uint64(0)
	power, lam := 1, 0
	verdict := codeUnknown
	safety, safetyMsg, safetyVisited := codeUnknown, "", 0
	for r := 0; ; r++ {
		if sys.Cut(s) || sc.steps >= l.maxSteps {
			verdict = codeUnsettled
			break
		}
		var fp uint64
		known := r == 0 && sc.healing == 0 && fp0 != 0
		if known {
			fp = fp0
		} else {
			fp, sc.canon = fingerprint(sys, s, sc.canon)
		}
		if memo != nil {
			if !known {
				if v, ok := memo.get(fp); ok {
					verdict = code(v)
					break
				}
			}
			sc.visited = append(sc.visited, fp)
		}
		if r > 0 && fp == savedFP {
			break // periodic: quiesced
		}
		// Brent: compare with the round-start state saved at the last
		// power of two.
		if power == lam {
			savedFP = fp
			power *= 2
			lam = 0
		}
		lam++
		sc.round = sys.FairRound(s, sc.round[:0])
		for i := range sc.round {
			a := sc.round[i]
			if i > 0 && !sys.StillEnabled(s, a) {
				continue
			}
			sc.steps++
			if record {
				sc.schedule = append(sc.schedule, a)
			}
			if safety != codeUnknown {
				sys.Step(s, a) // a violation is known: no need of the state before
				continue
			}
			sc.prev = *s
			sys.Step(s, a)
			if idx, msg := sys.Safety(&sc.prev, s); idx >= 0 {
				// Remember the first safety violation; the run goes on
				// to judge liveness, which takes precedence (the fair
				// run exists to judge liveness).
				safety, safetyMsg = l.safety0+code(idx), msg
				safetyVisited = len(sc.visited)
			}
		}
	}
	if verdict == codeUnknown {
		verdict = codeHolds
		if idx, msg := sys.Goals(&sc.healed, s); idx >= 0 {
			verdict, sc.msg = codeGoal0+code(idx), msg
		}
	}
	if memo != nil {
		// Round-start states after the safety violation do not meet it.
		for i, fp := range sc.visited {
			v := verdict
			if v == codeHolds && safety != codeUnknown && i < safetyVisited {
				v = safety
			}
			memo.put(fp, uint64(v)) // a full memo forgets: the verdict is computed again
		}
	}
	if verdict == codeHolds && safety != codeUnknown {
		verdict, sc.msg = safety, safetyMsg
	}
	return verdict
}
