package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"cdcspec/model"
	"cdcspec/spec"
)

func init() {
	register("bugs", "list the bug catalogue and the model configuration that exposes each bug", runBugs)
}

type bugJSON struct {
	Name     string `json:"name"`
	Issue    string `json:"issue"`
	Seed     string `json:"seed,omitempty"`
	Property string `json:"property"`
	Config   string `json:"config"`
	Command  string `json:"command"`
	Where    string `json:"where"`
	Story    string `json:"story"`
	Delivery string `json:"delivery"` // the weakest delivery assumption under which it is found (SPEC.md section 8)
}

func runBugs(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bugs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "text", "output format: text or json")
	if code, ok := parseFlags(fs, args, false, stderr); !ok {
		return code
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "cdcspec bugs: --format must be text or json, got %q\n", *format)
		return exitUsage
	}
	var out []bugJSON
	for _, b := range spec.Bugs() {
		cfg := model.BugConfig(b.Name)
		out = append(out, bugJSON{
			Name: b.Name, Issue: b.Issue, Seed: b.Seed, Property: string(b.Property), Config: cfg,
			Command: fmt.Sprintf("cdcspec check --config %s --bug %s", cfg, b.Name),
			Where:   b.Where, Story: b.Story, Delivery: string(b.Delivery.OrDefault()),
		})
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(stderr, "cdcspec bugs: %v\n", err)
			return exitUsage
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BUG\tISSUE\tSEED\tPROPERTY\tCONFIG\tDELIVERY")
	for _, b := range out {
		seed := b.Seed
		if seed == "" {
			seed = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", b.Name, b.Issue, seed, b.Property, b.Config, b.Delivery)
	}
	tw.Flush()
	fmt.Fprintln(stdout)
	fmt.Fprintln(stdout, "Reproduce one: cdcspec check --config CONFIG --bug BUG")
	return exitOK
}
