// Command pngcolours prints how many distinct colours a rectangle of a PNG
// holds (scripts/report-test.sh checks a screenshot is not blank):
//
//	go run ./report/pngcolours FILE X0 Y0 X1 Y1
package main

import (
	"fmt"
	"image"
	"image/png"
	"os"
	"strconv"
)

func main() {
	if len(os.Args) != 6 {
		fmt.Fprintln(os.Stderr, "usage: pngcolours FILE X0 Y0 X1 Y1")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "pngcolours:", err)
		os.Exit(2)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pngcolours: %s: %v\n", os.Args[1], err)
		os.Exit(2)
	}
	var r [4]int
	for i := range r {
		if r[i], err = strconv.Atoi(os.Args[2+i]); err != nil {
			fmt.Fprintf(os.Stderr, "pngcolours: coordinate %q: %v\n", os.Args[2+i], err)
			os.Exit(2)
		}
	}
	rect := image.Rect(r[0], r[1], r[2], r[3]).Intersect(img.Bounds())
	seen := map[[4]uint32]bool{}
	for y := rect.Min.Y; y < rect.Max.Y; y++ {
		for x := rect.Min.X; x < rect.Max.X; x++ {
			cr, cg, cb, ca := img.At(x, y).RGBA()
			seen[[4]uint32{cr >> 8, cg >> 8, cb >> 8, ca >> 8}] = true
		}
	}
	fmt.Println(len(seen))
}
