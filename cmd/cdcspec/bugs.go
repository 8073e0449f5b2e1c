package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"cdcspec/model"
	"cdcspec/spec"
)

func init() {
	register("bugs", bugsHelp.summary, runBugs)
}

type bugJSON struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Issue    string `json:"issue"`
	Seed     string `json:"seed,omitempty"`
	Property string `json:"property"`
	// ModelProperty: the property the model reports instead, when it differs.
	ModelProperty string `json:"model_property,omitempty"`
	Delivery      string `json:"delivery"` // the weakest delivery assumption under which it is found (SPEC.md section 8)
	Config        string `json:"config,omitempty"`
	ModelGap      string `json:"model_gap,omitempty"`
	Command       string `json:"command"`
	Where         string `json:"where"`
	Story         string `json:"story"`
}

// bugsHelp is `cdcspec bugs -h`.
var bugsHelp = help{
	summary: "list the bug catalogue and the model configuration that exposes each bug",
	usage:   "[--format text|json]",
	examples: []string{
		"cdcspec bugs",
		"cdcspec bugs --format json",
	},
	exits: []string{"0  listed", "2  usage error"},
}

func runBugs(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("bugs", bugsHelp, stdout, stderr)
	format := fs.String("format", "text", "output `format`: text or json")
	if code, ok := fs.parse(args, false); !ok {
		return code
	}
	if err := oneOf("--format", *format, "text", "json"); err != nil {
		return fs.usageError("%v", err)
	}
	var out []bugJSON
	for _, b := range spec.Bugs() {
		cfg := model.BugConfig(b.Name)
		cmd := fmt.Sprintf("cdcspec check --config %s --bug %s", cfg, b.Name)
		if cfg == "" {
			cmd = fmt.Sprintf("cdcspec sim --seeds 200 --bug %s", b.Name)
		}
		out = append(out, bugJSON{
			Name: b.Name, Kind: b.Kind.String(), Issue: b.Issue, Seed: b.Seed, Property: string(b.Property),
			ModelProperty: string(b.ModelProperty),
			Delivery:      string(b.Delivery), Config: cfg, ModelGap: b.ModelGap, Command: cmd,
			Where: b.Where, Story: b.Story,
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
	fmt.Fprintln(tw, "BUG\tKIND\tISSUE\tSEED\tPROPERTY\tDELIVERY\tMODEL CONFIG")
	for _, b := range out {
		cfg := b.Config
		if cfg == "" {
			cfg = "not expressible yet: " + b.ModelGap
		}
		prop := b.Property
		if b.ModelProperty != "" {
			prop += " (model: " + b.ModelProperty + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", b.Name, b.Kind, b.Issue, dash(b.Seed), prop, b.Delivery, cfg)
	}
	tw.Flush()
	fmt.Fprintln(stdout)
	fmt.Fprintln(stdout, "Reproduce one: cdcspec check --config CONFIG --bug BUG (the model), cdcspec sim --bug BUG (the implementation)")
	return exitOK
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
