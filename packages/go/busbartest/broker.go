// One busbar process: started, awaited (its listening lines, no sleeping), described and
// stopped (SIGTERM, then SIGKILL after half a second).
package busbartest

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"time"
)

const (
	startTimeout = 30 * time.Second
	// An idle broker exits in milliseconds; one whose clients left connections open waits
	// seconds for their close, and its data is thrown away regardless.
	stopGrace = 500 * time.Millisecond
	keyName   = "RootManageSharedAccessKey"
	key       = "SAS_KEY_VALUE"
)

// Options says how to start a broker; the zero value is a memory broker with the emulator's
// default entities (queue.1, topic.1 with subscription.1).
type Options struct {
	// Storage is "memory" (the default) or "file".
	Storage string
	// Config is the emulator's Config.json: a path (string), or a value marshalled as JSON.
	Config any
	// Args are more command-line arguments.
	Args []string
}

// Broker is a running busbar.
type Broker struct {
	cmd       *exec.Cmd
	exited    chan struct{}
	directory string
	logFile   string
	controls  controls
	// Port, AMQPSPort and AdminPort are the ports it listens on.
	Port, AMQPSPort, AdminPort int
	// CAFile is the development CA its AMQPS and https certificates are signed by.
	CAFile string
}

var ready = map[string]*regexp.Regexp{
	"port":  regexp.MustCompile(`^listening on .*:(\d+)$`),
	"amqps": regexp.MustCompile(`^amqps listening on .*:(\d+)$`),
	"admin": regexp.MustCompile(`^admin listening on .*:(\d+)$`),
	"ca":    regexp.MustCompile(`^tls ca: (.+)$`),
}

// Binary is the busbar to run: BUSBAR_BIN, or the first on the PATH.
func Binary() (string, error) {
	if chosen := os.Getenv("BUSBAR_BIN"); chosen != "" {
		return chosen, nil
	}
	return exec.LookPath("busbar")
}

// StartProcess starts a broker; the caller stops it.
func StartProcess(options *Options) (*Broker, error) {
	if options == nil {
		options = &Options{}
	}
	binary, err := Binary()
	if err != nil {
		return nil, fmt.Errorf("no busbar binary (set BUSBAR_BIN or put busbar on the PATH): %w", err)
	}
	directory, err := os.MkdirTemp("", "busbar-")
	if err != nil {
		return nil, err
	}
	args := []string{"--test-controls", "--listen", "127.0.0.1:0", "--tls-listen", "127.0.0.1:0",
		"--admin-listen", "127.0.0.1:0"}
	switch options.Storage {
	case "", "memory":
		args = append(args, "--memory")
	case "file":
		args = append(args, "--data-dir", "data")
	default:
		return nil, fmt.Errorf("storage is memory or file, not %q", options.Storage)
	}
	if options.Config != nil {
		path, ok := options.Config.(string)
		if !ok {
			path = filepath.Join(directory, "Config.json")
			document, err := json.Marshal(options.Config)
			if err != nil {
				return nil, err
			}
			if err := os.WriteFile(path, document, 0o600); err != nil {
				return nil, err
			}
		}
		absolute, err := filepath.Abs(path)
		if err != nil {
			return nil, err
		}
		args = append(args, "--config", absolute)
	}
	b := &Broker{directory: directory, logFile: filepath.Join(directory, "busbar.log"), exited: make(chan struct{})}
	log, err := os.Create(b.logFile)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	b.cmd = exec.Command(binary, append(args, options.Args...)...)
	b.cmd.Dir = directory
	b.cmd.Stderr = log
	b.cmd.Env = append([]string{"RUST_LOG=info"}, os.Environ()...)
	b.cmd.SysProcAttr = dieWithParent()
	stdout, err := b.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := b.cmd.Start(); err != nil {
		return nil, err
	}
	lines := make(chan string, 64)
	go b.pump(stdout, lines)
	if err := b.awaitReady(lines); err != nil {
		b.Stop()
		return nil, err
	}
	b.controls = controls{endpoint: b.AdminEndpoint()}
	return b, nil
}

// pump copies stdout into the log and hands its lines over, then waits for the exit.
func (b *Broker) pump(stdout interface{ Read([]byte) (int, error) }, lines chan<- string) {
	log, _ := os.OpenFile(b.logFile, os.O_APPEND|os.O_WRONLY, 0)
	scanner := bufio.NewScanner(stdout)
	for scanner.Scan() {
		if log != nil {
			fmt.Fprintln(log, scanner.Text())
		}
		select {
		case lines <- scanner.Text():
		default: // nobody waits for start-up lines any more
		}
	}
	if log != nil {
		log.Close()
	}
	close(lines)
	b.cmd.Wait()
	close(b.exited)
}

func (b *Broker) awaitReady(lines <-chan string) error {
	deadline := time.After(startTimeout)
	found := map[string]string{}
	for len(found) < len(ready) {
		select {
		case line, open := <-lines:
			if !open {
				return fmt.Errorf("busbar exited before it was ready:\n%s", b.Log())
			}
			for name, pattern := range ready {
				if match := pattern.FindStringSubmatch(line); match != nil {
					found[name] = match[1]
				}
			}
		case <-deadline:
			return fmt.Errorf("busbar was not ready within %v:\n%s", startTimeout, b.Log())
		}
	}
	b.Port, _ = strconv.Atoi(found["port"])
	b.AMQPSPort, _ = strconv.Atoi(found["amqps"])
	b.AdminPort, _ = strconv.Atoi(found["admin"])
	b.CAFile = found["ca"]
	return nil
}

// ConnectionString is the emulator form, plain AMQP.
func (b *Broker) ConnectionString() string {
	return fmt.Sprintf("Endpoint=sb://localhost:%d;SharedAccessKeyName=%s;SharedAccessKey=%s;UseDevelopmentEmulator=true;",
		b.Port, keyName, key)
}

// ProductionConnectionString is the service's form, for AMQPS: with azservicebus.ClientOptions
// CustomEndpoint AMQPSEndpoint() and TLSConfig TLSConfig().
func (b *Broker) ProductionConnectionString() string {
	return fmt.Sprintf("Endpoint=sb://localhost/;SharedAccessKeyName=%s;SharedAccessKey=%s", keyName, key)
}

// AMQPSEndpoint is localhost:PORT of the AMQPS listener.
func (b *Broker) AMQPSEndpoint() string {
	return fmt.Sprintf("localhost:%d", b.AMQPSPort)
}

// TLSConfig trusts the development CA.
func (b *Broker) TLSConfig() (*tls.Config, error) {
	pem, err := os.ReadFile(b.CAFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New("no certificate in " + b.CAFile)
	}
	return &tls.Config{RootCAs: pool}, nil
}

// AdminEndpoint is the administration API and test controls, plain HTTP.
func (b *Broker) AdminEndpoint() string {
	return fmt.Sprintf("http://127.0.0.1:%d", b.AdminPort)
}

// Log is what the broker printed so far.
func (b *Broker) Log() string {
	text, _ := os.ReadFile(b.logFile)
	return string(text)
}

// Stop ends the broker and removes its directory.
func (b *Broker) Stop() {
	select {
	case <-b.exited:
	default:
		b.cmd.Process.Signal(os.Interrupt)
		select {
		case <-b.exited:
		case <-time.After(stopGrace):
			b.cmd.Process.Kill()
			<-b.exited
		}
	}
	os.RemoveAll(b.directory)
}
