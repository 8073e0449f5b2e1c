package search

import "cdcspec/spec"

// Two toy systems exercise the search without the TiCDC model.

// grid: counters X and Y in 0..Max, each bumped by its own action. Safety
// "sum-not-bad": X+Y never reaches Bad (0 = never violated). States with
// X == Edge lie on the system's own bound (0 = none). Inits lists the
// initial states (default: the origin).
type grid struct {
	Max, Bad, Edge uint8
	Inits          []gridState
}

type gridState struct{ X, Y uint8 }

type gridAct uint8

const (
	bumpX gridAct = iota
	bumpY
)

func (g grid) Initial() []gridState {
	if len(g.Inits) > 0 {
		return append([]gridState(nil), g.Inits...)
	}
	return []gridState{{}}
}

func (g grid) Actions(s *gridState, buf []gridAct) []gridAct {
	if s.X < g.Max {
		buf = append(buf, bumpX)
	}
	if s.Y < g.Max {
		buf = append(buf, bumpY)
	}
	return buf
}

func (g grid) Step(s *gridState, a gridAct) {
	if a == bumpX {
		s.X++
	} else {
		s.Y++
	}
}

func (g grid) Canonical(s *gridState, buf []byte) []byte { return append(buf, s.X, s.Y) }
func (g grid) Cut(s *gridState) bool                     { return g.Edge != 0 && s.X == g.Edge }
func (g grid) SafetyProperties() []spec.Property         { return []spec.Property{"sum-not-bad"} }

func (g grid) Safety(prev, next *gridState) (int, string) {
	if g.Bad != 0 && next.X+next.Y == g.Bad {
		return 0, "the sum reached the bad value"
	}
	return -1, ""
}

// ring: a token passes around N positions. Faults (one in all): the token
// is lost, or passing pauses until healed. With Regen the fair schedule
// regenerates a lost token at position 0. Safety "never-at-bad": the token
// never enters position Bad (0 = never violated). Liveness "token-exists":
// at quiescence there is a token.
type ring struct {
	N, Bad uint8
	Regen  bool
}

type ringState struct {
	Pos          uint8
	Lost, Paused bool
	Faults       uint8
}

type ringAct uint8

const (
	pass ringAct = iota
	lose
	pause
	resume
	regen
)

func (r ring) Initial() []ringState { return []ringState{{}} }

func (r ring) Actions(s *ringState, buf []ringAct) []ringAct {
	return r.appendActions(s, buf, true)
}

func (r ring) appendActions(s *ringState, buf []ringAct, faults bool) []ringAct {
	if !s.Lost && !s.Paused {
		buf = append(buf, pass)
	}
	if faults && s.Faults == 0 {
		if !s.Lost {
			buf = append(buf, lose)
		}
		buf = append(buf, pause)
	}
	if s.Paused {
		buf = append(buf, resume)
	}
	if s.Lost && r.Regen {
		buf = append(buf, regen)
	}
	return buf
}

func (r ring) Step(s *ringState, a ringAct) {
	switch a {
	case pass:
		s.Pos = (s.Pos + 1) % r.N
	case lose:
		s.Lost, s.Faults = true, s.Faults+1
	case pause:
		s.Paused, s.Faults = true, s.Faults+1
	case resume:
		s.Paused = false
	case regen:
		s.Lost, s.Pos = false, 0
	}
}

func (r ring) Canonical(s *ringState, buf []byte) []byte {
	b := func(v bool) byte {
		if v {
			return 1
		}
		return 0
	}
	return append(buf, s.Pos, b(s.Lost), b(s.Paused), s.Faults)
}

func (r ring) Cut(*ringState) bool                 { return false }
func (r ring) SafetyProperties() []spec.Property   { return []spec.Property{"never-at-bad"} }
func (r ring) LivenessProperties() []spec.Property { return []spec.Property{"token-exists"} }

func (r ring) Safety(prev, next *ringState) (int, string) {
	if r.Bad != 0 && next.Pos == r.Bad && prev.Pos != r.Bad {
		return 0, "the token entered the bad position"
	}
	return -1, ""
}

func (r ring) HealAction(s *ringState) (ringAct, bool) { return resume, s.Paused }

func (r ring) FairRound(s *ringState, buf []ringAct) []ringAct {
	return r.appendActions(s, buf, false)
}

func (r ring) StillEnabled(s *ringState, a ringAct) bool {
	for _, b := range r.appendActions(s, nil, false) {
		if a == b {
			return true
		}
	}
	return false
}

func (r ring) Goals(healed, final *ringState) (int, string) {
	if final.Lost {
		return 0, "no token after the faults healed"
	}
	return -1, ""
}

var _ Fair[ringState, ringAct] = ring{}

// naiveBFS explores sys with a map: the reference for distinct states,
// transitions and depth (no properties).
func naiveBFS[S, A any](sys System[S, A]) (distinct, transitions int64, depth int) {
	seen := map[string]bool{}
	var level []S
	for _, s := range sys.Initial() {
		k := string(sys.Canonical(&s, nil))
		if !seen[k] {
			seen[k] = true
			level = append(level, s)
		}
	}
	for len(level) > 0 {
		var next []S
		for i := range level {
			for _, a := range sys.Actions(&level[i], nil) {
				nx := level[i]
				sys.Step(&nx, a)
				transitions++
				k := string(sys.Canonical(&nx, nil))
				if !seen[k] {
					seen[k] = true
					next = append(next, nx)
				}
			}
		}
		if len(next) > 0 {
			depth++
		}
		level = next
	}
	return int64(len(seen)), transitions, depth
}

// replay applies path from start and returns the states, start first.
func replay[S, A any](sys System[S, A], start S, path []A) []S {
	out := []S{start}
	s := start
	for _, a := range path {
		sys.Step(&s, a)
		out = append(out, s)
	}
	return out
}

// mirror is grid with X and Y interchangeable (Symmetric): the
// representative has X <= Y.
type mirror struct{ grid }

func (m mirror) Represent(s *gridState) Perm {
	if s.X > s.Y {
		s.X, s.Y = s.Y, s.X
		return 1
	}
	return 0
}

func (m mirror) UnpermuteAction(p Perm, a gridAct) gridAct {
	if p == 1 {
		return 1 - a
	}
	return a
}

func (m mirror) SymmetryGroup() int { return 2 }
