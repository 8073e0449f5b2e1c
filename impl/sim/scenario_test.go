package sim

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"cdcspec/impl/core"
	"cdcspec/spec"
)

// TestScenarios runs the stories in testdata/*.txt. Regenerate expected
// output with: go test ./impl/sim -run TestScenarios -rewrite
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		h := &harness{}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			out, err := h.run(d)
			if err != nil {
				if h.s != nil {
					return "error: " + h.scrub(err.Error()) + "\n"
				}
				return "error: " + err.Error() + "\n"
			}
			return out
		})
	})
}

// harness drives one Sim from scenario commands. Captures are named n1, n2,
// ... in creation order; times and timestamps print relative to StartMs.
type harness struct {
	s       *Sim
	log     bytes.Buffer
	logMark int
	evMark  int
	alias   map[core.NodeID]string
	ids     map[string]core.NodeID
}

func (h *harness) name(id core.NodeID) string {
	if id == "" {
		return "-"
	}
	if a, ok := h.alias[id]; ok {
		return a
	}
	a := "n" + strconv.Itoa(len(h.alias)+1)
	h.alias[id] = a
	h.ids[a] = id
	return a
}

func (h *harness) learn() {
	for _, id := range h.s.order {
		h.name(id)
	}
}

func (h *harness) node(d *datadriven.TestData, key string) (core.NodeID, error) {
	a, _ := arg(d, key)
	id, ok := h.ids[a]
	if !ok {
		return "", fmt.Errorf("%s=%q: no such capture (known: %s)", key, a, strings.Join(h.names(), ", "))
	}
	return id, nil
}

