package io.circumflex;

/**
 * Base of every exception the Circumflex native engine throws. Unchecked, so a Hadoop
 * daemon's event loop can catch it in one place and fall back instead of crashing. The Rust side
 * (ffi::ErrorKind::java_class) is the one table that picks the subclass.
 */
public class CircumflexException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception with the native side's message. */
  public CircumflexException(String message) {
    super(message);
  }

  /** Creates the exception with a message and a cause. */
  public CircumflexException(String message, Throwable cause) {
    super(message, cause);
  }
}
