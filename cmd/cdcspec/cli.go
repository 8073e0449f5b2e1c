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
	"cdcspec/runtime/server"
)

func init() {
	register("cli", "admin API client: cli changefeed create|list|get|pause|resume|remove|move-table|split-table, cli capture list", runCLI)
}

// cliVerbs are the commands of each cli target, with whether they name a
// changefeed.
var cliVerbs = map[string]map[string]bool{
	"changefeed": {"create": true, "list": false, "get": true, "pause": true, "resume": true, "remove": true, "move-table": true, "split-table": true},
	"capture":    {"list": false},
}

func verbsOf(target string) string {
	var vs []string
	for v := range cliVerbs[target] {
		vs = append(vs, v)
	}
	sort.Strings(vs)
	return strings.Join(vs, ", ")
}

func cliUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: cdcspec cli changefeed create|get|pause|resume|remove ID [--server http://host:port] [flags]")
	fmt.Fprintln(w, "       cdcspec cli changefeed move-table ID --table-id N --target-node-id CAPTURE")
	fmt.Fprintln(w, "       cdcspec cli changefeed split-table ID --table-id N")
	fmt.Fprintln(w, "       cdcspec cli changefeed list | cdcspec cli capture list")
	fmt.Fprintln(w, "\nCalls a capture's /api/v2 admin API (any capture; it forwards to the owner). Prints JSON.")
	fmt.Fprintln(w, "The changefeed ID is the first argument or --changefeed-id (-c), as in TiCDC's cdc cli.")
	fmt.Fprintln(w, "--start-ts and --overwrite-checkpoint-ts are TiDB TSOs, as in cdc cli (physical ms << 18).")
	fmt.Fprintln(w, "Exit status: 0 success, 1 the server refused or failed, 2 usage error.")
}

// maxCLITimeout bounds --timeout.
const maxCLITimeout = 10 * time.Minute

func runCLI(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		cliUsage(stderr)
		return exitOK
	}
	if len(args) == 0 {
		fmt.Fprintln(stderr, "cdcspec cli: missing target (known: capture, changefeed)")
		cliUsage(stderr)
		return exitUsage
	}
	group := args[0]
	verbs, ok := cliVerbs[group]
	if !ok {
		fmt.Fprintf(stderr, "cdcspec cli: unknown target %q (known: capture, changefeed)\n", group)
		return exitUsage
	}
	if len(args) < 2 || strings.HasPrefix(args[1], "-") {
		if len(args) >= 2 && (args[1] == "-h" || args[1] == "--help") {
			cliUsage(stderr)
			return exitOK
		}
		fmt.Fprintf(stderr, "cdcspec cli %s: missing command (known: %s)\n", group, verbsOf(group))
		return exitUsage
	}
	verb := args[1]
	needID, ok := verbs[verb]
	if !ok {
		fmt.Fprintf(stderr, "cdcspec cli %s: unknown command %q (known: %s)\n", group, verb, verbsOf(group))
		return exitUsage
	}
	name := "cli " + group + " " + verb
	fl := flag.NewFlagSet(name, flag.ContinueOnError)
	fl.SetOutput(stderr)
	srv := fl.String("server", "http://127.0.0.1:8300", "a capture's admin API address (cdcspec run prints them)")
	var id string
	if needID {
		fl.StringVar(&id, "changefeed-id", "", "changefeed id (or the first argument)")
		fl.StringVar(&id, "c", "", "shorthand for --changefeed-id")
	}
	startTs := fl.Uint64("start-ts", 0, "create: start TSO (0: now; above the current TSO is refused)")
	overwrite := fl.Uint64("overwrite-checkpoint-ts", 0, "resume: overwrite the checkpoint with this TSO (0: keep)")
	table := fl.Int64("table-id", 0, "move-table, split-table: table id")
	target := fl.String("target-node-id", "", "move-table: destination capture id (cdcspec cli capture list)")
	timeout := fl.Duration("timeout", 15*time.Second, "request timeout, 1ms..10m")
	fl.Usage = func() { cliUsage(stderr); fmt.Fprintln(stderr); fl.PrintDefaults() }
	rest := args[2:]
	var positional []string
	// Flags may come before or after the positional ID.
	for {
		if code, ok := parseFlags(fl, rest, true, stderr); !ok {
			return code
		}
		if fl.NArg() == 0 {
			break
		}
		positional = append(positional, fl.Arg(0))
		rest = fl.Args()[1:]
	}
	if !needID && len(positional) > 0 {
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
	errs := []error{durationIn("--timeout", *timeout, time.Millisecond, maxCLITimeout), serverURL(*srv)}
	if needID && id == "" {
		errs = append(errs, fmt.Errorf("changefeed %s needs a changefeed ID: cdcspec cli changefeed %s ID (or --changefeed-id ID)", verb, verb))
	}
	set := map[string]bool{}
	fl.Visit(func(f *flag.Flag) { set[f.Name] = true })
	// A flag that the command ignores is a mistake, not a no-op.
	for f, verbs := range map[string][]string{"start-ts": {"create"}, "overwrite-checkpoint-ts": {"resume"},
		"table-id": {"move-table", "split-table"}, "target-node-id": {"move-table"}} {
		if set[f] && (group != "changefeed" || !contains(verbs, verb)) {
			errs = append(errs, fmt.Errorf("--%s applies to changefeed %s only", f, strings.Join(verbs, ", ")))
		}
	}
	startMs, err := tsoFlag("--start-ts", *startTs)
	errs = append(errs, err)
	overwriteMs, err := tsoFlag("--overwrite-checkpoint-ts", *overwrite)
	errs = append(errs, err)
	switch verb {
	case "move-table":
		if *table <= 0 || *target == "" {
			errs = append(errs, fmt.Errorf("move-table needs --table-id (> 0, got %d) and --target-node-id", *table))
		}
	case "split-table":
		if *table <= 0 {
			errs = append(errs, fmt.Errorf("split-table needs --table-id (> 0, got %d)", *table))
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
	switch group + " " + verb {
	case "capture list":
		out, err = c.Captures(ctx)
	case "changefeed create":
		out, err = c.Create(ctx, adminapi.CreateRequest{ChangefeedID: id, StartTs: startMs})
	case "changefeed list":
		out, err = c.List(ctx)
	case "changefeed get":
		out, err = c.Get(ctx, id)
	case "changefeed pause":
		err = c.Pause(ctx, id)
	case "changefeed resume":
		err = c.Resume(ctx, id, overwriteMs)
	case "changefeed remove":
		err = c.Remove(ctx, id)
	case "changefeed move-table":
		var n int
		n, err = c.MoveTable(ctx, id, *table, *target)
		out = map[string]int{"moved": n}
	case "changefeed split-table":
		var n int
		n, err = c.SplitTable(ctx, id, *table)
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

// tsoFlag turns a TiDB TSO (cdc cli's unit) into the runtime's ms ts: the
// physical part, tso >> 18. 0 stays 0 (now, or keep). A TSO whose physical
// part is 0 ms is refused: the runtime would read it as 0.
func tsoFlag(flag string, tso uint64) (uint64, error) {
	if tso == 0 {
		return 0, nil
	}
	ms := tso >> 18
	if ms == 0 {
		return 0, fmt.Errorf("%s %d is not a TSO: its physical part (ts >> 18) is 0 ms; a TSO is (unix ms << 18) | logical, e.g. %d for now",
			flag, tso, server.TSO(uint64(time.Now().UnixMilli())))
	}
	return ms, nil
}
