package model

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cespare/xxhash/v2"
)

// A census says where a configuration's states come from, to guide a
// reduction or a tighter configuration (README, "The blocking DDL barrier").
// It explores the configuration breadth-first to a depth, like
// search.Check with MaxDepth and no liveness (every state at depth <= Depth,
// every enabled action including faults, the same canonical states), then:
//   - per part of the state (the network, one message kind, the
//     maintainers, ...): how many distinct states are left when that part is
//     erased. The factor distinct/left is the spread the part adds on top of
//     the rest;
//   - how many states have an enabled non-fault action that commutes in one
//     step with every other enabled action (both orders enabled, same
//     state): the local diamonds a confluence or partial-order reduction
//     would start from. A one-step diamond at a state is necessary for such
//     a reduction, not sufficient: soundness needs the independence to hold
//     in every state and a cycle proviso (SPEC.md section 7).

// CensusPart is one erased part of the state.
type CensusPart struct {
	Name   string  `json:"name"`
	Left   int     `json:"left"`   // distinct states with the part erased
	Factor float64 `json:"factor"` // States / Left
}

// CensusReport is a census's result.
type CensusReport struct {
	Config string       `json:"config"`
	Depth  int          `json:"depth"`
	States int          `json:"states"` // distinct states at depth <= Depth
	Levels []int        `json:"levels"` // new states per depth, 0..Depth
	Parts  []CensusPart `json:"parts"`  // by factor, largest first
	// Commuting counts the states with an enabled non-fault action that
	// commutes in one step with every other enabled action; CommutingBy
	// names the first such action per state by kind (deliveries by message
	// kind). Zero unless asked for (Census's diamonds).
	Commuting   int            `json:"commuting,omitempty"`
	CommutingBy map[string]int `json:"commuting_by,omitempty"`
}

// censusParts are the parts a census erases, by name.
var censusParts = func() []struct {
	name  string
	erase func(s *State)
} {
	parts := []struct {
		name  string
		erase func(s *State)
	}{
		{"network", func(s *State) { s.Net = [MaxMsgs]Msg{} }},
		{"maintainers", func(s *State) { s.Maint = [MaxNodes]Maint{} }},
		{"maintainer watermarks", func(s *State) {
			for i := range s.Maint {
				s.Maint[i].WM = [MaxNodes]uint8{}
			}
		}},
		{"maintainer bootstrap cache", func(s *State) {
			for i := range s.Maint {
				s.Maint[i].Boot = [MaxNodes]Snapshot{}
			}
		}},
		{"maintainer block event", func(s *State) {
			for i := range s.Maint {
				s.Maint[i].Bar = BarEv{}
			}
		}},
		{"dispatchers", func(s *State) { s.Disp = [MaxDisp]Disp{} }},
		{"dispatcher block stages", func(s *State) {
			for i := range s.Disp {
				s.Disp[i].Blk = 0
			}
		}},
		{"dispatcher managers", func(s *State) { s.DMs = [MaxNodes]DM{} }},
		{"coordinator", func(s *State) { s.Coord = Coord{} }},
		{"upstream", func(s *State) {
			s.UpTs, s.PullTs, s.TableT, s.DDLs, s.BlkT, s.DropTab = 0, 0, [MaxTables + 1]uint8{}, 0, 0, 0
		}},
	}
	for k := uint8(1); k < msgKinds; k++ {
		parts = append(parts, struct {
			name  string
			erase func(s *State)
		}{"network: " + msgNames[k], func(s *State) { eraseKind(s, k) }})
	}
	return parts
}()

// eraseKind removes every message of kind k from the network, keeping the
// others in their order.
func eraseKind(s *State, k uint8) {
	var out [MaxMsgs]Msg
	j := 0
	for _, m := range s.Net {
		if m.Kind != 0 && m.Kind != k {
			out[j] = m
			j++
		}
	}
	s.Net = out
}

