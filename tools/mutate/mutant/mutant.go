// Package mutant is the switch of a mutant schema (cdcspec/tools/mutate):
// the rewritten package calls On at every mutated site, and the checker
// asks Infected whether the active mutant changed a value since the last
// Reset. A mutant that never infects a run cannot be killed by it: the
// run did not reach the changed step, or reached it only where the change
// computes the original's value (a dropped && operand that held anyway).
//
// The active mutant is the index in the environment variable Env, read
// once at start-up; unset or not a number: none (every site computes the
// original's value and nothing is infected).
package mutant

import (
	"os"
	"strconv"
	"sync/atomic"
)

// Env is the environment variable holding the active mutant's index.
const Env = "CDCSPEC_MUTANT"

var (
	active   = readActive()
	infected atomic.Bool
)

func readActive() int {
	n, err := strconv.Atoi(os.Getenv(Env))
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// On reports whether mutant i is the active one, and then records that
// the run is infected: the schema calls it only where the mutant's value
// differs from the original's (see tools/mutate's schema forms).
func On(i int) bool {
	if i != active {
		return false
	}
	infected.Store(true)
	return true
}

// Active is the active mutant's index, or -1.
func Active() int { return active }

// Infected reports whether the active mutant changed a value since the
// last Reset.
func Infected() bool { return infected.Load() }

// Reset forgets the infection (before the next configuration's run).
func Reset() { infected.Store(false) }
