package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"cdcspec/impl/sim"
	"cdcspec/model"
	"cdcspec/proptest"
	"cdcspec/runtime/cluster"
	"cdcspec/spec"
)

func init() {
	register("faults", faultsHelp.summary, runFaults)
}

// faultDriver is one driver of the vocabulary and its table of the faults
// it does not inject (each driver's tests keep the table complete).
type faultDriver struct {
	name        string
	where       string
	unsupported map[spec.Fault]string
}

var faultDrivers = []faultDriver{
	{"scenarios", "impl/sim scenario files (Sim.Inject)", sim.UnsupportedFaults},
	{"sim", "cdcspec sim --faults (RunChaos)", sim.ChaosUnsupported},
	{"proptest", "proptest steps (rapid actions)", proptest.UnsupportedFaults},
	{"run", "cdcspec run --faults", cluster.UnsupportedFaults},
	{"model", "model fault actions (cdcspec check)", model.UnsupportedFaults},
}

type faultJSON struct {
	Name string `json:"name"`
	Doc  string `json:"doc"`
	// Drivers maps each driver to "" (it injects the fault) or the reason
	// it does not.
	Drivers map[string]string `json:"drivers"`
}

// faultsHelp is `cdcspec faults -h`.
var faultsHelp = help{
	summary: "list the fault vocabulary and which driver injects each fault",
	usage:   "[--format text|json]",
	examples: []string{
		"cdcspec faults",
		"cdcspec faults --format json",
	},
	exits: []string{"0  listed", "2  usage error"},
}

func runFaults(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("faults", faultsHelp, stdout, stderr)
	format := fs.String("format", "text", "output `format`: text or json")
	if code, ok := fs.parse(args, false); !ok {
		return code
	}
	if err := oneOf("--format", *format, "text", "json"); err != nil {
		return fs.usageError("%v", err)
	}
	var out []faultJSON
	for _, f := range spec.Faults() {
		j := faultJSON{Name: string(f), Doc: f.Doc(), Drivers: map[string]string{}}
		for _, d := range faultDrivers {
			j.Drivers[d.name] = d.unsupported[f]
		}
		out = append(out, j)
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(stderr, "cdcspec faults: %v\n", err)
			return exitUsage
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "FAULT")
	for _, d := range faultDrivers {
		fmt.Fprintf(tw, "\t%s", d.name)
	}
	fmt.Fprintln(tw, "\tWHAT IT DOES")
	for _, j := range out {
		fmt.Fprint(tw, j.Name)
		for _, d := range faultDrivers {
			cell := "yes"
			if j.Drivers[d.name] != "" {
				cell = "-"
			}
			fmt.Fprintf(tw, "\t%s", cell)
		}
		fmt.Fprintf(tw, "\t%s\n", j.Doc)
	}
	_ = tw.Flush()
	fmt.Fprintln(stdout, "\nDrivers:")
	for _, d := range faultDrivers {
		fmt.Fprintf(stdout, "  %-10s %s\n", d.name, d.where)
	}
	fmt.Fprintln(stdout, "\nWhy not (\"-\" above):")
	for _, j := range out {
		for _, d := range faultDrivers {
			if why := j.Drivers[d.name]; why != "" {
				fmt.Fprintf(stdout, "  %s, %s: %s\n", j.Name, d.name, why)
			}
		}
	}
	return exitOK
}
