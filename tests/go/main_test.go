// Package sdk runs the official Go Service Bus SDK (azservicebus) against the real busbar
// binary named by $BUSBAR_BIN (tests/go_sdk.rs sets it).
//
// This file starts one broker for the whole package (TestMain): a fresh temporary data
// directory, a Config.json in the Service Bus emulator's format declaring the entities of
// entities_test.go, `--listen`, `--tls-listen` and `--admin-listen` on 127.0.0.1:0; the ports come
// from the broker's `listening on ADDR:PORT`, `amqps listening on ADDR:PORT` and
// `admin listening on ADDR:PORT` lines, its development CA from the `tls ca: PATH` line. After the
// tests it sends SIGTERM and fails the run unless busbar exits with status 0.
package sdk

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// How long the broker may take to start listening, or to exit after SIGTERM.
const (
	startTimeout = 30 * time.Second
	stopTimeout  = 20 * time.Second
)

// connectionString is the emulator-style connection string of the package's broker;
// adminConnectionString is the same with the admin port, as the emulator documents for the
// administration client.
var connectionString, adminConnectionString string

// amqpPort, amqpsPort and adminPort are the broker's AMQP, AMQPS and admin ports (each serves
// every protocol); caFile is the development CA (PEM) that signed the broker's certificate for
// localhost.
var amqpPort, amqpsPort, adminPort, caFile string

// Anchored: `listening on` is also the end of the `amqps listening on` and `admin listening on`
// lines.
var (
	listening      = regexp.MustCompile(`^listening on \S*:(\d+)`)
	amqpsListening = regexp.MustCompile(`^amqps listening on \S*:(\d+)`)
	adminListening = regexp.MustCompile(`^admin listening on \S*:(\d+)`)
	tlsCA          = regexp.MustCompile(`^tls ca: (.+)$`)
)

func TestMain(m *testing.M) {
	os.Exit(runWithBroker(m))
}

func runWithBroker(m *testing.M) int {
	broker, err := startBroker()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	connectionStringFor := func(port string) string {
		return "Endpoint=sb://localhost:" + port +
			";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;" +
			"UseDevelopmentEmulator=true;"
	}
	connectionString = connectionStringFor(broker.port)
	adminConnectionString = connectionStringFor(broker.adminPort)
	amqpPort, amqpsPort, adminPort, caFile = broker.port, broker.amqpsPort, broker.adminPort, broker.caFile
	// Trust the development CA the broker made for TLS on its ports, as a user would (Go reads
	// it when the first TLS connection needs the system roots).
	if err := os.Setenv("SSL_CERT_FILE", broker.caFile); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if err := broker.stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return code
}

type broker struct {
	cmd       *exec.Cmd
	dir       string
	port      string
	amqpsPort string
	adminPort string
	caFile    string
	exited    chan error
	// reread receives once per "policies re-read" line (a SIGHUP's re-read of --policies).
	reread chan struct{}
}

// startBroker starts busbar with args in a fresh temporary directory and waits until it listens.
func startBroker(args ...string) (*broker, error) {
	binary := os.Getenv("BUSBAR_BIN")
	if binary == "" {
		return nil, errors.New("BUSBAR_BIN must name the busbar binary (tests/go_sdk.rs sets it)")
	}
	dir, err := os.MkdirTemp("", "busbar-go-")
	if err != nil {
		return nil, err
	}
	b, err := startBrokerIn(dir, binary, args...)
	if err != nil {
		os.RemoveAll(dir)
	}
	return b, err
}

// startBrokerIn writes Config.json into dir, starts binary with its data under dir and args, and
// reads the bound ports and the CA's path from its stdout.
func startBrokerIn(dir, binary string, args ...string) (*broker, error) {
	config := filepath.Join(dir, "Config.json")
	document, err := json.MarshalIndent(emulatorConfig(), "", "  ")
	if err == nil {
		err = os.WriteFile(config, document, 0o600)
	}
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, append([]string{"--config", config, "--data-dir",
		filepath.Join(dir, "data"), "--listen", "127.0.0.1:0", "--tls-listen", "127.0.0.1:0",
		"--admin-listen", "127.0.0.1:0"}, args...)...)
	cmd.Stderr = os.Stderr
	if os.Getenv("RUST_LOG") == "" {
		cmd.Env = append(os.Environ(), "RUST_LOG=warn")
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start %s: %w", binary, err)
	}
	b := &broker{cmd: cmd, dir: dir, exited: make(chan error, 1), reread: make(chan struct{}, 8)}
	ports := make(chan [4]string, 1)
	go func() {
		// Reads stdout to its end so that the broker never blocks on a full pipe.
		var amqp, amqps, admin, ca string
		note := func(pattern *regexp.Regexp, line string, value *string) {
			if found := pattern.FindStringSubmatch(line); found != nil {
				*value = found[1]
			}
		}
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			note(listening, lines.Text(), &amqp)
			note(amqpsListening, lines.Text(), &amqps)
			note(adminListening, lines.Text(), &admin)
			note(tlsCA, lines.Text(), &ca)
			if strings.HasPrefix(lines.Text(), "policies re-read") {
				select {
				case b.reread <- struct{}{}:
				default:
				}
			}
			if amqp != "" && amqps != "" && admin != "" && ca != "" {
				select {
				case ports <- [4]string{amqp, amqps, admin, ca}:
				default:
				}
			}
		}
		b.exited <- cmd.Wait()
	}()
	select {
	case found := <-ports:
		b.port, b.amqpsPort, b.adminPort, b.caFile = found[0], found[1], found[2], found[3]
		return b, nil
	case err := <-b.exited:
		return nil, fmt.Errorf("busbar exited before listening: %v", err)
	case <-time.After(startTimeout):
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("busbar did not print \"listening on\", \"amqps listening on\", "+
			"\"admin listening on\" and \"tls ca:\" within %v",
			startTimeout)
	}
}

// stop sends SIGTERM and expects a clean exit (status 0) within stopTimeout.
func (b *broker) stop() error {
	defer os.RemoveAll(b.dir)
	if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("cannot signal busbar: %w", err)
	}
	select {
	case err := <-b.exited:
		if err != nil {
			return fmt.Errorf("busbar did not exit cleanly on SIGTERM: %w", err)
		}
		return nil
	case <-time.After(stopTimeout):
		_ = b.cmd.Process.Kill()
		return fmt.Errorf("busbar ignored SIGTERM for %v", stopTimeout)
	}
}
