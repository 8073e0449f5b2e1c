package model

import (
	"cdcspec/spec"
)

// Liveness is checked from every reachable state: faults stop there
// (FaultsHealed), and a deterministic fair schedule runs the system until it
// repeats itself (Quiesced); the liveness goals must hold then.
//
// The fair schedule: first heal (resume the upstream, let its resolved ts
// reach TsMax: the heal-time target); then rounds. A round takes every
// non-fault action enabled at its start, in a fixed order of action keys
// (deliveries keyed by channel, timers by actor), skipping those an earlier
// action of the round disabled. Every action that stays enabled is taken in
// every round. A round is a function of the state at its start, so the
// sequence of round-start states is eventually periodic (Brent's algorithm
// finds the period: the system quiesced), and a memoized verdict of a
// round-start state is exactly what a fresh run from it yields. Balance
// moves and DDLs are not part of the schedule. Safety is checked on the way;
// a liveness failure at quiescence is reported in preference to a safety
// violation met on the way (the latter is reported if liveness holds).

const maxFairSteps = 4000

// fair verdicts (memoized per state fingerprint)
const (
	fairUnknown   = 0
	fairOK        = 1
	fairNoSpan    = 2
	fairNoCkpt    = 3
	fairNoQuiesce = 4 // the schedule hit a bound (network size, steps): no verdict
	fairSafety    = 8 // + index into safetyProps: a safety property broke on the way
)

type fairResult struct {
	verdict uint8
	msg     string
	final   State
	target  uint8
	actions []Action // the schedule, when recorded
	steps   int
}

func actKey(a *Action) uint64 {
	k := uint64(a.Kind) << 40
	switch a.Kind {
	case ADeliver:
		k |= uint64(a.Msg.Src)<<32 | uint64(a.Msg.Dst)<<24
	default:
		k |= uint64(a.Node)<<32 | uint64(a.Arg)<<24 | uint64(a.Arg2)<<16
	}
	return k
}

func fairAction(a *Action) bool {
	switch a.Kind {
	case AMaintMove, ACreateTable, AUpstreamAdvance, AUpstreamStall:
		return false
	}
	return !a.Kind.IsFault()
}

// heal resumes the upstream and lets its resolved ts reach TsMax.
func heal(cfg *Config, s *State, rec *[]Action) {
	do := func(a Action) {
		step(cfg, s, a, nil)
		if rec != nil {
			*rec = append(*rec, a)
		}
	}
	if s.Stalled {
		do(Action{Kind: AUpstreamResume})
	}
	for s.UpTs < cfg.TsMax {
		do(Action{Kind: AUpstreamAdvance})
	}
}

// fairRun runs the fair schedule from s. memo (may be nil) short-cuts
// round-start states already judged; every round-start state visited is
// recorded into it.
func fairRun(cfg *Config, s State, memo *fairMemo, record bool) fairResult {
	var res fairResult
	var rec *[]Action
	if record {
		rec = &res.actions
	}
	heal(cfg, &s, rec)
	res.target = s.UpTs
	var round, cur []Action
	var visited []uint64
	savedFP := uint64(0)
	power, lam := 1, 0
	verdict := uint8(fairUnknown)
	safetyVerdict, safetyMsg, safetyVisited := uint8(0), "", 0
	for r := 0; ; r++ {
		if s.Overflow || res.steps >= maxFairSteps {
			verdict = fairNoQuiesce
			break
		}
		fp := fingerprint(&s)
		if memo != nil && !record {
			if v := memo.get(fp); v != fairUnknown {
				verdict = v
				break
			}
			visited = append(visited, fp)
		}
		if r > 0 && fp == savedFP {
			break // periodic: quiesced
		}
		if power == lam {
			savedFP = fp
			power *= 2
			lam = 0
		}
		lam++
		round = appendActions(cfg, &s, round[:0], false)
		sortActions(round)
		for i := range round {
			a := round[i]
			if !fairAction(&a) {
				continue
			}
			if i > 0 {
				switch ok, known := stillEnabled(cfg, &s, &a); {
				case known && !ok:
					continue
				case !known:
					cur = appendActions(cfg, &s, cur[:0], false)
					if !containsAction(cur, a) {
						continue
					}
				}
			}
			prev := s
			step(cfg, &s, a, nil)
			res.steps++
			if record {
				res.actions = append(res.actions, a)
			}
			if safetyVerdict == 0 {
				if idx, msg := checkSafetyIndex(cfg, &prev, &s); idx >= 0 {
					// Remember the first safety violation; the run goes on
					// to judge liveness, which takes precedence (the fair
					// run exists to judge liveness).
					safetyVerdict, safetyMsg = fairSafety+uint8(idx), msg
					safetyVisited = len(visited)
				}
			}
		}
	}
	res.final = s
	if verdict == fairUnknown {
		verdict = fairOK
		if msg := goalEverySpanReplicated(cfg, &s); msg != "" {
			verdict, res.msg = fairNoSpan, msg
		} else if msg := goalCheckpointAdvancesAfterHeal(cfg, &s, res.target); msg != "" {
			verdict, res.msg = fairNoCkpt, msg
		}
	}
	if memo != nil {
		// Round-start states after the safety violation do not meet it.
		for i, fp := range visited {
			v := verdict
			if v == fairOK && safetyVerdict != 0 && i < safetyVisited {
				v = safetyVerdict
			}
			memo.put(fp, v)
		}
	}
	if verdict == fairOK && safetyVerdict != 0 {
		verdict, res.msg = safetyVerdict, safetyMsg
	}
	res.verdict = verdict
	return res
}

// stillEnabled decides cheaply, for the frequent kinds, whether a is
// enabled in s, exactly as appendActions would; known is false for the rest.
func stillEnabled(cfg *Config, s *State, a *Action) (ok, known bool) {
	switch a.Kind {
	case ADeliver:
		return !s.Overflow && s.findHead(a.Msg) >= 0, true
	case AMaintTick:
		return !s.Overflow && s.Maint[a.Node].Exists && s.NodeSt[a.Node] == nodeAlive, true
	case AMaintCleanup:
		m := &s.Maint[a.Node]
		return !s.Overflow && m.Exists && m.Removed && s.NodeSt[a.Node] == nodeAlive, true
	case ADMTick:
		return !s.Overflow && s.DMs[a.Node].Exists && s.NodeSt[a.Node] == nodeAlive, true
	case ADMComplete:
		return !s.Overflow && s.DMs[a.Node].Exists && s.NodeSt[a.Node] == nodeAlive && dmCompleteWouldSend(s, a.Node), true
	case ACoordTick:
		return !s.Overflow && s.Coord.Op != copNone && coordWouldResend(s), true
	}
	return false, false
}

func sortActions(as []Action) {
	for i := 1; i < len(as); i++ {
		for j := i; j > 0 && actKey(&as[j]) < actKey(&as[j-1]); j-- {
			as[j], as[j-1] = as[j-1], as[j]
		}
	}
}

func containsAction(as []Action, a Action) bool {
	for i := range as {
		if as[i] == a {
			return true
		}
	}
	return false
}

func verdictProperty(v uint8) spec.Property {
	if v >= fairSafety {
		return safetyProps[v-fairSafety].name
	}
	switch v {
	case fairNoSpan:
		return spec.EverySpanReplicated
	case fairNoCkpt:
		return spec.CheckpointAdvancesAfterHeal
	}
	return ""
}
