package model

import "cdcspec/spec"

// The upstream kv client of seed 004 (tiflow #9595, see spec/SPEC.md
// "Seed 004"). One region, the
// current store stream's region worker and receive loop. The resolved ts the
// dispatchers see (PullTs) advances only while the region is active in a
// running worker. The decision point is when evictAllRegions runs:
// before tiflow #9597 (bug, introduced by #9519) in the region worker's own
// exit; after it, once both the worker and the receive loop have exited.

func appendPullActions(cfg *Config, s *State, buf []Action) []Action {
	p := &s.Pull
	if p.Region == regActive && p.Worker == gorRunning && !p.Down && s.PullTs < s.UpTs {
		buf = append(buf, Action{Kind: APullResolved})
	}
	if p.Down && !p.Cancelled && p.Receiver == gorRunning {
		buf = append(buf, Action{Kind: APullStreamError})
	}
	if p.Down && p.Region == regActive && p.Worker == gorRunning {
		buf = append(buf, Action{Kind: APullRegionError})
	}
	if p.Worker == gorRunning && (p.WorkerErr || p.Cancelled) {
		buf = append(buf, Action{Kind: APullWorkerExit})
	}
	if p.Region == regQueued && !p.Down {
		buf = append(buf, Action{Kind: APullRequest})
	}
	if p.Receiver == gorRunning && p.Region == regPending {
		buf = append(buf, Action{Kind: APullFirstResp})
	}
	if p.Receiver == gorRunning && p.Cancelled {
		buf = append(buf, Action{Kind: APullReceiverExit})
	}
	return buf
}

// evictAllRegions: every region of the worker fails (onRegionFail): unlock
// and re-queue it.
func evictAllRegions(p *Puller) {
	if p.Region == regActive {
		p.Region = regQueued
	}
}

func pullStep(cfg *Config, s *State, k ActKind) {
	p := &s.Pull
	switch k {
	case APullResolved:
		s.PullTs = s.UpTs
	case APullStreamError:
		p.Cancelled = true
	case APullRegionError:
		p.Region = regQueued // handleSingleRegionError -> onRegionFail
		p.WorkerErr = true   // the worker has no region left: checkShouldExit
	case APullWorkerExit:
		p.Worker = gorExited
		p.Cancelled = true // cancelStream
		if cfg.bug(spec.BugStuckAfterUpstreamFailure) || p.Receiver == gorExited {
			// tiflow #9519: evictAllRegions in regionWorker.run's defer.
			// Fixed (#9597): in receiveFromStream once both have exited.
			evictAllRegions(p)
		}
	case APullRequest:
		if p.Receiver != gorRunning {
			// a new stream generation
			p.Worker, p.Receiver, p.Cancelled, p.WorkerErr = gorRunning, gorRunning, false, false
		}
		p.Region = regPending
	case APullFirstResp:
		p.Region = regActive // no check that the worker still runs
	case APullReceiverExit:
		p.Receiver = gorExited
		if p.Region == regPending {
			p.Region = regQueued // pendingRegions.takeAll
		}
		if !cfg.bug(spec.BugStuckAfterUpstreamFailure) && p.Worker == gorExited {
			evictAllRegions(p)
		}
	}
}
