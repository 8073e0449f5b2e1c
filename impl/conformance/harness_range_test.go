package conformance

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/cockroachdb/datadriven"

	"cdcspec/impl/maintainer/rangechecker"
)

// rangeCheckerRun is the checker of the range-checker command: one of the
// barrier's coverage checkers (impl/maintainer/rangechecker), built and
// fed directly as TiCDC's maintainer/range_checker tests do.
type rangeCheckerRun struct {
	kind  string // span, count or coverage
	span  *rangechecker.TableSpanRangeChecker
	count *rangechecker.TableIDRangeChecker
	cov   *rangechecker.SpanCoverageChecker
}

// cmdRangeChecker drives one coverage checker of the barrier:
//
//	range-checker new kind=span tables=1,2,3     NewTableSpanRangeChecker
//	range-checker new kind=count tables=1,2,3    NewTableCountChecker
//	range-checker new kind=coverage start=HEX end=HEX
//	                                             NewTableSpanCoverageChecker over the bytes
//	range-checker add [table=T] start=HEX end=HEX | nil
//	                                             AddSubRange of the bytes, or of nil start
//	                                             and end (table=T but for kind=coverage)
//	range-checker reset | mark-covered          Reset, MarkCovered
//	range-checker show                          the state only
//
// Every operation prints the checker after it: covered, then per kind the
// tables with their merged ranges (span), the needed count and the
// reported tables (count), or the merged ranges and their number
// (coverage), and Detail. Keys print as hex, or as start/end/start+K when
// they are the table's (its TableIDToComparableSpan keys, K appended).
func (h *harness) cmdRangeChecker(b *strings.Builder, d *datadriven.TestData) error {
	if len(d.CmdArgs) == 0 {
		return fmt.Errorf("range-checker: want an operation")
	}
	op := d.CmdArgs[0].Key
	if op == "new" {
		return h.newRangeChecker(b, d)
	}
	rc := h.rangeChecker
	if rc == nil {
		return fmt.Errorf("range-checker %s: no checker (range-checker new)", op)
	}
	switch op {
	case "add":
		table, start, end, err := rangeCheckerKeys(d, rc)
		if err != nil {
			return err
		}
		switch rc.kind {
		case "span":
			rc.span.AddSubRange(table, start, end)
		case "count":
			rc.count.AddSubRange(table, start, end)
		default:
			rc.cov.AddSubRange(start, end)
		}
	case "reset":
		rc.checker().Reset()
	case "mark-covered":
		rc.checker().MarkCovered()
	case "show":
	default:
		return fmt.Errorf("range-checker: unknown operation %q", op)
	}
	rc.print(b)
	return nil
}

func (h *harness) newRangeChecker(b *strings.Builder, d *datadriven.TestData) error {
	kind, _ := arg(d, "kind")
	rc := &rangeCheckerRun{kind: kind}
	switch kind {
	case "span", "count":
		v, ok := arg(d, "tables")
		if !ok {
			return fmt.Errorf("range-checker new kind=%s: want tables=T,...", kind)
		}
		tables, err := int64List(v)
		if err != nil {
			return fmt.Errorf("range-checker new: tables: %w", err)
		}
		if kind == "span" {
			rc.span = rangechecker.NewTableSpanRangeChecker(tables)
		} else {
			rc.count = rangechecker.NewTableCountChecker(tables)
		}
	case "coverage":
		start, err := hexArg(d, "start")
		if err != nil {
			return err
		}
		end, err := hexArg(d, "end")
		if err != nil {
			return err
		}
		if start == nil || end == nil {
			return fmt.Errorf("range-checker new kind=coverage: want start=HEX end=HEX")
		}
		rc.cov = rangechecker.NewTableSpanCoverageChecker(start, end)
	default:
		return fmt.Errorf("range-checker new: kind=%q, want span, count or coverage", kind)
	}
	h.rangeChecker = rc
	rc.print(b)
	return nil
}

