package model

import (
	"cdcspec/spec"
)

// Liveness is checked from every reachable state: faults stop there
// (FaultsHealed), and a deterministic fair schedule runs the system until it
// repeats itself (Quiesced); the liveness goals must hold then.
//
// The fair schedule: first heal (resume the upstream, let its resolved ts
// reach TsMax: the heal-time target); then, repeatedly, take the next enabled
// non-fault action after the previous one in a fixed round-robin order over
// action keys (deliveries keyed by channel, timers by actor). Every action
// that stays enabled is taken within one cycle of the order. Balance moves
// and DDLs are not part of it. Because the schedule is a function of (state,
// cursor), it is eventually periodic; Brent's algorithm detects the period,
// and the goals are judged at that point.

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

// fairRun runs the fair schedule from s. memo (may be nil) short-cuts states
// already judged; every state visited is recorded into it.
func fairRun(cfg *Config, s State, memo *fairMemo, record bool) fairResult {
	var res fairResult
	var rec *[]Action
	if record {
		rec = &res.actions
	}
	heal(cfg, &s, rec)
	res.target = s.UpTs
	var buf []Action
	var visited []uint64
	cursor := uint64(0)
	// Brent: saved (fingerprint, cursor) and the power/length counters.
	savedFP, savedCur := uint64(0), uint64(0)
	power, lam := 1, 0
	verdict := uint8(fairUnknown)
	for i := 0; i < maxFairSteps; i++ {
		if s.Overflow {
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
		if i > 0 && fp == savedFP && cursor == savedCur {
			break // periodic: quiesced
		}
		if power == lam {
			savedFP, savedCur = fp, cursor
			power *= 2
			lam = 0
		}
		lam++
		buf = appendActions(cfg, &s, buf[:0], false)
		var pick *Action
		var first *Action
		for j := range buf {
			a := &buf[j]
			if !fairAction(a) {
				continue
			}
			k := actKey(a)
			if first == nil || k < actKey(first) {
				first = a
			}
			if k > cursor && (pick == nil || k < actKey(pick)) {
				pick = a
			}
		}
		if pick == nil {
			pick = first
		}
		if pick == nil {
			break // nothing enabled at all
		}
		cursor = actKey(pick)
		prev := s
		step(cfg, &s, *pick, nil)
		res.steps++
		if record {
			res.actions = append(res.actions, *pick)
		}
		// The schedule's states are reachable: check safety on the way.
		if idx, msg := checkSafetyIndex(cfg, &prev, &s); idx >= 0 {
			verdict, res.msg = fairSafety+uint8(idx), msg
			break
		}
		if i == maxFairSteps-1 {
			verdict = fairNoQuiesce
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
	res.verdict = verdict
	if memo != nil {
		for _, fp := range visited {
			memo.put(fp, verdict)
		}
	}
	return res
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
