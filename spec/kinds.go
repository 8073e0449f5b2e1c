package spec

// The kinds each monitor reads (kindReader): Checker calls a monitor's
// Observe only with these. A monitor's set is the kinds its Observe
// switches on plus those of the bookkeeping it feeds every event; when an
// Observe starts reading another kind, its set here must name it
// (TestCheckerRoutesByKind compares routed and unrouted checkers on random
// streams of every kind).

// dispatcherKinds are the kinds dispatchers.observe reads.
var dispatcherKinds = []Kind{DispatcherCreated, DispatcherWorking, DispatcherRemoved, DispatcherManagerClosed,
	NodeLeft, CaptureSuicide, ChangefeedRemoved}

// feedKinds are the kinds feeds.observe reads.
var feedKinds = []Kind{ChangefeedCreated, ChangefeedResumed, ChangefeedRemoved, StateChanged, CheckpointStored,
	DDLCommitted, TableCreated}

// maintainerKinds are the kinds maintainers.observe reads.
var maintainerKinds = []Kind{MaintainerCreated, MaintainerBootstrapped, MaintainerClosed, NodeLeft, CaptureSuicide}

// tableSetKinds are the kinds tableSet.observe reads.
var tableSetKinds = []Kind{ChangefeedCreated, ChangefeedRemoved, TableCreated, DDLCommitted}

// handlingKinds are the kinds ErrorHandling.Handled reads or answers true
// for.
var handlingKinds = []Kind{BackoffErrorSeen, BackoffIgnored, BackoffGaveUp, BackoffStarted, BootstrapDoneChanged,
	BackoffRecovered, StateChanged, ChangefeedCreated, ChangefeedResumed, ChangefeedRemoved, CheckpointStored}

// errorNeverDropped with another kind only makes the changefeed's empty
// state, which its next event of a read kind makes the same.
func (m *errorNeverDropped) readsKinds() []Kind {
	return kindSet(handlingKinds, []Kind{StatusReceived, DispatcherErrorReported})
}

func (m *checkpointMonotonic) readsKinds() []Kind {
	return []Kind{ChangefeedCreated, ChangefeedResumed, ChangefeedRemoved, CheckpointStored}
}

func (m *checkpointNotPastUnflushed) readsKinds() []Kind {
	return []Kind{ChangefeedCreated, ChangefeedResumed, ChangefeedRemoved, DataWritten, DataFlushed, CheckpointStored}
}

func (m *atMostOneDispatcherPerSpan) readsKinds() []Kind { return dispatcherKinds }

func (m *runningMaintainerBootstrapped) readsKinds() []Kind {
	return kindSet(maintainerKinds, []Kind{MaintainerOpFinished})
}

func (m *singleMaintainerGeneration) readsKinds() []Kind { return maintainerKinds }

func (m *handoffKeepsCheckpoint) readsKinds() []Kind {
	return []Kind{MaintainerOpStarted, StatusReceived, NodeLeft, MaintainerCreated}
}

func (m *everySpanReplicated) readsKinds() []Kind {
	return kindSet(dispatcherKinds, feedKinds, []Kind{Quiesced})
}

func (m *checkpointAdvancesAfterHeal) readsKinds() []Kind {
	return kindSet(feedKinds, []Kind{FaultsHealed, Quiesced})
}

func (m *ddlOrderedWithRows) readsKinds() []Kind {
	return kindSet(dispatcherKinds, tableSetKinds, []Kind{DDLCommitted, ChangefeedCreated, ChangefeedResumed,
		ChangefeedRemoved, DataWritten, DataFlushed, DDLWritten})
}

func (m *barrierEventuallyPasses) readsKinds() []Kind {
	return kindSet(dispatcherKinds, feedKinds, []Kind{FaultsHealed, DispatcherCreated, BlockStatusReported, Quiesced})
}

func (m *tableSetFollowsDDLs) readsKinds() []Kind {
	return kindSet(dispatcherKinds, feedKinds, []Kind{ChangefeedRemoved, DDLCommitted, FaultsHealed, Quiesced})
}

// The monitors that keep dispatchers (dispatcherReader): each calls
// d.observe first in its Observe and reads dispatcherKinds, so the
// monitors of one Checker can share one tracker.

func (m *atMostOneDispatcherPerSpan) dispatcherTracker() **dispatchers { return &m.d }
func (m *everySpanReplicated) dispatcherTracker() **dispatchers        { return &m.d }
func (m *ddlOrderedWithRows) dispatcherTracker() **dispatchers         { return &m.d }
func (m *barrierEventuallyPasses) dispatcherTracker() **dispatchers    { return &m.d }
func (m *tableSetFollowsDDLs) dispatcherTracker() **dispatchers        { return &m.d }
