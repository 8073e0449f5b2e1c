package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"cdcspec/tools/mutate"
)

func findMutants(pkg string) ([]mutate.Mutant, string, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, "", err
	}
	dir := filepath.Join(root, pkg)
	ms, err := mutate.Find(dir, mutate.ModelOptions())
	return ms, dir, err
}

func runList(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	pkg := fs.String("pkg", "model", "package directory to mutate, relative to the module root")
	scope := fs.Bool("scope", false, "print what is not mutated and why (mutate.ModelScope), not the mutants")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if *scope {
		for _, x := range mutate.ModelScope {
			fmt.Fprintf(stdout, "%s\n", x.Reason)
			for _, l := range [][2]string{{"files", strings.Join(x.Files, ", ")}, {"functions", strings.Join(x.Funcs, ", ")},
				{"prefixes", strings.Join(x.Prefixes, ", ")}, {"State fields", strings.Join(x.Fields, ", ")},
				{"switch calls", strings.Join(x.OffSwitches, ", ")}, {"conditions", strings.Join(x.Conds, "; ")}} {
				if l[1] != "" {
					fmt.Fprintf(stdout, "  %s: %s\n", l[0], l[1])
				}
			}
		}
		return exitOK
	}
	ms, _, err := findMutants(*pkg)
	if err != nil {
		fmt.Fprintf(stderr, "mutate-model list: --pkg %s: %v\n", *pkg, err)
		return exitUsage
	}
	counts := map[mutate.Op]int{}
	for _, m := range ms {
		fmt.Fprintln(stdout, m)
		counts[m.Op]++
	}
	fmt.Fprintf(stdout, "%d mutants: %d negate, %d drop, %d cmp, %d skip\n", len(ms),
		counts[mutate.OpNegate], counts[mutate.OpDrop], counts[mutate.OpCmp], counts[mutate.OpSkip])
	return exitOK
}

func runShow(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("show", flag.ContinueOnError)
	fs.SetOutput(stderr)
	pkg := fs.String("pkg", "model", "package directory to mutate, relative to the module root")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "mutate-model show: want one mutant ID (mutate-model list shows them)")
		return exitUsage
	}
	ms, dir, err := findMutants(*pkg)
	if err != nil {
		fmt.Fprintf(stderr, "mutate-model show: --pkg %s: %v\n", *pkg, err)
		return exitUsage
	}
	for _, m := range ms {
		if m.ID != fs.Arg(0) {
			continue
		}
		fmt.Fprintf(stdout, "%s\n%s:%d in %s (%s)\n- %s\n+ %s\n", m.ID, filepath.Join(*pkg, m.File), m.Line, m.Func, m.Op,
			m.Source, mutatedLine(dir, m))
		return exitOK
	}
	fmt.Fprintf(stderr, "mutate-model show: no mutant %q in %s (mutate-model list shows them)\n", fs.Arg(0), *pkg)
	return exitUsage
}

// mutatedLine is the site's line with the mutant applied.
func mutatedLine(dir string, m mutate.Mutant) string {
	src, err := os.ReadFile(filepath.Join(dir, m.File))
	if err != nil {
		return err.Error()
	}
	out, err := mutate.Apply(src, m)
	if err != nil {
		return err.Error()
	}
	start := bytes.LastIndexByte(out[:m.Start], '\n') + 1
	end := bytes.IndexByte(out[m.Start+len(m.Repl):], '\n')
	if end < 0 {
		return strings.TrimSpace(string(out[start:]))
	}
	return strings.TrimSpace(string(out[start : m.Start+len(m.Repl)+end]))
}
