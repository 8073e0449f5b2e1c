package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strings"
	"time"

	"cdcspec/runtime/adminapi"
	"cdcspec/spec"
)

func init() {
	register("cli", "admin API client like cdc cli: changefeed create|list|query|pause|resume|remove|move-table|split-table, capture list", runCLI)
}

// cliCommand is one `cdcspec cli TARGET VERB`, after TiCDC's cdc cli
// (cmd/cdc/cli/cli_changefeed_*.go at b813e76f9): the same verbs, flag
// names and one-line descriptions.
type cliCommand struct {
	target, verb string
	alias        string // another accepted verb ("get" for query)
	short        string // cdc's Short
	needID       bool   // names a changefeed
	// flags are the command's own flags besides --server, --timeout and,
	// with needID, --changefeed-id/-c.
	flags   []string
	example string
}

var cliCommands = []cliCommand{
	{target: "changefeed", verb: "create", short: "Create a new replication task (changefeed)", needID: true,
		flags: []string{"start-ts"}, example: "cdcspec cli changefeed create cf-2 --server http://127.0.0.1:8300 --start-ts 463424440748738560"},
	{target: "changefeed", verb: "list", short: "List all replication tasks (changefeeds) in TiCDC cluster",
		example: "cdcspec cli changefeed list --server http://127.0.0.1:8300"},
	{target: "changefeed", verb: "query", alias: "get", short: "Query information and status of a replication task (changefeed)", needID: true,
		example: "cdcspec cli changefeed query -c cf-1 --server http://127.0.0.1:8300"},
	{target: "changefeed", verb: "pause", short: "Pause a replication task (changefeed)", needID: true,
		example: "cdcspec cli changefeed pause -c cf-1 --server http://127.0.0.1:8300"},
	{target: "changefeed", verb: "resume", short: "Resume a paused replication task (changefeed)", needID: true,
		flags: []string{"overwrite-checkpoint-ts"}, example: "cdcspec cli changefeed resume -c cf-1 --server http://127.0.0.1:8300 --overwrite-checkpoint-ts 463424440748738560"},
	{target: "changefeed", verb: "remove", short: "Remove a replication task (changefeed)", needID: true,
		example: "cdcspec cli changefeed remove -c cf-1 --server http://127.0.0.1:8300"},
	{target: "changefeed", verb: "move-table", short: "move table in a changefeed", needID: true,
		flags: []string{"table-id", "target-node-id"}, example: "cdcspec cli changefeed move-table -c cf-1 --table-id 2 --target-node-id CAPTURE-ID --server http://127.0.0.1:8300"},
	{target: "changefeed", verb: "split-table", short: "split a table of a changefeed into spans (cdcspec's; TiCDC splits by region count)", needID: true,
		flags: []string{"table-id"}, example: "cdcspec cli changefeed split-table -c cf-1 --table-id 2 --server http://127.0.0.1:8300"},
	{target: "capture", verb: "list", short: "List all captures in TiCDC cluster",
		example: "cdcspec cli capture list --server http://127.0.0.1:8300"},
}

const cliExitCodes = "Exit status: 0 success, 1 the server refused or failed (its error on stderr), 2 usage error."

// lookupCLI finds a command by target and verb (or alias).
func lookupCLI(target, verb string) (cliCommand, bool) {
	for _, c := range cliCommands {
		if c.target == target && (c.verb == verb || (c.alias != "" && c.alias == verb)) {
			return c, true
		}
	}
	return cliCommand{}, false
}

func cliTargets() []string { return []string{"capture", "changefeed"} }

func verbsOf(target string) string {
	var vs []string
	for _, c := range cliCommands {
		if c.target == target {
			vs = append(vs, c.verb)
			if c.alias != "" {
				vs = append(vs, c.alias)
			}
		}
	}
	sort.Strings(vs)
	return strings.Join(vs, ", ")
}

// foreignFlag names a flag in args that this command does not have but
// another cli command does, with the commands it applies to ("" if none).
func foreignFlag(fl *flag.FlagSet, args []string) string {
	for _, a := range args {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name == "" || fl.Lookup(name) != nil {
			continue
		}
		var owners []string
		for _, c := range cliCommands {
			if contains(c.flags, name) {
				owners = append(owners, c.target+" "+c.verb)
			}
		}
		if len(owners) > 0 {
			return fmt.Sprintf("--%s applies to %s only", name, strings.Join(owners, ", "))
		}
	}
	return ""
}

func cliUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: cdcspec cli changefeed|capture COMMAND [ID] [--server http://host:port] [flags]")
	fmt.Fprintln(w, "\nCalls a capture's /api/v2 admin API like TiCDC's cdc cli (any capture forwards to the owner) and prints JSON.")
	fmt.Fprintln(w, "Every ts is a TiDB TSO, as in cdc: physical Unix ms << 18 | logical; checkpoint_time beside checkpoint_ts is its UTC time.")
	fmt.Fprintln(w, "\nCommands:")
	for _, c := range cliCommands {
		name := c.target + " " + c.verb
		if c.alias != "" {
			name += " (or " + c.alias + ")"
		}
		fmt.Fprintf(w, "  %-30s %s\n", name, c.short)
	}
	fmt.Fprintln(w, "\nExample:\n  cdcspec cli changefeed query -c cf-1 --server http://127.0.0.1:8300")
	fmt.Fprintln(w, "\nRun 'cdcspec cli changefeed COMMAND -h' for a command's flags.")
	fmt.Fprintln(w, cliExitCodes)
}

func (c cliCommand) usage(w io.Writer, fl *flag.FlagSet) {
	id := ""
	if c.needID {
		id = " [ID]"
	}
	fmt.Fprintf(w, "usage: cdcspec cli %s %s%s [flags]\n\n", c.target, c.verb, id)
	fmt.Fprintf(w, "%s (cdc cli %s %s).\n", c.short, c.target, c.verb)
	if c.alias != "" {
		fmt.Fprintf(w, "'%s' is accepted for '%s'.\n", c.alias, c.verb)
	}
	if c.needID {
		fmt.Fprintln(w, "The changefeed is the first argument or --changefeed-id (-c).")
	}
	if len(c.flags) > 0 && strings.HasSuffix(c.flags[0], "-ts") {
		fmt.Fprintf(w, "--%s is a TiDB TSO (physical Unix ms << 18 | logical); a value whose physical part is\n", c.flags[0])
		fmt.Fprintln(w, "before 2015 or after now + 1 day is refused (Unix milliseconds are not a TSO).")
	}
	fmt.Fprintf(w, "\nExample:\n  %s\n\n%s\n\nFlags:\n", c.example, cliExitCodes)
	printFlagDefaults(w, fl)
}

// maxCLITimeout bounds --timeout.
const maxCLITimeout = 10 * time.Minute

func isHelp(a string) bool { return a == "-h" || a == "--help" || a == "-help" || a == "help" }

// runCLI is `cdcspec cli TARGET VERB [ID] [flags]`: the command, its
// arguments, then the admin API call and its JSON.
func runCLI(args []string, stdout, stderr io.Writer) int {
	cmd, code, ok := cliCommandOf(args, stdout, stderr)
	if !ok {
		return code
	}
	a, code, ok := cmd.parse(args[2:], stdout, stderr)
	if !ok {
		return code
	}
	return cmd.call(a, stdout, stderr)
}

// cliCommandOf finds the command args[0] args[1] names; ok is false with
// the exit code after help or a usage error.
func cliCommandOf(args []string, stdout, stderr io.Writer) (cmd cliCommand, code int, ok bool) {
	if len(args) > 0 && isHelp(args[0]) {
		cliUsage(stdout)
		return cmd, exitOK, false
	}
	if len(args) == 0 {
		fmt.Fprintln(stderr, "cdcspec cli: missing target (known: capture, changefeed)")
		cliUsage(stderr)
		return cmd, exitUsage, false
	}
	target := args[0]
	if !contains(cliTargets(), target) {
		fmt.Fprintf(stderr, "cdcspec cli: unknown target %q (known: capture, changefeed)\n", target)
		return cmd, exitUsage, false
	}
	if len(args) < 2 || strings.HasPrefix(args[1], "-") || args[1] == "help" {
		if len(args) >= 2 && isHelp(args[1]) {
			cliUsage(stdout)
			return cmd, exitOK, false
		}
		fmt.Fprintf(stderr, "cdcspec cli %s: missing command (known: %s)\n", target, verbsOf(target))
		return cmd, exitUsage, false
	}
	cmd, ok = lookupCLI(target, args[1])
	if !ok {
		fmt.Fprintf(stderr, "cdcspec cli %s: unknown command %q (known: %s)\n", target, args[1], verbsOf(target))
		return cmd, exitUsage, false
	}
	return cmd, 0, true
}

