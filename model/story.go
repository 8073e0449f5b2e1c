package model

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"cdcspec/spec"
)

// pathTo turns a chain of canonical fingerprints (initial state first) into
// the actions that connect them, by re-deriving each step from the concrete
// states (so it works whatever reduction produced the fingerprints).
func pathTo(cfg *Config, chain []uint64) []Action {
	s := Init(cfg)
	var path []Action
	for _, want := range chain[1:] {
		ok := false
		for _, a := range appendActions(cfg, &s, nil, true) {
			nx := s
			step(cfg, &nx, a, nil)
			if canonicalFP(cfg, &nx) == want {
				path = append(path, a)
				s = nx
				ok = true
				break
			}
		}
		if !ok {
			break // cannot happen unless fingerprints collide
		}
	}
	return path
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

// buildCounterexample replays path with events; for a liveness violation it
// appends the fair schedule (heal, then run to quiescence) from the end.
func buildCounterexample(cfg *Config, path []Action, prop spec.Property, msg string, live bool) *Counterexample {
	ce := &Counterexample{Property: prop, Message: msg}
	s := Init(cfg)
	var prev State
	names := newIDNames()
	for _, a := range path {
		prev = s
		ce.Steps = append(ce.Steps, names.stepNamed(cfg, &s, a, false))
	}
	if !live {
		if len(path) > 0 {
			_, m := checkSafety(cfg, &prev, &s)
			ce.Message = names.rewrite(m)
		}
		ce.Final = s
		return ce
	}
	fr := fairRun(cfg, s, nil, true)
	if p := verdictProperty(fr.verdict); p != "" {
		ce.Property, ce.Message = p, fr.msg // the recorded run is authoritative
	}
	healed := false
	for _, a := range fr.actions {
		mark := !healed && a.Kind != AUpstreamResume && a.Kind != AUpstreamAdvance
		st := names.stepNamed(cfg, &s, a, true)
		if mark {
			healed = true
			st.Events = append([]spec.Event{{Kind: spec.FaultsHealed, Changefeed: Changefeed, Checkpoint: uint64(fr.target)}}, st.Events...)
		}
		ce.Steps = append(ce.Steps, st)
	}
	ce.Message = names.rewrite(ce.Message)
	if !healed {
		ce.Steps = append(ce.Steps, TraceStep{Actor: "checker", Text: "faults healed", Fair: true,
			Events: []spec.Event{{Kind: spec.FaultsHealed, Changefeed: Changefeed, Checkpoint: uint64(fr.target)}}})
	}
	if fr.verdict < fairSafety {
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
