// Package mutate is a mechanical mutator over a Go package's source (go/ast):
// it lists mutation sites and applies one mutant at a time, by byte offset,
// so the rest of the file keeps its text. `make mutate-all` runs it over
// model/ (cmd/mutate-model); the operators follow issue 26 section 3 and
// STYLE.md item 19 (a mutant of your own code is not a hidden bug: every
// guard negated, every comparison shifted, every state update skipped).
//
// The operators:
//
//   - negate: one condition (an operand of && or ||, through parentheses
//     and !) of an if is negated;
//   - drop: that condition is removed from its && or || (replaced by the
//     operator's identity, true or false); an if with a single condition
//     gets true (the guard is dropped, the branch always runs);
//   - cmp: < and <=, > and >= swapped in a comparison whose operand names a
//     timestamp or an epoch (Options.CmpNames);
//   - skip: a statement that updates protocol state is removed: an
//     assignment or ++/-- to a field, element or pointee of the state (a
//     parameter or local whose type is a pointer to a state type, or a
//     local taken as &state...), or a call statement that sends or removes a
//     message (Options.SkipCalls).
//
// A mutant's ID is stable across edits elsewhere in the file: the file, the
// function, the operator and a hash of the site's text and its ordinal
// among the sites of the same text in that function.
package mutate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Op is a mutation operator.
type Op string

// The operators.
const (
	OpNegate Op = "negate"
	OpDrop   Op = "drop"
	OpCmp    Op = "cmp"
	OpSkip   Op = "skip"
)

// Mutant is one mutation: the bytes [Start, End) of File, which read Orig,
// become Repl.
type Mutant struct {
	ID    string `json:"id"`
	File  string `json:"file"` // base name in the package directory
	Func  string `json:"func"` // Recv.Name for a method
	Op    Op     `json:"op"`
	Line  int    `json:"line"`
	Start int    `json:"start"`
	End   int    `json:"end"`
	Orig  string `json:"orig"`
	Repl  string `json:"repl"`
	// ExprStart, ExprEnd: a cmp mutant's whole comparison (Start, End is
	// its operator).
	ExprStart int `json:"expr_start,omitempty"`
	ExprEnd   int `json:"expr_end,omitempty"`
	// Source is the site's source line, trimmed.
	Source string `json:"source"`
}

// String is the mutant in one line: ID, position and the change.
func (m Mutant) String() string {
	return fmt.Sprintf("%s %s:%d %s: %s  =>  %s", m.ID, m.File, m.Line, m.Func, oneLine(m.Orig), oneLine(m.Repl))
}

// Options say where to look and what counts as protocol state.
type Options struct {
	// ExcludeFiles are base names not mutated (rendering, encoding, the
	// checker's own wiring, the mutation switches).
	ExcludeFiles []string
	// ExcludeFuncs are function or method names not mutated (String
	// methods and other renderers).
	ExcludeFuncs []string
	// ExcludeFuncPrefixes: names with these prefixes are not mutated.
	ExcludeFuncPrefixes []string
	// ExcludeFields: an update of a field of these names (the last
	// selector of the target) is not a skip site.
	ExcludeFields []string
	// StateTypes are the root state types: these and the struct types of
	// their fields, transitively, are state types.
	StateTypes []string
	// SwitchCalls are method names whose calls are switches of the model
	// (mutations, catalogue entries, features): never a condition site.
	SwitchCalls []string
	// NilIdents are identifiers whose nil checks are not protocol guards
	// (an optional event emitter, an error).
	NilIdents []string
	// OffSwitchCalls are the switches that are off in every standard
	// configuration (the catalogue's bugs, the hand-written mutations): the
	// code that runs only with one on is the bug's reproduction, not a rule
	// of HEAD, and is not mutated (an && with such a call among its
	// conjuncts, an || with its negation among its disjuncts, the body of
	// an if that holds only with one on).
	OffSwitchCalls []string
	// ConfigTypes are the configuration's types: a condition that reads
	// only a parameter of one of them (and package-level names) chooses
	// the configuration's shape, not a protocol rule.
	ConfigTypes []string
	// FlagIdents are parameters that are switches of the caller, not of
	// the protocol (appendActions' withFaults): conditions on them alone
	// are not sites.
	FlagIdents []string
	// SkipCalls matches the names of functions and methods whose call
	// statements update protocol state (message sends and removals).
	SkipCalls *regexp.Regexp
	// CmpNames matches an identifier or field name that makes a comparison
	// a timestamp or epoch comparison.
	CmpNames *regexp.Regexp
	// ExcludeConds are conditions, "Func: cond", that are not sites: the
	// negate and drop mutants whose Func and Orig match, and the cmp
	// mutants whose Func and whole comparison match. They are left out
	// after the IDs are assigned, so every other ID stays.
	ExcludeConds []string
}

