// The testing side: a broker of a test's own, the package's shared broker from TestMain, and
// a shared broker reset for one test.
package busbartest

import (
	"fmt"
	"os"
	"testing"
)

// Start starts a broker for one test, stopped when the test ends; its log is printed if the
// test failed.
func Start(t testing.TB, options *Options) *Broker {
	t.Helper()
	b, err := StartProcess(options)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		logIfFailed(t, b)
		b.Stop()
	})
	return b
}

// Main runs the package's tests with one broker in *shared, stopped after them (call it from
// TestMain: os.Exit(busbartest.Main(m, nil, &shared))).
func Main(m *testing.M, options *Options, shared **Broker) int {
	b, err := StartProcess(options)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer b.Stop()
	*shared = b
	return m.Run()
}

// ForTest resets the shared broker for one test and prints its log if the test fails.
func (b *Broker) ForTest(t testing.TB) *Broker {
	t.Helper()
	if err := b.Reset(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logIfFailed(t, b) })
	return b
}

func logIfFailed(t testing.TB, b *Broker) {
	if t.Failed() {
		t.Logf("busbar log:\n%s", b.Log())
	}
}
