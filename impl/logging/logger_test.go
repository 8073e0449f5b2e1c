package logging

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"cdcspec/spec"
)

type fixedClock int64

func (c fixedClock) NowMs() int64 { return int64(c) }

// TestTSOFields: with TSO on, every uint64 field whose key ends in "Ts"
// (event lines and plain lines) is written as ms << 18, as TiCDC logs a
// ts; other fields, and everything with TSO off, are written as given.
func TestTSOFields(t *testing.T) {
	const ms = 1796282411917
	for _, tso := range []bool{false, true} {
		var b bytes.Buffer
		lg := New(&b, fixedClock(ms), "debug")
		lg.TSO = tso
		lg.Info("maintainer.go", 1, "x", zap.Uint64("checkpointTs", ms), zap.Uint64("regionID", 7), zap.String("startTs", "9"))
		lg.Event(nil, spec.Event{Kind: spec.CheckpointStored, Changefeed: "default/cf", Checkpoint: ms})
		want := uint64(ms)
		if tso {
			want = spec.TSO(ms)
		}
		out := b.String()
		require.Contains(t, out, "[checkpointTs="+itoa(want)+"]", out)
		require.Contains(t, out, "[regionID=7]")
		require.Contains(t, out, "[startTs=9]")
		require.Equal(t, 2, bytes.Count(b.Bytes(), []byte("checkpointTs="+itoa(want))), out)
	}
}

func itoa(v uint64) string { return Itoa(int(v)) }