func (h *harness) names() []string {
	var out []string
	for a := range h.ids {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

func rel(ts uint64) string {
	if ts == 0 {
		return "0"
	}
	return "+" + strconv.FormatInt(int64(ts)-StartMs, 10)
}

func parseDur(s string) (int64, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duration %q: %v", s, err)
	}
	return d.Milliseconds(), nil
}

func arg(d *datadriven.TestData, key string) (string, bool) {
	for _, a := range d.CmdArgs {
		if a.Key == key {
			if len(a.Vals) == 0 {
				return "", true
			}
			return strings.Join(a.Vals, ","), true
		}
	}
	return "", false
}

// chaosCommand runs one seed of RunChaos (the soak's random actions and faults)
// with the bugs named, and prints its actions and verdict: a stored chaos
// seed is a story too, for failures no hand-written story reaches.
func chaosCommand(d *datadriven.TestData) (string, error) {
	var cfg ChaosConfig
	v, ok := arg(d, "seed")
	if !ok {
		return "", fmt.Errorf("%s: chaos needs seed=N", d.Pos)
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return "", fmt.Errorf("%s: seed=%q: %v", d.Pos, v, err)
	}
	cfg.Seed = n
	if v, ok := arg(d, "bugs"); ok {
		if cfg.Options.Bugs, err = spec.ParseBugs(strings.Split(v, ",")); err != nil {
			return "", err
		}
	}
	r := RunChaos(cfg)
	var b strings.Builder
	fmt.Fprintf(&b, "%d actions, %d messages\n", len(r.Actions), r.Delivered)
	if r.Converged {
		b.WriteString("converged\n")
	} else {
		fmt.Fprintf(&b, "not converged: %s\n", r.Why)
	}
	for _, v := range r.Violations {
		fmt.Fprintf(&b, "%s\n", v)
	}
	return b.String(), nil
}

func (h *harness) run(d *datadriven.TestData) (string, error) {
	if d.Cmd == "chaos" {
		return chaosCommand(d)
	}
	if d.Cmd != "new" && h.s == nil {
		return "", fmt.Errorf("%s: %s before new", d.Pos, d.Cmd)
	}
	var b strings.Builder
	switch d.Cmd {
	case "new":
		cfg := Config{Log: &h.log, LogLevel: "debug", RecordEvents: true}
		if v, ok := arg(d, "seed"); ok {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return "", fmt.Errorf("seed=%q: %v", v, err)
			}
			cfg.Seed = n
		}
		if v, ok := arg(d, "nodes"); ok {
			cfg.Nodes, _ = strconv.Atoi(v)
		}
		if v, ok := arg(d, "tables"); ok {
			cfg.Tables, _ = strconv.Atoi(v)
		}
		if v, ok := arg(d, "bugs"); ok {
			bugs, err := spec.ParseBugs(strings.Split(v, ","))
			if err != nil {
				return "", err
			}
			cfg.Options.Bugs = bugs
		}
		if _, ok := arg(d, "raw-watermark"); ok {
			cfg.Options.Legacy.RawWatermarkCheckpoint = true
		}
		if v, ok := arg(d, "delivery"); ok {
			dl, err := spec.ParseDelivery(v)
			if err != nil {
				return "", err
			}
			cfg.Delivery = dl
		}
		h.alias, h.ids = map[core.NodeID]string{}, map[string]core.NodeID{}
		h.log.Reset()
		h.logMark = 0
		h.evMark = 0
		h.s = New(cfg)
		h.learn()
		fmt.Fprintf(&b, "captures: %s; owner %s\n", strings.Join(h.names(), " "), h.name(h.s.Owner()))
		if !h.s.Delivery().TiCDC() {
			fmt.Fprintf(&b, "delivery: %s\n", h.s.Delivery().Label())
		}
	case "run":
		v, _ := arg(d, "for")
		ms, err := parseDur(v)
		if err != nil {
			return "", err
		}
		h.s.RunFor(ms)
		fmt.Fprintf(&b, "t=%s\n", rel(uint64(h.s.Now())))
	case string(spec.ActionCreateChangefeed), string(spec.ActionPauseChangefeed), string(spec.ActionRemoveChangefeed):
		cf, _ := arg(d, "cf")
		var err error
		switch spec.Action(d.Cmd) {
		case spec.ActionCreateChangefeed:
			err = h.s.CreateChangefeed(cf)
		case spec.ActionPauseChangefeed:
			err = h.s.PauseChangefeed(cf)
		default:
			err = h.s.RemoveChangefeed(cf)
		}
		if err != nil {
			return "", err
		}
		b.WriteString("ok\n")
	case string(spec.ActionResumeChangefeed):
		cf, _ := arg(d, "cf")
		if err := h.s.ResumeChangefeed(cf, 0); err != nil {
			return "", err
		}
		b.WriteString("ok\n")
	case string(spec.ActionMoveMaintainer):
		cf, _ := arg(d, "cf")
		n, err := h.node(d, "to")
		if err != nil {
			return "", err
		}
		if err := h.s.MoveMaintainer(cf, n); err != nil {
			return "", err
		}
		b.WriteString("ok\n")
	case string(spec.ActionMoveTable), string(spec.ActionSplitTable), string(spec.ActionMergeTable), string(spec.ActionRemoveTableDispatchers):
		cf, _ := arg(d, "cf")
		tv, _ := arg(d, "table")
		table, err := strconv.ParseInt(tv, 10, 64)
		if err != nil {
			return "", fmt.Errorf("table=%q: %v", tv, err)
		}
		var k int
		switch spec.Action(d.Cmd) {
		case spec.ActionMoveTable:
			n, err2 := h.node(d, "to")
			if err2 != nil {
				return "", err2
			}
			k, err = h.s.MoveTable(cf, table, n)
		case spec.ActionSplitTable:
			k, err = h.s.SplitTable(cf, table)
		case spec.ActionMergeTable:
			k, err = h.s.MergeTable(cf, table)
		default:
			k, err = h.s.RemoveTableDispatchers(cf, table)
		}
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%d operator(s)\n", k)
	case string(spec.ActionCreateTable):
		t := h.s.CreateTable()
		ct, _ := h.s.Upstream().TableCreateTs(t)
		fmt.Fprintf(&b, "table %d created at %s\n", t, rel(ct))
	case string(spec.ActionBlockingDDL):
		kind, _ := arg(d, "kind")
		var tables []int64
		if v, ok := arg(d, "tables"); ok {
			for _, f := range strings.Split(v, ",") {
				t, err := strconv.ParseInt(f, 10, 64)
				if err != nil {
					return "", fmt.Errorf("tables=%q: %v", v, err)
				}
				tables = append(tables, t)
			}
		}
		ev, err := h.s.BlockingDDL(kind, tables...)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%q at %s influence %s", ev.Query, rel(ev.CommitTs), ev.Influence)
		if len(ev.NeedAdded) > 0 {
			fmt.Fprintf(&b, " adds table %d", ev.NeedAdded[0])
		}
		b.WriteString("\n")
	case "quiesce":
		v, _ := arg(d, "max")
		ms, err := parseDur(v)
		if err != nil {
			return "", err
		}
		ok, why := h.s.RunUntilQuiet(ms)
		if ok {
			b.WriteString("converged\n")
		} else {
			fmt.Fprintf(&b, "not converged: %s\n", h.scrub(why))
		}
	case "state":
		h.learn()
		b.WriteString(h.state(d))
	case "violations":
		b.WriteString(h.violations())
	case "log":
		b.WriteString(h.grepLog(d))
	case "events":
		b.WriteString(h.events(d))
	case "stuck-tables":
		fmt.Fprintf(&b, "%v\n", h.s.Upstream().StuckTables())
	default:
		if f := spec.Fault(d.Cmd); f.Known() {
			return h.inject(d, f)
		}
		return "", fmt.Errorf("%s: unknown command %q (known: %s; the faults: %s)", d.Pos, d.Cmd,
			strings.Join(harnessCommands, ", "), strings.Join(spec.FaultNames(), ", "))
	}
	return b.String(), nil
}

