package spec

// The kinds the bookkeeping of the monitors reads; each property's row in
// the property table (PropertyDef.Kinds) names its monitor's kinds with
// these sets.

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

// The monitors that keep dispatchers (dispatcherReader): each calls
// d.observe first in its Observe and reads dispatcherKinds, so the
// monitors of one Checker can share one tracker.

func (m *atMostOneDispatcherPerSpan) dispatcherTracker() **dispatchers { return &m.d }
func (m *everySpanReplicated) dispatcherTracker() **dispatchers        { return &m.d }
func (m *ddlOrderedWithRows) dispatcherTracker() **dispatchers         { return &m.d }
func (m *barrierEventuallyPasses) dispatcherTracker() **dispatchers    { return &m.d }
func (m *tableSetFollowsDDLs) dispatcherTracker() **dispatchers        { return &m.d }