// name is the command as its messages name it: "cli changefeed query".
func (c cliCommand) name() string { return "cli " + c.target + " " + c.verb }

// cliArgs are one command's arguments, parsed; a flag the command does not
// have keeps its zero value.
type cliArgs struct {
	srv                string
	timeout            time.Duration
	id                 string // the changefeed, from the argument or --changefeed-id
	startTs, overwrite uint64
	table              int64
	targetNode         string
}

// flagSet defines the command's flags into a.
func (c cliCommand) flagSet(a *cliArgs, stderr io.Writer) *flag.FlagSet {
	fl := flag.NewFlagSet(c.name(), flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() {} // -h prints c.usage on stdout (parse); a bad flag names itself
	fl.StringVar(&a.srv, "server", "http://127.0.0.1:8300", "a capture's admin API address (cdcspec run prints them)")
	fl.DurationVar(&a.timeout, "timeout", 15*time.Second, "request timeout, 1ms..10m")
	if c.needID {
		fl.StringVar(&a.id, "changefeed-id", "", "Replication task (changefeed) ID (or the first argument)")
		fl.StringVar(&a.id, "c", "", "shorthand for --changefeed-id")
	}
	for _, f := range c.flags {
		switch f {
		case "start-ts":
			fl.Uint64Var(&a.startTs, f, 0, "Start ts of changefeed, a TSO (0: now; above the current TSO is refused)")
		case "overwrite-checkpoint-ts":
			fl.Uint64Var(&a.overwrite, f, 0, "Overwrite the changefeed's checkpoint ts with this TSO (0: keep)")
		case "table-id":
			fl.Int64Var(&a.table, f, 0, "the id of the table (> 0)")
		case "target-node-id":
			fl.StringVar(&a.targetNode, f, "", "the capture the table moves to (cdcspec cli capture list)")
		}
	}
	return fl
}

// parse parses the command's arguments after TARGET VERB and checks them;
// ok is false with the exit code after -h or a usage error.
func (c cliCommand) parse(rest []string, stdout, stderr io.Writer) (a cliArgs, code int, ok bool) {
	name := c.name()
	fl := c.flagSet(&a, stderr)
	if msg := foreignFlag(fl, rest); msg != "" {
		fmt.Fprintf(stderr, "cdcspec %s: %s ('cdcspec %s -h' lists its flags)\n", name, msg, name)
		return a, exitUsage, false
	}
	var positional []string
	// Flags may come before or after the positional ID.
	for {
		code, ok := parseFlags(fl, rest, true, stderr)
		if !ok {
			if code == exitOK {
				c.usage(stdout, fl)
			} else {
				fmt.Fprintf(stderr, "'cdcspec %s -h' lists its flags\n", name)
			}
			return a, code, false
		}
		if fl.NArg() == 0 {
			break
		}
		positional = append(positional, fl.Arg(0))
		rest = fl.Args()[1:]
	}
	if !c.needID && len(positional) > 0 {
		fmt.Fprintf(stderr, "cdcspec %s: unexpected argument %q\n", name, positional[0])
		return a, exitUsage, false
	}
	if len(positional) > 1 {
		fmt.Fprintf(stderr, "cdcspec %s: one changefeed ID expected, got %q\n", name, positional)
		return a, exitUsage, false
	}
	if len(positional) == 1 {
		if a.id != "" && a.id != positional[0] {
			fmt.Fprintf(stderr, "cdcspec %s: the argument %q and --changefeed-id %q name different changefeeds\n", name, positional[0], a.id)
			return a, exitUsage, false
		}
		a.id = positional[0]
	}
	if err := c.validate(a, time.Now()); err != nil {
		fmt.Fprintf(stderr, "cdcspec %s: %v\n", name, err)
		return a, exitUsage, false
	}
	return a, 0, true
}

// validate checks the values of a's flags, and that the command has what
// it needs; the first error in flag order.
func (c cliCommand) validate(a cliArgs, now time.Time) error {
	errs := []error{durationIn("--timeout", a.timeout, time.Millisecond, maxCLITimeout), serverURL(a.srv),
		checkTSOFlag("--start-ts", a.startTs, now), checkTSOFlag("--overwrite-checkpoint-ts", a.overwrite, now)}
	if c.needID && a.id == "" {
		errs = append(errs, fmt.Errorf("changefeed %s needs a changefeed ID: cdcspec cli changefeed %s ID (or --changefeed-id ID)", c.verb, c.verb))
	}
	switch c.verb {
	case "move-table":
		if a.table <= 0 || a.targetNode == "" {
			errs = append(errs, fmt.Errorf("move-table needs --table-id (> 0, got %d) and --target-node-id", a.table))
		}
	case "split-table":
		if a.table <= 0 {
			errs = append(errs, fmt.Errorf("split-table needs --table-id (> 0, got %d)", a.table))
		}
	}
	return firstErr(errs...)
}

// call calls the admin API and prints its answer as JSON; exit 1 when the
// server refused, failed or did not answer within --timeout.
func (c cliCommand) call(a cliArgs, stdout, stderr io.Writer) int {
	cl := adminapi.NewClient(a.srv)
	cl.HTTP.Timeout = a.timeout
	ctx, cancel := context.WithTimeout(context.Background(), a.timeout)
	defer cancel()
	var out any
	var err error
	id := a.id
	switch c.target + " " + c.verb {
	case "capture list":
		out, err = cl.Captures(ctx)
	case "changefeed create":
		out, err = cl.Create(ctx, adminapi.CreateRequest{ChangefeedID: id, StartTs: a.startTs})
	case "changefeed list":
		out, err = cl.List(ctx)
	case "changefeed query":
		out, err = cl.Get(ctx, id)
	case "changefeed pause":
		err = cl.Pause(ctx, id)
	case "changefeed resume":
		err = cl.Resume(ctx, id, a.overwrite)
	case "changefeed remove":
		err = cl.Remove(ctx, id)
	case "changefeed move-table":
		var n int
		n, err = cl.MoveTable(ctx, id, a.table, a.targetNode)
		out = map[string]int{"moved": n}
	case "changefeed split-table":
		var n int
		n, err = cl.SplitTable(ctx, id, a.table)
		out = map[string]int{"split": n}
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("no answer from %s within --timeout %s", a.srv, a.timeout)
		}
		fmt.Fprintf(stderr, "cdcspec %s: %v\n", c.name(), err)
		return exitViolation
	}
	if out == nil {
		out = map[string]string{"result": "ok"}
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	fmt.Fprintln(stdout, string(b))
	return exitOK
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// serverURL checks --server: http://host:port or host:port.
func serverURL(v string) error {
	u := v
	if !strings.Contains(u, "://") {
		u = "http://" + u
	}
	p, err := url.Parse(u)
	if err != nil || p.Scheme != "http" || p.Host == "" {
		return fmt.Errorf("--server %q is not http://host:port", v)
	}
	return hostPort("--server", p.Host)
}

// tsoFloor: no TiDB cluster has a TSO whose physical part is before 2015
// (TiDB's first release); a smaller value is a mistake, typically Unix
// milliseconds or seconds.
var tsoFloor = time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC)

// checkTSOFlag refuses a TSO flag whose physical part (ts >> 18) is before
// 2015 or after now + 1 day; 0 (now, or keep) passes. Unix milliseconds
// read as a TSO land in 1970 (1796282411917 is 1970-01-01 01:54:12), so
// resume --overwrite-checkpoint-ts would rewind the changefeed by decades:
// the hint says so and gives the TSO the user probably meant.
func checkTSOFlag(name string, tso uint64, now time.Time) error {
	if tso == 0 {
		return nil
	}
	lo, hi := uint64(tsoFloor.UnixMilli()), uint64(now.Add(24*time.Hour).UnixMilli())
	if phys := spec.PhysicalMs(tso); phys >= lo && phys <= hi {
		return nil
	}
	phys := time.UnixMilli(int64(min(spec.PhysicalMs(tso), uint64(1)<<45))).UTC().Format("2006-01-02 15:04:05.000")
	hint := fmt.Sprintf("a TSO is (Unix ms << %d) | logical, e.g. %d for now", spec.TSOLogicalBits, spec.TSO(uint64(now.UnixMilli())))
	switch {
	case tso >= lo && tso <= hi:
		hint = fmt.Sprintf("looks like Unix milliseconds; TSO = ms << %d, here %d", spec.TSOLogicalBits, spec.TSO(tso))
	case tso >= lo/1000 && tso <= hi/1000:
		hint = fmt.Sprintf("looks like Unix seconds; TSO = (s * 1000) << %d, here %d", spec.TSOLogicalBits, spec.TSO(tso*1000))
	}
	return fmt.Errorf("%s %d is not a TSO of this cluster: its physical part (ts >> %d) is %s UTC, before 2015 or after now + 1 day (%s)",
		name, tso, spec.TSOLogicalBits, phys, hint)
}
