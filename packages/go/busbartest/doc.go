// Package busbartest starts Busbar, the Azure Service Bus broker, for Go tests: on free
// loopback ports in a temporary directory, ready once it has printed its listening lines, with
// its connection strings, admin endpoint and test controls (create entities, purge, reset, the
// virtual clock, faults).
//
// The binary: Go modules do not carry binaries, so the package runs the `busbar` named by
// BUSBAR_BIN, or else the first on the PATH. Get it from the Python wheel
// (`pip install busbar-*.whl` puts `busbar` on the virtual environment's PATH), the npm
// package (`node_modules/busbar/vendor/linux-x64/busbar`), a release download, or
// `cargo build --release` (target/release/busbar).
//
// One broker for the package's tests, reset before each:
//
//	var shared *busbartest.Broker
//
//	func TestMain(m *testing.M) { os.Exit(busbartest.Main(m, nil, &shared)) }
//
//	func TestOrders(t *testing.T) {
//		broker := shared.ForTest(t) // reset; its log is printed if the test fails
//		client, _ := azservicebus.NewClientFromConnectionString(broker.ConnectionString(), nil)
//		…
//	}
//
// A broker of a test's own: busbartest.Start(t, &busbartest.Options{Storage: "file"}), stopped
// when the test ends.
package busbartest
