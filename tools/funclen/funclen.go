// Package funclen enforces the house rule on function length (issue 29,
// docs/function-length.md): a function or method of non-test code is at most
// MaxLines lines long, counted from its `func` keyword to its closing brace,
// unless its doc comment carries a line
//
//	Long: <reason>
//
// that says in one line why it stays whole (one case per action kind, a
// mirror of a TiCDC HEAD function step by step, ...). The test in this
// package walks the module; Check is the walk, kept apart so that a fixture
// under testdata/ shows the rule can fail.
package funclen

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// MaxLines is the longest a function may be without a `Long:` reason.
const MaxLines = 120

// LongPrefix starts the doc-comment line that gives a long function's reason.
const LongPrefix = "Long:"

// Func is one function declaration over MaxLines lines.
type Func struct {
	File   string // slash-separated, relative to the walked root
	Line   int    // the line of the `func` keyword
	Name   string // Name, or Recv.Name for a method
	Lines  int    // from `func` to the closing brace, both included
	Reason string // the text after `Long:`, empty when there is none
}

func (f Func) String() string {
	return fmt.Sprintf("%s:%d: %s is %d lines (over %d)", f.File, f.Line, f.Name, f.Lines, MaxLines)
}

// Check parses every non-test .go file under root (skipping testdata,
// vendor and hidden directories) and returns its functions over MaxLines
// lines, sorted by file and line, each with its `Long:` reason if it has
// one. A `Long:` line with no text after it is an error: the reason is the
// point.
func Check(root string) ([]Func, error) {
	var out []Func
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
			lines := end.Line - start.Line + 1
			if lines <= MaxLines {
				continue
			}
			fn := Func{File: filepath.ToSlash(rel), Line: start.Line, Name: funcName(fd), Lines: lines}
			reason, has := longReason(fd.Doc)
			if has && reason == "" {
				return fmt.Errorf("%s:%d: %s: %q line with no reason", fn.File, fn.Line, fn.Name, LongPrefix)
			}
			fn.Reason = reason
			out = append(out, fn)
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	return out, err
}

// funcName is the declaration's name, with its receiver's type for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.IndexExpr:
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fd.Name.Name
		}
		return fd.Name.Name
	}
}

// longReason finds the doc comment's `Long:` line and returns its text.
func longReason(doc *ast.CommentGroup) (string, bool) {
	if doc == nil {
		return "", false
	}
	for _, line := range strings.Split(doc.Text(), "\n") {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, LongPrefix); ok {
			return strings.TrimSpace(rest), true
		}
	}
	return "", false
}
