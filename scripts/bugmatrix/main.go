// Command bugmatrix measures, for every catalogued bug, which checkers find
// it: the model checker (`cdcspec check --bug`), the proptest planted-bug
// gate, and the trace checker over the implementation's logs (the
// traces/xcheck cross-check). It prints a Markdown table; run it through
// `make bugs`. Each measurement runs the real checker; nothing is cached.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"cdcspec/spec"
)

type modelResult struct {
	Result    string  `json:"result"`
	Seconds   float64 `json:"seconds"`
	Distinct  int64   `json:"distinct_states"`
	Violation *struct {
		Property string            `json:"property"`
		Steps    []json.RawMessage `json:"steps"`
	} `json:"violation"`
}

type row struct {
	model, proptest, trace string
}

func main() {
	bin := flag.String("bin", "bin/cdcspec", "cdcspec binary")
	skipTrace := flag.Bool("skip-trace", false, "skip the trace cross-check (slowest column)")
	flag.Parse()
	rows := map[string]*row{}
	for _, b := range spec.Bugs() {
		rows[b.Name] = &row{model: "-", proptest: "-", trace: "-"}
		if b.ImplGap != "" {
			rows[b.Name].proptest = "not expressible in impl/ yet: " + b.ImplGap
			rows[b.Name].trace = rows[b.Name].proptest
		}
	}

	// Model checker.
	for _, b := range spec.Bugs() {
		fmt.Fprintf(os.Stderr, "model: %s\n", b.Name)
		start := time.Now()
		out, _ := exec.Command(*bin, "check", "--bug", b.Name, "--format", "json").Output()
		var r modelResult
		if err := json.Unmarshal(out, &r); err != nil {
			rows[b.Name].model = fmt.Sprintf("error: %v", err)
			continue
		}
		switch {
		case r.Result == "violation" && r.Violation != nil && r.Violation.Property == string(b.Property):
			rows[b.Name].model = fmt.Sprintf("found, %d steps, %.1f s", len(r.Violation.Steps), time.Since(start).Seconds())
		case r.Result == "violation" && r.Violation != nil:
			rows[b.Name].model = fmt.Sprintf("other property (%s), %d steps", r.Violation.Property, len(r.Violation.Steps))
		default:
			rows[b.Name].model = fmt.Sprintf("NOT found (%s, %d states)", r.Result, r.Distinct)
		}
	}

	// proptest gate: one run, parse "<bug>: found <property> after <n> check(s), shrunk to <k> actions, <dur>".
	fmt.Fprintln(os.Stderr, "proptest: planted-bug gate")
	gate := regexp.MustCompile(`([a-z0-9-]+): found ([a-z-]+) after (\d+) check\(s\), shrunk to (\d+) actions, ([0-9.]+[a-zµ]*s)`)
	out, _ := exec.Command("go", "test", "-count=1", "./proptest", "-run", "TestPlantedBugGate", "-v", "-long").CombinedOutput()
	for _, line := range lines(out) {
		if m := gate.FindStringSubmatch(line); m != nil && rows[m[1]] != nil {
			rows[m[1]].proptest = fmt.Sprintf("found after %s checks, shrunk to %s actions, %s", m[3], m[4], m[5])
		}
	}

	// trace checker over the implementation's TiCDC-format logs.
	if !*skipTrace {
		fmt.Fprintln(os.Stderr, "trace: impl logs cross-check")
		xc := regexp.MustCompile(`bug ([a-z0-9-]+): (\d+)/(\d+) violating runs found in the DEBUG log`)
		cmd := exec.Command("go", "test", "-count=1", "./traces/xcheck/", "-v")
		cmd.Env = append(os.Environ(), "CDCSPEC_XCHECK=1")
		out, _ := cmd.CombinedOutput()
		for _, line := range lines(out) {
			if m := xc.FindStringSubmatch(line); m != nil && rows[m[1]] != nil {
				rows[m[1]].trace = fmt.Sprintf("flagged in %s/%s violating runs", m[2], m[3])
			}
		}
		if bytes.Contains(out, []byte("--- PASS: TestImplLogsXCheck")) {
			rows["regressed-checkpoint-drops-error"].trace = "flagged (seed-5709 scenario log)"
		}
	}

	fmt.Println("| bug | issue | property | model checker | proptest gate | trace checker (impl logs) | linearizability |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, b := range spec.Bugs() {
		r := rows[b.Name]
		fmt.Printf("| `%s` | %s | %s | %s | %s | %s | not client-visible |\n", b.Name, b.Issue, b.Property, r.model, r.proptest, r.trace)
	}
	fmt.Println()
	fmt.Println("linearizability: none of these bugs changes what an admin-API client observes (state transitions,")
	fmt.Println("checkpoint reads); the porcupine models catch their own planted bugs (go test ./linearizability -v).")
}

func lines(b []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		out = append(out, strings.TrimSpace(sc.Text()))
	}
	return out
}
