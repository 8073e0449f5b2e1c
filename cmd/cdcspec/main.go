// Command cdcspec checks TiCDC's control plane: `cdcspec check` explores the
// model exhaustively, `cdcspec bugs` lists the bug catalogue, `cdcspec trace`
// checks production logs. Each subcommand lives in its own file and registers
// itself in init.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Exit codes shared by every subcommand.
const (
	exitOK         = 0
	exitViolation  = 1
	exitUsage      = 2
	exitIncomplete = 3
)

type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]command{}

func register(name, summary string, run func(args []string, stdout, stderr io.Writer) int) {
	commands[name] = command{summary: summary, run: run}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: cdcspec <command> [flags]")
	fmt.Fprintln(w)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'cdcspec <command> -h' for a command's flags, examples and exit codes.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Exit status: 0 ok, 1 a violation (or what --fail-on names), 2 usage error, 3 incomplete (nothing checked, a bound or budget cut the run).")
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help" {
		if len(args) > 1 && args[0] == "help" {
			if _, ok := commands[args[1]]; ok {
				return run([]string{args[1], "-h"}, stdout, stderr)
			}
		}
		usage(stdout)
		return exitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "cdcspec: unknown command %q\n\n", args[0])
		usage(stderr)
		return exitUsage
	}
	return c.run(args[1:], stdout, stderr)
}

// parseFlags parses a subcommand's flags. When ok is false the subcommand
// returns code at once: exitOK for -h, exitUsage for a bad flag or, unless
// positional is set, a stray argument (named on stderr).
func parseFlags(fs *flag.FlagSet, args []string, positional bool, stderr io.Writer) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	if !positional && fs.NArg() > 0 {
		fmt.Fprintf(stderr, "cdcspec %s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return exitUsage, false
	}
	return exitOK, true
}

// help is a subcommand's -h text: a one-line description, the usage line,
// examples and the exit codes; the flags are printed between them.
type help struct {
	summary  string   // one line, as `cdcspec -h` lists it
	usage    string   // after "cdcspec NAME "
	examples []string // whole command lines
	exits    []string // "N meaning", in order
	// hidden flags are kept only to explain a rename; -h does not list them.
	hidden map[string]bool
}

// cmdFlags is a subcommand's flag set with its help: -h prints the help on
// stdout and exits 0; a bad flag prints one line naming it on stderr and
// exits 2.
type cmdFlags struct {
	*flag.FlagSet
	help           help
	stdout, stderr io.Writer
}

func newFlags(name string, h help, stdout, stderr io.Writer) *cmdFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // parse prints the help (-h) or a hint (an error)
	return &cmdFlags{FlagSet: fs, help: h, stdout: stdout, stderr: stderr}
}

// hide marks a flag that only explains a rename: it is parsed, never listed.
func (c *cmdFlags) hide(name string) {
	if c.help.hidden == nil {
		c.help.hidden = map[string]bool{}
	}
	c.help.hidden[name] = true
}

// parse is parseFlags with the help: when ok is false the subcommand returns
// code at once.
func (c *cmdFlags) parse(args []string, positional bool) (code int, ok bool) {
	if err := c.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.printHelp(c.stdout)
			return exitOK, false
		}
		fmt.Fprintf(c.stderr, "Run 'cdcspec %s -h' for its flags.\n", c.Name())
		return exitUsage, false
	}
	if !positional && c.NArg() > 0 {
		fmt.Fprintf(c.stderr, "cdcspec %s: unexpected argument %q\n", c.Name(), c.Arg(0))
		return exitUsage, false
	}
	return exitOK, true
}

// usageError prints "cdcspec NAME: msg" and the -h hint on stderr and
// returns exitUsage.
func (c *cmdFlags) usageError(format string, a ...any) int {
	fmt.Fprintf(c.stderr, "cdcspec %s: %s\n", c.Name(), fmt.Sprintf(format, a...))
	return exitUsage
}

func (c *cmdFlags) printHelp(w io.Writer) {
	h := c.help
	fmt.Fprintf(w, "cdcspec %s: %s\n\n", c.Name(), h.summary)
	fmt.Fprintf(w, "Usage:\n  cdcspec %s %s\n", c.Name(), h.usage)
	if len(h.examples) > 0 {
		fmt.Fprintln(w, "\nExamples:")
		for _, e := range h.examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
	fmt.Fprintln(w, "\nFlags:")
	c.VisitAll(func(f *flag.Flag) {
		if h.hidden[f.Name] {
			return
		}
		name, usage := flagPlaceholder(f)
		line := "  --" + f.Name
		if name != "" {
			line += " " + name
		}
		fmt.Fprintf(w, "%s\n      %s", line, usage)
		if d := f.DefValue; d != "" && d != "0" && d != "false" && d != "[]" && d != "0s" {
			fmt.Fprintf(w, " (default %s)", d)
		}
		fmt.Fprintln(w)
	})
	fmt.Fprintln(w, "\nExit status:")
	for _, e := range h.exits {
		fmt.Fprintf(w, "  %s\n", e)
	}
}

// flagPlaceholder is the flag's value placeholder and usage: a back-quoted
// word of the usage (flag.UnquoteUsage), upper-cased, or one by type.
func flagPlaceholder(f *flag.Flag) (string, string) {
	name, usage := flag.UnquoteUsage(f)
	if strings.Contains(f.Usage, "`") {
		return strings.ToUpper(name), usage
	}
	switch name {
	case "":
		return "", usage
	case "int", "uint", "int64", "uint64":
		return "N", usage
	case "duration":
		return "DURATION", usage
	case "float":
		return "X", usage
	}
	return "VALUE", usage
}
