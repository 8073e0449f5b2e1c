package model

// canonicalize puts s in its canonical form, so that states that differ only
// in irrelevant detail have equal bytes:
//   - DispatcherIDs are compacted to 1..k preserving their order (IDs are
//     compared only for equality and order; a fresh ID is NextID = k+1);
//   - dispatchers are sorted by ID, spans by table, journal entries by ID,
//     unused slots last.
func canonicalize(s *State, e *emitter) {
	if !s.heldIDsCompact() {
		renumberIDs(s, e)
	}
	sortCanonical(s)
}

// heldIDsCompact is the fast path of canonicalize: it reports true only
// when the IDs are compact (each of 1..NextID-1 is held), from the
// dispatchers and the span controllers alone, which hold nearly every ID.
// That suffices because every field visitIDs visits holds 0 or an ID below
// NextID: allocID hands IDs out in increasing order and renumbering keeps
// the bound (TestIDsBelowNextID). So when the primary holders cover
// 1..NextID-1, the full set of held IDs is exactly 1..NextID-1 and
// renumberIDs would change nothing. false: the full scan decides.
func (s *State) heldIDsCompact() bool {
	n := s.NextID
	if n >= 64 {
		return false
	}
	want := uint64(1)<<n - 2 // 1..n-1
	var held uint64
	for i := range s.Disp {
		held |= 1 << (s.Disp[i].ID & 63)
	}
	for i := range s.Maint {
		if mt := &s.Maint[i]; mt.Exists {
			held |= 1 << (mt.TriggerID & 63)
			for j := range mt.Spans {
				held |= 1 << (mt.Spans[j].ID & 63)
			}
		}
	}
	return held&want == want
}

// renumberIDs compacts the held DispatcherIDs to 1..k, preserving their
// order, and sets NextID to k+1 (with e, it records the renumbering).
func renumberIDs(s *State, e *emitter) {
	var bits [4]uint64
	s.visitIDs(&bits, nil)
	bits[0] &^= 1 // 0 is "no ID"
	k := 0
	for _, w := range bits {
		k += popcount(w)
	}
	// Already compact (IDs 1..k all used): nothing to renumber.
	if k+1 != int(s.NextID) || !compact(&bits, k) {
		var rank [256]uint8
		r := uint8(0)
		for i := 1; i < 256; i++ {
			if bits[i>>6]&(1<<(i&63)) != 0 {
				r++
				rank[i] = r
			}
		}
		s.visitIDs(nil, &rank)
		s.NextID = r + 1
		if e != nil {
			e.rank, e.renumbered = rank, true
		}
	}
}

// sortCanonical sorts the dispatchers by ID, the spans by table and the
// journal entries by ID, unused slots last.
func sortCanonical(s *State) {
	// dispatchers by ID
	for i := 1; i < MaxDisp; i++ {
		for j := i; j > 0 && dispLess(&s.Disp[j], &s.Disp[j-1]); j-- {
			s.Disp[j], s.Disp[j-1] = s.Disp[j-1], s.Disp[j]
		}
	}
	for m := range s.Maint {
		mt := &s.Maint[m]
		if !mt.Exists {
			continue
		}
		for i := 1; i < MaxSpans; i++ {
			for j := i; j > 0 && spanLess(&mt.Spans[j], &mt.Spans[j-1]); j-- {
				mt.Spans[j], mt.Spans[j-1] = mt.Spans[j-1], mt.Spans[j]
			}
		}
	}
	for d := range s.DMs {
		J := &s.DMs[d].J
		if J[1].ID != 0 && (J[0].ID == 0 || J[1].ID < J[0].ID) {
			J[0], J[1] = J[1], J[0]
		}
	}
}

func popcount(w uint64) int {
	n := 0
	for w != 0 {
		w &= w - 1
		n++
	}
	return n
}

// compact reports whether bits holds exactly 1..k.
func compact(bits *[4]uint64, k int) bool {
	for i := 1; i <= k; i++ {
		if bits[i>>6]&(1<<(i&63)) == 0 {
			return false
		}
	}
	return true
}

// dispLess orders dispatchers by ID, unused slots (ID 0) last: ID-1 wraps
// 0 to the largest byte.
func dispLess(a, b *Disp) bool { return a.ID-1 < b.ID-1 }

// spanLess orders spans by table, then ID, unused slots (ID 0) last.
func spanLess(a, b *SpanRep) bool { return spanOrder(a) < spanOrder(b) }

func spanOrder(sp *SpanRep) uint16 {
	if sp.ID == 0 {
		return 0xFFFF
	}
	return uint16(sp.Table)<<8 | uint16(sp.ID)
}

// visitIDs visits every field that holds a DispatcherID: with bits, it
// sets each ID's bit; with rank, it renumbers each ID by rank. (One
// traversal, two operations: the checker's hot path, where a closure
// argument would cost a call per field.)
func (s *State) visitIDs(bits *[4]uint64, rank *[256]uint8) {
	// The IDs below 64 (nearly all) collect in a local word, which the
	// compiler keeps in a register: no chain of read-modify-writes through
	// memory.
	var lo uint64
	f := func(p *uint8) {
		switch id := *p; {
		case rank != nil:
			*p = rank[id]
		case id < 64:
			lo |= 1 << id
		default:
			bits[id>>6] |= 1 << (id & 63)
		}
	}
	for i := range s.Disp {
		f(&s.Disp[i].ID)
	}
	for i := range s.Maint {
		mt := &s.Maint[i]
		if !mt.Exists {
			continue
		}
		f(&mt.TriggerID)
		for j := range mt.Spans {
			f(&mt.Spans[j].ID)
		}
		for j := range mt.Boot {
			for k := range mt.Boot[j].D {
				f(&mt.Boot[j].D[k].ID)
			}
			for k := range mt.Boot[j].J {
				f(&mt.Boot[j].J[k].ID)
			}
		}
	}
	for i := range s.DMs {
		for k := range s.DMs[i].J {
			f(&s.DMs[i].J[k].ID)
		}
	}
	for i := range s.Net {
		m := &s.Net[i]
		switch m.Kind {
		case mNone:
			i = len(s.Net) // the messages are packed: the rest is free
		case mSchedule, mBootReq:
			f(&m.B)
		case mDispStatus, mBlockStatus:
			f(&m.A)
		case mBlockAction:
			f(&m.B)
		case mMerge:
			f(&m.A)
			f(&m.B)
			f(&m.C)
		}
	}
	if bits != nil {
		bits[0] |= lo
	}
}
