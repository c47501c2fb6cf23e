package io.circumflex.yarn;

import io.circumflex.nativeapi.NativeLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Sends native records to slf4j (log4j in the ResourceManager) under {@code circumflex.native.*}. */
final class Slf4jNativeLogSink implements NativeLog.Sink {
  static final Slf4jNativeLogSink INSTANCE = new Slf4jNativeLogSink();

  private Slf4jNativeLogSink() {}

  @Override
  public void log(NativeLog.Level level, String loggerName, String message) {
    Logger log = LoggerFactory.getLogger(loggerName);
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
