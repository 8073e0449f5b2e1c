package model

import (
	"fmt"

	"cdcspec/spec"
)

// goalMaintainerOperatorsFinish: once faults stop, every maintainer operator
// the coordinator runs (add, move, stop) finishes (spec
// maintainer-operators-finish; coordinator/operator/operator_controller.go
// at b813e76f9 keeps an operator until IsFinished). The coordinator's
// operator is Coord.Op; a coordinator still bootstrapping runs none. Judged
// at quiescence of the fair schedule.
func goalMaintainerOperatorsFinish(cfg *Config, s *State) string {
	c := &s.Coord
	if c.Op == copNone || c.Booting {
		return ""
	}
	op := spec.OpAdd
	switch c.Op {
	case copMove:
		op = spec.OpMove
	case copStop:
		op = spec.OpStop
	}
	return fmt.Sprintf("every maintainer operator must finish once faults stop, but after faults healed and the cluster quiesced the %s maintainer operator to node %s (epoch %d) is still running: changefeed %s, node %s, epoch %d",
		op, NodeName(c.OpNode), c.OpEpoch, Changefeed, NodeName(c.OpNode), c.OpEpoch)
}