// Census explores cfg breadth-first to depth (at most 30) and counts, per
// part, the spread it adds; with diamonds, it also counts the one-step
// diamonds (which costs a step per pair of enabled actions). It keeps every
// state in memory (about a kilobyte each): a census is for the first
// hundreds of thousands of states, not a whole space.
func Census(cfg Config, depth int, diamonds bool) (CensusReport, error) {
	if err := cfg.Validate(); err != nil {
		return CensusReport{}, err
	}
	if depth < 0 || depth > 30 {
		return CensusReport{}, fmt.Errorf("census depth must be 0..30, got %d", depth)
	}
	rep := CensusReport{Config: cfg.Name, Depth: depth}
	s0 := Init(&cfg)
	seen := map[State]struct{}{s0: {}}
	all := []State{s0}
	rep.Levels = append(rep.Levels, 1)
	frontier := all
	var buf []Action
	for d := 1; d <= depth && len(frontier) > 0; d++ {
		var next []State
		for i := range frontier {
			buf = appendActions(&cfg, &frontier[i], buf[:0], true)
			for _, a := range buf {
				n := frontier[i]
				step(&cfg, &n, a, nil)
				if _, ok := seen[n]; !ok {
					seen[n] = struct{}{}
					next = append(next, n)
				}
			}
		}
		rep.Levels = append(rep.Levels, len(next))
		all = append(all, next...)
		frontier = next
	}
	seen = nil
	rep.States = len(all)
	for _, p := range censusParts {
		left := map[uint64]struct{}{}
		for i := range all {
			x := all[i]
			p.erase(&x)
			left[xxhash.Sum64(x.Bytes())] = struct{}{}
		}
		rep.Parts = append(rep.Parts, CensusPart{Name: p.name, Left: len(left), Factor: float64(len(all)) / float64(len(left))})
	}
	sort.SliceStable(rep.Parts, func(i, j int) bool { return rep.Parts[i].Factor > rep.Parts[j].Factor })
	if diamonds {
		rep.CommutingBy = map[string]int{}
		for i := range all {
			if a, ok := commutingAction(&cfg, &all[i]); ok {
				rep.Commuting++
				rep.CommutingBy[censusActionName(a)]++
			}
		}
	}
	return rep, nil
}

// commutingAction returns the first enabled non-fault action of s that
// commutes in one step with every other enabled action: for each other b,
// b is enabled after a, a after b, and both orders reach the same state.
func commutingAction(cfg *Config, s *State) (Action, bool) {
	acts := appendActions(cfg, s, nil, true)
	for _, a := range acts {
		if a.Kind.IsFault() {
			continue
		}
		sa := *s
		step(cfg, &sa, a, nil)
		ok := true
		for _, b := range acts {
			if b == a {
				continue
			}
			sb := *s
			step(cfg, &sb, b, nil)
			if !enabled(cfg, &sa, b) || !enabled(cfg, &sb, a) {
				ok = false
				break
			}
			ab, ba := sa, sb
			step(cfg, &ab, b, nil)
			step(cfg, &ba, a, nil)
			if ab != ba {
				ok = false
				break
			}
		}
		if ok {
			return a, true
		}
	}
	return Action{}, false
}

func censusActionName(a Action) string {
	if a.Kind == ADeliver {
		return "deliver " + msgNames[a.Msg.Kind]
	}
	return a.Kind.String()
}

// String renders the report as a table.
func (r CensusReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "census of %s to depth %d: %d distinct states; new per depth %v\n", r.Config, r.Depth, r.States, r.Levels)
	for _, p := range r.Parts {
		fmt.Fprintf(&b, "  erase %-40s %9d left  x%.2f\n", p.Name, p.Left, p.Factor)
	}
	if r.CommutingBy != nil {
		fmt.Fprintf(&b, "  states with a non-fault action commuting in one step with every other enabled action: %d of %d (%.1f %%)\n",
			r.Commuting, r.States, 100*float64(r.Commuting)/float64(max(1, r.States)))
		names := make([]string, 0, len(r.CommutingBy))
		for n := range r.CommutingBy {
			names = append(names, n)
		}
		sort.Slice(names, func(i, j int) bool { return r.CommutingBy[names[i]] > r.CommutingBy[names[j]] })
		for _, n := range names {
			fmt.Fprintf(&b, "    first such action %-40s %d\n", n, r.CommutingBy[n])
		}
	}
	return b.String()
}