// An Exclusion puts code of the package out of the mutator's scope, with
// its reason: the mutants measure the protocol's rules (the guards of its
// steps and the updates of its state), not what renders, counts, bounds or
// checks them.
type Exclusion struct {
	Files    []string // base names
	Funcs    []string // function or method names (without the receiver)
	Prefixes []string // function names with these prefixes
	// Fields: State fields whose updates are not sites (a skip of an
	// assignment or ++/-- to s.F).
	Fields []string
	// OffSwitches: method names of switches that are off in every
	// standard configuration (Options.OffSwitchCalls).
	OffSwitches []string
	// Conds: single conditions, "Func: cond" (the function as a mutant
	// names it, the condition's source text as it reads in the if): its
	// negate and drop mutants, and a comparison's cmp mutant, are not
	// sites (Options.ExcludeConds).
	Conds  []string
	Reason string
}

// ModelScope is the one place that says what of model/ is not mutated and
// why (SPEC.md 10.1, docs/mutation.md; `mutate-model list --scope`).
var ModelScope = []Exclusion{
	{Files: []string{"story.go", "view.go", "action.go"}, Funcs: []string{"String", "Describe", "Actor", "NodeName", "Names",
		"nodeName", "barrierDispName", "stageName", "barrierString"},
		Conds: []string{"dispClosed: d.St != dMergeClosed", "coordFinishStop: s.Coord.OpRemove"},
		Reason: "rendering: stories, views, action and state names, and the conditions beside the emitter's nil check " +
			"(e != nil && ...) that choose a story's event: the search runs without the emitter"},
	{Files: []string{"canon.go", "symmetry.go", "census.go", "check.go", "schedule.go", "fingerprint.go"},
		Funcs:  []string{"Bytes", "MarshalJSON", "UnmarshalJSON", "msgKindByName"},
		Reason: "the search's wiring and encodings: canonical form, symmetry, the census, the delay search's default scheduler, state-set fingerprints"},
	{Files: []string{"config.go", "matrix.go"}, Funcs: []string{"validateBarrier", "Validate", "barrierOf"},
		Reason: "the configurations, the matrix of rows and their validation"},
	{Files: []string{"props.go", "liveness.go"}, Prefixes: []string{"inv", "goal"},
		Reason: "the properties: a mutant of a property weakens the check, not the protocol"},
	{Files: []string{"mutate.go"}, Reason: "the hand-written mutation switches (make mutate)"},
	{Funcs: []string{"Replay", "InitEvents", "enabled"}, Reason: "replaying a counterexample (whether an action is enabled along a trail)"},
	{Fields: []string{"Crashes", "Drops", "Dups", "SinkErrs", "Stalls", "DDLs", "Restarts", "Moves", "Splits", "Merges",
		"FastFails", "ClientOps", "CoordFails", "MaintMoves", "Overflow"},
		Reason: "the search's budgets: faults and operators used against the configuration's bounds, and the full-network cut (skipping one unbounds the configuration, it changes no protocol rule)"},
	{Conds: []string{
		"appendActions: s.Overflow", "appendActions: !s.Stalled", "appendActions: blockDDLEnabled(cfg, s)",
		"appendActions: s.Stalled", "appendPullActions: !p.Down", "appendPullActions: p.Down",
		"appendPullActions: s.PullTs < s.UpTs",
		"appendActions: i > 0", "appendActions: s.Inc[i] < 63",
		"appendActions: d.Table != 0", "appendActions: !d.SinkErr",
		"appendLifecycleActions: d.ID != 0", "appendLifecycleActions: d.St == dWorking",
		"appendLifecycleActions: d.Table != 0", "appendLifecycleActions: !d.SinkErr"},
		Reason: "the environment's actions, not TiCDC's: when the upstream advances, commits its DDL, stalls and " +
			"resumes, and the kv client's TiKV is down or ahead (appendActions, appendPullActions), the full-network " +
			"cut, which slots may crash (slot 0 hosts the coordinator) and restart (the identity's range), and " +
			"which dispatchers the search gives a sink error or an unretryable error"},
	{Conds: []string{
		"appendLifecycleActions: running(c)", "appendLifecycleActions: c.Op == copNone",
		"appendLifecycleActions: c.Ckpt > 1", "appendLifecycleActions: s.UpTs > c.Ckpt"},
		Reason: "the client's choices that HEAD does not check: PauseChangefeed takes a changefeed in any state " +
			"(coordinator/controller.go:978), ResumeChangefeed checks the state only, not a running stop " +
			"(controller.go:1017; the pause API's caller waits for it, controller.go:1004), and any overwrite " +
			"checkpoint above the GC safepoint (api/v2/changefeed.go:1119): the model offers pause of a running " +
			"changefeed, resume after the stop finished, and the overwrite values 1 and the upstream's ts where they " +
			"differ from the checkpoint. The states and the removal HEAD does check (isInitialized, " +
			"validateResumeChangefeedState, changefeed not found) stay mutants"},
	{OffSwitches: []string{"bug", "mut"},
		Reason: "code that runs only with a catalogue bug or a hand-written mutation switched on (cfg.bug(X) && ..., !cfg.mut(X) || ..., if cfg.bug(X) { ... }): the bug's reproduction, which make mutate and the catalogue test, not a rule of HEAD"},
}

