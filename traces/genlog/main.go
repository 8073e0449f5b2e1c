// Command genlog writes a generated TiCDC-like log for benchmarks:
//
//	go run ./traces/genlog -size 1G -o ticdc-bench.log [-seed N] [-storm -changefeeds 1000]
package main

import (
	"flag"
	"fmt"
	"os"

	"cdcspec/traces"
)

func main() {
	size := flag.String("size", "100M", "approximate size: bytes, or with a K, M or G suffix")
	out := flag.String("o", "", "output file (default stdout)")
	seed := flag.Uint64("seed", 1, "generator seed")
	storm := flag.Bool("storm", false, "every changefeed in an error storm")
	changefeeds := flag.Int("changefeeds", 8, "changefeeds the lines name")
	flag.Parse()
	n, err := traces.ParseSize(*size)
	if err != nil {
		fmt.Fprintf(os.Stderr, "genlog: -size: %v\n", err)
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
