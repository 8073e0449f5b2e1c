package refinement

import (
	"fmt"
	"sort"

	"cdcspec/impl/core"
	"cdcspec/impl/sim"
	"cdcspec/model"
	"cdcspec/spec"
)

// Quiescence is the comparable part of one changefeed after the faults
// heal and both sides settle: what the Shadow compares at the end of a
// driver's run, where the Tracker compares a model.View after every step. The
// model's side is read from its model.View (ModelQuiescence); the
// implementation's from the simulation over every capture, mapped to a
// model slot or not (ImplQuiescence), since a capture that joined beyond
// the model's slots may host dispatchers at the end.
//
//	field        model                                  implementation
//	-----------  -------------------------------------  ------------------------------------------
//	State        View.Feed                              the coordinator's changefeed state
//	Covered      every created table has exactly one    every table created at or before the
//	             Working dispatcher (View.Disp)         stored checkpoint is tiled exactly once by
//	                                                    Working dispatchers
//	OneMaint     one active maintainer (View.Maint)     one bootstrapped maintainer, not removing
//	             and View.Sched replicating             or removed, and the changefeed replicating
//	CkptReached  stored checkpoint >= upstream ts       stored checkpoint >= the upstream resolved
//	                                                    ts at heal time
type Quiescence struct {
	State        string // normal | warning | failed | stopped | removed
	Covered      bool   // every table has exactly one working dispatcher
	OneMaint     bool   // one bootstrapped maintainer, changefeed replicating
	CkptReached  bool   // stored checkpoint reached the heal-time target
	Detail       string
	TablesJudged int
}

func (q Quiescence) String() string {
	return fmt.Sprintf("state=%s covered=%v one-maintainer=%v checkpoint-reached=%v (%d tables; %s)", q.State, q.Covered, q.OneMaint, q.CkptReached, q.TablesJudged, q.Detail)
}

// Agrees reports whether q and o are the same on every compared field
// (Detail and TablesJudged are for people).
func (q Quiescence) Agrees(o Quiescence) bool {
	return q.State == o.State && q.Covered == o.Covered && q.OneMaint == o.OneMaint && q.CkptReached == o.CkptReached
}

// ModelQuiescence abstracts a settled model state through its View and
// accessors.
func ModelQuiescence(s *model.State) Quiescence {
	v := s.View()
	q := Quiescence{State: v.Feed, Covered: true}
	var missing []string
	for t := 1; t <= model.MaxTables; t++ {
		if !s.TableCreated(t) {
			continue
		}
		q.TablesJudged++
		if n := v.WorkingDispatchers(t); n != 1 {
			q.Covered = false
			missing = append(missing, fmt.Sprintf("t%d:%d", t, n))
		}
	}
	maints := v.ActiveMaintainers()
	q.OneMaint = maints == 1 && v.Sched == "replicating"
	ckpt, up := s.Checkpoint()
	q.CkptReached = ckpt >= up
	q.Detail = fmt.Sprintf("model ckpt %d upTs %d maintainers %d sched %s dispatchers/table %v", ckpt, up, maints, v.Sched, missing)
	return q
}

// ImplQuiescence abstracts the simulation's changefeed feed after its
// faults healed; target is the upstream resolved ts at heal time.
func ImplQuiescence(s *sim.Sim, feed core.ChangefeedID, target uint64) Quiescence {
	var q Quiescence
	st := s.State()
	sched := ""
	for _, cf := range st.Changefeeds {
		if cf.ID == feed {
			q.State, sched = cf.State, cf.Sched
		}
	}
	stored, _ := s.Stored(feed)
	q.CkptReached = stored.Status.CheckpointTs >= target
	maints := 0
	byTable := map[int64][]spec.Span{}
	for _, n := range st.Nodes {
		for _, m := range n.Maintainers {
			if m.Changefeed == feed && m.Bootstrapped && !m.Removing && !m.Removed && !m.RemovalOnly {
				maints++
			}
		}
		for _, dd := range n.Dispatchers {
			if dd.Changefeed == feed && !dd.Trigger && dd.State == "Working" {
				byTable[dd.Span.Table] = append(byTable[dd.Span.Table], dd.Span)
			}
		}
	}
	q.OneMaint = maints == 1 && sched == "replicating"
	q.Covered = true
	var bad []string
	for _, t := range s.Upstream().Tables() {
		if ct, _ := s.Upstream().TableCreateTs(t); ct > stored.Status.CheckpointTs && ct > stored.Info.StartTs {
			continue
		}
		q.TablesJudged++
		if !tiles(byTable[t]) {
			q.Covered = false
			bad = append(bad, fmt.Sprintf("t%d", t))
		}
	}
	q.Detail = fmt.Sprintf("impl stored %d target %d maintainers %d sched %q untiled %v", stored.Status.CheckpointTs, target, maints, sched, bad)
	return q
}

// tiles reports whether spans cover one table exactly once.
func tiles(spans []spec.Span) bool {
	sort.Slice(spans, func(i, j int) bool { return spans[i].Start < spans[j].Start })
	pos, end := "", false
	for _, sp := range spans {
		if end || sp.Start != pos {
			return false
		}
		if sp.End == "" {
			end = true
		} else {
			pos = sp.End
		}
	}
	return end
}