// ModelOptions are the options for cdcspec's model/.
func ModelOptions() Options {
	opt := Options{
		StateTypes:  []string{"State"},
		SwitchCalls: []string{"mut", "bug", "has"},
		NilIdents:   []string{"e", "err"},
		ConfigTypes: []string{"Config"},
		FlagIdents:  []string{"withFaults"},
		SkipCalls:   regexp.MustCompile(`^(send[A-Za-z]*|removeMsg)$`),
		CmpNames:    regexp.MustCompile(`(^|[a-z])(Ts|TS)([A-Z]|$)|^ts$|(?i)ckpt|checkpoint|epoch|commit|resolved|watermark|^wm$|^WM$`),
	}
	for _, x := range ModelScope {
		opt.ExcludeFiles = append(opt.ExcludeFiles, x.Files...)
		opt.ExcludeFuncs = append(opt.ExcludeFuncs, x.Funcs...)
		opt.ExcludeFuncPrefixes = append(opt.ExcludeFuncPrefixes, x.Prefixes...)
		opt.ExcludeFields = append(opt.ExcludeFields, x.Fields...)
		opt.OffSwitchCalls = append(opt.OffSwitchCalls, x.OffSwitches...)
		opt.ExcludeConds = append(opt.ExcludeConds, x.Conds...)
	}
	return opt
}

// Find lists the mutants of the package in dir (non-test .go files), in
// file and offset order.
func Find(dir string, opt Options) ([]Mutant, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	type parsed struct {
		name string
		src  []byte
		f    *ast.File
	}
	var files []parsed
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") || contains(opt.ExcludeFiles, n) {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, n, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, parsed{n, src, f})
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no Go files to mutate", dir)
	}
	// State types and the functions returning a pointer to one come from
	// every file, excluded ones too (state.go declares them).
	all := []*ast.File{}
	for _, p := range files {
		all = append(all, p.f)
	}
	for _, n := range opt.ExcludeFiles {
		src, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			continue // an exclusion may name a file the package no longer has
		}
		if f, err := parser.ParseFile(fset, n, src, parser.SkipObjectResolution); err == nil {
			all = append(all, f)
		}
	}
	st := stateTypes(all, opt.StateTypes)
	ptrFuncs := statePtrFuncs(all, st)
	pkgNames := packageNames(all)
	var out []Mutant
	for _, p := range files {
		for _, d := range p.f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || contains(opt.ExcludeFuncs, fd.Name.Name) || hasPrefix(fd.Name.Name, opt.ExcludeFuncPrefixes) {
				continue
			}
			w := &walker{opt: &opt, fset: fset, src: p.src, file: p.name, fn: funcName(fd), st: st, ptrFuncs: ptrFuncs,
				pkgNames: pkgNames, rooted: map[string]bool{}, cfgIdents: map[string]bool{}}
			w.params(fd)
			w.block(fd.Body)
			out = append(out, w.out...)
		}
	}
	assignIDs(out)
	if len(opt.ExcludeConds) > 0 {
		srcs := map[string][]byte{}
		for _, p := range files {
			srcs[p.name] = p.src
		}
		kept := out[:0]
		for _, m := range out {
			if !contains(opt.ExcludeConds, CondKey(m, srcs[m.File])) {
				kept = append(kept, m)
			}
		}
		out = kept
	}
	return out, nil
}

