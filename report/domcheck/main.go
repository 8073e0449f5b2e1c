// Command domcheck checks a trace report's timeline in the DOM a browser
// built from it (chromium --dump-dom; scripts/report-test.sh): the
// changefeed's timeline exists, has the named lanes, its window is at least
// MIN long, and every evidence mark and finding span lies inside it.
//
//	go run ./report/domcheck DOM.html CHANGEFEED MIN LANE...
//
// LANE is a data-lane key: capture:ID, dispatcher:ID, findings. Exit 0 when
// every check holds, 1 when one fails (each failure named), 2 on bad usage.
package main

import (
	"fmt"
	"html"
	"os"
	"regexp"
	"strconv"
	"time"
)

var (
	svgRe  = regexp.MustCompile(`(?s)<svg\b([^>]*)>(.*?)</svg>`)
	attrRe = regexp.MustCompile(`([a-z0-9-]+)="([^"]*)"`)
	markRe = regexp.MustCompile(`class="evmark"[^>]*?data-t="(\d+)"`)
	spanRe = regexp.MustCompile(`class="fspan"[^>]*?data-t0="(\d+)" data-t1="(\d+)"`)
)

func attrs(s string) map[string]string {
	m := map[string]string{}
	for _, a := range attrRe.FindAllStringSubmatch(s, -1) {
		m[a[1]] = html.UnescapeString(a[2])
	}
	return m
}

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: domcheck DOM.html CHANGEFEED MIN LANE...")
		os.Exit(2)
	}
	dom, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "domcheck:", err)
		os.Exit(2)
	}
	cf := os.Args[2]
	minWin, err := time.ParseDuration(os.Args[3])
	if err != nil {
		fmt.Fprintf(os.Stderr, "domcheck: MIN %q: %v\n", os.Args[3], err)
		os.Exit(2)
	}
	var body string
	var t0, t1 int64
	found := false
	for _, m := range svgRe.FindAllStringSubmatch(string(dom), -1) {
		a := attrs(m[1])
		if a["class"] == "timeline" && a["data-changefeed"] == cf {
			found, body = true, m[2]
			t0, _ = strconv.ParseInt(a["data-t0"], 10, 64)
			t1, _ = strconv.ParseInt(a["data-t1"], 10, 64)
		}
	}
	if !found {
		fmt.Printf("domcheck: %s: no timeline of changefeed %q\n", os.Args[1], cf)
		os.Exit(1)
	}
	var fails []string
	win := time.Duration(t1-t0) * time.Millisecond
	if win < minWin {
		fails = append(fails, fmt.Sprintf("window %s, want at least %s", win, minWin))
	}
	for _, l := range os.Args[4:] {
		if !regexp.MustCompile(`data-lane="` + regexp.QuoteMeta(html.EscapeString(l)) + `"`).MatchString(body) {
			fails = append(fails, fmt.Sprintf("no lane %q", l))
		}
	}
	marks := markRe.FindAllStringSubmatch(body, -1)
	if len(marks) == 0 {
		fails = append(fails, "no evidence mark")
	}
	for _, m := range marks {
		if t, _ := strconv.ParseInt(m[1], 10, 64); t < t0 || t > t1 {
			fails = append(fails, fmt.Sprintf("evidence mark at %d outside the window [%d, %d]", t, t0, t1))
		}
	}
	spans := spanRe.FindAllStringSubmatch(body, -1)
	for _, m := range spans {
		a, _ := strconv.ParseInt(m[1], 10, 64)
		b, _ := strconv.ParseInt(m[2], 10, 64)
		if a < t0 || b > t1 {
			fails = append(fails, fmt.Sprintf("finding span [%d, %d] outside the window [%d, %d]", a, b, t0, t1))
		}
	}
	if len(fails) > 0 {
		for _, f := range fails {
			fmt.Printf("domcheck: %s, changefeed %s: %s\n", os.Args[1], cf, f)
		}
		os.Exit(1)
	}
	fmt.Printf("domcheck: %s, changefeed %s: window %s, %d lane(s) checked, %d evidence mark(s) and %d finding span(s) inside\n",
		os.Args[1], cf, win, len(os.Args)-4, len(marks), len(spans))
}
