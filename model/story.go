package model

import (
	"fmt"
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

// buildCounterexample replays path with events; for a liveness violation it
// appends the fair schedule (heal, then run to quiescence) from the end.
func buildCounterexample(cfg *Config, path []Action, prop spec.Property, msg string, live bool) *Counterexample {
	ce := &Counterexample{Property: prop, Message: msg}
	s := Init(cfg)
	var prev State
	for _, a := range path {
		actor, text := a.Actor(&s), a.Describe(&s)
		prev = s
		e := &emitter{}
		step(cfg, &s, a, e)
		ce.Steps = append(ce.Steps, TraceStep{Actor: actor, Action: a, Text: text, Events: e.evs})
	}
	if !live {
		if ce.Message == "" && len(path) > 0 {
			_, ce.Message = checkSafety(cfg, &prev, &s)
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
		actor, text := a.Actor(&s), a.Describe(&s)
		e := &emitter{}
		if !healed && a.Kind != AUpstreamResume && a.Kind != AUpstreamAdvance {
			healed = true
			e.add(spec.Event{Kind: spec.FaultsHealed, Checkpoint: uint64(fr.target)})
		}
		step(cfg, &s, a, e)
		ce.Steps = append(ce.Steps, TraceStep{Actor: actor, Action: a, Text: text, Events: e.evs, Fair: true})
	}
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
			if len(st.Events) == 0 || seen[sig.String()] {
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