// CondKey is the "Func: cond" an exclusion of Options.ExcludeConds names a
// condition mutant by (src is the mutant's file): its condition for negate
// and drop, its whole comparison for cmp, "" for skip.
func CondKey(m Mutant, src []byte) string {
	switch {
	case m.Op == OpNegate || m.Op == OpDrop:
		return m.Func + ": " + strings.Join(strings.Fields(m.Orig), " ")
	case m.Op == OpCmp && m.ExprEnd > m.ExprStart && m.ExprEnd <= len(src):
		return m.Func + ": " + strings.Join(strings.Fields(string(src[m.ExprStart:m.ExprEnd])), " ")
	}
	return ""
}

// Apply returns src with m applied; src must still read m.Orig at m's
// offsets.
func Apply(src []byte, m Mutant) ([]byte, error) {
	if m.Start < 0 || m.End > len(src) || m.Start > m.End || string(src[m.Start:m.End]) != m.Orig {
		return nil, fmt.Errorf("mutant %s: %s no longer reads %q at offset %d (the file changed since the mutants were listed)", m.ID, m.File, oneLine(m.Orig), m.Start)
	}
	out := make([]byte, 0, len(src)+len(m.Repl))
	out = append(out, src[:m.Start]...)
	out = append(out, m.Repl...)
	return append(out, src[m.End:]...), nil
}

// Shard returns the mutants of shard i of n (1-based): every n-th mutant
// in ID order, so that shards stay balanced across files.
func Shard(ms []Mutant, i, n int) []Mutant {
	sorted := append([]Mutant(nil), ms...)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a].ID < sorted[b].ID })
	var out []Mutant
	for k, m := range sorted {
		if k%n == i-1 {
			out = append(out, m)
		}
	}
	return out
}

type walker struct {
	opt      *Options
	fset     *token.FileSet
	src      []byte
	file, fn string
	st       map[string]bool // state types
	ptrFuncs map[string]bool // functions and methods returning *StateType
	rooted   map[string]bool // identifiers that point into the state
	pkgNames map[string]bool // package-level constants, variables, functions, types
	// cfgIdents: parameters of a configuration type.
	cfgIdents map[string]bool
	out       []Mutant
}

func (w *walker) add(op Op, start, end token.Pos, repl string) {
	s, e := w.fset.Position(start), w.fset.Position(end)
	orig := string(w.src[s.Offset:e.Offset])
	w.out = append(w.out, Mutant{File: w.file, Func: w.fn, Op: op, Line: s.Line, Start: s.Offset, End: e.Offset,
		Orig: orig, Repl: repl, Source: strings.TrimSpace(lineAt(w.src, s.Offset))})
}

func (w *walker) text(n ast.Node) string {
	return string(w.src[w.fset.Position(n.Pos()).Offset:w.fset.Position(n.End()).Offset])
}

// params marks the parameters and receiver of a pointer-to-state type.
func (w *walker) params(fd *ast.FuncDecl) {
	lists := []*ast.FieldList{fd.Type.Params}
	if fd.Recv != nil {
		lists = append(lists, fd.Recv)
	}
	for _, l := range lists {
		if l == nil {
			continue
		}
		for _, f := range l.List {
			if w.isStatePtrType(f.Type) {
				for _, n := range f.Names {
					w.rooted[n.Name] = true
				}
			}
			if contains(w.opt.ConfigTypes, elemName(f.Type)) {
				for _, n := range f.Names {
					w.cfgIdents[n.Name] = true
				}
			}
		}
	}
}

func (w *walker) isStatePtrType(t ast.Expr) bool {
	if se, ok := t.(*ast.StarExpr); ok {
		if id, ok := se.X.(*ast.Ident); ok {
			return w.st[id.Name]
		}
	}
	return false
}

