package model

import (
	"testing"

	"cdcspec/spec"
)

// TestEveryPropertyHasAModelPredicate ties modelProps to spec's property
// table: every property has exactly one entry, with a safety predicate
// (safety) or a liveness goal (liveness), or a written reason why the model
// does not judge it; and no entry names a property outside the table.
func TestEveryPropertyHasAModelPredicate(t *testing.T) {
	seen := map[spec.Property]int{}
	for _, p := range modelProps {
		seen[p.name]++
		in, ok := spec.PropertyInfo(p.name)
		if !ok {
			t.Errorf("modelProps names %q, which is not in spec's property table", p.name)
			continue
		}
		n := 0
		for _, set := range []bool{p.safety != nil, p.goal != nil, p.reason != ""} {
			if set {
				n++
			}
		}
		switch {
		case n != 1:
			t.Errorf("property %s: want exactly one of a safety predicate, a liveness goal or a reason, have %d", p.name, n)
		case p.safety != nil && in.Class != spec.Safety:
			t.Errorf("property %s is %s but the model registers a safety predicate", p.name, in.Class)
		case p.goal != nil && in.Class != spec.Liveness:
			t.Errorf("property %s is %s but the model registers a liveness goal", p.name, in.Class)
		}
	}
	for _, in := range spec.Properties() {
		switch seen[in.Name] {
		case 0:
			t.Errorf("property %s has no model predicate and no reason in modelProps (model/props.go)", in.Name)
		case 1:
		default:
			t.Errorf("property %s is registered %d times in modelProps", in.Name, seen[in.Name])
		}
	}
}

// TestStoppedStaysStoppedAgreesUnderMutation: no standard configuration
// breaks stopped-stays-stopped, so TestPredicatesAgreeWithMonitors shows
// only that neither side fires without the other. With the guard
// stop-clears-node off (a stopped changefeed keeps its node, so its
// maintainer's late statuses are accepted), random walks in lifecycle break
// it; the predicate and the monitor must fire on the same steps.
func TestStoppedStaysStoppedAgreesUnderMutation(t *testing.T) {
	base, ok := Standard("lifecycle")
	if !ok {
		t.Fatal("no standard configuration lifecycle")
	}
	base.Mutations = base.Mutations.With(MutStopClearsNode)
	i := propIndex[spec.StoppedStaysStopped]
	violating := 0
	walkCombos([]combo{{cfg: base}}, 300, 0x5709, func(c *combo, w int, j *judge, live bool) {
		if len(j.problems) > 0 {
			t.Errorf("walk %d: the model's predicates and the spec monitors disagree:\n%s", w, j.report())
		}
		if j.modelAt[i] != 0 && j.monitorAt[i] != 0 {
			violating++
		}
	})
	t.Logf("%d of 300 walks violate %s", violating, spec.StoppedStaysStopped)
	if violating < 10 {
		t.Fatalf("only %d of 300 walks violate %s with stop-clears-node off; the comparison is hollow", violating, spec.StoppedStaysStopped)
	}
}
