package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"cdcspec/runtime/adminapi"
)

func init() {
	register("cli", "admin API client: cli changefeed create|list|get|pause|resume|remove|move-table|split-table, cli capture list", runCLI)
}

func cliUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: cdcspec cli changefeed create|list|get|pause|resume|remove|move-table|split-table --server http://host:port [flags]")
	fmt.Fprintln(w, "       cdcspec cli capture list --server http://host:port")
	fmt.Fprintln(w, "\nCalls a capture's /api/v2 admin API (any capture; it forwards to the owner). Prints JSON.")
	fmt.Fprintln(w, "Exit status: 0 success, 1 the server refused or failed, 2 usage error.")
}

func runCLI(args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 || (args[0] != "changefeed" && args[0] != "capture") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			cliUsage(stderr)
			return exitOK
		}
		cliUsage(stderr)
		return exitUsage
	}
	group, verb := args[0], args[1]
	fl := flag.NewFlagSet("cli "+group+" "+verb, flag.ContinueOnError)
	fl.SetOutput(stderr)
	srv := fl.String("server", "http://127.0.0.1:8300", "a capture's admin API address")
	id := fl.String("changefeed-id", "", "changefeed id (create, get, pause, resume, remove, move-table, split-table)")
	startTs := fl.Uint64("start-ts", 0, "create: start ts in ms (0: the upstream's resolved ts)")
	overwrite := fl.Uint64("overwrite-checkpoint-ts", 0, "resume: overwrite the checkpoint (0: keep)")
	table := fl.Int64("table-id", 0, "move-table, split-table: table id")
	target := fl.String("target-node-id", "", "move-table: destination capture id")
	timeout := fl.Duration("timeout", 15*time.Second, "request timeout")
	fl.Usage = func() { cliUsage(stderr); fmt.Fprintln(stderr); fl.PrintDefaults() }
	if err := fl.Parse(args[2:]); err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		return exitUsage
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "cdcspec cli: unexpected argument %q\n", fl.Arg(0))
		return exitUsage
	}
	needID := group == "changefeed" && verb != "list"
	if needID && *id == "" {
		fmt.Fprintf(stderr, "cdcspec cli: changefeed %s needs --changefeed-id\n", verb)
		return exitUsage
	}
	c := adminapi.NewClient(*srv)
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	var out any
	var err error
	switch group + " " + verb {
	case "capture list":
		out, err = c.Captures(ctx)
	case "changefeed create":
		out, err = c.Create(ctx, adminapi.CreateRequest{ChangefeedID: *id, StartTs: *startTs})
	case "changefeed list":
		out, err = c.List(ctx)
	case "changefeed get":
		out, err = c.Get(ctx, *id)
	case "changefeed pause":
		err = c.Pause(ctx, *id)
	case "changefeed resume":
		err = c.Resume(ctx, *id, *overwrite)
	case "changefeed remove":
		err = c.Remove(ctx, *id)
	case "changefeed move-table":
		if *table <= 0 || *target == "" {
			fmt.Fprintln(stderr, "cdcspec cli: move-table needs --table-id and --target-node-id")
			return exitUsage
		}
		var n int
		n, err = c.MoveTable(ctx, *id, *table, *target)
		out = map[string]int{"moved": n}
	case "changefeed split-table":
		if *table <= 0 {
			fmt.Fprintln(stderr, "cdcspec cli: split-table needs --table-id")
			return exitUsage
		}
		var n int
		n, err = c.SplitTable(ctx, *id, *table)
		out = map[string]int{"split": n}
	default:
		fmt.Fprintf(stderr, "cdcspec cli: unknown command %q\n", group+" "+verb)
		cliUsage(stderr)
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "cdcspec cli: %s %s: %v\n", group, verb, err)
		return exitViolation
	}
	if out == nil {
		out = map[string]string{"result": "ok"}
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	fmt.Fprintln(stdout, string(b))
	return exitOK
}
