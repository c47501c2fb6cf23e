package io.circumflex;

/**
 * The policy's admission control refused a job; the message carries the reason for the submitter.
 */
public class CircumflexRejectedException extends CircumflexException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception with the native side's message. */
  public CircumflexRejectedException(String message) {
    super(message);
  }

  /** Creates the exception with a message and a cause. */
  public CircumflexRejectedException(String message, Throwable cause) {
    super(message, cause);
  }
}
