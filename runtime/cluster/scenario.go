package cluster

import (
	"embed"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"cdcspec/runtime/codec"
)

// Scenario is a seed's fault schedule for `cdcspec run --scenario`: the
// steps fire at their offsets exactly (RunConfig.Exact). Each is a text
// file of scenarios/, in the simulation's command style (impl/sim/testdata):
//
//	# a comment that tells the story and names the TiCDC issue
//	captures 1                  the capture count it needs (the run's default if absent)
//	raw-watermark               the captures report the pre-#4548 raw watermark
//	at 4.1s sink-error for=5s   a fault or domain action (ParseStep) at an offset, with
//	                            for=<duration> (Step.Dur), msg=<message type> (Step.MsgType),
//	                            all-stores, slow-receive, avoid-owner
//
// Steps are listed in the order they fire; ParseScenario reads one file.
type Scenario struct {
	Name         string
	Steps        []Step
	Captures     int  // 0: the run's default
	RawWatermark bool // Config.LegacyRawWatermark
}

//go:embed scenarios/*.txt
var scenarioFiles embed.FS

// Scenarios lists the scenario names, sorted.
func Scenarios() []string {
	entries, _ := scenarioFiles.ReadDir("scenarios")
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".txt"))
	}
	slices.Sort(out)
	return out
}

// LoadScenario reads the named scenario.
func LoadScenario(name string) (Scenario, error) {
	file := path.Join("scenarios", name+".txt")
	b, err := scenarioFiles.ReadFile(file)
	if err != nil || strings.ContainsAny(name, "/.") {
		return Scenario{}, fmt.Errorf("unknown scenario %q (known: %s)", name, strings.Join(Scenarios(), ", "))
	}
	return ParseScenario(name, "runtime/cluster/"+file, b)
}

// ParseScenario parses one scenario file's text (see Scenario); an error
// names file and line.
func ParseScenario(name, file string, text []byte) (Scenario, error) {
	sc := Scenario{Name: name}
	for i, line := range strings.Split(string(text), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := sc.parseLine(strings.Fields(line)); err != nil {
			return Scenario{}, fmt.Errorf("%s:%d: %w", file, i+1, err)
		}
	}
	if len(sc.Steps) == 0 {
		return Scenario{}, fmt.Errorf("%s: no step (want lines \"at <offset> <fault or action>\")", file)
	}
	return sc, nil
}

func (sc *Scenario) parseLine(words []string) error {
	switch cmd, args := words[0], words[1:]; cmd {
	case "captures":
		if len(args) != 1 {
			return fmt.Errorf("captures takes one number, got %d words", len(args))
		}
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 1 {
			return fmt.Errorf("captures %q: want a number of at least 1", args[0])
		}
		sc.Captures = n
	case "raw-watermark":
		if len(args) != 0 {
			return fmt.Errorf("raw-watermark takes no argument, got %q", strings.Join(args, " "))
		}
		sc.RawWatermark = true
	case "at":
		st, err := parseScenarioStep(args)
		if err != nil {
			return err
		}
		if n := len(sc.Steps); n > 0 && st.At < sc.Steps[n-1].At {
			return fmt.Errorf("at %v comes before the previous step's %v: list steps in the order they fire", st.At, sc.Steps[n-1].At)
		}
		sc.Steps = append(sc.Steps, st)
	default:
		return fmt.Errorf("unknown command %q (want captures, raw-watermark or at)", cmd)
	}
	return nil
}

// parseScenarioStep reads "<offset> <name> [key=value | flag]...".
func parseScenarioStep(args []string) (Step, error) {
	if len(args) < 2 {
		return Step{}, fmt.Errorf("want \"at <offset> <fault or action> [options]\", got %d words after at", len(args))
	}
	at, err := time.ParseDuration(args[0])
	if err != nil || at < 0 {
		return Step{}, fmt.Errorf("offset %q: want a duration such as 4s or 4.1s", args[0])
	}
	st, err := ParseStep(args[1])
	if err != nil {
		return Step{}, err
	}
	st.At = at
	for _, opt := range args[2:] {
		key, val, hasVal := strings.Cut(opt, "=")
		switch {
		case key == "for" && hasVal:
			if st.Dur, err = time.ParseDuration(val); err != nil || st.Dur <= 0 {
				return Step{}, fmt.Errorf("for=%q: want a positive duration such as 5s", val)
			}
		case key == "msg" && hasVal:
			if _, ok := codec.New(val); !ok {
				names := codec.TypeNames()
				slices.Sort(names)
				return Step{}, fmt.Errorf("msg=%q: unknown message type (known: %s)", val, strings.Join(names, ", "))
			}
			st.MsgType = val
		case key == "all-stores" && !hasVal:
			st.AllStores = true
		case key == "slow-receive" && !hasVal:
			st.SlowReceive = true
		case key == "avoid-owner" && !hasVal:
			st.AvoidOwner = true
		default:
			return Step{}, fmt.Errorf("option %q of %s: want for=<duration>, msg=<message type>, all-stores, slow-receive or avoid-owner", opt, st.Name())
		}
	}
	return st, nil
}
