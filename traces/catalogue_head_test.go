package traces

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"cdcspec/spec"
)

// headMessage is one row of testdata/ticdc-head-log-messages.tsv: every
// distinct log message of TiCDC's control-plane packages at b813e76f9.
type headMessage struct {
	level, packages, msg string
}

func readHeadMessages(t *testing.T) []headMessage {
	t.Helper()
	f, err := os.Open("testdata/ticdc-head-log-messages.tsv")
	require.NoError(t, err)
	defer f.Close()
	var out []headMessage
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "level\t") {
			continue
		}
		p := strings.SplitN(line, "\t", 3)
		require.Len(t, p, 3, "bad row %q", line)
		out = append(out, headMessage{p[0], p[1], p[2]})
	}
	require.NoError(t, sc.Err())
	require.Len(t, out, 576)
	return out
}

// catalogued returns the entries for a listed message. The list keeps only
// the first literal of a message TiCDC concatenates ("... timeout, "+"..."),
// so such a row (ending in a space or comma) matches the entries it begins.
func catalogued(msg string) []*entry {
	if es := catalogueIndex[msg]; len(es) > 0 {
		return es
	}
	if !strings.HasSuffix(msg, " ") && !strings.HasSuffix(msg, ", ") {
		return nil
	}
	var out []*entry
	for m, es := range catalogueIndex {
		if strings.HasPrefix(m, msg) {
			out = append(out, es...)
		}
	}
	return out
}

func classified(e *entry) bool { return e.kind != spec.KindUnknown || e.sym != SymNone }

// TestCatalogueClassifiesHEAD: every WARN, ERROR, PANIC and FATAL message of
// the pinned list is classified (a protocol event, a symptom feeding a
// finding, or benign context); a message added to the list without a
// classification fails here. The INFO messages the catalogue maps to
// protocol events are TiCDC's own strings (they are in the list).
func TestCatalogueClassifiesHEAD(t *testing.T) {
	rows := readHeadMessages(t)
	total, known := 0, 0
	listed := map[string]bool{}
	for _, r := range rows {
		listed[r.msg] = true
		if r.level == "INFO" || r.level == "DEBUG" {
			continue
		}
		total++
		ok := false
		for _, e := range catalogued(r.msg) {
			ok = ok || classified(e)
		}
		if ok {
			known++
		} else {
			t.Errorf("%s %q (%s) is not classified", r.level, r.msg, r.packages)
		}
	}
	assert.GreaterOrEqual(t, float64(known), 0.95*float64(total), "recognised %d of %d WARN/ERROR/PANIC/FATAL messages", known, total)
	t.Logf("recognised %d of %d WARN/ERROR/PANIC/FATAL messages", known, total)
	// the HEAD entries this package adds are HEAD's strings
	for _, e := range append(append([]entry{}, barrierEntries...), headEntries()...) {
		assert.True(t, listed[e.msg] || listedPrefix(listed, e.msg), "%q is not a TiCDC HEAD message", e.msg)
	}
}

func listedPrefix(listed map[string]bool, msg string) bool {
	for m := range listed {
		if (strings.HasSuffix(m, " ") || strings.HasSuffix(m, ", ")) && strings.HasPrefix(msg, m) {
			return true
		}
	}
	return false
}

// TestCatalogueHEADLinesParse renders every listed message as pingcap/log
// writes it, from each of its callers' files, with fields that stress the
// parser (quotes, brackets, impossible timestamps), whole and cut at every
// few bytes: nothing panics, a whole line is recognised whenever the
// message is catalogued for that file, and a whole run over all of them
// completes.
func TestCatalogueHEADLinesParse(t *testing.T) {
	rows := readHeadMessages(t)
	var all bytes.Buffer
	wantRecognised := int64(0)
	for _, r := range rows {
		es := catalogued(r.msg)
		fileNames := []string{"maintainer.go"}
		msg := r.msg
		for _, e := range es {
			msg = e.msg // the whole message of a concatenated one
			fileNames = append(fileNames, e.files...)
		}
		for _, file := range fileNames {
			line := formatLine(t, file, r.level, msg,
				zap.String("changefeedID", "default/cf-1"), zap.Uint64("checkpointTs", 0),
				zap.String("error", `[CDC:ErrX]bad "quoted" [bracket] value=1`), zap.Int64("startTs", -1),
				zap.String("span", "[7480, 7481)"))
			all.Write(line)
			for cut := 0; cut <= len(line); cut += 7 {
				parseItems(t, line[:cut])
			}
			items := parseItems(t, line)
			if r := newBytesScanner(line).Next(); r != nil && lookup(r) != nil {
				wantRecognised++
			}
			if len(es) > 0 && file != "maintainer.go" {
				require.NotEmpty(t, items, "%q from %s not recognised", r.msg, file)
			}
		}
	}
	rep, err := Run([]Input{{Name: "head.log", Open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(all.Bytes())), nil
	}}}, Options{})
	require.NoError(t, err)
	assert.Zero(t, rep.Stats.Unparsed)
	assert.Equal(t, wantRecognised, rep.Coverage.Recognised)
	assert.Greater(t, wantRecognised, int64(350))
}
