package io.circumflex;

/**
 * A {@code circumflex.*} scheduler key has a value that is not allowed; the message names the key,
 * the value and what is allowed. Thrown at engine creation, so daemon start-up fails.
 */
public class CircumflexConfigException extends CircumflexException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception with the native side's message. */
  public CircumflexConfigException(String message) {
    super(message);
  }

  /** Creates the exception with a message and a cause. */
  public CircumflexConfigException(String message, Throwable cause) {
    super(message, cause);
  }
}