// pointsIntoState: e is &<state-rooted>, a state-rooted pointer, or a call
// of a function returning a pointer to a state type.
func (w *walker) pointsIntoState(e ast.Expr) bool {
	switch x := ast.Unparen(e).(type) {
	case *ast.UnaryExpr:
		return x.Op == token.AND && w.isRooted(x.X)
	case *ast.Ident:
		return w.rooted[x.Name]
	case *ast.CallExpr:
		switch f := x.Fun.(type) {
		case *ast.Ident:
			return w.ptrFuncs[f.Name]
		case *ast.SelectorExpr:
			return w.ptrFuncs[f.Sel.Name] && w.isRooted(f.X)
		}
	}
	return false
}

// isRooted: e denotes memory of the state (through fields, elements and
// pointers of a rooted identifier).
func (w *walker) isRooted(e ast.Expr) bool {
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident:
		return w.rooted[x.Name]
	case *ast.SelectorExpr:
		return w.isRooted(x.X)
	case *ast.IndexExpr:
		return w.isRooted(x.X)
	case *ast.StarExpr:
		return w.isRooted(x.X)
	}
	return false
}

// updatesState: the assignment target is state memory other than a bare
// rooted identifier (re-pointing a local is not an update).
func (w *walker) updatesState(lhs ast.Expr) bool {
	switch x := ast.Unparen(lhs).(type) {
	case *ast.Ident:
		return false
	case *ast.SelectorExpr:
		if contains(w.opt.ExcludeFields, x.Sel.Name) {
			return false
		}
	}
	return w.isRooted(lhs)
}

func (w *walker) block(b *ast.BlockStmt) {
	if b == nil {
		return
	}
	w.stmts(b.List)
}

func (w *walker) stmts(list []ast.Stmt) {
	for _, s := range list {
		w.stmt(s, true)
	}
}

// stmt visits s; inList says s stands in a statement list (it may be
// skipped).
func (w *walker) stmt(s ast.Stmt, inList bool) {
	switch x := s.(type) {
	case *ast.AssignStmt:
		if x.Tok == token.DEFINE {
			for i, l := range x.Lhs {
				id, ok := l.(*ast.Ident)
				if !ok || id.Name == "_" {
					continue
				}
				if len(x.Rhs) == len(x.Lhs) && w.pointsIntoState(x.Rhs[i]) {
					w.rooted[id.Name] = true
				} else {
					delete(w.rooted, id.Name) // shadowed
				}
			}
			w.exprs(x.Rhs...)
			return
		}
		if inList {
			for _, l := range x.Lhs {
				if w.updatesState(l) {
					w.add(OpSkip, x.Pos(), x.End(), "/* mutant: skipped */")
					break
				}
			}
		}
		w.exprs(x.Rhs...)
	case *ast.IncDecStmt:
		if inList && w.updatesState(x.X) {
			w.add(OpSkip, x.Pos(), x.End(), "/* mutant: skipped */")
		}
	case *ast.ExprStmt:
		if call, ok := x.X.(*ast.CallExpr); ok && inList && w.opt.SkipCalls != nil && w.opt.SkipCalls.MatchString(calleeName(call)) {
			w.add(OpSkip, x.Pos(), x.End(), "/* mutant: skipped */")
		}
		w.exprs(x.X)
	case *ast.IfStmt:
		if x.Init != nil {
			w.stmt(x.Init, false)
		}
		w.cond(x.Cond)
		w.exprs(x.Cond)
		if !w.onlyWithSwitch(x.Cond) {
			w.block(x.Body) // else: a catalogue bug's or a hand-written mutation's code
		}
		if x.Else != nil {
			w.stmt(x.Else, false)
		}
	case *ast.BlockStmt:
		w.block(x)
	case *ast.ForStmt:
		if x.Init != nil {
			w.stmt(x.Init, false)
		}
		if x.Cond != nil {
			w.exprs(x.Cond)
		}
		w.block(x.Body)
	case *ast.RangeStmt:
		// A range over state memory yields values (copies) or indices:
		// the loop variables are not rooted (&s.X[i] makes one).
		for _, v := range []ast.Expr{x.Key, x.Value} {
			if id, ok := v.(*ast.Ident); ok {
				delete(w.rooted, id.Name)
			}
		}
		w.exprs(x.X)
		w.block(x.Body)
	case *ast.SwitchStmt:
		if x.Init != nil {
			w.stmt(x.Init, false)
		}
		if x.Tag != nil {
			w.exprs(x.Tag)
		}
		for _, c := range x.Body.List {
			cc := c.(*ast.CaseClause)
			w.exprs(cc.List...)
			w.stmts(cc.Body)
		}
	case *ast.TypeSwitchStmt:
		for _, c := range x.Body.List {
			w.stmts(c.(*ast.CaseClause).Body)
		}
	case *ast.LabeledStmt:
		w.stmt(x.Stmt, inList)
	case *ast.ReturnStmt:
		w.exprs(x.Results...)
	case *ast.DeclStmt:
		if gd, ok := x.Decl.(*ast.GenDecl); ok {
			for _, sp := range gd.Specs {
				if vs, ok := sp.(*ast.ValueSpec); ok {
					for _, n := range vs.Names {
						delete(w.rooted, n.Name)
					}
					if vs.Type != nil && w.isStatePtrType(vs.Type) {
						for _, n := range vs.Names {
							w.rooted[n.Name] = true
						}
					}
					w.exprs(vs.Values...)
				}
			}
		}
	}
}

