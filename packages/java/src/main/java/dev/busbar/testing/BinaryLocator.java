// Where the busbar binary is: BUSBAR_BIN, or the one this jar carries for the machine,
// copied once per JVM to a temporary executable file.
package dev.busbar.testing;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

final class BinaryLocator {
    private static Path extracted;

    private BinaryLocator() {}

    static synchronized Path binary() throws IOException {
        String chosen = System.getenv("BUSBAR_BIN");
        if (chosen != null && !chosen.isEmpty()) {
            return Path.of(chosen);
        }
        if (extracted == null) {
            String resource = "bin/" + platform() + "/busbar";
            try (InputStream carried = BinaryLocator.class.getResourceAsStream(resource)) {
                if (carried == null) {
                    throw new BusbarException("this jar carries no busbar binary for " + platform());
                }
                Path file = Files.createTempFile("busbar-", "");
                Files.copy(carried, file, StandardCopyOption.REPLACE_EXISTING);
                file.toFile().setExecutable(true);
                file.toFile().deleteOnExit();
                extracted = file;
            }
        }
        return extracted;
    }

    /** The directory name of this machine's binary: {@code linux-x86_64}. */
    static String platform() {
        String os = System.getProperty("os.name").toLowerCase().startsWith("linux") ? "linux" : System.getProperty("os.name");
        String arch = System.getProperty("os.arch").replace("amd64", "x86_64");
        return os + "-" + arch;
    }
}
