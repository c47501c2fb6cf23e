package io.circumflex;

/**
 * A job's configuration has a malformed per-job key (e.g. {@code circumflex.job.deadline.ms});
 * the message names the key, the value and what is allowed.
 */
public class CircumflexInvalidJobException extends CircumflexException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception with the native side's message. */
  public CircumflexInvalidJobException(String message) {
    super(message);
  }

  /** Creates the exception with a message and a cause. */
  public CircumflexInvalidJobException(String message, Throwable cause) {
    super(message, cause);
  }
}