// harnessCommands are the commands besides the faults, which are the
// vocabulary's names (inject).
var harnessCommands = []string{"new", "chaos", "run", "quiesce", "state", "violations", "log", "events", "stuck-tables",
	string(spec.ActionCreateChangefeed), string(spec.ActionPauseChangefeed), string(spec.ActionResumeChangefeed),
	string(spec.ActionRemoveChangefeed), string(spec.ActionMoveMaintainer), string(spec.ActionCreateTable), string(spec.ActionBlockingDDL),
	string(spec.ActionMoveTable), string(spec.ActionSplitTable), string(spec.ActionMergeTable), string(spec.ActionRemoveTableDispatchers)}

// inject runs a fault command: the command is the fault's name, its
// arguments the Injection's fields:
//
//	node=nK                    the capture hit (kill-capture, expire-session, sink-error,
//	                           failpoints, partition of one capture)
//	cf=NAME                    sink-error, kill-maintainer-capture
//	type= from= to= count= delay=DURATION
//	                           drop-, duplicate-, delay-messages (count defaults to 1)
//	drop=P dup=P delay=LO-HI   random-message-faults (probabilities; delay range in ms)
//	nA,nB nC ...               partition into these groups (instead of node=)
//	on=false                   switch a failpoint off
//
// It prints the owner after a capture dies, the new capture's name after
// one starts, the liveness target after heal, otherwise "ok".
func (h *harness) inject(d *datadriven.TestData, f spec.Fault) (string, error) {
	in := Injection{Fault: f}
	in.Changefeed, _ = arg(d, "cf")
	if _, ok := arg(d, "node"); ok {
		n, err := h.node(d, "node")
		if err != nil {
			return "", err
		}
		in.Node = n
	}
	switch f {
	case spec.FaultDropMessages, spec.FaultDuplicateMessages, spec.FaultDelayMessages:
		in.Rule.Type, _ = arg(d, "type")
		for key, dst := range map[string]*core.NodeID{"to": &in.Rule.To, "from": &in.Rule.From} {
			if _, ok := arg(d, key); ok {
				n, err := h.node(d, key)
				if err != nil {
					return "", err
				}
				*dst = n
			}
		}
		in.Rule.Count = 1
		if v, ok := arg(d, "count"); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return "", fmt.Errorf("%s: count=%q: %v", d.Pos, v, err)
			}
			in.Rule.Count = n
		}
		if v, ok := arg(d, "delay"); ok {
			ms, err := parseDur(v)
			if err != nil {
				return "", err
			}
			in.Rule.DelayMs = ms
		}
		if v, ok := arg(d, "hold"); ok {
			if v != "send-queue" {
				return "", fmt.Errorf("%s: hold=%q: want send-queue", d.Pos, v)
			}
			in.Rule.HoldInSendQueue = true
		}
	case spec.FaultRandomMessageFaults:
		in.Faults = Faults{DelayMinMs: 1, DelayMaxMs: 5}
		if v, ok := arg(d, "drop"); ok {
			in.Faults.DropProb, _ = strconv.ParseFloat(v, 64)
		}
		if v, ok := arg(d, "dup"); ok {
			in.Faults.DupProb, _ = strconv.ParseFloat(v, 64)
		}
		if v, ok := arg(d, "delay"); ok {
			lo, hi, _ := strings.Cut(v, "-")
			in.Faults.DelayMinMs, _ = strconv.ParseInt(lo, 10, 64)
			in.Faults.DelayMaxMs, _ = strconv.ParseInt(hi, 10, 64)
		}
	case spec.FaultPartition:
		if in.Node == "" {
			for _, a := range d.CmdArgs {
				var g []core.NodeID
				for _, n := range append([]string{a.Key}, a.Vals...) {
					for _, x := range strings.Split(n, ",") {
						id, ok := h.ids[x]
						if !ok {
							return "", fmt.Errorf("%s: partition group member %q: no such capture (known: %s)", d.Pos, x, strings.Join(h.names(), ", "))
						}
						g = append(g, id)
					}
				}
				in.Groups = append(in.Groups, g)
			}
		}
	case spec.FaultBlockCreateDispatcher, spec.FaultSlowCloseDispatcher:
		v, _ := arg(d, "on")
		in.Off = v == "false"
	}
	n, err := h.s.Inject(in)
	if err != nil {
		return "", err
	}
	switch f {
	case spec.FaultKillCapture, spec.FaultKillMaintainerCapture, spec.FaultKillOwnerCapture, spec.FaultExpireSession:
		return fmt.Sprintf("%s died; owner %s\n", h.name(n), h.name(h.s.Owner())), nil
	case spec.FaultAddCapture, spec.FaultRestartCapture:
		return fmt.Sprintf("%s joined; owner %s\n", h.name(n), h.name(h.s.Owner())), nil
	case spec.FaultHeal:
		return fmt.Sprintf("target %s\n", rel(h.s.healTarget)), nil
	}
	return "ok\n", nil
}

