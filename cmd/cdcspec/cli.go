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

func runCLI(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && isHelp(args[0]) {
		cliUsage(stdout)
		return exitOK
	}
	if len(args) == 0 {
		fmt.Fprintln(stderr, "cdcspec cli: missing target (known: capture, changefeed)")
		cliUsage(stderr)
		return exitUsage
	}
	target := args[0]
	if !contains(cliTargets(), target) {
		fmt.Fprintf(stderr, "cdcspec cli: unknown target %q (known: capture, changefeed)\n", target)
		return exitUsage
	}
	if len(args) < 2 || strings.HasPrefix(args[1], "-") || args[1] == "help" {
		if len(args) >= 2 && isHelp(args[1]) {
			cliUsage(stdout)
			return exitOK
		}
		fmt.Fprintf(stderr, "cdcspec cli %s: missing command (known: %s)\n", target, verbsOf(target))
		return exitUsage
	}
	cmd, ok := lookupCLI(target, args[1])
	if !ok {
		fmt.Fprintf(stderr, "cdcspec cli %s: unknown command %q (known: %s)\n", target, args[1], verbsOf(target))
		return exitUsage
	}
	name := "cli " + cmd.target + " " + cmd.verb
	fl := flag.NewFlagSet(name, flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() {} // -h prints cmd.usage on stdout below; a bad flag names itself
	srv := fl.String("server", "http://127.0.0.1:8300", "a capture's admin API address (cdcspec run prints them)")
	timeout := fl.Duration("timeout", 15*time.Second, "request timeout, 1ms..10m")
	var id string
	if cmd.needID {
		fl.StringVar(&id, "changefeed-id", "", "Replication task (changefeed) ID (or the first argument)")
		fl.StringVar(&id, "c", "", "shorthand for --changefeed-id")
	}
	var startTs, overwrite uint64
	var table int64
	var targetNode string
	for _, f := range cmd.flags {
		switch f {
		case "start-ts":
			fl.Uint64Var(&startTs, f, 0, "Start ts of changefeed, a TSO (0: now; above the current TSO is refused)")
		case "overwrite-checkpoint-ts":
			fl.Uint64Var(&overwrite, f, 0, "Overwrite the changefeed's checkpoint ts with this TSO (0: keep)")
		case "table-id":
			fl.Int64Var(&table, f, 0, "the id of the table (> 0)")
		case "target-node-id":
			fl.StringVar(&targetNode, f, "", "the capture the table moves to (cdcspec cli capture list)")
		}
	}
	rest := args[2:]
	if msg := foreignFlag(fl, rest); msg != "" {
		fmt.Fprintf(stderr, "cdcspec %s: %s ('cdcspec %s -h' lists its flags)\n", name, msg, name)
		return exitUsage
	}
	var positional []string
	// Flags may come before or after the positional ID.
	for {
		code, ok := parseFlags(fl, rest, true, stderr)
		if !ok {
			if code == exitOK {
				cmd.usage(stdout, fl)
			} else {
				fmt.Fprintf(stderr, "'cdcspec %s -h' lists its flags\n", name)
			}
			return code
		}
		if fl.NArg() == 0 {
			break
		}
		positional = append(positional, fl.Arg(0))
		rest = fl.Args()[1:]
	}
	if !cmd.needID && len(positional) > 0 {
		fmt.Fprintf(stderr, "cdcspec %s: unexpected argument %q\n", name, positional[0])
		return exitUsage
	}
	if len(positional) > 1 {
		fmt.Fprintf(stderr, "cdcspec %s: one changefeed ID expected, got %q\n", name, positional)
		return exitUsage
	}
	if len(positional) == 1 {
		if id != "" && id != positional[0] {
			fmt.Fprintf(stderr, "cdcspec %s: the argument %q and --changefeed-id %q name different changefeeds\n", name, positional[0], id)
			return exitUsage
		}
		id = positional[0]
	}
	now := time.Now()
	errs := []error{durationIn("--timeout", *timeout, time.Millisecond, maxCLITimeout), serverURL(*srv),
		checkTSOFlag("--start-ts", startTs, now), checkTSOFlag("--overwrite-checkpoint-ts", overwrite, now)}
	if cmd.needID && id == "" {
		errs = append(errs, fmt.Errorf("changefeed %s needs a changefeed ID: cdcspec cli changefeed %s ID (or --changefeed-id ID)", cmd.verb, cmd.verb))
	}
	switch cmd.verb {
	case "move-table":
		if table <= 0 || targetNode == "" {
			errs = append(errs, fmt.Errorf("move-table needs --table-id (> 0, got %d) and --target-node-id", table))
		}
	case "split-table":
		if table <= 0 {
			errs = append(errs, fmt.Errorf("split-table needs --table-id (> 0, got %d)", table))
		}
	}
	if err := firstErr(errs...); err != nil {
		fmt.Fprintf(stderr, "cdcspec %s: %v\n", name, err)
		return exitUsage
	}
	c := adminapi.NewClient(*srv)
	c.HTTP.Timeout = *timeout
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	var out any
	var err error
	switch cmd.target + " " + cmd.verb {
	case "capture list":
		out, err = c.Captures(ctx)
	case "changefeed create":
		out, err = c.Create(ctx, adminapi.CreateRequest{ChangefeedID: id, StartTs: startTs})
	case "changefeed list":
		out, err = c.List(ctx)
	case "changefeed query":
		out, err = c.Get(ctx, id)
	case "changefeed pause":
		err = c.Pause(ctx, id)
	case "changefeed resume":
		err = c.Resume(ctx, id, overwrite)
	case "changefeed remove":
		err = c.Remove(ctx, id)
	case "changefeed move-table":
		var n int
		n, err = c.MoveTable(ctx, id, table, targetNode)
		out = map[string]int{"moved": n}
	case "changefeed split-table":
		var n int
		n, err = c.SplitTable(ctx, id, table)
		out = map[string]int{"split": n}
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("no answer from %s within --timeout %s", *srv, *timeout)
		}
		fmt.Fprintf(stderr, "cdcspec %s: %v\n", name, err)
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
