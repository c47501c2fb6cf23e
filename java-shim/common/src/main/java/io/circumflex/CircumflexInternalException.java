package io.circumflex;

/**
 * A bug on the native side: a caught Rust panic (the message carries its location and native
 * backtrace), an engine left unusable by an earlier panic, or a JNI failure. Also thrown by the
 * Java side when the native library cannot be loaded.
 */
public class CircumflexInternalException extends CircumflexException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception with the native side's message. */
  public CircumflexInternalException(String message) {
    super(message);
  }

  /** Creates the exception with a message and a cause. */
  public CircumflexInternalException(String message, Throwable cause) {
    super(message, cause);
  }
}
