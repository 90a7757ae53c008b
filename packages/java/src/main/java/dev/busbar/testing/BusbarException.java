// What the kit throws: the broker did not start, or refused a control request.
package dev.busbar.testing;

/** The broker did not start, or refused a control request (the message says how). */
public class BusbarException extends RuntimeException {
    public BusbarException(String message) {
        super(message);
    }

    public BusbarException(String message, Throwable cause) {
        super(message, cause);
    }
}
