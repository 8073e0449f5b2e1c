package model

import "cdcspec/search"

// The default scheduler of a delay-bounded search (search.Bounds.DelayBounded,
// cdcspec check --delay-bound K). A delay is one step that is not the
// default scheduler's choice, so "complete up to k delays" covers every run
// that departs from the default schedule at most k times.
//
// The default schedule lets the protocol settle before the environment
// moves: in each state it takes the first action, in the order of
// appendActions, of the first of these classes that has one which changes
// the state:
//
//  1. a delivery (the network's head messages, in channel order);
//  2. an internal step of a component: ticks, timers, schedulers, a closing
//     dispatcher, the cluster noticing a dead node, the puller's own
//     goroutines (schedClass);
//  3. the upstream's resolved ts advancing, or an upstream stall ending.
//
// Everything else costs a delay wherever it happens: every fault, every
// client request (pause, resume, remove), DDLs and table creation, span
// moves, splits and merges, maintainer moves and coordinator failovers.
// So k = 2 covers, for instance, a span move then a crash at any point of
// the default schedule, each with the protocol settling between them, but
// not a crash while a given message waits behind another one's delivery
// unless that reordering is one of the k delays.
//
// A step that leaves the state unchanged is never the default: a tick
// with nothing to re-send would otherwise stall the default schedule.

// Scheduling classes: lower runs first; schedNever is never the default.
const (
	schedDeliver = iota
	schedInternal
	schedUpstream
	schedNever
)

// schedClass is the default scheduler's class of an action kind.
func schedClass(k ActKind) int {
	switch k {
	case ADeliver:
		return schedDeliver
	case ADetect, ACoordSchedule, ACoordTick, ACoordRetryTimer, AMaintTick, AMaintCleanup, AMaintSchedule,
		ADMTick, ADMComplete, ADispClosed, AMaintApplyWM, AMergePostFinish, AOpPostFinish,
		APullResolved, APullStreamError, APullRegionError, APullWorkerExit, APullRequest, APullFirstResp, APullReceiverExit:
		return schedInternal
	case AUpstreamAdvance, AUpstreamResume:
		return schedUpstream
	}
	return schedNever
}

var _ search.Scheduler[State, Action] = system{}

// DefaultAction is the default scheduler's choice among acts, the actions
// enabled in s (see above), or -1 when every action costs a delay.
func (m system) DefaultAction(s *State, acts []Action) int {
	for class := schedDeliver; class < schedNever; class++ {
		for i := range acts {
			if schedClass(acts[i].Kind) != class {
				continue
			}
			next := *s
			step(m.cfg, &next, acts[i], nil)
			if next != *s {
				return i
			}
		}
	}
	return -1
}