// exprs visits function literals inside expressions (their bodies are
// statements of the same function).
func (w *walker) exprs(es ...ast.Expr) {
	for _, e := range es {
		ast.Inspect(e, func(n ast.Node) bool {
			if fl, ok := n.(*ast.FuncLit); ok {
				w.block(fl.Body)
				return false
			}
			return true
		})
	}
}

// cond adds the condition sites of an if's condition.
func (w *walker) cond(c ast.Expr) {
	var atoms []atom
	collectAtoms(c, token.ILLEGAL, &atoms)
	offOnly := map[ast.Expr]bool{}
	w.switchGroups(c, offOnly)
	for _, a := range atoms {
		if offOnly[a.e] || w.switchOrNil(a.e) || w.configOnly(a.e) || w.configBound(a.e) {
			continue
		}
		t := w.text(a.e)
		w.add(OpNegate, a.e.Pos(), a.e.End(), "!("+t+")")
		drop := "true"
		if a.parent == token.LOR {
			drop = "false"
		}
		w.add(OpDrop, a.e.Pos(), a.e.End(), drop)
		w.cmp(a.e)
	}
}

// offSwitch: e is a call of an off switch (cfg.bug(...), cfg.mut(...)), or
// its negation (neg).
func (w *walker) offSwitch(e ast.Expr) (is, neg bool) {
	e = ast.Unparen(e)
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.NOT {
		neg, e = true, ast.Unparen(u.X)
	}
	if c, ok := e.(*ast.CallExpr); ok {
		if sel, ok := c.Fun.(*ast.SelectorExpr); ok && contains(w.opt.OffSwitchCalls, sel.Sel.Name) {
			return true, neg
		}
	}
	return false, false
}

// onlyWithSwitch: the condition holds only with an off switch on (it is
// one, or an && with one among its conjuncts).
func (w *walker) onlyWithSwitch(c ast.Expr) bool {
	var ops []ast.Expr
	flattenOp(c, token.LAND, &ops)
	for _, o := range ops {
		if is, neg := w.offSwitch(o); is && !neg {
			return true
		}
	}
	return false
}

// switchGroups marks the atoms that matter only with an off switch on: the
// operands of an && that has a switch among its conjuncts, and of an ||
// that has a negated switch among its disjuncts (with the switch off the
// group's value is fixed).
func (w *walker) switchGroups(e ast.Expr, out map[ast.Expr]bool) {
	e = ast.Unparen(e)
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.NOT {
		w.switchGroups(u.X, out)
		return
	}
	b, ok := e.(*ast.BinaryExpr)
	if !ok || b.Op != token.LAND && b.Op != token.LOR {
		return
	}
	var ops []ast.Expr
	flattenOp(b, b.Op, &ops)
	fixed := false
	for _, o := range ops {
		if is, neg := w.offSwitch(o); is && neg == (b.Op == token.LOR) {
			fixed = true
		}
	}
	for _, o := range ops {
		if fixed {
			var atoms []atom
			collectAtoms(o, b.Op, &atoms)
			for _, a := range atoms {
				out[a.e] = true
			}
			continue
		}
		w.switchGroups(o, out)
	}
}

