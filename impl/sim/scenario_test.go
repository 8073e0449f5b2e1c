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

// chaos runs one seed of RunChaos (the soak's random actions and faults)
// with the bugs named, and prints its actions and verdict: a stored chaos
// seed is a story too, for failures no hand-written story reaches.
func chaos(d *datadriven.TestData) (string, error) {
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
		return chaos(d)
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
	case "create", "pause", "remove":
		cf, _ := arg(d, "cf")
		var err error
		switch d.Cmd {
		case "create":
			err = h.s.CreateChangefeed(cf)
		case "pause":
			err = h.s.PauseChangefeed(cf)
		case "remove":
			err = h.s.RemoveChangefeed(cf)
		}
		if err != nil {
			return "", err
		}
		b.WriteString("ok\n")
	case "resume":
		cf, _ := arg(d, "cf")
		if err := h.s.ResumeChangefeed(cf, 0); err != nil {
			return "", err
		}
		b.WriteString("ok\n")
	case "move-maintainer":
		cf, _ := arg(d, "cf")
		n, err := h.node(d, "to")
		if err != nil {
			return "", err
		}
		if err := h.s.MoveMaintainer(cf, n); err != nil {
			return "", err
		}
		b.WriteString("ok\n")
	case "move-table", "split-table", "remove-table":
		cf, _ := arg(d, "cf")
		tv, _ := arg(d, "table")
		table, err := strconv.ParseInt(tv, 10, 64)
		if err != nil {
			return "", fmt.Errorf("table=%q: %v", tv, err)
		}
		var k int
		switch d.Cmd {
		case "move-table":
			n, err2 := h.node(d, "to")
			if err2 != nil {
				return "", err2
			}
			k, err = h.s.MoveTable(cf, table, n)
		case "split-table":
			k, err = h.s.SplitTable(cf, table)
		default:
			k, err = h.s.RemoveTableDispatchers(cf, table)
		}
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%d operator(s)\n", k)
	case "create-table":
		t := h.s.CreateTable()
		ct, _ := h.s.Upstream().TableCreateTs(t)
		fmt.Fprintf(&b, "table %d created at %s\n", t, rel(ct))
	case "kill", "expire":
		n, err := h.node(d, "node")
		if err != nil {
			return "", err
		}
		if d.Cmd == "kill" {
			err = h.s.KillCapture(n)
		} else {
			err = h.s.ExpireSession(n)
		}
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "owner %s\n", h.name(h.s.Owner()))
	case "add-capture":
		id := h.s.AddCapture()
		fmt.Fprintf(&b, "%s joined; owner %s\n", h.name(id), h.name(h.s.Owner()))
	case "rule":
		var r Rule
		r.Type, _ = arg(d, "type")
		r.Action, _ = arg(d, "action")
		if v, ok := arg(d, "to"); ok {
			r.To = h.ids[v]
		}
		if v, ok := arg(d, "from"); ok {
			r.From = h.ids[v]
		}
		r.Count = 1
		if v, ok := arg(d, "count"); ok {
			r.Count, _ = strconv.Atoi(v)
		}
		if v, ok := arg(d, "delay"); ok {
			ms, err := parseDur(v)
			if err != nil {
				return "", err
			}
			r.DelayMs = ms
		}
		if err := h.s.AddRule(r); err != nil {
			return "", err
		}
		b.WriteString("ok\n")
	case "faults":
		f := Faults{DelayMinMs: 1, DelayMaxMs: 5}
		if v, ok := arg(d, "drop"); ok {
			f.DropProb, _ = strconv.ParseFloat(v, 64)
		}
		if v, ok := arg(d, "dup"); ok {
			f.DupProb, _ = strconv.ParseFloat(v, 64)
		}
		if v, ok := arg(d, "delay"); ok {
			lo, hi, _ := strings.Cut(v, "-")
			f.DelayMinMs, _ = strconv.ParseInt(lo, 10, 64)
			f.DelayMaxMs, _ = strconv.ParseInt(hi, 10, 64)
		}
		if err := h.s.SetFaults(f); err != nil {
			return "", err
		}
		b.WriteString("ok\n")
	case "partition":
		var groups [][]core.NodeID
		for _, a := range d.CmdArgs {
			var g []core.NodeID
			for _, n := range append([]string{a.Key}, a.Vals...) {
				for _, x := range strings.Split(n, ",") {
					if id, ok := h.ids[x]; ok {
						g = append(g, id)
					}
				}
			}
			groups = append(groups, g)
		}
		h.s.Partition(groups...)
		b.WriteString("ok\n")
	case "sink-error":
		cf, _ := arg(d, "cf")
		n, err := h.node(d, "node")
		if err != nil {
			return "", err
		}
		if err := h.s.SinkError(CfID(cf), n); err != nil {
			return "", err
		}
		b.WriteString("ok\n")
	case "stall":
		h.s.StallUpstream()
		b.WriteString("ok\n")
	case "resume-upstream":
		h.s.ResumeUpstream()
		b.WriteString("ok\n")
	case "failpoint":
		n, err := h.node(d, "node")
		if err != nil {
			return "", err
		}
		name, _ := arg(d, "name")
		v, _ := arg(d, "on")
		if err := h.s.SetFailpoint(n, name, v != "false"); err != nil {
			return "", err
		}
		b.WriteString("ok\n")
	case "heal":
		h.s.Heal()
		fmt.Fprintf(&b, "target %s\n", rel(h.s.healTarget))
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
		return "", fmt.Errorf("unknown command %q", d.Cmd)
	}
	return b.String(), nil
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
