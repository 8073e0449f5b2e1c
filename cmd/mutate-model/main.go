// Command mutate-model is `make mutate-all`: mechanical mutation testing of
// the model (issue 26 section 3; tools/mutate lists and applies the
// mutants). Subcommands:
//
//	mutate-model list [--pkg model]          the mutants, one a line
//	mutate-model show ID [--pkg model]       one mutant's site and change
//	mutate-model run [flags]                 the runner (run -h)
//	mutate-model check [flags]               the checker the runner builds (internal)
//
// The runner copies the module to a scratch directory, rewrites the
// package into a mutant schema (every mutant behind a switch), builds this
// command there once, checks the unmutated build (the baseline), then runs
// each mutant as a process of that build: the configurations in order,
// each within a state budget, stopping at the first violation. --copy runs
// the literal procedure instead: one mutation applied to the copy and one
// build per mutant.
package main

import (
	"fmt"
	"io"
	"os"
)

const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "list":
		return runList(args[1:], stdout, stderr)
	case "show":
		return runShow(args[1:], stdout, stderr)
	case "run":
		return runRun(args[1:], stdout, stderr)
	case "check":
		return runCheck(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return exitOK
	}
	fmt.Fprintf(stderr, "mutate-model: unknown subcommand %q\n", args[0])
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: mutate-model list|show|run|check [flags]
  list   the mutants of the package (--pkg, default model)
  show   one mutant: its site and the changed line
  run    mutation testing: build the mutants, check each, print the score (run -h)
  check  the checker the runner builds: check configurations, one JSON line each
`)
}