// flattenOp lists the operands of a chain of op (through parentheses).
func flattenOp(e ast.Expr, op token.Token, out *[]ast.Expr) {
	e = ast.Unparen(e)
	if b, ok := e.(*ast.BinaryExpr); ok && b.Op == op {
		flattenOp(b.X, op, out)
		flattenOp(b.Y, op, out)
		return
	}
	*out = append(*out, e)
}

type atom struct {
	e      ast.Expr
	parent token.Token // LAND, LOR, or ILLEGAL for a lone condition
}

// collectAtoms flattens && and || through parentheses and !.
func collectAtoms(e ast.Expr, parent token.Token, out *[]atom) {
	switch x := e.(type) {
	case *ast.ParenExpr:
		collectAtoms(x.X, parent, out)
		return
	case *ast.UnaryExpr:
		if x.Op == token.NOT {
			if inner, ok := ast.Unparen(x.X).(*ast.BinaryExpr); ok && (inner.Op == token.LAND || inner.Op == token.LOR) {
				collectAtoms(inner, parent, out)
				return
			}
		}
	case *ast.BinaryExpr:
		if x.Op == token.LAND || x.Op == token.LOR {
			collectAtoms(x.X, x.Op, out)
			collectAtoms(x.Y, x.Op, out)
			return
		}
	}
	*out = append(*out, atom{e, parent})
}

// switchOrNil: the atom is a model switch (cfg.mut(...)), a negated one, or
// a nil check of an emitter or error.
func (w *walker) switchOrNil(e ast.Expr) bool {
	e = ast.Unparen(e)
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.NOT {
		e = ast.Unparen(u.X)
	}
	switch x := e.(type) {
	case *ast.CallExpr:
		if sel, ok := x.Fun.(*ast.SelectorExpr); ok && contains(w.opt.SwitchCalls, sel.Sel.Name) {
			return true
		}
	case *ast.BinaryExpr:
		if x.Op == token.EQL || x.Op == token.NEQ {
			for _, p := range [][2]ast.Expr{{x.X, x.Y}, {x.Y, x.X}} {
				id, ok1 := p[0].(*ast.Ident)
				nl, ok2 := p[1].(*ast.Ident)
				if ok1 && ok2 && nl.Name == "nil" && contains(w.opt.NilIdents, id.Name) {
					return true
				}
			}
		}
	}
	return false
}

// configBound: a comparison with a configuration parameter's field, a
// budget of the configuration (int(s.Crashes) < cfg.Crashes, s.UpTs <
// cfg.TsMax): the search's bounds, not a protocol rule.
func (w *walker) configBound(e ast.Expr) bool {
	b, ok := ast.Unparen(e).(*ast.BinaryExpr)
	if !ok {
		return false
	}
	switch b.Op {
	case token.LSS, token.LEQ, token.GTR, token.GEQ:
	default:
		return false
	}
	for _, x := range []ast.Expr{b.X, b.Y} {
		found := false
		ast.Inspect(x, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && w.cfgIdents[id.Name] {
					found = true
				}
			}
			return !found
		})
		if found {
			return true
		}
	}
	return false
}

// configOnly: the condition's root identifiers are configuration
// parameters, caller flags and package-level names, with at least one of
// the first two (cfg.Puller, withFaults).
func (w *walker) configOnly(e ast.Expr) bool {
	some, only := false, true
	ast.Inspect(e, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SelectorExpr:
			ast.Inspect(x.X, func(n ast.Node) bool { return w.rootIdent(n, &some, &only) })
			return false
		case *ast.Ident:
			return w.rootIdent(x, &some, &only)
		}
		return true
	})
	return some && only
}

func (w *walker) rootIdent(n ast.Node, some, only *bool) bool {
	id, ok := n.(*ast.Ident)
	if !ok {
		return true
	}
	switch {
	case w.cfgIdents[id.Name] || contains(w.opt.FlagIdents, id.Name):
		*some = true
	case w.pkgNames[id.Name] || id.Name == "nil" || id.Name == "true" || id.Name == "false":
	default:
		*only = false
	}
	return true
}

