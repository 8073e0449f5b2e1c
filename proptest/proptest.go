// Package proptest drives the implementation's deterministic simulation
// (impl/sim) through random domain actions and faults with rapid: its state
// machine (machine_test.go) draws drive.Steps, and refinement/drive applies
// them, checks every spec property over the event stream and the abstract
// state's invariants after every step, and judges liveness after the faults
// heal. A bounded model runs alongside as a shadow (refinement.Shadow), and
// the per-step refinement Tracker follows the runs drawn in the model's
// shape.
//
// This package holds what the draws need outside the tests (which faults
// and message types rapid draws) and the artifacts of a failing run
// (artifacts.go): its recorded story re-run with the TiCDC-format log on.
package proptest

import (
	"cdcspec/impl/core"
	"cdcspec/impl/sim"
	"cdcspec/spec"
)

// UnsupportedFaults are the faults of the vocabulary that are no step, with
// the reason; every other fault is a drive.Op.
var UnsupportedFaults = map[spec.Fault]string{
	spec.FaultKillOwnerCapture:          "kill-capture draws any capture, the owner's among them",
	spec.FaultKillMoveDestination:       "compound: rapid draws move-table and kill-capture as two steps",
	spec.FaultKillMaintainerInflight:    "compound: rapid draws its parts (block-create-dispatcher, slow-close-dispatcher, move-table, kill-maintainer-capture)",
	spec.FaultKillMaintainerStaleCreate: "compound: rapid draws its parts (delay-messages, move-table, kill-maintainer-capture)",
	spec.FaultKillCaptureDuringDDL:      "compound: rapid draws its parts (blocking-ddl, kill-capture) as two steps",
	spec.FaultMoveWriterDuringDDL:       "compound: rapid draws its parts (delay-messages, blocking-ddl, move-table) as separate steps",
	spec.FaultDropAddTableStatus:        "compound: rapid draws its parts (create-table, drop-messages, blocking-ddl) as separate steps",
	spec.FaultFreezeCapture:             sim.UnsupportedFaults[spec.FaultFreezeCapture],
	spec.FaultExpireFrozenSession:       sim.UnsupportedFaults[spec.FaultExpireFrozenSession],
	spec.FaultStore:                     sim.UnsupportedFaults[spec.FaultStore],
	spec.FaultHeal:                      "drive.Driver.Finish heals once, at the end of every run; liveness is judged after it",
}

// MessageTypes are the control messages a targeted rule may match
// (core.Message TypeName): every registered type (core.MessageKinds) but
// those in notDrawn. The first ones keep their recorded order, which
// rapid's draws index, so that the regression corpus and the gate's figures
// (SPEC.md 8.5) replay; a new type is appended by core.DrawOrder.
var MessageTypes = core.MustDrawOrder([]string{
	"ScheduleDispatcherRequest", "HeartBeatRequest", "BlockStatusRequest", "MaintainerHeartbeat",
	"RemoveMaintainerRequest", "MaintainerCloseResponse", "AddMaintainerRequest",
	"MaintainerBootstrapRequest", "MaintainerBootstrapResponse", "MaintainerCloseRequest", "HeartBeatResponse",
}, func(k core.MessageKind) bool { return notDrawn[k.Name] == "" })

// notDrawn: registered message types targeted rules do not draw, with the
// reason. Drawing one changes every later draw of a recorded run.
var notDrawn = map[string]string{
	"CoordinatorBootstrapRequest":  "not drawn since before the registry: adding it re-indexes every recorded draw",
	"CoordinatorBootstrapResponse": "not drawn since before the registry: adding it re-indexes every recorded draw",
	"MergeDispatcherRequest":       "not drawn since before the registry: adding it re-indexes every recorded draw",
}
