package model

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"cdcspec/search"
	"cdcspec/spec"
)

// Scenario files (testdata/*.txt) tell the protocol's stories step by step.
// Commands:
//
//	new config=NAME [bug=NAME]... [without=FEATURE]... [mutate=GUARD]...   start from the initial state
//	do                                                   apply the actions listed in the input, one per line
//	fair                                                 heal, run the fair schedule, judge liveness
//	plant checkpoint=N | maintainer=nK                   edit the state (to show a predicate firing)
//	props                                                judge the safety properties on the last step
//	check config=NAME [bug=NAME]... [max-depth=N]        run the search (one worker: deterministic)
//
// Action lines: upstream-advance, create-table, stall-upstream,
// resume-upstream, expire-session nK, detect-node-left nK,
// restart-capture nK, sink-error tT,
// coordinator-schedule nK, coordinator-tick, coordinator-retry-timer,
// maintainer-tick nK, manager-cleanup nK, maintainer-schedule nK tT nJ,
// maintainer-move nK tT nJ, dm-tick nK, dispatcher-closed tT,
// deliver|drop-messages|duplicate-messages SRC DST (the oldest message on that channel; SRC
// and DST are nK or coordinator), and the puller-* actions.
//
// Run with -rewrite to regenerate the expected output.

type scenario struct {
	cfg  Config
	prev State
	s    State
}

func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		sc := &scenario{}
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			out, err := sc.run(td)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			return out
		})
	})
}

func parseConfig(td *datadriven.TestData) (Config, error) {
	name := "default"
	var bugs, without, mutate []string
	for _, a := range td.CmdArgs {
		switch a.Key {
		case "config":
			name = a.Vals[0]
		case "bug":
			bugs = append(bugs, a.Vals...)
		case "without":
			without = append(without, a.Vals...)
		case "mutate":
			mutate = append(mutate, a.Vals...)
		case "max-depth":
			// a search bound: parseBounds reads it
		default:
			return Config{}, fmt.Errorf("unknown argument %q", a.Key)
		}
	}
	cfg, ok := Standard(name)
	if !ok {
		return cfg, fmt.Errorf("unknown config %q", name)
	}
	bs, err := spec.ParseBugs(bugs)
	if err != nil {
		return cfg, err
	}
	cfg.Bugs |= bs
	for _, w := range without {
		f, ok := ParseFeature(w)
		if !ok {
			return cfg, fmt.Errorf("unknown feature %q", w)
		}
		cfg.Features &^= f
	}
	for _, n := range mutate {
		m, err := ParseMutation(n)
		if err != nil {
			return cfg, err
		}
		cfg.Mutations = cfg.Mutations.With(m)
	}
	return cfg, nil
}

// parseBounds reads the search bounds of a check command: one worker, so
// the counterexample is deterministic, and max-depth.
func parseBounds(td *datadriven.TestData) (search.Bounds, error) {
	b := search.Bounds{Workers: 1}
	for _, a := range td.CmdArgs {
		if a.Key == "max-depth" {
			d, err := strconv.Atoi(a.Vals[0])
			if err != nil {
				return b, err
			}
			b.MaxDepth = d
		}
	}
	return b, nil
}

