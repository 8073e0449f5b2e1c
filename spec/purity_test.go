package spec

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// forbidden are imports that would bring IO, clocks, randomness or
// goroutines into the pure packages (STYLE 2 and 14).
var forbidden = []string{"os", "net", "net/http", "time", "math/rand", "math/rand/v2", "crypto/rand", "sync", "io/ioutil", "os/exec", "cdcspec/impl"}

// TestPurePackagesHaveNoIO keeps spec/ and model/ (non-test files, every
// subpackage) free of IO, clock, randomness and goroutine imports. The
// search (cdcspec/search) is the package that runs workers, reads a clock
// for states/s and draws random walks; the model reaches those only through
// it, and the search never imports the model (that would be an import
// cycle).
func TestPurePackagesHaveNoIO(t *testing.T) {
	dirs := []string{"."}
	if _, err := os.Stat("../model"); err == nil {
		dirs = append(dirs, "../model")
	}
	checked := 0
	for _, root := range dirs {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			checked++
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				for _, bad := range forbidden {
					if p == bad || strings.HasPrefix(p, bad+"/") && bad == "cdcspec/impl" {
						t.Errorf("%s imports %q: spec/ and model/ must stay pure (no IO, clocks, randomness, goroutines)", path, p)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked == 0 {
		t.Fatal("no Go files checked")
	}
}
