// Package report renders cdcspec's results as self-contained HTML pages
// (inline CSS and SVG, no scripts or external resources): the incident
// report of `cdcspec trace --format html`, one timeline per changefeed
// across captures, and the model checker's counterexamples as a
// message-sequence chart in the same style.
package report

import (
	"fmt"
	"html"
	"io"
	"sort"
	"strings"
	"time"
)

const css = `
body{font:13px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1d232b;background:#fff}
h1{font-size:20px;margin:0 0 4px} h2{font-size:16px;margin:28px 0 6px;border-bottom:1px solid #d6dbe1;padding-bottom:3px}
.sub{color:#5b6675;margin-bottom:14px} table{border-collapse:collapse;margin:6px 0 12px}
td,th{border:1px solid #d6dbe1;padding:3px 8px;text-align:left;vertical-align:top} th{background:#f2f4f7}
.violation{color:#b3001b;font-weight:600} .suspect{color:#b35c00;font-weight:600} .insufficient-evidence{color:#6b5b00} .info{color:#3c5a78}
.ev{font:11px/1.35 ui-monospace,Menlo,Consolas,monospace;color:#39424e;white-space:pre-wrap;word-break:break-all;margin:2px 0 2px 14px}
.finding{margin:8px 0 12px;padding:6px 10px;border-left:4px solid #d6dbe1;background:#fafbfc}
.finding.violation{border-color:#b3001b}.finding.suspect{border-color:#e08a00}
svg text{font:11px system-ui,sans-serif;fill:#1d232b} svg .lane{fill:#f6f8fa} svg .lbl{font-weight:600}
.verdict{font-weight:600;padding:6px 10px;margin-bottom:10px;border-left:4px solid #2e8b57;background:#f3faf5}
.verdict.violation{border-color:#b3001b;background:#fdf1f2}.verdict.suspect{border-color:#e08a00;background:#fff7ea}.verdict.nothing-checked{border-color:#7b8794;background:#f2f4f7}
.next{margin:4px 0 0 14px;color:#39424e}
.legend span{display:inline-block;margin-right:14px} .sw{display:inline-block;width:12px;height:10px;margin-right:4px;vertical-align:middle}
`

func writeHead(w io.Writer, title string) {
	fmt.Fprintf(w, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s</title><style>%s</style></head><body>\n", esc(title), css)
}

func esc(s string) string { return html.EscapeString(s) }

// fmtMs renders Unix ms as UTC wall time.
func fmtMs(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006/01/02 15:04:05.000")
}

// svg is a small SVG builder.
type svg struct {
	b     strings.Builder
	w, h  int
	attrs string // extra attributes of the <svg> element
}

func (s *svg) rect(x, y, w, h float64, fill, title string, extra string) {
	if w < 1.5 {
		w = 1.5
	}
	fmt.Fprintf(&s.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" %s>`, x, y, w, h, fill, extra)
	if title != "" {
		fmt.Fprintf(&s.b, "<title>%s</title>", esc(title))
	}
	s.b.WriteString("</rect>")
}

func (s *svg) text(x, y float64, anchor, class, t string) {
	fmt.Fprintf(&s.b, `<text x="%.1f" y="%.1f" text-anchor="%s" class="%s">%s</text>`, x, y, anchor, class, esc(t))
}

func (s *svg) line(x1, y1, x2, y2 float64, stroke string, width float64, extra string) {
	fmt.Fprintf(&s.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%.1f" %s/>`, x1, y1, x2, y2, stroke, width, extra)
}

func (s *svg) circle(x, y, r float64, fill, title string) {
	fmt.Fprintf(&s.b, `<circle cx="%.1f" cy="%.1f" r="%.1f" fill="%s"><title>%s</title></circle>`, x, y, r, fill, esc(title))
}

func (s *svg) write(w io.Writer, class string) {
	fmt.Fprintf(w, `<svg class="%s" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" %s>`, class, s.w, s.h, s.w, s.h, s.attrs)
	io.WriteString(w, s.b.String())
	io.WriteString(w, "</svg>\n")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