// scrub replaces node IDs with aliases and absolute timestamps with offsets.
func (h *harness) scrub(s string) string {
	h.learn()
	for id, a := range h.alias {
		s = strings.ReplaceAll(s, string(id), a)
	}
	return s
}

func (h *harness) state(d *datadriven.TestData) string {
	var b strings.Builder
	st := h.s.State()
	_, withDispatchers := arg(d, "dispatchers")
	fmt.Fprintf(&b, "owner %s\n", h.name(st.Owner))
	for _, cf := range st.Changefeeds {
		stored, _ := h.s.Stored(cf.ID)
		line := fmt.Sprintf("changefeed %s: state=%s sched=%s node=%s epoch=%s checkpoint=%s stored=%s progress=%d",
			cf.ID.Name(), cf.State, orDash(cf.Sched), h.name(cf.Node), rel(cf.Epoch), rel(cf.Checkpoint), rel(stored.Status.CheckpointTs), stored.Status.Progress)
		if cf.Operator != "" {
			line += " op=[" + h.scrub(cf.Operator) + "]"
		}
		if cf.Retrying {
			line += " retrying nextRetry=" + rel(uint64(cf.NextRetry))
		}
		b.WriteString(line + "\n")
	}
	for _, n := range st.Nodes {
		for _, m := range n.Maintainers {
			flags := ""
			if m.Bootstrapped {
				flags += " bootstrapped"
			}
			if m.RemovalOnly {
				flags += " removal-only"
			}
			if m.Removing {
				flags += " removing"
			}
			fmt.Fprintf(&b, "%s maintainer %s: %s epoch=%s%s\n", h.name(n.ID), m.Changefeed.Name(), m.State, rel(m.Epoch), flags)
		}
		if !withDispatchers {
			continue
		}
		for _, dm := range n.Managers {
			line := fmt.Sprintf("%s dm %s: owner=%s epoch=%s journal=%d", h.name(n.ID), dm.Changefeed.Name(), h.name(dm.MaintainerID), rel(dm.Epoch), dm.Journal)
			if dm.Err != "" {
				line += " err=" + strconv.Quote(dm.Err)
			}
			b.WriteString(line + "\n")
		}
		var ds []string
		for _, di := range n.Dispatchers {
			prefix := ""
			if len(st.Changefeeds) > 1 {
				prefix = di.Changefeed.Name() + "/"
			}
			if di.Trigger {
				ds = append(ds, prefix+"trigger:"+di.State)
				continue
			}
			ds = append(ds, prefix+di.Span.String()+":"+di.State)
		}
		sort.Strings(ds)
		if len(ds) > 0 {
			fmt.Fprintf(&b, "%s dispatchers: %s\n", h.name(n.ID), strings.Join(ds, " "))
		}
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (h *harness) violations() string {
	vs := h.s.Violations()
	if len(vs) == 0 {
		return "none\n"
	}
	seen := map[string]int{}
	var order []string
	for _, v := range vs {
		k := string(v.Property)
		if seen[k] == 0 {
			order = append(order, k)
		}
		seen[k]++
	}
	var b strings.Builder
	for _, k := range order {
		first := ""
		for _, v := range vs {
			if string(v.Property) == k {
				first = h.scrub(v.Message)
				break
			}
		}
		fmt.Fprintf(&b, "%s x%d: %s\n", k, seen[k], first)
	}
	return b.String()
}

// grepLog prints new log lines (since the last log command) containing
// every grep= substring; count=true prints only the number.
func (h *harness) grepLog(d *datadriven.TestData) string {
	all := h.log.String()
	text := all[h.logMark:]
	h.logMark = len(all)
	pat, _ := arg(d, "grep")
	_, countOnly := arg(d, "count")
	lines := strings.Split(text, "\n")
	var out []string
	for _, l := range lines {
		if l != "" && strings.Contains(l, pat) {
			out = append(out, h.scrub(l))
		}
	}
	if countOnly {
		return fmt.Sprintf("%d line(s)\n", len(out))
	}
	if v, ok := arg(d, "first"); ok {
		n, _ := strconv.Atoi(v)
		if len(out) > n {
			out = append(out[:n], fmt.Sprintf("... %d more", len(out)-n))
		}
	}
	if len(out) == 0 {
		return "(none)\n"
	}
	return strings.Join(out, "\n") + "\n"
}

// events prints the events of the given kinds (comma separated) recorded
// since the last events command.
func (h *harness) events(d *datadriven.TestData) string {
	v, _ := arg(d, "kinds")
	kinds := map[spec.Kind]bool{}
	for _, k := range strings.Split(v, ",") {
		kk, ok := spec.ParseKind(k)
		if !ok {
			return fmt.Sprintf("error: unknown kind %q\n", k)
		}
		kinds[kk] = true
	}
	var b strings.Builder
	evs := h.s.Events()
	from := h.evMark
	h.evMark = len(evs)
	for _, e := range evs[from:] {
		if kinds[e.Kind] {
			e.Time -= StartMs
			e.Epoch = 0
			if e.Checkpoint > StartMs {
				e.Checkpoint -= StartMs
			}
			if e.NextRetry > StartMs {
				e.NextRetry -= StartMs
			}
			e.Dispatcher = ""
			fmt.Fprintf(&b, "%d %s\n", e.Time, h.scrub(e.String()))
		}
	}
	if b.Len() == 0 {
		return "(none)\n"
	}
	return b.String()
}
