package io.circumflex;

/**
 * A job, node or engine handle the native engine does not know (e.g. a closed engine).
 */
public class CircumflexUnknownIdException extends CircumflexException {
  private static final long serialVersionUID = 1L;

  /** Creates the exception with the native side's message. */
  public CircumflexUnknownIdException(String message) {
    super(message);
  }

  /** Creates the exception with a message and a cause. */
  public CircumflexUnknownIdException(String message, Throwable cause) {
    super(message, cause);
  }
}
