package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/traces"
)

// svgs returns the SVG elements of a page, each checked to be well-formed
// XML (an SVG a browser would render).
func svgs(t *testing.T, page string) []string {
	t.Helper()
	re := regexp.MustCompile(`(?s)<svg .*?</svg>`)
	out := re.FindAllString(page, -1)
	for _, s := range out {
		d := xml.NewDecoder(strings.NewReader(s))
		for {
			_, err := d.Token()
			if err == io.EOF {
				break
			}
			require.NoError(t, err, "SVG is not well-formed")
		}
	}
	return out
}

func runFixtures(t *testing.T, paths ...string) *traces.Report {
	t.Helper()
	ins, err := traces.ExpandInputs(paths, nil)
	require.NoError(t, err)
	rep, err := traces.Run(ins, traces.Options{Timeline: true})
	require.NoError(t, err)
	return rep
}

// TestTraceHTMLSeeds: the seed logs' report has a timeline per changefeed
// with a lane per capture; #3952's removal-only maintainer is drawn on the
// lane of the maintainer whose node is not logged, the coordinator's
// operators as bars, the backoff, the error dots, the checkpoint line, and
// the finding marked with a link to its evidence.
func TestTraceHTMLSeeds(t *testing.T) {
	rep := runFixtures(t, "../traces/testdata/seed000_5709.log", "../traces/testdata/seed001_3952_combined.log")
	var b bytes.Buffer
	require.NoError(t, TraceHTML(&b, rep, "seeds"))
	page := b.String()
	assert.NotContains(t, page, "<script")
	assert.NotContains(t, page, "src=")
	ss := svgs(t, page)
	assert.Len(t, ss, 3, "one timeline per changefeed, one for the findings of no changefeed")
	var cf3952 string
	for _, s := range ss {
		if strings.Contains(s, "removal-only maintainer") {
			cf3952 = s
		}
	}
	require.NotEmpty(t, cf3952, "the #3952 timeline shows the removal-only maintainer")
	for _, want := range []string{"capture (node not logged)", "capture 6a3e0b8e…0002", "coordinator operators",
		"add maintainer operator to 6a3e0b8e…0002", "stop maintainer operator", "backoff from", colError, colCheckpoint, "<polyline", `href="#f`} {
		assert.Contains(t, cf3952, want)
	}
	for i := range rep.Findings {
		assert.Contains(t, page, fmt.Sprintf(`id="f%d"`, i+1))
	}
	assert.Contains(t, page, "running-maintainer-bootstrapped")
	assert.Contains(t, page, "maintainer.go:277")
}

// TestCounterexampleHTML: a counterexample's deliveries are arrows from the
// sender's lifeline to the receiver's, other steps boxes on the actor's
// lifeline, and the last step carries the violated property.
func TestCounterexampleHTML(t *testing.T) {
	j := `{"bugs":["add-accepts-unbootstrapped-maintainer"],"violation":{"property":"running-maintainer-bootstrapped","message":"a running maintainer must be bootstrapped, but ...","steps":[
	{"actor":"coordinator","text":"adds maintainer operator to n0","events":["maintainer-op-started cf=default/cf node=n0 op=add epoch=2"]},
	{"actor":"maintainer-manager@n0","text":"receives AddMaintainerRequest coordinator->n0 epoch=2 checkpoint=1","events":["maintainer-created cf=default/cf node=n0"]},
	{"actor":"maintainer@n0","text":"receives MaintainerBootstrapResponse n1->n0 epoch=2","events":[]},
	{"actor":"coordinator","text":"receives MaintainerStatus n0->coordinator epoch=2 state=Working","events":["maintainer-op-finished cf=default/cf node=n0 op=add"],"after_heal":true}]}}`
	c, err := ParseCounterexample([]byte(j))
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, CounterexampleHTML(&b, c, "cex"))
	page := b.String()
	ss := svgs(t, page)
	require.Len(t, ss, 1)
	msc := ss[0]
	assert.Equal(t, 3, strings.Count(msc, `marker-end="url(#arr)"`), "three deliveries, three arrows")
	for _, lifeline := range []string{">coordinator<", ">n0<", ">n1<"} {
		assert.Contains(t, msc, lifeline)
	}
	assert.Contains(t, msc, "AddMaintainerRequest epoch=2 checkpoint=1")
	assert.Contains(t, msc, "faults healed: fair schedule")
	assert.Contains(t, msc, "⚠ running-maintainer-bootstrapped")
	_, err = ParseCounterexample([]byte(`{"result":"ok"}`))
	assert.Error(t, err)
}

// timelineOf returns the timeline SVG of changefeed cf and its window.
func timelineOf(t *testing.T, page, cf string) (svg string, t0, t1 int64) {
	t.Helper()
	for _, s := range svgs(t, page) {
		m := regexp.MustCompile(`data-changefeed="([^"]*)" data-t0="(\d+)" data-t1="(\d+)"`).FindStringSubmatch(s)
		if m != nil && m[1] == esc(cf) {
			fmt.Sscan(m[2], &t0)
			fmt.Sscan(m[3], &t1)
			return s, t0, t1
		}
	}
	t.Fatalf("no timeline for changefeed %q", cf)
	return "", 0, 0
}

// TestTraceHTMLWindowAndLanes (issue 28): a timeline's window covers every
// evidence line of its findings and the span each finding is about (the
// #5709 finding is about 30 minutes without a backoff line), and it has a
// lane for every capture and dispatcher the evidence names (the duplicate
// dispatcher of #6202: both dispatchers and their capture), with each
// evidence line marked in the window.
func TestTraceHTMLWindowAndLanes(t *testing.T) {
	cases := []struct {
		log, cf    string
		lanes      []string
		minSpanMin int64 // the window at least this many minutes
	}{
		{"seed000_5709.log", "default/<changefeed>", []string{"capture:<capture-id>", "findings"}, 30},
		{"planted_duplicate_dispatcher.log", "default/cf-6202",
			[]string{"capture:6a3e0b8e-7c1d-4e8a-9c4e-5b2f0d9a0001", "dispatcher:154415", "dispatcher:693762"}, 0},
	}
	for _, c := range cases {
		rep := runFixtures(t, "../traces/testdata/"+c.log)
		var b bytes.Buffer
		require.NoError(t, TraceHTML(&b, rep, c.log))
		svg, t0, t1 := timelineOf(t, b.String(), c.cf)
		for _, l := range c.lanes {
			assert.Contains(t, svg, fmt.Sprintf(`data-lane="%s"`, esc(l)), c.log)
		}
		assert.GreaterOrEqual(t, t1-t0, c.minSpanMin*60_000, "%s: window %d ms", c.log, t1-t0)
		marks := 0
		for _, f := range rep.Findings {
			if f.Changefeed != c.cf {
				continue
			}
			for _, e := range f.Evidence {
				if e.Time == 0 {
					continue
				}
				marks++
				assert.True(t, e.Time >= t0 && e.Time <= t1, "%s: evidence line %d at %d outside the window [%d, %d]", c.log, e.Line, e.Time, t0, t1)
				assert.Contains(t, svg, fmt.Sprintf(`data-t="%d"`, e.Time), "%s: evidence line %d is marked", c.log, e.Line)
			}
			assert.True(t, f.Time() >= t0 && f.LastTime() <= t1, c.log)
		}
		assert.Positive(t, marks, c.log)
		assert.Equal(t, marks, strings.Count(svg, `class="evmark"`), c.log)
	}
}
