package tikv

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ResolvedInterval is how often a store sends the resolved ts of the regions
// it leads on every stream (TiKV's cdc.min-ts-interval is 1 s; the runtime
// uses a faster clock for its short runs).
const ResolvedInterval = 100 * time.Millisecond

// Store is one TiKV store: a TCP listener serving the event feed. It answers
// a region's request with INITIALIZED after an incremental scan when it
// leads the region, with NotLeader otherwise, sends every led region's
// resolved ts every ResolvedInterval, and tells subscribers NotLeader when
// PD moves a leader away. Down closes the listener and every stream; Up
// listens again on the same address.
type Store struct {
	ID   uint64
	Addr string
	pd   *PD

	// up is read by PD under its lock; PD's lock is taken inside mu
	// (resolvedLoop), so up is not guarded by mu.
	up atomic.Bool

	mu    sync.Mutex
	ln    net.Listener
	conns map[*storeConn]struct{}
	rng   *rand.Rand
	stop  chan struct{}
}

type storeConn struct {
	c    net.Conn
	out  chan ChangeDataEvent
	done chan struct{}
	once sync.Once
	// regs: region ID -> registration (guarded by Store.mu).
	regs map[uint64]*registration
}

type registration struct {
	requestID   uint64
	initialized bool
}

func newStore(id uint64, pd *PD, seed uint64) (*Store, error) {
	s := &Store{ID: id, pd: pd, conns: map[*storeConn]struct{}{}, rng: rand.New(rand.NewPCG(seed, id))}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("tikv: store %d listen: %w", id, err)
	}
	s.Addr = ln.Addr().String()
	s.start(ln)
	return s, nil
}

func (s *Store) start(ln net.Listener) {
	s.mu.Lock()
	s.ln, s.stop = ln, make(chan struct{})
	s.up.Store(true)
	stop := s.stop
	s.mu.Unlock()
	go s.accept(ln)
	go s.resolvedLoop(stop)
}

// Up reports whether the store is serving.
func (s *Store) Up() bool { return s.up.Load() }

// down closes the listener and every stream.
func (s *Store) down() {
	s.mu.Lock()
	if !s.up.Load() {
		s.mu.Unlock()
		return
	}
	s.up.Store(false)
	ln := s.ln
	close(s.stop)
	var conns []*storeConn
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.conns = map[*storeConn]struct{}{}
	s.mu.Unlock()
	_ = ln.Close()
	for _, c := range conns {
		c.close()
	}
}

// restart listens on the store's address again.
func (s *Store) restart() error {
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ {
		ln, err = net.Listen("tcp", s.Addr)
		if err == nil || !errors.Is(err, syscall.EADDRINUSE) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("tikv: store %d listen again on %s: %w", s.ID, s.Addr, err)
	}
	s.start(ln)
	return nil
}

func (s *Store) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		sc := &storeConn{c: c, out: make(chan ChangeDataEvent, 4096), done: make(chan struct{}), regs: map[uint64]*registration{}}
		s.mu.Lock()
		if !s.up.Load() {
			s.mu.Unlock()
			_ = c.Close()
			continue
		}
		s.conns[sc] = struct{}{}
		s.mu.Unlock()
		go s.writeLoop(sc)
		go s.readLoop(sc)
	}
}

func (c *storeConn) close() {
	c.once.Do(func() {
		close(c.done)
		_ = c.c.Close()
	})
}

// send queues ev on the stream; a stream that cannot keep up is closed (as
// gRPC's flow control would eventually break it).
func (c *storeConn) send(ev ChangeDataEvent) {
	select {
	case c.out <- ev:
	case <-c.done:
	default:
		c.close()
	}
}

func (s *Store) writeLoop(c *storeConn) {
	w := bufio.NewWriter(c.c)
	for {
		select {
		case <-c.done:
			return
		case ev := <-c.out:
			if err := writeMsg(w, ev); err != nil {
				c.close()
				return
			}
		}
	}
}

func (s *Store) readLoop(c *storeConn) {
	defer func() {
		c.close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
	r := bufio.NewReader(c.c)
	for {
		var req ChangeDataRequest
		if err := readMsg(r, &req); err != nil {
			return
		}
		s.onRequest(c, req)
	}
}

// onRequest registers a region when this store leads it (INITIALIZED after
// the incremental scan), or answers with the region error.
func (s *Store) onRequest(c *storeConn, req ChangeDataRequest) {
	leader, ver, ready, ok := s.pd.leaderOf(req.RegionID)
	var rerr *RegionError
	switch {
	case !ok:
		rerr = &RegionError{RegionNotFound: true}
	case ver != req.Ver:
		rerr = &RegionError{EpochNotMatch: true}
	case leader != s.ID:
		rerr = &RegionError{NotLeader: &NotLeader{Leader: leader}}
	case !ready:
		// The leader is being elected or transferred here: this peer does
		// not lead yet and knows no leader.
		rerr = &RegionError{NotLeader: &NotLeader{}}
	}
	if rerr != nil {
		c.send(ChangeDataEvent{Events: []Event{{RegionID: req.RegionID, RequestID: req.RequestID, Error: rerr}}})
		return
	}
	s.mu.Lock()
	reg := &registration{requestID: req.RequestID}
	c.regs[req.RegionID] = reg
	scan := time.Duration(5+s.rng.IntN(40)) * time.Millisecond
	s.mu.Unlock()
	time.AfterFunc(scan, func() {
		s.mu.Lock()
		cur := c.regs[req.RegionID]
		if cur != reg {
			s.mu.Unlock()
			return
		}
		reg.initialized = true
		s.mu.Unlock()
		c.send(ChangeDataEvent{Events: []Event{{RegionID: req.RegionID, RequestID: req.RequestID, Initialized: true}}})
	})
}

// leaderLost tells every subscriber of region that this store no longer
// leads it.
func (s *Store) leaderLost(region, newLeader uint64) {
	s.mu.Lock()
	var hit []struct {
		c   *storeConn
		req uint64
	}
	for c := range s.conns {
		if reg, ok := c.regs[region]; ok {
			hit = append(hit, struct {
				c   *storeConn
				req uint64
			}{c, reg.requestID})
			delete(c.regs, region)
		}
	}
	s.mu.Unlock()
	for _, h := range hit {
		h.c.send(ChangeDataEvent{Events: []Event{{RegionID: region, RequestID: h.req, Error: &RegionError{NotLeader: &NotLeader{Leader: newLeader}}}}})
	}
}

// resolvedLoop sends, on every stream, the resolved ts of the initialized
// regions this store leads.
func (s *Store) resolvedLoop(stop chan struct{}) {
	t := time.NewTicker(ResolvedInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		ts := s.pd.resolved()
		s.mu.Lock()
		type batch struct {
			c       *storeConn
			regions []uint64
		}
		var out []batch
		for c := range s.conns {
			var regions []uint64
			for id, reg := range c.regs {
				if !reg.initialized {
					continue
				}
				if leader, _, ready, ok := s.pd.leaderOf(id); ok && leader == s.ID && ready {
					regions = append(regions, id)
				}
			}
			if len(regions) > 0 {
				out = append(out, batch{c, regions})
			}
		}
		s.mu.Unlock()
		for _, b := range out {
			b.c.send(ChangeDataEvent{ResolvedTs: &ResolvedTs{Regions: b.regions, Ts: ts}})
		}
	}
}
