package search

import (
	"encoding/binary"
	"fmt"
	"os"
	"reflect"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Past the memory budget (Bounds.Memory) the frontier's states and the
// expanded levels' trails (fingerprint and parent of every state) move to
// files: one file per frontier level, deleted once the level is expanded,
// and one trail file for the whole search (16 bytes per state), read back
// only to rebuild a counterexample. States are written as their memory, so
// only a flat S (no pointers, no slices, no strings: the model's State)
// spills; a search over any other S only stops at the budget.

// stateSize is the size in bytes of one S.
func stateSize[S any]() int64 {
	var s S
	return int64(unsafe.Sizeof(s))
}

// flat reports whether a value of t is its memory: no pointer anywhere.
func flat(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	case reflect.Array:
		return flat(t.Elem())
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if !flat(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return false
}

// levelFile is an append-only file written concurrently at reserved
// offsets.
type levelFile struct {
	f    *os.File
	off  atomic.Int64
	once sync.Once
}

func (l *levelFile) write(b []byte) (int64, error) {
	off := l.off.Add(int64(len(b))) - int64(len(b))
	_, err := l.f.WriteAt(b, off)
	return off, err
}

func (l *levelFile) remove() {
	l.once.Do(func() {
		l.f.Close()
		os.Remove(l.f.Name())
	})
}

// readStates reads len(dst) states spilled at off into dst.
func readStates[S any](l *levelFile, dst []S, off int64) ([]S, error) {
	if len(dst) == 0 {
		return dst, nil
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&dst[0])), int64(len(dst))*stateSize[S]())
	_, err := l.f.ReadAt(b, off)
	return dst, err
}

// spiller owns the spill files of one search.
type spiller[S any] struct {
	dir     string
	ok      bool // S is flat: states can spill
	mu      sync.Mutex
	writing *levelFile // the file of the level being discovered
	trail   *levelFile
	files   []*levelFile
}

func newSpiller[S any](dir string) *spiller[S] {
	return &spiller[S]{dir: dir, ok: flat(reflect.TypeFor[S]())}
}

func (sp *spiller[S]) create() (*levelFile, error) {
	f, err := os.CreateTemp(sp.dir, "cdcspec-spill-*")
	if err != nil {
		return nil, err
	}
	l := &levelFile{f: f}
	sp.files = append(sp.files, l)
	return l, nil
}

// levelWriter returns the file of the level being discovered, creating it
// on first use.
func (sp *spiller[S]) levelWriter() (*levelFile, error) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.writing == nil {
		l, err := sp.create()
		if err != nil {
			return nil, err
		}
		sp.writing = l
	}
	return sp.writing, nil
}

// rotate starts a new level: its blocks go to a new file.
func (sp *spiller[S]) rotate() {
	sp.mu.Lock()
	sp.writing = nil
	sp.mu.Unlock()
}

func (sp *spiller[S]) trailWriter() (*levelFile, error) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.trail == nil {
		l, err := sp.create()
		if err != nil {
			return nil, err
		}
		sp.trail = l
	}
	return sp.trail, nil
}

func (sp *spiller[S]) close() {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	for _, l := range sp.files {
		l.remove()
	}
}

// spillFraction is the share of the memory budget past which frontier
// blocks spill; the rest is the visited set's and the memo's room to grow.
var spillFraction = 0.6

// spillStates writes b's states to the level's file when the frontier
// presses on the budget (spillFraction).
func (r *run[S, A]) spillStates(b *block[S]) {
	sp := r.spill
	if sp == nil || !sp.ok || b.stOff >= 0 || len(b.states) == 0 {
		return
	}
	if float64(r.mem.used.Load()) < spillFraction*float64(r.mem.limit) {
		return
	}
	l, err := sp.levelWriter()
	if err == nil {
		n := int64(len(b.states)) * stateSize[S]()
		raw := unsafe.Slice((*byte)(unsafe.Pointer(&b.states[0])), n)
		b.stOff, err = l.write(raw)
		r.spilled.Add(n)
	}
	if err != nil {
		b.stOff = -1
		r.stopWith(fmt.Sprintf("spilling the frontier to disk: %v", err))
		return
	}
	b.n, b.stFile = len(b.states), l
	r.mem.give(int64(cap(b.states)) * stateSize[S]())
	b.states = nil
}

// spillTrail writes an expanded block's trail to the trail file (memory
// budget only).
func (r *run[S, A]) spillTrail(b *block[S]) {
	if r.spill == nil || b.trOff >= 0 || b.n == 0 {
		return
	}
	l, err := r.spill.trailWriter()
	if err != nil {
		r.stopWith(fmt.Sprintf("spilling the trail to disk: %v", err))
		return
	}
	buf := make([]byte, 16*b.n)
	for i := 0; i < b.n; i++ {
		binary.LittleEndian.PutUint64(buf[8*i:], b.fps[i])
		binary.LittleEndian.PutUint64(buf[8*(b.n+i):], uint64(b.parents[i]))
	}
	off, err := l.write(buf)
	if err != nil {
		r.stopWith(fmt.Sprintf("spilling the trail to disk: %v", err))
		return
	}
	r.spilled.Add(int64(len(buf)))
	b.trOff = off
	r.mem.give(int64(cap(b.fps)+cap(b.parents)) * 8)
	b.fps, b.parents = nil, nil
}

// trailAt is the fingerprint and parent of b's i-th state.
func (r *run[S, A]) trailAt(b *block[S], i int64) (uint64, int64, error) {
	if b.trOff < 0 {
		return b.fps[i], b.parents[i], nil
	}
	var buf [8]byte
	if _, err := r.spill.trail.f.ReadAt(buf[:], b.trOff+8*i); err != nil {
		return 0, 0, err
	}
	fp := binary.LittleEndian.Uint64(buf[:])
	if _, err := r.spill.trail.f.ReadAt(buf[:], b.trOff+8*(int64(b.n)+i)); err != nil {
		return 0, 0, err
	}
	return fp, int64(binary.LittleEndian.Uint64(buf[:])), nil
}

var memSamples = []metrics.Sample{
	{Name: "/memory/classes/total:bytes"},
	{Name: "/memory/classes/heap/released:bytes"},
}

var memMu sync.Mutex

// ProcessMemory is the memory the Go runtime holds from the OS (close to
// the process's resident memory).
func ProcessMemory() int64 {
	memMu.Lock()
	defer memMu.Unlock()
	metrics.Read(memSamples)
	return int64(memSamples[0].Value.Uint64() - memSamples[1].Value.Uint64())
}
