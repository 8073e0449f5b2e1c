package traces

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// streamFixture checks the inputs of path (a file or a directory) through
// both stages: each input's lines interleaved round-robin, every item
// through its JSON wire form.
func streamFixture(t *testing.T, path string) ([]Finding, ParseStats) {
	t.Helper()
	ins, err := ExpandInputs([]string{path}, nil)
	require.NoError(t, err)
	sc := NewStreamChecker(Options{})
	var lines [][][]byte
	var parsers []*LineParser
	for _, in := range ins {
		sc.Source(in.Name)
		b, err := os.ReadFile(in.Name)
		require.NoError(t, err)
		var ls [][]byte
		s := bufio.NewScanner(bytes.NewReader(b))
		for s.Scan() {
			ls = append(ls, append([]byte(nil), s.Bytes()...))
		}
		lines = append(lines, ls)
		parsers = append(parsers, NewLineParser(in.Name))
	}
	var stats ParseStats
	for i := 0; ; i++ {
		more := false
		for k, ls := range lines {
			if i >= len(ls) {
				continue
			}
			more = true
			for _, it := range parsers[k].Parse(ls[i], nil) {
				w := it.Wire()
				b, err := json.Marshal(&w)
				require.NoError(t, err)
				var back WireItem
				require.NoError(t, json.Unmarshal(b, &back))
				sc.Add(back.Item())
			}
		}
		if !more {
			break
		}
	}
	for _, p := range parsers {
		stats.Add(p.Stats)
	}
	return sc.Finish(), stats
}

// TestStreamEqualsFiles (issue 30): the streaming checker's two stages,
// fed each capture's lines as they arrive (interleaved) and every item
// through its wire form, give the file mode's findings on every fixture
// whose records each fit on a line; the finding IDs are stable and
// distinct.
func TestStreamEqualsFiles(t *testing.T) {
	fixtures, _ := filepath.Glob("testdata/*.log")
	fixtures = append(fixtures, "testdata/healthy")
	checked := 0
	for _, fx := range fixtures {
		rep := runFixture(t, fx)
		if rep.Stats.Wrapped > 0 || rep.Stats.Records != rep.Stats.Lines-rep.Stats.Blank-rep.Stats.Unparsed {
			continue // a record over several lines: a shipper sends each line alone
		}
		t.Run(filepath.Base(fx), func(t *testing.T) {
			got, stats := streamFixture(t, fx)
			want, err := json.Marshal(rep.Findings)
			require.NoError(t, err)
			gotJSON, err := json.Marshal(got)
			require.NoError(t, err)
			assert.JSONEq(t, string(want), string(gotJSON))
			assert.Equal(t, rep.Stats.Records, stats.Records)
			assert.Equal(t, rep.Stats.Recognised, stats.Recognised)
			ids := map[string]bool{}
			for i := range got {
				id := got[i].ID()
				assert.False(t, ids[id], "finding ID %s twice", id)
				ids[id] = true
				assert.Equal(t, id, rep.Findings[i].ID())
			}
		})
		checked++
	}
	assert.GreaterOrEqual(t, checked, 8)
}
