package kafkastream

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/traces"
)

// TestPartitionedEqualsFiles: the routing of the two stages without Kafka
// (each capture's lines in turn through stage one, items to the partition
// of their changefeed or to every partition, each partition's own findings
// kept) gives the file mode's findings on the four captures' logs.
func TestPartitionedEqualsFiles(t *testing.T) {
	const n = 4
	var scs [n]*traces.StreamChecker
	for i := range scs {
		scs[i] = traces.NewStreamChecker(traces.Options{})
		for _, s := range captures {
			scs[i].Source(s)
		}
	}
	for _, c := range captures {
		p := traces.NewLineParser(c)
		nf := &nodeFacts{}
		f, err := os.Open(c)
		require.NoError(t, err)
		s := bufio.NewScanner(f)
		for s.Scan() {
			for _, it := range p.Parse(s.Bytes(), nil) {
				if it.Event.Changefeed == "" || nf.broadcast(&it) {
					for k := range scs {
						scs[k].Add(it)
					}
				} else {
					scs[partitionOf(it.Event.Changefeed, n)].Add(it)
				}
			}
		}
		f.Close()
	}
	got := map[string]string{}
	for k := range scs {
		for _, f := range scs[k].Finish() {
			if (&checkHandler{}).owns(&f, int32(k), n) {
				b, err := json.Marshal(&f)
				require.NoError(t, err)
				got[f.ID()] = string(b)
			}
		}
	}
	var ins []traces.Input
	for _, c := range captures {
		ins = append(ins, traces.Input{Name: c, Open: func() (io.ReadCloser, error) { return os.Open(c) }})
	}
	rep, err := traces.Run(ins, traces.Options{})
	require.NoError(t, err)
	require.Len(t, got, len(rep.Findings))
	for i := range rep.Findings {
		b, err := json.Marshal(&rep.Findings[i])
		require.NoError(t, err)
		assert.JSONEq(t, string(b), got[rep.Findings[i].ID()])
	}
}
