package report

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// Counterexample is the part of `cdcspec check --format json` (and of its
// artifact counterexample.json) the chart needs.
type Counterexample struct {
	Bugs      []string `json:"bugs"`
	Violation *struct {
		Property string `json:"property"`
		Message  string `json:"message"`
		Steps    []struct {
			Actor  string   `json:"actor"`
			Text   string   `json:"text"`
			Events []string `json:"events"`
			Fair   bool     `json:"after_heal"`
		} `json:"steps"`
	} `json:"violation"`
}

// ParseCounterexample reads a check result; it is an error if it holds no
// violation.
func ParseCounterexample(b []byte) (*Counterexample, error) {
	var c Counterexample
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	if c.Violation == nil || len(c.Violation.Steps) == 0 {
		return nil, fmt.Errorf("the check result holds no counterexample")
	}
	return &c, nil
}

// delivery matches a step that delivers a message: "receives
// AddMaintainerRequest coordinator->n0 epoch=2".
var delivery = regexp.MustCompile(`receives (\S+) (\S+)->(\S+)`)

// process is the lifeline of an actor: the coordinator, a node (its
// maintainer manager, maintainers, dispatcher manager and dispatchers), or
// the environment (upstream, cluster membership).
func process(actor string) string {
	if actor == "coordinator" {
		return "coordinator"
	}
	if i := strings.LastIndexByte(actor, '@'); i >= 0 {
		return actor[i+1:]
	}
	if strings.HasPrefix(actor, "node ") {
		return strings.TrimPrefix(actor, "node ")
	}
	return actor
}

// CounterexampleHTML writes a model counterexample as a message-sequence
// chart: one lifeline per process (the coordinator, each node, the
// environment), a message arrow for every delivery from its sender to its
// receiver, a box on the actor's lifeline for every other step, the spec
// events of each step beside it, and the violated property at the end.
func CounterexampleHTML(w io.Writer, c *Counterexample, title string) error {
	v := c.Violation
	writeHead(w, title)
	fmt.Fprintf(w, "<h1>%s</h1>\n", esc(title))
	bugs := "none"
	if len(c.Bugs) > 0 {
		bugs = strings.Join(c.Bugs, ", ")
	}
	fmt.Fprintf(w, `<div class="sub">counterexample of <b>%s</b> in %d steps; bugs switched on: %s</div>`+"\n", esc(v.Property), len(v.Steps), esc(bugs))
	fmt.Fprintf(w, `<div class="finding violation"><b>%s</b> <span class="violation">VIOLATION</span><div>%s</div></div>`+"\n", esc(v.Property), esc(v.Message))

	// lifelines: coordinator first, then nodes in order of appearance,
	// then the environment
	var order []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			order = append(order, p)
		}
	}
	add("coordinator")
	for _, st := range v.Steps {
		if m := delivery.FindStringSubmatch(st.Text); m != nil {
			add(m[2])
			add(m[3])
		}
		add(process(st.Actor))
	}
	var procs, env []string
	for _, p := range order {
		if p == "upstream" || p == "cluster" {
			env = append(env, p)
		} else {
			procs = append(procs, p)
		}
	}
	procs = append(procs, env...)
	const (
		colW   = 170
		left   = 40
		top    = 40
		stepH  = 34
		eventW = 560
	)
	xOf := map[string]float64{}
	for i, p := range procs {
		xOf[p] = float64(left + colW/2 + i*colW)
	}
	s := &svg{w: left + colW*len(procs) + eventW, h: top + stepH*len(v.Steps) + 40}
	s.b.WriteString(`<defs><marker id="arr" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0 0 L10 5 L0 10 z" fill="#4a74b5"/></marker></defs>`)
	for _, p := range procs {
		x := xOf[p]
		s.rect(x-60, 6, 120, 22, "#e8edf5", "", `rx="4"`)
		s.text(x, 21, "middle", "lbl", p)
		s.line(x, 28, x, float64(s.h-10), "#b8c2cf", 1, `stroke-dasharray="4,3"`)
	}
	evX := float64(left + colW*len(procs) + 10)
	for i, st := range v.Steps {
		y := float64(top + i*stepH + stepH/2)
		last := i == len(v.Steps)-1
		if st.Fair && (i == 0 || !v.Steps[i-1].Fair) {
			s.line(10, y-stepH/2, float64(s.w-10), y-stepH/2, "#e08a00", 1, `stroke-dasharray="6,3"`)
			s.text(12, y-stepH/2-3, "start", "", "faults healed: fair schedule")
		}
		s.text(12, y+4, "start", "", fmt.Sprint(i+1))
		if m := delivery.FindStringSubmatch(st.Text); m != nil {
			x1, x2 := xOf[m[2]], xOf[m[3]]
			if x1 == x2 {
				fmt.Fprintf(&s.b, `<path d="M%.1f %.1f c40 -12 40 12 2 8" fill="none" stroke="#4a74b5" stroke-width="1.5" marker-end="url(#arr)"><title>%s</title></path>`, x1, y-4, esc(st.Actor+": "+st.Text))
			} else {
				fmt.Fprintf(&s.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#4a74b5" stroke-width="1.5" marker-end="url(#arr)"><title>%s</title></line>`, x1, y, x2, y, esc(st.Actor+": "+st.Text))
			}
			mid := (x1 + x2) / 2
			if x1 == x2 {
				mid = x1 + 50
			}
			label := m[1]
			if rest := strings.TrimSpace(st.Text[strings.Index(st.Text, m[2]+"->"+m[3])+len(m[2])+2+len(m[3]):]); rest != "" {
				label += " " + rest
			}
			if len(label) > 48 {
				label = label[:47] + "…"
			}
			s.text(mid, y-4, "middle", "", label)
		} else {
			x := xOf[process(st.Actor)]
			col := "#ffffff"
			if strings.Contains(st.Text, "fail") || strings.Contains(st.Text, "suicide") || strings.Contains(st.Text, "leave") {
				col = "#fde2e1"
			}
			label := st.Text
			if len(label) > 26 {
				label = label[:25] + "…"
			}
			s.rect(x-80, y-11, 160, 20, col, st.Actor+": "+st.Text, `stroke="#7b8794" rx="3"`)
			s.text(x, y+3, "middle", "", label)
		}
		evText := strings.Join(st.Events, "; ")
		if len(evText) > 84 {
			evText = evText[:83] + "…"
		}
		cls := ""
		if last {
			cls = "violation"
			evText = "⚠ " + v.Property + ": " + evText
		}
		fmt.Fprintf(&s.b, `<text x="%.1f" y="%.1f" class="%s" fill="%s">%s<title>%s</title></text>`, evX, y+4, cls, map[bool]string{true: colViolation, false: "#5b6675"}[last], esc(evText), esc(strings.Join(st.Events, "\n")))
	}
	s.write(w, "msc")
	io.WriteString(w, "<h2>Steps</h2>\n<table><tr><th>#</th><th>actor</th><th>step</th><th>spec events</th></tr>\n")
	for i, st := range v.Steps {
		fmt.Fprintf(w, "<tr><td>%d</td><td>%s</td><td>%s</td><td class=\"ev\">%s</td></tr>\n", i+1, esc(st.Actor), esc(st.Text), esc(strings.Join(st.Events, "\n")))
	}
	_, err := io.WriteString(w, "</table></body></html>\n")
	return err
}
