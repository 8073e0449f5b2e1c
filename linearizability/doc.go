// Package linearizability checks that what clients observe through cdcspec's
// changefeed admin API (the shape of TiCDC's open API v2, /api/v2/changefeeds:
// create, pause, resume, remove, get) is linearizable, using porcupine
// (github.com/anishathalye/porcupine v1.3.1).
//
// The pieces:
//
//   - Models (AdminModel, AdminModelSpontaneousFailure, CheckpointRegisterModel):
//     sequential specifications, partitioned by changefeed ID. See admin.go and
//     register.go for exactly what each one can and cannot catch.
//   - History, Op, Input, Output: a recorded history, JSON-encodable; fixtures in
//     testdata/ are histories with their expected verdicts.
//   - Recorder: concurrent clients record call/return times on a monotonic
//     clock. A call whose outcome is unknown (timeout, lost connection, any
//     error that is not a definite rejection) is recorded with Output.Unknown
//     and checked with a return time of infinity, per porcupine's rules.
//   - Client and RunClients: the interface the runtime and the simulation
//     implement, and a seeded random workload over a few changefeeds.
//   - Check: porcupine's CheckOperationsVerbose with a mandatory timeout.
//     Unknown (timeout) is a failure ("inconclusive: timeout"), never a pass.
//     A failing check writes porcupine's HTML visualization and the history as
//     JSON into an artifact folder and prints its path.
//
// Contract for every model: Step is pure, and partitions never share state
// (one changefeed's history says nothing about another's).
package linearizability
