package transport

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// FuzzReadFrame: any byte stream a peer sends either yields frames or an
// error, never a panic, and never a frame above MaxFrame; a frame written
// by writeFrame reads back unchanged.
func FuzzReadFrame(f *testing.F) {
	var ok bytes.Buffer
	_ = writeFrame(&ok, []byte(`{"from":"a","to":"b","type":"HeartBeatRequest","msg":{}}`))
	f.Add(ok.Bytes())
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 1, 2})
	huge := make([]byte, 4)
	binary.BigEndian.PutUint32(huge, MaxFrame+1)
	f.Add(huge)
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		for i := 0; i < 64; i++ {
			frame, err := readFrame(r)
			if err != nil {
				break
			}
			if len(frame) > MaxFrame {
				t.Fatalf("a %d-byte frame passed the %d-byte limit", len(frame), MaxFrame)
			}
			var w bytes.Buffer
			if err := writeFrame(&w, frame); err != nil {
				t.Fatal(err)
			}
			back, err := readFrame(&w)
			if err != nil || !bytes.Equal(back, frame) {
				t.Fatalf("frame does not round-trip: %v", err)
			}
		}
	})
}
