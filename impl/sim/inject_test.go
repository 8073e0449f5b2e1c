package sim

import (
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"cdcspec/spec"
)

// running is a 3-capture simulation with cf1 replicating.
func running(t *testing.T, seed uint64) *Sim {
	s := New(Config{Seed: seed, Nodes: 3, Tables: 3})
	require.NoError(t, s.CreateChangefeed("cf1"))
	s.RunFor(5000)
	return s
}

// exampleInjection is one valid Injection of each fault Inject takes, on a
// simulation from running. A fault added to the vocabulary and to Inject
// needs an example here.
func exampleInjection(s *Sim, f spec.Fault) (Injection, bool) {
	caps := s.Captures()
	in := Injection{Fault: f}
	switch f {
	case spec.FaultKillCapture, spec.FaultExpireSession, spec.FaultPartition:
		in.Node = caps[2]
	case spec.FaultKillMaintainerCapture:
		in.Changefeed = "cf1"
	case spec.FaultSinkError, spec.FaultFastFailError:
		in.Node, in.Changefeed = caps[1], "cf1"
	case spec.FaultBlockCreateDispatcher, spec.FaultSlowCloseDispatcher:
		in.Node = caps[1]
	case spec.FaultDropMessages, spec.FaultDelayMessages:
		in.Rule = Rule{Type: "HeartBeatRequest", Count: 3, DelayMs: 1000}
	case spec.FaultRandomMessageFaults:
		in.Faults = Faults{DropProb: 0.05, DelayMinMs: 1, DelayMaxMs: 20}
	case spec.FaultKillOwnerCapture, spec.FaultRestartCapture, spec.FaultAddCapture, spec.FaultHealNetwork,
		spec.FaultStallUpstream, spec.FaultResumeUpstream, spec.FaultHeal:
	case spec.FaultDuplicateMessages:
		// needs a delivery that duplicates (see TestInjectEveryFault)
		in.Rule = Rule{Type: "HeartBeatRequest", Count: 1, DelayMs: 1000}
	default:
		return in, false
	}
	return in, true
}

// observedAs is the fault name the simulation reports (Step.Name) for an
// injected fault that it carries out as another.
var observedAs = map[spec.Fault]spec.Fault{
	spec.FaultKillMaintainerCapture: spec.FaultKillCapture,
	spec.FaultKillOwnerCapture:      spec.FaultKillCapture,
	spec.FaultRestartCapture:        spec.FaultAddCapture,
}

// TestInjectEveryFault: Inject carries out every fault of the vocabulary
// that UnsupportedFaults does not list, and reports it as a fault step of
// that name; it refuses each listed one with the listed reason.
func TestInjectEveryFault(t *testing.T) {
	require.NoError(t, spec.CheckUnsupported("impl/sim", UnsupportedFaults))
	for _, f := range spec.Faults() {
		t.Run(string(f), func(t *testing.T) {
			s := running(t, 1)
			if why, ok := UnsupportedFaults[f]; ok {
				_, err := s.Inject(Injection{Fault: f, Node: s.Captures()[1], Changefeed: "cf1"})
				require.Error(t, err)
				assert.Contains(t, err.Error(), why)
				return
			}
			if f == spec.FaultDuplicateMessages {
				s = New(Config{Seed: 1, Nodes: 3, Tables: 3, Delivery: spec.DeliveryPerTypeStreams})
				require.NoError(t, s.CreateChangefeed("cf1"))
				s.RunFor(5000)
			}
			in, ok := exampleInjection(s, f)
			require.True(t, ok, "no example injection of %s in this test", f)
			var seen []string
			s.Observe(func(st Step) {
				if st.Kind == StepFault {
					seen = append(seen, st.Name)
				}
			})
			_, err := s.Inject(in)
			require.NoError(t, err)
			want := f
			if o, ok := observedAs[f]; ok {
				want = o
			}
			assert.Contains(t, seen, string(want))
			s.RunFor(2000) // the fault takes effect without breaking the run
		})
	}
	_, err := running(t, 1).Inject(Injection{Fault: "crash"})
	assert.ErrorContains(t, err, `unknown fault "crash" (known: kill-capture, `)
}