func (rc *rangeCheckerRun) checker() interface {
	Reset()
	MarkCovered()
} {
	switch rc.kind {
	case "span":
		return rc.span
	case "count":
		return rc.count
	}
	return rc.cov
}

// rangeCheckerKeys reads add's table and keys.
func rangeCheckerKeys(d *datadriven.TestData, rc *rangeCheckerRun) (table int64, start, end []byte, err error) {
	if v, ok := arg(d, "table"); ok {
		if table, err = strconv.ParseInt(v, 10, 64); err != nil {
			return 0, nil, nil, fmt.Errorf("range-checker add: table: %w", err)
		}
	} else if rc.kind != "coverage" {
		return 0, nil, nil, fmt.Errorf("range-checker add: want table=T")
	}
	if _, ok := arg(d, "nil"); ok {
		return table, nil, nil, nil
	}
	if start, err = hexArg(d, "start"); err != nil {
		return 0, nil, nil, err
	}
	if end, err = hexArg(d, "end"); err != nil {
		return 0, nil, nil, err
	}
	if start == nil || end == nil {
		return 0, nil, nil, fmt.Errorf("range-checker add: want start=HEX end=HEX, or nil")
	}
	return table, start, end, nil
}

// hexArg is a hex byte-string argument (nil when absent).
func hexArg(d *datadriven.TestData, key string) ([]byte, error) {
	v, ok := arg(d, key)
	if !ok {
		return nil, nil
	}
	out, err := hex.DecodeString(v)
	if err != nil {
		return nil, fmt.Errorf("range-checker: %s=%s: %w", key, v, err)
	}
	return out, nil
}

func (rc *rangeCheckerRun) print(b *strings.Builder) {
	switch rc.kind {
	case "span":
		fmt.Fprintf(b, "covered=%v tables=%d\n", rc.span.IsFullyCovered(), len(rc.span.TableIDs()))
		for _, t := range rc.span.TableIDs() {
			sc := rc.span.Table(t)
			fmt.Fprintf(b, "  table %d: covered=%v ranges=%s\n", t, sc.IsFullyCovered(), fmtRanges(sc, t))
		}
		fmt.Fprintf(b, "detail: %q\n", rc.span.Detail())
	case "count":
		var rs []string
		for _, t := range rc.count.Reported() {
			rs = append(rs, strconv.FormatInt(t, 10))
		}
		fmt.Fprintf(b, "covered=%v need=%d reported=[%s]\n", rc.count.IsFullyCovered(), rc.count.NeedCount(), strings.Join(rs, ","))
		fmt.Fprintf(b, "detail: %q\n", rc.count.Detail())
	default:
		fmt.Fprintf(b, "covered=%v len=%d ranges=%s\n", rc.cov.IsFullyCovered(), rc.cov.Len(), fmtRanges(rc.cov, -1))
	}
}

// fmtRanges prints a coverage checker's merged ranges; keys of table t
// (t >= 0) print relative to its key range.
func fmtRanges(sc *rangechecker.SpanCoverageChecker, t int64) string {
	var tStart, tEnd []byte
	if t >= 0 {
		tStart, tEnd = rangechecker.TableIDToComparableSpan(t)
	}
	key := func(k []byte) string {
		switch {
		case t >= 0 && bytes.Equal(k, tStart):
			return "start"
		case t >= 0 && bytes.Equal(k, tEnd):
			return "end"
		case t >= 0 && bytes.HasPrefix(k, tStart) && printable(k[len(tStart):]):
			return "start+" + string(k[len(tStart):])
		}
		return hex.EncodeToString(k)
	}
	var rs []string
	for _, r := range sc.Ranges() {
		rs = append(rs, "["+key(r[0])+","+key(r[1])+")")
	}
	return "{" + strings.Join(rs, " ") + "}"
}

func printable(b []byte) bool {
	for _, c := range b {
		if c <= ' ' || c > '~' {
			return false
		}
	}
	return true
}
