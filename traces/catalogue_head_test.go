package traces

import (
	"bufio"
	"bytes"
	"io"
	"math"
	"os"
	"strings"
	"testing"
	"time"

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
	if !strings.HasSuffix(msg, " ") && !strings.HasSuffix(msg, ",") {
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

// TestCatalogueClassifiesHEAD: every message of the pinned list (all 576
// literal messages of TiCDC HEAD's control-plane packages, every level) is
// classified: a protocol event, a symptom feeding a finding, or benign
// context with its reason (headWarnings' classes, headProgress' reasons); a
// message added to the list without a classification fails here. The
// entries this package adds for HEAD are HEAD's strings (they are in the
// list).
func TestCatalogueClassifiesHEAD(t *testing.T) {
	rows := readHeadMessages(t)
	known, knownWarn, warn := 0, 0, 0
	listed := map[string]bool{}
	for _, r := range rows {
		listed[r.msg] = true
		ok := false
		for _, e := range catalogued(r.msg) {
			ok = ok || classified(e)
		}
		if r.level != "INFO" && r.level != "DEBUG" {
			warn++
			if ok {
				knownWarn++
			}
		}
		if ok {
			known++
		} else {
			t.Errorf("%s %q (%s) is not classified", r.level, r.msg, r.packages)
		}
	}
	t.Logf("classified %d of %d messages (%d of %d WARN/ERROR/PANIC/FATAL)", known, len(rows), knownWarn, warn)
	assert.Equal(t, len(rows), known, "classified messages")
	// the HEAD entries this package adds are HEAD's strings
	for _, e := range append(append([]entry{}, barrierEntries...), headEntries()...) {
		assert.True(t, listed[e.msg] || listedPrefix(listed, e.msg), "%q is not a TiCDC HEAD message", e.msg)
	}
	// every headProgress reason is used
	used := map[string]bool{}
	for _, line := range strings.Split(headProgress, "\n") {
		if r, _, ok := strings.Cut(line, "\t"); ok {
			used[r] = true
		}
	}
	for r := range progressReasons {
		assert.True(t, used[r], "reason %q is not used", r)
	}
}

func listedPrefix(listed map[string]bool, msg string) bool {
	for m := range listed {
		if (strings.HasSuffix(m, " ") || strings.HasSuffix(m, ",")) && strings.HasPrefix(msg, m) {
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

// TestCatalogueImpossibleValueAnyLevel (issue 30): every message of the
// pinned list, logged at its own level (INFO and DEBUG too) from a file
// the catalogue knows it in, with a start ts of -1, is an impossible-value
// suspect; so is a resolved ts whose physical time lies a year past the
// record's. MaxUint64 where TiCDC logs it as "none" (tsMeansNone) is not.
func TestCatalogueImpossibleValueAnyLevel(t *testing.T) {
	suspect := func(line []byte) bool {
		rep, err := Run([]Input{{Name: "x.log", Open: func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(line)), nil
		}}}, Options{})
		require.NoError(t, err)
		for _, f := range findingsOf(rep, PropImpossibleValue) {
			if f.Severity == Suspect {
				return true
			}
		}
		return false
	}
	rows := readHeadMessages(t)
	byLevel := map[string]int{}
	for _, r := range rows {
		es := catalogued(r.msg)
		require.NotEmpty(t, es, "%q", r.msg)
		e := es[0]
		line := formatLine(t, e.files[0], r.level, e.msg, zap.String("changefeedID", "default/cf-1"), zap.Int64("startTs", -1))
		if assert.True(t, suspect(line), "%s %q: startTs=-1 is no impossible-value suspect", r.level, r.msg) {
			byLevel[r.level]++
		}
	}
	t.Logf("startTs=-1 flagged on %v", byLevel)
	assert.Equal(t, 275, byLevel["INFO"])

	// a TSO a year ahead of the record (2026/07/22): 2027/07/22 << 18
	ahead := uint64(time.Date(2027, 7, 22, 0, 0, 0, 0, time.UTC).UnixMilli()) << 18
	line := formatLine(t, "replication_span.go", "DEBUG", "clamp dispatcher start ts to committed checkpoint",
		zap.String("changefeedID", "default/cf-1"), zap.Uint64("resolvedTs", ahead))
	assert.True(t, suspect(line), "a ts beyond physical time")
	now := uint64(time.Date(2026, 7, 22, 16, 30, 0, 0, time.UTC).UnixMilli()) << 18
	line = formatLine(t, "replication_span.go", "DEBUG", "clamp dispatcher start ts to committed checkpoint",
		zap.String("changefeedID", "default/cf-1"), zap.Uint64("resolvedTs", now), zap.Uint64("startTs", now))
	assert.False(t, suspect(line), "a ts of the record's time")
	line = formatLine(t, "maintainer.go", "DEBUG", "checkpointTs can not be advanced, since global checkpoint is invalid",
		zap.String("changefeedID", "default/cf-1"), zap.Uint64("resolvedTs", math.MaxUint64), zap.Uint64("minCheckpointTsForBarrier", math.MaxUint64))
	assert.False(t, suspect(line), "MaxUint64 where it means none")
	line = formatLine(t, "maintainer.go", "INFO", "start to initialize changefeed maintainer",
		zap.String("changefeedID", "default/cf-1"), zap.Uint64("checkpointTs", math.MaxUint64))
	assert.True(t, suspect(line), "MaxUint64 elsewhere")
}

// TestBootstrapFailureWithError (issue 30): a maintainer bootstrap that
// TiCDC fails with an error is a bootstrap-failed suspect even when the
// log ends before --stuck-after; a later successful bootstrap makes it
// info. A record carrying ErrChangefeedInitTableTriggerDispatcherFailed is
// a bootstrap failure whatever its message.
func TestBootstrapFailureWithError(t *testing.T) {
	run := func(lines ...[]byte) *Report {
		rep, err := Run([]Input{{Name: "x.log", Open: func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(bytes.Join(lines, nil))), nil
		}}}, Options{})
		require.NoError(t, err)
		return rep
	}
	cf := zap.String("changefeed", "default/cf-1")
	startTs := formatLine(t, "maintainer_controller_bootstrap.go", "ERROR", "can not determine the startTs from the bootstrap response",
		cf, zap.String("error", "[CDC:ErrChangefeedInitTableTriggerDispatcherFailed]all bootstrap responses have checkpointTs 0"))
	trigger := formatLine(t, "backoff.go", "ERROR", "changefeed maintainer report an error",
		zap.String("changefeed", "default/cf-2"), zap.String("error", "[CDC:ErrChangefeedInitTableTriggerDispatcherFailed]table trigger event dispatcher existed!"))
	for name, line := range map[string][]byte{"startTs": startTs, "trigger": trigger} {
		fs := findingsOf(run(line), PropBootstrapFailed)
		require.Len(t, fs, 1, name)
		assert.Equal(t, Suspect, fs[0].Severity, "%s: %s", name, fs[0].Message)
	}
	ok := formatLine(t, "maintainer.go", "INFO", "changefeed maintainer bootstrapped", zap.String("changefeedID", "default/cf-1"))
	fs := findingsOf(run(startTs, ok), PropBootstrapFailed)
	require.Len(t, fs, 1)
	assert.Equal(t, Info, fs[0].Severity, fs[0].Message)
}