// TestDuplicatesNeedTheirDelivery: TiCDC's message center never duplicates,
// so duplicate-messages is refused under it (not silently dropped).
func TestDuplicatesNeedTheirDelivery(t *testing.T) {
	_, err := running(t, 1).Inject(Injection{Fault: spec.FaultDuplicateMessages, Rule: Rule{Type: "HeartBeatRequest", Count: 1}})
	assert.ErrorContains(t, err, "message-center")
}

// TestChaosDrawsItsFaults: RunChaos's menu injects every fault that
// ChaosUnsupported does not list and none that it does; each entry that
// draws a fault carries out that fault.
func TestChaosDrawsItsFaults(t *testing.T) {
	require.NoError(t, spec.CheckUnsupported("RunChaos", ChaosUnsupported))
	inMenu := map[spec.Fault]bool{}
	for _, e := range chaosMenu {
		for _, f := range e.faults {
			inMenu[f] = true
			assert.NotContains(t, ChaosUnsupported, f, "%s is in the menu and listed as unsupported", f)
		}
		if e.faults == nil {
			assert.True(t, e.action.Known(), "a menu entry is neither a fault nor a domain action")
		}
	}
	for _, f := range spec.Faults() {
		if _, ok := ChaosUnsupported[f]; !ok {
			assert.True(t, inMenu[f], "%s is neither drawn by RunChaos nor listed in ChaosUnsupported", f)
		}
	}

	s := New(Config{Seed: 5, Nodes: 4, Tables: 4})
	require.NoError(t, s.CreateChangefeed("cf1"))
	s.RunFor(3000)
	c, err := newChaos(s, rand.New(rand.NewPCG(5, 5)), []string{"cf1"}, nil)
	require.NoError(t, err)
	var seen []string
	s.Observe(func(st Step) {
		if st.Kind == StepFault {
			seen = append(seen, st.Name)
		}
	})
	applied := map[spec.Fault]bool{}
	for i := 0; i < 400; i++ {
		if i%10 == 0 {
			// let the cluster recover now and then, so that faults
			// needing a running changefeed (sink-error) find one
			s.Heal()
			s.RunFor(10_000)
		}
		seen = seen[:0]
		name, err := c.step()
		if f := spec.Fault(name); f.Known() && err == nil {
			applied[f] = true
			assert.Contains(t, seen, name, "step %d drew %s", i, name)
		}
		s.RunFor(500)
	}
	for f := range inMenu {
		assert.True(t, applied[f], "400 draws never applied %s", f)
	}
}

func TestChaosFaultsFlag(t *testing.T) {
	assert.NoError(t, CheckChaosFaults([]spec.Fault{spec.FaultKillCapture, spec.FaultStallUpstream}))
	assert.ErrorContains(t, CheckChaosFaults([]spec.Fault{spec.FaultHeal}), "heal: RunChaos does not draw it: RunChaos heals once")
	assert.ErrorContains(t, CheckChaosFaults([]spec.Fault{"kill"}), `unknown fault "kill"`)

	// Restricted to kill-capture, the random steps kill captures and take
	// domain actions, nothing else.
	r := RunChaos(ChaosConfig{Seed: 3, Steps: 30, Faults: []spec.Fault{spec.FaultKillCapture}})
	for _, a := range r.Actions {
		if f := spec.Fault(a); f.Known() {
			assert.Equal(t, spec.FaultKillCapture, f)
		}
	}
	assert.Contains(t, r.Actions, string(spec.FaultKillCapture))
}

