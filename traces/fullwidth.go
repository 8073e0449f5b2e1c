package traces

import (
	"bytes"
	"io"
)

// fullWidthReader normalises the full-width punctuation a CJK input method
// types into the ASCII that pingcap/log writes: "［2026/07/22 16：30：15.758
// +00：00］ ［INFO］" becomes "[2026/07/22 16:30:15.758 +00:00] [INFO]". Logs
// pasted into an issue or a chat arrive like this; the layout parser reads
// only ASCII punctuation. Only the full-width forms of ASCII punctuation
// (U+FF01..U+FF5E less letters and digits) are replaced; TiCDC's messages
// are ASCII, so no message the catalogue knows changes. Lines counts the
// physical lines where at least one character was replaced (a repair the
// report lists).
//
// The text shrinks in place (three bytes become one); a sequence cut by a
// Read boundary is held back until the next Read.
type fullWidthReader struct {
	r     io.Reader
	carry [2]byte // the start of a sequence the last Read ended in
	nc    int
	err   error
	// Lines counts the lines with a replacement; dirty marks the current
	// line as counted.
	Lines int64
	dirty bool
	// Removed counts the bytes the replacements removed (input bytes =
	// output bytes + Removed).
	Removed int64
	// small and pend serve Reads too short for read (pend: the output
	// not yet returned, in small)
	small [8]byte
	pend  []byte
}

func newFullWidthReader(r io.Reader) *fullWidthReader { return &fullWidthReader{r: r} }

// fullWidthASCII returns the ASCII punctuation of the full-width character
// whose UTF-8 bytes are 0xEF, b1, b2, or 0.
func fullWidthASCII(b1, b2 byte) byte {
	var c int
	switch {
	case b1 == 0xBC && b2 >= 0x81 && b2 <= 0xBF: // U+FF01..U+FF3F
		c = int(b2) - 0x80 + 0x20
	case b1 == 0xBD && b2 >= 0x80 && b2 <= 0x9E: // U+FF40..U+FF5E
		c = int(b2) - 0x80 + 0x60
	default:
		return 0
	}
	if c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' {
		return 0
	}
	return byte(c)
}

func (f *fullWidthReader) Read(p []byte) (int, error) {
	if len(f.pend) > 0 || len(p) > 0 && len(p) < len(f.small) {
		// too little room to complete a held-back sequence: go through
		// f.small
		if len(f.pend) == 0 {
			n, err := f.read(f.small[:])
			f.pend = f.small[:n]
			if n == 0 {
				return 0, err
			}
		}
		k := copy(p, f.pend)
		f.pend = f.pend[k:]
		return k, nil
	}
	return f.read(p)
}

// read is Read for len(p) >= len(f.small) (more than a carry).
func (f *fullWidthReader) read(p []byte) (int, error) {
	for {
		if len(p) == 0 {
			return 0, nil
		}
		k := copy(p, f.carry[:f.nc])
		copy(f.carry[:], f.carry[k:f.nc])
		f.nc -= k
		n := 0
		if f.err == nil && f.nc == 0 && k < len(p) {
			n, f.err = f.r.Read(p[k:])
		}
		m := f.normalise(p[:k+n], f.err != nil)
		if m > 0 || f.err != nil && f.nc == 0 {
			if m == 0 {
				return 0, f.err
			}
			return m, nil
		}
	}
}

// normalise rewrites b in place and returns its new length; unless atEOF,
// a trailing, possibly incomplete sequence moves to the carry.
func (f *fullWidthReader) normalise(b []byte, atEOF bool) int {
	i := bytes.IndexByte(b, 0xEF)
	if i < 0 {
		if f.dirty && bytes.IndexByte(b, '\n') >= 0 {
			f.dirty = false
		}
		return len(b)
	}
	if f.dirty && bytes.IndexByte(b[:i], '\n') >= 0 {
		f.dirty = false
	}
	w := i // b[:w] is the output so far
	for i < len(b) {
		c := b[i]
		if c == '\n' {
			f.dirty = false
		}
		if c != 0xEF {
			b[w] = c
			w++
			i++
			continue
		}
		if i+2 >= len(b) && !atEOF {
			f.nc = copy(f.carry[:], b[i:])
			return w
		}
		if i+2 < len(b) {
			if a := fullWidthASCII(b[i+1], b[i+2]); a != 0 {
				b[w] = a
				w++
				i += 3
				f.Removed += 2
				if !f.dirty {
					f.dirty = true
					f.Lines++
				}
				continue
			}
		}
		b[w] = c
		w++
		i++
	}
	return w
}
