// One run of the real `busbar` binary (named by $BUSBAR_BIN) for a test class: a fresh temporary
// data directory, the suite's Config.json (src/test/resources, the emulator's format),
// `--listen`, `--tls-listen` and `--admin-listen` on 127.0.0.1:0; the ports come from the broker's
// `listening on ADDR:PORT`, `amqps listening on ADDR:PORT` and `admin listening on ADDR:PORT` lines
// on stdout, its development CA from the `tls ca: PATH` line.
// stop() sends SIGTERM and requires exit status 0. The broker's log (stderr) goes to a file whose
// tail BrokerTest prints when a test fails.
package busbar;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

final class Broker {
    private static final long START_TIMEOUT_SECS = 30;
    private static final long STOP_TIMEOUT_SECS = 20;
    // Anchored: `listening on` is also the end of the `amqps listening on` and `admin listening on`
    // lines.
    private static final Pattern LISTENING = Pattern.compile("^listening on \\S*:(\\d+)");
    private static final Pattern AMQPS_LISTENING = Pattern.compile("^amqps listening on \\S*:(\\d+)");
    private static final Pattern ADMIN_LISTENING = Pattern.compile("^admin listening on \\S*:(\\d+)");
    private static final Pattern TLS_CA = Pattern.compile("^tls ca: (.+)$");

    private final Process process;
    private final Path workDir;
    private final Path log;
    final int port;
    /** The AMQPS port (like every port, it serves every protocol). */
    final int amqpsPort;
    /** The administration API's port. */
    final int adminPort;
    /** The development CA (PEM) that signed the broker's certificate for localhost. */
    final Path caFile;
    /** One permit per "policies re-read" line (a SIGHUP's re-read of --policies). */
    private final Semaphore rereads;

    private Broker(Process process, Path workDir, Path log, int port, int amqpsPort, int adminPort,
            Path caFile, Semaphore rereads) {
        this.process = process;
        this.workDir = workDir;
        this.log = log;
        this.port = port;
        this.amqpsPort = amqpsPort;
        this.adminPort = adminPort;
        this.caFile = caFile;
        this.rereads = rereads;
    }

    static Broker start(String... extraArguments) throws IOException, InterruptedException {
        String binary = System.getenv("BUSBAR_BIN");
        if (binary == null || binary.isEmpty()) {
            throw new IllegalStateException(
                "BUSBAR_BIN must name the busbar binary (tests/java_sdk.rs sets it)");
        }
        Path workDir = Files.createTempDirectory("busbar-java-");
        Path config = workDir.resolve("Config.json");
        try (InputStream resource = Broker.class.getResourceAsStream("/Config.json")) {
            Files.copy(resource, config);
        }
        Path log = workDir.resolve("broker.log");
        List<String> command = new ArrayList<>(List.of(binary, "--config", config.toString(),
            "--data-dir", workDir.resolve("data").toString(), "--listen", "127.0.0.1:0",
            "--tls-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"));
        command.addAll(List.of(extraArguments));
        ProcessBuilder builder = new ProcessBuilder(command)
            .redirectError(log.toFile())
            .redirectInput(ProcessBuilder.Redirect.PIPE);
        builder.environment().putIfAbsent("RUST_LOG", "info");
        Process process = builder.start();
        process.getOutputStream().close();

        CompletableFuture<Integer> port = new CompletableFuture<>();
        CompletableFuture<Integer> amqpsPort = new CompletableFuture<>();
        CompletableFuture<Integer> adminPort = new CompletableFuture<>();
        CompletableFuture<Path> caFile = new CompletableFuture<>();
        Semaphore rereads = new Semaphore(0);
        Thread reader = new Thread(() -> pump(process, port, amqpsPort, adminPort, caFile, rereads),
            "busbar-stdout");
        reader.setDaemon(true);
        reader.start();
        try {
            return new Broker(process, workDir, log, port.get(START_TIMEOUT_SECS, TimeUnit.SECONDS),
                amqpsPort.get(START_TIMEOUT_SECS, TimeUnit.SECONDS),
                adminPort.get(START_TIMEOUT_SECS, TimeUnit.SECONDS),
                caFile.get(START_TIMEOUT_SECS, TimeUnit.SECONDS), rereads);
        } catch (Exception error) {
            process.destroyForcibly().waitFor();
            throw new IllegalStateException("busbar did not report a listening port: " + error
                + "\n" + tail(log, 40), error);
        }
    }