// exampleCommands is one scenario-file line for each fault the simulation
// takes (on a scenario with captures n1..n3 and cf1 running).
var exampleCommands = map[spec.Fault]string{
	spec.FaultKillCapture:           "kill-capture node=n3",
	spec.FaultKillMaintainerCapture: "kill-maintainer-capture cf=cf1",
	spec.FaultKillOwnerCapture:      "kill-owner-capture",
	spec.FaultExpireSession:         "expire-session node=n3",
	spec.FaultRestartCapture:        "restart-capture",
	spec.FaultAddCapture:            "add-capture",
	spec.FaultDropMessages:          "drop-messages type=HeartBeatRequest from=n2 count=3",
	spec.FaultDuplicateMessages:     "duplicate-messages type=HeartBeatRequest to=n1 delay=1s",
	spec.FaultDelayMessages:         "delay-messages type=HeartBeatRequest to=n1 delay=2s count=5",
	spec.FaultRandomMessageFaults:   "random-message-faults drop=0.05 delay=1-50",
	spec.FaultPartition:             "partition n1,n2 n3",
	spec.FaultHealNetwork:           "heal-network",
	spec.FaultSinkError:             "sink-error cf=cf1 node=n2",
	spec.FaultFastFailError:         "fast-fail-error cf=cf1 node=n2",
	spec.FaultStallUpstream:         "stall-upstream",
	spec.FaultResumeUpstream:        "resume-upstream",
	spec.FaultBlockCreateDispatcher: "block-create-dispatcher node=n2",
	spec.FaultSlowCloseDispatcher:   "slow-close-dispatcher node=n2 on=false",
	spec.FaultHeal:                  "heal",
}

// TestScenarioFaultCommands: every fault Inject takes is a scenario
// command of the same name; one it does not take, or an unknown command,
// is an error that names the file and line and the reason or the known
// names.
func TestScenarioFaultCommands(t *testing.T) {
	run := func(h *harness, line string) (string, error) {
		cmd, args, err := datadriven.ParseLine(line)
		require.NoError(t, err)
		return h.run(&datadriven.TestData{Pos: "story.txt:7", Cmd: cmd, CmdArgs: args})
	}
	setup := func(delivery string) *harness {
		h := &harness{}
		_, err := run(h, "new seed=1 nodes=3 tables=3"+delivery)
		require.NoError(t, err)
		_, err = run(h, "create-changefeed cf=cf1")
		require.NoError(t, err)
		_, err = run(h, "run for=5s")
		require.NoError(t, err)
		return h
	}
	for _, f := range spec.Faults() {
		t.Run(string(f), func(t *testing.T) {
			if why, ok := UnsupportedFaults[f]; ok {
				_, err := run(setup(""), string(f)+" node=n2")
				require.Error(t, err)
				assert.Contains(t, err.Error(), why)
				return
			}
			line, ok := exampleCommands[f]
			require.True(t, ok, "no example command for %s", f)
			delivery := ""
			if f == spec.FaultDuplicateMessages {
				delivery = " delivery=per-type-streams"
			}
			out, err := run(setup(delivery), line)
			require.NoError(t, err, line)
			assert.NotEmpty(t, out)
		})
	}
	_, err := run(setup(""), "kill node=n2")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `story.txt:7: unknown command "kill"`)
	assert.Contains(t, err.Error(), "kill-capture, kill-maintainer-capture")
	_, err = run(setup(""), "partition n1 n9")
	assert.ErrorContains(t, err, `"n9": no such capture`)
}

// TestPartitionCutsOffOneCapture: partition node=nK isolates that capture
// from the rest (messages from it to the others are lost).
func TestPartitionCutsOffOneCapture(t *testing.T) {
	s := running(t, 2)
	caps := s.Captures()
	_, err := s.Inject(Injection{Fault: spec.FaultPartition, Node: caps[0]})
	require.NoError(t, err)
	assert.NotEqual(t, s.partition[caps[0]], s.partition[caps[1]])
	assert.Equal(t, s.partition[caps[1]], s.partition[caps[2]])
	_, err = s.Inject(Injection{Fault: spec.FaultHealNetwork})
	require.NoError(t, err)
	assert.Equal(t, s.partition[caps[0]], s.partition[caps[1]])
}
