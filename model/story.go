package model

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"cdcspec/search"
	"cdcspec/spec"
)

// TraceStep is one step of a counterexample: who did what, the events,
// and (for the story) whether it belongs to the fair schedule after faults
// healed.
type TraceStep struct {
	Actor  string
	Action Action
	Text   string
	Events []spec.Event
	Fair   bool
}

// Counterexample is a violated property with the shortest path to it (for
// liveness: the shortest path to the state from which the fair schedule
// fails, followed by that schedule), told as a story.
type Counterexample struct {
	Property spec.Property
	Message  string
	Steps    []TraceStep
	Final    State
}

// Actions returns the counterexample's actions, for Replay.
func (c *Counterexample) Actions() []Action {
	out := make([]Action, len(c.Steps))
	for i, s := range c.Steps {
		out[i] = s.Action
	}
	return out
}

// idNames gives DispatcherIDs stable names in a story: the model compacts
// IDs after every step (canonicalize), so the same dispatcher can have a
// different ID in two steps; a story names each by order of creation.
type idNames struct {
	names map[uint8]string
	next  int
}

var idRe = regexp.MustCompile(`\bd([0-9]+)\b`)

func newIDNames() *idNames { return &idNames{names: map[uint8]string{}} }

func (n *idNames) name(id uint8) string {
	if s, ok := n.names[id]; ok {
		return s
	}
	n.next++
	s := "d" + strconv.Itoa(n.next)
	n.names[id] = s
	return s
}

// rewrite replaces model IDs in text by their story names.
func (n *idNames) rewrite(text string) string {
	return idRe.ReplaceAllStringFunc(text, func(m string) string {
		v, err := strconv.Atoi(m[1:])
		if err != nil || v > 255 {
			return m
		}
		return n.name(uint8(v))
	})
}

// stepNamed applies a with events and renames the IDs in the step's text
// and events; it then follows the renumbering.
func (n *idNames) stepNamed(cfg *Config, s *State, a Action, fair bool) TraceStep {
	for i := uint8(1); i < s.NextID; i++ {
		n.name(i) // every live ID has a name before the step
	}
	st := TraceStep{Actor: n.rewrite(a.Actor(s)), Action: a, Text: n.rewrite(a.Describe(s)), Fair: fair}
	e := &emitter{}
	step(cfg, s, a, e)
	for _, ev := range e.evs {
		if ev.Dispatcher != "" {
			ev.Dispatcher = n.rewrite(ev.Dispatcher)
		}
		st.Events = append(st.Events, ev)
	}
	if e.renumbered {
		m := map[uint8]string{}
		for old, name := range n.names {
			if r := e.rank[old]; r != 0 {
				m[r] = name
			}
		}
		n.names = m
	}
	return st
}

// buildCounterexample tells the search's counterexample as a story: it
// replays the path with events and stable dispatcher names; for a liveness
// violation it goes on with the recorded fair schedule (heal, then run to
// quiescence), marking where faults stop.
func buildCounterexample(cfg *Config, v *search.Counterexample[State, Action]) *Counterexample {
	ce := &Counterexample{Property: v.Property, Message: v.Message}
	s := v.Start
	var prev State
	names := newIDNames()
	for _, a := range v.Path {
		prev = s
		ce.Steps = append(ce.Steps, names.stepNamed(cfg, &s, a, false))
	}
	if !v.Liveness {
		if len(v.Path) > 0 {
			_, m := checkSafety(cfg, &prev, &s)
			ce.Message = names.rewrite(m)
		}
		ce.Final = s
		return ce
	}
	healed := false
	target := uint64(0) // the upstream resolved ts at heal time
	for i, a := range v.Schedule {
		if i == v.Healing {
			target = uint64(s.UpTs)
		}
		st := names.stepNamed(cfg, &s, a, true)
		if i == v.Healing {
			healed = true
			st.Events = append([]spec.Event{{Kind: spec.FaultsHealed, Changefeed: Changefeed, Checkpoint: target}}, st.Events...)
		}
		ce.Steps = append(ce.Steps, st)
	}
	ce.Message = names.rewrite(ce.Message)
	if !healed {
		target = uint64(s.UpTs)
		ce.Steps = append(ce.Steps, TraceStep{Actor: "checker", Text: "faults healed", Fair: true,
			Events: []spec.Event{{Kind: spec.FaultsHealed, Changefeed: Changefeed, Checkpoint: target}}})
	}
	if v.Verdict != search.SafetyBroken {
		last := &ce.Steps[len(ce.Steps)-1]
		last.Events = append(last.Events, spec.Event{Kind: spec.Quiesced, Changefeed: Changefeed})
	}
	ce.Final = s
	return ce
}

// Events returns every event of the counterexample, initial events first,
// with Time set to the step number.
func (c *Counterexample) Events(cfg *Config) []spec.Event {
	out := InitEvents(cfg)
	for i, st := range c.Steps {
		for _, e := range st.Events {
			e.Time = int64(i + 1)
			out = append(out, e)
		}
	}
	return out
}

// Story renders the counterexample as numbered steps a person can follow.
// After faults heal, steps with no event and steps that repeat an earlier
// step of the fair schedule (same actor, same events: periodic re-sends) are
// summarized.
func (c *Counterexample) Story() string {
	var b strings.Builder
	fmt.Fprintf(&b, "violated: %s\n%s\n\n", c.Property, c.Message)
	silent := 0
	inFair := false
	seen := map[string]bool{}
	flush := func() {
		if silent > 0 {
			fmt.Fprintf(&b, "     (%d steps: heartbeats, re-sends and deliveries with no new event)\n", silent)
			silent = 0
		}
	}
	for i, st := range c.Steps {
		if st.Fair && !inFair {
			inFair = true
			b.WriteString("\n-- faults stop here; a fair schedule runs the system until it repeats itself --\n")
		}
		if st.Fair {
			var sig strings.Builder
			sig.WriteString(st.Actor)
			for _, e := range st.Events {
				if e.Kind == spec.Quiesced || e.Kind == spec.FaultsHealed {
					sig.WriteString(fmt.Sprint(i))
				}
				sig.WriteString("|" + e.String())
			}
			// The kv-client steps carry no spec event but are the story of seed 004.
			pull := st.Action.Kind >= APullResolved
			if (len(st.Events) == 0 && !pull) || (!pull && seen[sig.String()]) {
				silent++
				continue
			}
			seen[sig.String()] = true
		}
		flush()
		fmt.Fprintf(&b, "%3d. %s %s\n", i+1, st.Actor, st.Text)
		for _, e := range st.Events {
			fmt.Fprintf(&b, "       %s\n", e.String())
		}
	}
	flush()
	return b.String()
}
