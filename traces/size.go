package traces

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseSize reads a byte size such as 64M or 1G (K, M or G: powers of
// 1024; no suffix: bytes), as genlog's -size and the streaming memory
// benchmark's -stream-sizes take it.
func ParseSize(s string) (int64, error) {
	mult, num := int64(1), s
	switch {
	case strings.HasSuffix(s, "G"):
		mult, num = 1<<30, strings.TrimSuffix(s, "G")
	case strings.HasSuffix(s, "M"):
		mult, num = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "K"):
		mult, num = 1<<10, strings.TrimSuffix(s, "K")
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a positive size (a number with an optional K, M or G suffix)", s)
	}
	return n * mult, nil
}