    // Reads stdout to its end (so the broker never blocks on a full pipe), noting the ports, the
    // CA's path and each re-read of the policies.
    private static void pump(Process process, CompletableFuture<Integer> port,
            CompletableFuture<Integer> amqpsPort, CompletableFuture<Integer> adminPort,
            CompletableFuture<Path> caFile, Semaphore rereads) {
        try (BufferedReader lines = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = lines.readLine()) != null; ) {
                notePort(LISTENING.matcher(line), port);
                notePort(AMQPS_LISTENING.matcher(line), amqpsPort);
                notePort(ADMIN_LISTENING.matcher(line), adminPort);
                Matcher ca = TLS_CA.matcher(line);
                if (!caFile.isDone() && ca.find()) {
                    caFile.complete(Path.of(ca.group(1)));
                }
                if (line.startsWith("policies re-read")) {
                    rereads.release();
                }
            }
        } catch (IOException error) {
            port.completeExceptionally(error);
            amqpsPort.completeExceptionally(error);
            adminPort.completeExceptionally(error);
            caFile.completeExceptionally(error);
        }
        port.completeExceptionally(new IOException("busbar closed stdout before listening"));
        amqpsPort.completeExceptionally(new IOException("busbar closed stdout before amqps listening"));
        adminPort.completeExceptionally(new IOException("busbar closed stdout before admin listening"));
        caFile.completeExceptionally(new IOException("busbar closed stdout before naming its tls ca"));
    }

    private static void notePort(Matcher found, CompletableFuture<Integer> port) {
        if (!port.isDone() && found.find() && !found.group(1).equals("0")) {
            port.complete(Integer.parseInt(found.group(1)));
        }
    }

    /** Runs `busbar ctl ARGS` against this broker's admin port (test controls); fails unless it
     *  exits 0. */
    void ctl(String... arguments) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(System.getenv("BUSBAR_BIN"), "ctl",
            "--admin", "http://127.0.0.1:" + adminPort));
        command.addAll(List.of(arguments));
        Process ctl = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(ctl.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!ctl.waitFor(START_TIMEOUT_SECS, TimeUnit.SECONDS) || ctl.exitValue() != 0) {
            throw new IllegalStateException("busbar ctl " + arguments + " failed: " + output);
        }
    }

    /** The emulator's connection string; the Java SDK keeps the port with UseDevelopmentEmulator. */
    String connectionString() {
        return "Endpoint=sb://localhost:" + port + ";SharedAccessKeyName=RootManageSharedAccessKey;"
            + "SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;";
    }

    /**
     * The same with the admin port, as the emulator documents for the administration client (the
     * Java SDK drops that port; the tests' pipeline policy puts it back).
     */
    String adminConnectionString() {
        return "Endpoint=sb://localhost:" + adminPort + ";SharedAccessKeyName=RootManageSharedAccessKey;"
            + "SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;";
    }

    /** SIGHUP, then waits for the broker to say it re-read its policies file. */
    void hangUp() throws IOException, InterruptedException {
        new ProcessBuilder("kill", "-HUP", Long.toString(process.pid())).inheritIO().start().waitFor();
        if (!rereads.tryAcquire(START_TIMEOUT_SECS, TimeUnit.SECONDS)) {
            throw new IllegalStateException("busbar did not re-read its policies\n" + logTail());
        }
    }

    /** SIGTERM, then requires a clean exit (status 0) within the time limit. */
    void stop() throws IOException, InterruptedException, TimeoutException {
        if (!process.isAlive()) {
            throw new IllegalStateException("busbar died during the tests (status "
                + process.exitValue() + ")\n" + logTail());
        }
        process.destroy(); // SIGTERM on Unix
        if (!process.waitFor(STOP_TIMEOUT_SECS, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
            throw new TimeoutException("busbar ignored SIGTERM for " + STOP_TIMEOUT_SECS + " s");
        }
        int status = process.exitValue();
        if (status != 0) {
            throw new IllegalStateException("busbar exited with " + status + " on SIGTERM\n" + logTail());
        }
        try (Stream<Path> paths = Files.walk(workDir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }

    String logTail() {
        return tail(log, 40);
    }

    /** The last `count` lines of the log, leaving out the start-up lines listing each entity. */
    private static String tail(Path log, int count) {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8).stream()
                .filter(line -> !line.contains("entity restored"))
                .toList();
            return String.join("\n", lines.subList(Math.max(0, lines.size() - count), lines.size()));
        } catch (IOException error) {
            return "(no broker log: " + error + ")";
        }
    }
}