// cmp adds the comparison swaps inside e: < and <=, > and >= where an
// operand names a timestamp or an epoch.
func (w *walker) cmp(e ast.Expr) {
	ast.Inspect(e, func(n ast.Node) bool {
		b, ok := n.(*ast.BinaryExpr)
		if !ok {
			return true
		}
		swap := map[token.Token]string{token.LSS: "<=", token.LEQ: "<", token.GTR: ">=", token.GEQ: ">"}
		repl, ok := swap[b.Op]
		if !ok || w.opt.CmpNames == nil || !(w.namesTs(b.X) || w.namesTs(b.Y)) {
			return true
		}
		w.add(OpCmp, b.OpPos, b.OpPos+token.Pos(len(b.Op.String())), repl)
		m := &w.out[len(w.out)-1]
		m.ExprStart, m.ExprEnd = w.fset.Position(b.Pos()).Offset, w.fset.Position(b.End()).Offset
		return true
	})
}

// namesTs: some identifier or field name in e matches CmpNames.
func (w *walker) namesTs(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && w.opt.CmpNames.MatchString(id.Name) {
			found = true
		}
		return !found
	})
	return found
}

// stateTypes: the roots and, transitively, the named struct types their
// fields hold (directly, in arrays, slices or pointers).
func stateTypes(files []*ast.File, roots []string) map[string]bool {
	structs := map[string]*ast.StructType{}
	for _, f := range files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, sp := range gd.Specs {
				ts := sp.(*ast.TypeSpec)
				if st, ok := ts.Type.(*ast.StructType); ok {
					structs[ts.Name.Name] = st
				}
			}
		}
	}
	out := map[string]bool{}
	var visit func(name string)
	visit = func(name string) {
		st, ok := structs[name]
		if !ok || out[name] {
			return
		}
		out[name] = true
		for _, f := range st.Fields.List {
			visit(elemName(f.Type))
		}
	}
	for _, r := range roots {
		visit(r)
	}
	return out
}

func elemName(t ast.Expr) string {
	for {
		switch x := t.(type) {
		case *ast.Ident:
			return x.Name
		case *ast.ArrayType:
			t = x.Elt
		case *ast.StarExpr:
			t = x.X
		default:
			return ""
		}
	}
}

// statePtrFuncs: functions and methods whose first result is a pointer to a
// state type (s.disp(id) returns *Disp).
func statePtrFuncs(files []*ast.File, st map[string]bool) map[string]bool {
	out := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Type.Results == nil || len(fd.Type.Results.List) == 0 {
				continue
			}
			if se, ok := fd.Type.Results.List[0].Type.(*ast.StarExpr); ok {
				if id, ok := se.X.(*ast.Ident); ok && st[id.Name] {
					out[fd.Name.Name] = true
				}
			}
		}
	}
	return out
}

// packageNames: the package-level names (constants, variables, types,
// functions).
func packageNames(files []*ast.File) map[string]bool {
	out := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			switch x := d.(type) {
			case *ast.FuncDecl:
				if x.Recv == nil {
					out[x.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, sp := range x.Specs {
					switch y := sp.(type) {
					case *ast.ValueSpec:
						for _, n := range y.Names {
							out[n.Name] = true
						}
					case *ast.TypeSpec:
						out[y.Name.Name] = true
					}
				}
			}
		}
	}
	return out
}

func hasPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func calleeName(c *ast.CallExpr) string {
	switch f := c.Fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return ""
}

func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	return elemName(fd.Recv.List[0].Type) + "." + fd.Name.Name
}

// assignIDs: file:func:op:hash, the hash over the site's text, its
// replacement and its ordinal among equal sites of the function.
func assignIDs(ms []Mutant) {
	seen := map[string]int{}
	for i := range ms {
		m := &ms[i]
		key := strings.Join([]string{m.File, m.Func, string(m.Op), m.Orig, m.Repl, cmpContext(m)}, "\x00")
		n := seen[key]
		seen[key]++
		h := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d", key, n)))
		m.ID = fmt.Sprintf("%s:%s:%s:%s", strings.TrimSuffix(m.File, ".go"), m.Func, m.Op, hex.EncodeToString(h[:4]))
	}
}

// cmpContext: a comparison's operator alone says little; its source line
// tells the sites apart.
func cmpContext(m *Mutant) string {
	if m.Op == OpCmp {
		return m.Source
	}
	return ""
}

func lineAt(src []byte, off int) string {
	start := bytes.LastIndexByte(src[:off], '\n') + 1
	end := bytes.IndexByte(src[off:], '\n')
	if end < 0 {
		return string(src[start:])
	}
	return string(src[start : off+end])
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 100 {
		s = s[:97] + "..."
	}
	return s
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
