// Package conformance replays TiCDC's own control-plane unit tests against
// impl/ (and, where the model covers the flow, against model/). It has no
// code of its own: the tests are datadriven scenarios in testdata/*.txt, one
// file per TiCDC test function (or per small group of closely related ones
// from the same TiCDC file), each naming the TiCDC file and test it follows
// at pingcap/ticdc b813e76f9. TABLE.md lists every TiCDC test of the
// coordinator, the maintainer, the dispatcher manager and the dispatcher
// orchestrator with its verdict: pass, fail (impl differs from HEAD; the
// scenario keeps TiCDC's expected output and is skipped), or not applicable
// (the feature is not implemented).
//
// The driver (conformance_test.go) builds the components directly, unit-test
// style: a coordinator, a maintainer manager or a dispatcher orchestrator on a
// node, or a single coordinator Changefeed. It feeds them messages, ticks and
// node changes and prints the Effects they return (persisted keys, messages
// sent, sink writes, events, warnings) and their observable state.
//
// Run: go test ./impl/conformance/ (add -rewrite to regenerate the expected
// output of the passing scenarios).
package conformance