func (sc *scenario) run(td *datadriven.TestData) (string, error) {
	switch td.Cmd {
	case "new":
		cfg, err := parseConfig(td)
		if err != nil {
			return "", err
		}
		sc.cfg = cfg
		sc.s = Init(&sc.cfg)
		sc.prev = sc.s
		return cfg.String() + "\n", nil
	case "do":
		var b strings.Builder
		for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			a, err := parseAction(&sc.s, line)
			if err != nil {
				return b.String(), err
			}
			if !enabled(&sc.cfg, &sc.s, a) {
				return b.String(), fmt.Errorf("%q is not enabled", line)
			}
			fmt.Fprintf(&b, "%s %s\n", a.Actor(&sc.s), a.Describe(&sc.s))
			e := &emitter{}
			sc.prev = sc.s
			step(&sc.cfg, &sc.s, a, e)
			for _, ev := range e.evs {
				fmt.Fprintf(&b, "  %s\n", ev)
			}
			if p, msg := checkSafety(&sc.cfg, &sc.prev, &sc.s); p != "" {
				fmt.Fprintf(&b, "VIOLATION %s: %s\n", p, msg)
			}
		}
		return b.String(), nil
	case "fair":
		fr := search.Settle[State, Action](newSystem(&sc.cfg), sc.s, search.Bounds{})
		switch fr.Verdict {
		case search.Holds:
			return fmt.Sprintf("liveness holds: quiesced after %d steps; checkpoint %d >= %d, every table has one working dispatcher\n", fr.Steps, fr.Final.Coord.Ckpt, fr.Healed.UpTs), nil
		case search.Unsettled:
			return "no verdict: the fair schedule hit a bound\n", nil
		}
		return fmt.Sprintf("VIOLATION %s: %s\n", fr.Property, fr.Message), nil
	case "plant":
		for _, a := range td.CmdArgs {
			switch a.Key {
			case "checkpoint":
				v, err := strconv.Atoi(a.Vals[0])
				if err != nil {
					return "", err
				}
				sc.prev = sc.s
				sc.s.Coord.Ckpt = uint8(v)
			case "maintainer":
				// a second copy of the running, bootstrapped maintainer on another node
				slot, err := parseNode(a.Vals[0])
				if err != nil {
					return "", err
				}
				sc.prev = sc.s
				for i := range sc.s.Maint {
					if sc.s.Maint[i].Exists && sc.s.Maint[i].Bootstrapped && uint8(i) != slot {
						sc.s.Maint[slot] = sc.s.Maint[i]
						break
					}
				}
			default:
				return "", fmt.Errorf("unknown plant %q", a.Key)
			}
		}
		return "planted\n", nil
	case "props":
		var b strings.Builder
		for _, p := range safetyProps {
			if msg := p.fn(&sc.cfg, &sc.prev, &sc.s); msg != "" {
				fmt.Fprintf(&b, "%s: VIOLATED: %s\n", p.name, msg)
			} else {
				fmt.Fprintf(&b, "%s: holds\n", p.name)
			}
		}
		return b.String(), nil
	case "check":
		cfg, err := parseConfig(td)
		if err != nil {
			return "", err
		}
		bounds, err := parseBounds(td)
		if err != nil {
			return "", err
		}
		r, err := Check(cfg, bounds, nil)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s", r.Outcome)
		if r.Reason != "" {
			fmt.Fprintf(&b, " (%s)", r.Reason)
		}
		fmt.Fprintf(&b, ": %d distinct states, depth %d\n", r.Distinct, r.Depth)
		if r.Violation != nil {
			b.WriteString(r.Violation.Story())
		}
		return b.String(), nil
	}
	return "", fmt.Errorf("unknown command %q", td.Cmd)
}

func parseNode(s string) (uint8, error) {
	if len(s) == 2 && s[0] == 'n' && s[1] >= '0' && s[1] < '0'+MaxNodes {
		return s[1] - '0', nil
	}
	return 0, fmt.Errorf("bad node %q (want n0..n%d)", s, MaxNodes-1)
}

// keyText writes a span key as scenarios name it: t1 (the whole table),
// t1L and t1R (its halves after a split).
func keyText(k uint8) string {
	return fmt.Sprintf("t%d", keyTable(k)) + [...]string{"", "L", "R"}[keyPart(k)]
}

