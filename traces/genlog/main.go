// Command genlog writes a generated TiCDC-like log for benchmarks:
//
//	go run ./traces/genlog -size 1G -o ticdc-bench.log [-seed N] [-storm -changefeeds 1000]
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"cdcspec/traces"
)

func main() {
	size := flag.String("size", "100M", "approximate size: bytes, or with a K, M or G suffix")
	out := flag.String("o", "", "output file (default stdout)")
	seed := flag.Uint64("seed", 1, "generator seed")
	storm := flag.Bool("storm", false, "every changefeed in an error storm")
	changefeeds := flag.Int("changefeeds", 8, "changefeeds the lines name")
	flag.Parse()
	n, err := parseSize(*size)
	if err != nil {
		fmt.Fprintf(os.Stderr, "genlog: -size %q: %v\n", *size, err)
		os.Exit(2)
	}
	w := os.Stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintf(os.Stderr, "genlog: %v\n", err)
			os.Exit(2)
		}
		defer f.Close()
		w = f
	}
	if *changefeeds < 1 {
		fmt.Fprintf(os.Stderr, "genlog: -changefeeds %d: want at least 1\n", *changefeeds)
		os.Exit(2)
	}
	lines, err := traces.GenerateLogOptions(w, n, traces.GenOptions{Seed: *seed, Storm: *storm, Changefeeds: *changefeeds})
	if err != nil {
		fmt.Fprintf(os.Stderr, "genlog: %v\n", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "genlog: %d lines\n", lines)
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, strings.TrimSuffix(s, "G")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("want a positive size")
	}
	return n * mult, nil
}
