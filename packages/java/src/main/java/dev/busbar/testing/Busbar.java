// One busbar process for tests: started on free loopback ports in a temporary directory, ready
// once it has printed its listening lines (no sleeping), with its connection strings, admin
// endpoint and controls; close() stops it (SIGTERM, then SIGKILL after half a second).
package dev.busbar.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/** A running broker. Start one with {@link #start()} or {@link #start(Options)}. */
public final class Busbar implements AutoCloseable {
    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);
    // An idle broker exits in milliseconds; one whose clients left connections open waits
    // seconds for their close, and its data is thrown away regardless.
    private static final Duration STOP_GRACE = Duration.ofMillis(500);
    private static final Pattern PORT = Pattern.compile("^listening on .*:(\\d+)$");
    private static final Pattern AMQPS_PORT = Pattern.compile("^amqps listening on .*:(\\d+)$");
    private static final Pattern ADMIN_PORT = Pattern.compile("^admin listening on .*:(\\d+)$");
    private static final Pattern CA_FILE = Pattern.compile("^tls ca: (.+)$");
    private static final String END = "\u0000end";

    /** How to start a broker: storage "memory" (default) or "file", an optional Config.json. */
    public static final class Options {
        String storage = "memory";
        Path configFile;
        String configJson;

        public Options fileStorage() {
            storage = "file";
            return this;
        }

        /** The emulator's Config.json, as a file. */
        public Options config(Path file) {
            configFile = file;
            return this;
        }

        /** The emulator's Config.json, as its text. */
        public Options configJson(String json) {
            configJson = json;
            return this;
        }
    }

    private final Process process;
    private final Path directory;
    private final Path log;
    private final Controls controls;
    private int port;
    private int amqpsPort;
    private int adminPort;
    private String caFile;

    public static Busbar start() {
        return start(new Options());
    }

    public static Busbar start(Options options) {
        try {
            return new Busbar(options);
        } catch (IOException e) {
            throw new BusbarException("cannot start busbar: " + e.getMessage(), e);
        }
    }

    private Busbar(Options options) throws IOException {
        directory = Files.createTempDirectory("busbar-");
        log = directory.resolve("busbar.log");
        List<String> command = new ArrayList<>(List.of(BinaryLocator.binary().toString(),
                "--test-controls", "--listen", "127.0.0.1:0", "--tls-listen", "127.0.0.1:0",
                "--admin-listen", "127.0.0.1:0"));
        command.addAll("memory".equals(options.storage) ? List.of("--memory") : List.of("--data-dir", "data"));
        Path config = options.configFile;
        if (options.configJson != null) {
            config = Files.writeString(directory.resolve("Config.json"), options.configJson);
        }
        if (config != null) {
            command.addAll(List.of("--config", config.toAbsolutePath().toString()));
        }
        ProcessBuilder builder = new ProcessBuilder(command)
                .directory(directory.toFile())
                .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        builder.environment().putIfAbsent("RUST_LOG", "info");
        process = builder.start();
        Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly));
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread pump = new Thread(() -> pump(process.getInputStream(), lines), "busbar-stdout");
        pump.setDaemon(true);
        pump.start();
        try {
            awaitReady(lines);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
        controls = new Controls(adminEndpoint());
    }

    private void pump(InputStream stdout, BlockingQueue<String> lines) {
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(stdout, StandardCharsets.UTF_8))) {
            for (String line; (line = reader.readLine()) != null; ) {
                Files.writeString(log, line + "\n", StandardOpenOption.APPEND, StandardOpenOption.CREATE);
                lines.add(line);
            }
        } catch (IOException e) {
            // The process went away: the end marker below tells the waiter.
        }
        lines.add(END);
    }

    private void awaitReady(BlockingQueue<String> lines) {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (port == 0 || amqpsPort == 0 || adminPort == 0 || caFile == null) {
            String line;
            try {
                line = lines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                line = null;
            }
            if (line == null || line.equals(END)) {
                throw new BusbarException("busbar did not start:\n" + log());
            }
            Matcher m;
            if ((m = PORT.matcher(line)).matches()) port = Integer.parseInt(m.group(1));
            if ((m = AMQPS_PORT.matcher(line)).matches()) amqpsPort = Integer.parseInt(m.group(1));
            if ((m = ADMIN_PORT.matcher(line)).matches()) adminPort = Integer.parseInt(m.group(1));
            if ((m = CA_FILE.matcher(line)).matches()) caFile = m.group(1);
        }
    }

    /** The emulator form, plain AMQP: {@code Endpoint=sb://localhost:PORT;…;UseDevelopmentEmulator=true;}. */
    public String connectionString() {
        return "Endpoint=sb://localhost:" + port + ";SharedAccessKeyName=" + Controls.KEY_NAME
                + ";SharedAccessKey=" + Controls.KEY + ";UseDevelopmentEmulator=true;";
    }

    /** The service's form, over AMQPS with {@link #amqpsEndpoint()} and {@link #sslContext()}. */
    public String productionConnectionString() {
        return "Endpoint=sb://localhost/;SharedAccessKeyName=" + Controls.KEY_NAME
                + ";SharedAccessKey=" + Controls.KEY;
    }

    /** {@code https://localhost:PORT}: the builder's {@code customEndpointAddress}. */
    public String amqpsEndpoint() {
        return "https://localhost:" + amqpsPort;
    }

    /** The development CA the AMQPS and https certificates are signed by. */
    public Path caFile() {
        return Path.of(caFile);
    }

    /** An SSLContext trusting the development CA: {@code SSLContext.setDefault(busbar.sslContext())}. */
    public SSLContext sslContext() {
        try (InputStream pem = Files.newInputStream(caFile())) {
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            store.setCertificateEntry("busbar-dev-ca", CertificateFactory.getInstance("X.509").generateCertificate(pem));
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(store);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, trust.getTrustManagers(), null);
            return context;
        } catch (IOException | java.security.GeneralSecurityException e) {
            throw new BusbarException("cannot trust " + caFile + ": " + e.getMessage(), e);
        }
    }

    /** {@code http://127.0.0.1:PORT}: the administration API and the test controls. */
    public String adminEndpoint() {
        return "http://127.0.0.1:" + adminPort;
    }

    public int port() {
        return port;
    }

    /** A queue with Service Bus property names, e.g. {@code Map.of("RequiresSession", true)}. */
    public void createQueue(String name, Map<String, ?> properties) {
        controls.putEntity(name, "QueueDescription", properties);
    }

    public void createTopic(String name, Map<String, ?> properties) {
        controls.putEntity(name, "TopicDescription", properties);
    }

    public void createSubscription(String topic, String name, Map<String, ?> properties) {
        controls.putEntity(topic + "/Subscriptions/" + name, "SubscriptionDescription", properties);
    }

    /** Removes an entity's messages (only its dead-letter queue's with deadLetter); how many. */
    public long purge(String entity, boolean deadLetter) {
        String answer = controls.post("/$busbar/purge/" + Controls.entityPath(entity)
                + (deadLetter ? "?deadLetter=true" : ""), null);
        return Long.parseLong(answer.replaceAll("\\D", ""));
    }

    /** Back to the configured entities, empty; entities created since are deleted. */
    public void reset() {
        controls.post("/$busbar/reset", null);
    }

    /** Moves the virtual clock ahead. */
    public void advanceClock(Duration by) {
        controls.post("/$busbar/clock/advance?by=" + by.toMillis() + "ms", null);
    }

    /** Arms a fault: "server-busy" or "lock-lost" for the next count sends or settlements. */
    public void fault(String entity, String kind, int count) {
        controls.post("/$busbar/faults/" + Controls.entityPath(entity),
                "{\"kind\":\"" + kind + "\",\"count\":" + count + "}");
    }

    /** Arms "detach-link" or "drop-connection" with an AMQP condition. */
    public void fault(String entity, String kind, String condition) {
        controls.post("/$busbar/faults/" + Controls.entityPath(entity),
                "{\"kind\":\"" + kind + "\",\"condition\":\"" + condition + "\"}");
    }

    /** What the broker printed so far. */
    public String log() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "";
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly().waitFor();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        try (Stream<Path> files = Files.walk(directory)) {
            files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