func parseKey(s string) (uint8, error) {
	for k := uint8(0); k < 1<<4; k++ {
		if keyPart(k) <= partRight && keyText(k) == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("bad span %q (t1, t1L, t1R, ...)", s)
}

// splitModeNames names the split modes in scenarios.
var splitModeNames = [...]string{splitNoTargets: "no-targets", splitAligned: "aligned", splitMismatch: "mismatch", 3: "?"}

func parseTable(s string) (uint8, error) {
	if len(s) == 2 && s[0] == 't' && s[1] >= '0' && s[1] <= '0'+MaxTables {
		return s[1] - '0', nil
	}
	return 0, fmt.Errorf("bad table %q", s)
}

func parseEndpoint(st *State, s string) (uint8, error) {
	if s == "coordinator" {
		return coordSlot, nil
	}
	n, err := parseNode(s)
	if err != nil {
		return 0, err
	}
	return st.Ident(n), nil
}

// parseAction turns an action line into an Action of state st.
func parseAction(st *State, line string) (Action, error) {
	f := strings.Fields(line)
	var kind ActKind
	for i, n := range actNames {
		if n == f[0] && i != 0 {
			kind = ActKind(i)
		}
	}
	if kind == aNone {
		return Action{}, fmt.Errorf("unknown action %q", f[0])
	}
	a := Action{Kind: kind}
	argN := func(i int) (uint8, error) {
		if len(f) <= i {
			return 0, fmt.Errorf("%s: missing argument %d", f[0], i)
		}
		return parseNode(f[i])
	}
	dispOf := func(i int, removing bool) (uint8, error) {
		if len(f) <= i {
			return 0, fmt.Errorf("%s: missing table", f[0])
		}
		// t1 names any dispatcher of table 1; t1L and t1R one of a half.
		k, err := parseKey(f[i])
		if err != nil {
			return 0, err
		}
		t := keyTable(k)
		for _, d := range st.Disp {
			closing := d.St == dRemoving || d.St == dMergeClosed
			if d.ID != 0 && d.Table == t && (keyPart(k) == partWhole || d.Part == keyPart(k)) && closing == removing {
				return d.ID, nil
			}
		}
		return 0, fmt.Errorf("no dispatcher of %s", f[i])
	}
	var err error
	switch kind {
	case ACrash, ADetect, ARestart, ACoordSchedule, AMaintTick, AMaintCleanup, ADMTick, ADMComplete, ACoordMove:
		a.Node, err = argN(1)
	case ASinkError, AFastFail:
		a.Arg, err = dispOf(1, false)
	case AMaintApplyWM:
		if a.Node, err = argN(1); err == nil {
			a.Arg, err = argN(2)
		}
	case AResume:
		if len(f) > 1 {
			v, ok := strings.CutPrefix(f[1], "checkpoint=")
			n, perr := strconv.Atoi(v)
			if !ok || perr != nil || n < 1 || n > 9 {
				return a, fmt.Errorf("%s: want checkpoint=N (1..9), got %q", f[0], f[1])
			}
			a.Arg = uint8(n)
		}
	case ADispClosed:
		a.Arg, err = dispOf(1, true)
	case AMerge, AMergePostFinish:
		if a.Node, err = argN(1); err == nil {
			if len(f) < 3 {
				return a, fmt.Errorf("%s: want NODE TABLE", f[0])
			}
			a.Arg, err = parseTable(f[2])
		}
	case AOpPostFinish:
		if a.Node, err = argN(1); err == nil {
			if len(f) < 3 {
				return a, fmt.Errorf("%s: want NODE SPAN", f[0])
			}
			a.Arg, err = parseKey(f[2])
		}
	case AMaintSchedule, AMaintMove:
		if a.Node, err = argN(1); err == nil {
			if len(f) < 4 {
				return a, fmt.Errorf("%s: want NODE TABLE DEST", f[0])
			}
			if a.Arg, err = parseKey(f[2]); err == nil {
				a.Arg2, err = argN(3)
			}
		}
	case ASplit:
		if a.Node, err = argN(1); err == nil {
			if len(f) < 5 {
				return a, fmt.Errorf("%s: want NODE SPAN MODE DEST", f[0])
			}
			if a.Arg, err = parseKey(f[2]); err != nil {
				return a, err
			}
			mode := -1
			for i, n := range splitModeNames[:3] {
				if n == f[3] {
					mode = i
				}
			}
			if mode < 0 {
				return a, fmt.Errorf("%s: bad split mode %q (no-targets, aligned, mismatch)", f[0], f[3])
			}
			var d uint8
			if d, err = argN(4); err == nil {
				a.Arg2 = uint8(mode) | d<<2
			}
		}
	case ADeliver, ADrop, ADuplicate:
		// SRC DST [KIND]: the deliverable message from SRC to DST; KIND
		// (a message name, e.g. MaintainerBootstrapResponse) picks one when
		// several are deliverable (different receiving queues).
		if len(f) < 3 {
			return a, fmt.Errorf("%s: want SRC DST [KIND]", f[0])
		}
		src, err1 := parseEndpoint(st, f[1])
		dst, err2 := parseEndpoint(st, f[2])
		if err1 != nil || err2 != nil {
			return a, fmt.Errorf("%s: bad endpoints %q %q", f[0], f[1], f[2])
		}
		var kind uint8
		if len(f) > 3 {
			k, ok := msgKindByName(f[3])
			if !ok {
				return a, fmt.Errorf("%s: unknown message kind %q", f[0], f[3])
			}
			kind = k
		}
		var found []Msg
		for i := 0; i < st.nmsgs(); i++ {
			if m := st.Net[i]; m.Src == src && m.Dst == dst && (kind == 0 || m.Kind == kind) && st.isHead(i) {
				found = append(found, m)
			}
		}
		switch {
		case len(found) == 0:
			return a, fmt.Errorf("no deliverable message from %s to %s", f[1], f[2])
		case len(found) > 1:
			var names []string
			for _, m := range found {
				names = append(names, msgNames[m.Kind])
			}
			return a, fmt.Errorf("%s %s %s: %d messages are deliverable (%s); name the kind", f[0], f[1], f[2], len(found), strings.Join(names, ", "))
		}
		a.Msg = found[0]
	}
	return a, err
}

// monitorsAgree runs the spec monitors over a counterexample's events.
func monitorsAgree(cfg *Config, ce *Counterexample) []spec.Violation {
	return spec.Check(cfg.MonitorConfig(), ce.Events(cfg))
}
