package main

import (
	"encoding/json"
	"flag"
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
	register("faults", "list the fault vocabulary and which driver injects each fault", runFaults)
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
	{"sim", "cdcspec sim -faults (RunChaos)", sim.ChaosUnsupported},
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

func runFaults(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("faults", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "text", "output format: text or json")
	if code, ok := parseFlags(fs, args, false, stderr); !ok {
		return code
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "cdcspec faults: --format must be text or json, got %q\n", *format)
		return exitUsage
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
