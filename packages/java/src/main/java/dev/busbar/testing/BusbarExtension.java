// The JUnit 5 extension: one broker for the whole test run (kept in the root context's store,
// closed when the run ends), reset before each test, injected as a Busbar parameter, and its
// log published with a failed test's report.
package dev.busbar.testing;

import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestWatcher;

/** {@code @ExtendWith(BusbarExtension.class)}, then a {@code Busbar} parameter in a test. */
public class BusbarExtension implements BeforeEachCallback, ParameterResolver, TestWatcher {
    private static final ExtensionContext.Namespace NAMESPACE =
            ExtensionContext.Namespace.create(BusbarExtension.class);

    /** The run's broker, started by the first test that needs it. */
    private static Busbar broker(ExtensionContext context) {
        ExtensionContext.Store store = context.getRoot().getStore(NAMESPACE);
        return store.getOrComputeIfAbsent("broker", key -> new Shared(Busbar.start()), Shared.class).broker;
    }

    /** Closes the broker with the root context, at the end of the run. */
    private record Shared(Busbar broker) implements ExtensionContext.Store.CloseableResource {
        @Override
        public void close() {
            broker.close();
        }
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        broker(context).reset();
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == Busbar.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return broker(context);
    }

    @Override
    public void testFailed(ExtensionContext context, Throwable cause) {
        String log = broker(context).log();
        context.publishReportEntry("busbar log", log);
        System.err.println("busbar log:\n" + log);
    }
}
