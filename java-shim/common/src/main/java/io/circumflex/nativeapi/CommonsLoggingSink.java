package io.circumflex.nativeapi;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Sends native log records to commons-logging, which both daemons ship and bind to log4j, under
 * {@code circumflex.native.*}. The one {@link NativeLog.Sink} both shims use.
 */
public final class CommonsLoggingSink implements NativeLog.Sink {
  /** The shared instance (stateless). */
  public static final CommonsLoggingSink INSTANCE = new CommonsLoggingSink();

  private CommonsLoggingSink() {}

  @Override
  public void log(NativeLog.Level level, String loggerName, String message) {
    Log log = LogFactory.getLog(loggerName);
    switch (level) {
      case ERROR:
        log.error(message);
        break;
      case WARN:
        log.warn(message);
        break;
      case INFO:
        log.info(message);
        break;
      case DEBUG:
        log.debug(message);
        break;
      default:
        log.trace(message);
        break;
    }
  }
}
