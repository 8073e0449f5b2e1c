package model

import (
	"cdcspec/spec"
)

// Liveness is judged by fair settling (search.Fair): from a state, faults
// stop (FaultsHealed), a deterministic fair schedule runs the system until
// it repeats itself (Quiesced), and the liveness goals must hold then. The
// search runs the schedule; this file says what it is for the model.
//
// Healing resumes the upstream and lets its resolved ts reach TsMax (the
// heal-time target). A round takes every non-fault action enabled at its
// start, in a fixed order of action keys (deliveries keyed by channel,
// timers by actor), skipping those an earlier action of the round disabled;
// every action that stays enabled is taken in every round. Balance moves,
// DDLs and upstream advances are not part of the schedule.

// livenessNames are the liveness goals (goalProps), in the order
// checkGoals judges them.
var livenessNames = func() []spec.Property {
	out := make([]spec.Property, len(goalProps))
	for i, g := range goalProps {
		out[i] = g.name
	}
	return out
}()

// checkGoals judges the liveness goals at quiescence: the index into
// livenessNames of the first unmet goal and its message, or -1. The target
// of the checkpoint is the upstream resolved ts at heal time.
func checkGoals(cfg *Config, healed, s *State) (int, string) {
	for i, g := range goalProps {
		if msg := g.fn(cfg, s, healed.UpTs); msg != "" {
			return i, msg
		}
	}
	return -1, ""
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
	case AMaintMove, ASplit, AMerge, ACreateTable, AUpstreamAdvance, AUpstreamStall, ABlockDDL, APause, AResume, ARemove, ACoordFailover, ACoordMove:
		return false
	}
	return !a.Kind.IsFault()
}

// healAction is the next step of healing: resume a stalled upstream, then
// advance its resolved ts to TsMax.
func healAction(cfg *Config, s *State) (Action, bool) {
	switch {
	case s.Stalled:
		return Action{Kind: AUpstreamResume}, true
	case s.UpTs < cfg.TsMax:
		return Action{Kind: AUpstreamAdvance}, true
	}
	return Action{}, false
}

// fairRound appends a round's candidates to buf: the fair actions enabled
// in s, ordered by key.
func fairRound(cfg *Config, s *State, buf []Action) []Action {
	buf = appendActions(cfg, s, buf, false)
	sortActions(buf)
	n := 0
	for i := range buf {
		if fairAction(&buf[i]) {
			buf[n] = buf[i]
			n++
		}
	}
	return buf[:n]
}

// stillEnabled reports whether a is enabled in s, exactly as appendActions
// would (without faults); it decides the frequent kinds cheaply.
func stillEnabled(cfg *Config, s *State, a *Action) bool {
	switch a.Kind {
	case ADeliver:
		return !s.Overflow && s.findHead(a.Msg) >= 0
	case AMaintTick:
		return !s.Overflow && s.Maint[a.Node].Exists && s.NodeSt[a.Node] == nodeAlive
	case AMaintCleanup:
		m := &s.Maint[a.Node]
		return !s.Overflow && m.Exists && m.Removed && s.NodeSt[a.Node] == nodeAlive
	case ADMTick:
		return !s.Overflow && s.DMs[a.Node].Exists && s.NodeSt[a.Node] == nodeAlive
	case ADMComplete:
		return !s.Overflow && s.DMs[a.Node].Exists && s.NodeSt[a.Node] == nodeAlive && dmCompleteWouldSend(s, a.Node)
	case ACoordTick:
		return !s.Overflow && coordTickEnabled(s)
	}
	var scratch [64]Action
	return containsAction(appendActions(cfg, s, scratch[:0], false), *a)
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
