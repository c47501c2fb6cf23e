package io.circumflex.nativeapi;

/**
 * Forwards the native library's log records to the daemon's logger.
 *
 * <p>The library buffers its records (rust-core {@code ffi::logbuf}, which says why it is polled
 * rather than called back); each shim calls {@link #drainTo} from its timer thread and after calls
 * that log (refresh, submission), with a {@link Sink} over its own logging API (slf4j in YARN,
 * commons-logging in Hadoop 1.x), so an operator sees one log. Logger names are {@code
 * circumflex.native.} plus the Rust target with {@code ::} turned into {@code .}, so log4j levels
 * can be set per native module.
 */
public final class NativeLog {
  private NativeLog() {}

  /** Levels as the library names them, most severe first. */
  public enum Level {
    ERROR,
    WARN,
    INFO,
    DEBUG,
    TRACE
  }

  /** Receives one native record. */
  public interface Sink {
    /** Logs {@code message} at {@code level} under {@code loggerName}. */
    void log(Level level, String loggerName, String message);
  }

  /** Prefix of every native logger name. */
  public static final String LOGGER_PREFIX = "circumflex.native.";

  /**
   * Drains the native buffer into {@code sink}, oldest record first, and returns how many records it
   * forwarded. Does nothing (returns 0) when the library is not loaded.
   */
  public static int drainTo(Sink sink) {
    if (NativeLoader.state() != NativeLoader.State.LOADED) {
      return 0;
    }
    return decode(NativeEngine.drainLogs(), sink);
  }

  /** Decodes the library's encoding (see {@link NativeEngine#drainLogs}); visible for tests. */
  static int decode(String encoded, Sink sink) {
    int count = 0;
    int start = 0;
    while (start < encoded.length()) {
      int end = encoded.indexOf('\u001e', start);
      if (end < 0) {
        end = encoded.length();
      }
      String[] fields = encoded.substring(start, end).split("\u001f", 3);
      start = end + 1;
      if (fields.length != 3) {
        continue;
      }
      sink.log(level(fields[0]), LOGGER_PREFIX + fields[1].replace("::", "."), fields[2]);
      count++;
    }
    return count;
  }

  private static Level level(String name) {
    try {
      return Level.valueOf(name);
    } catch (IllegalArgumentException unknown) {
      return Level.WARN;
    }
  }
}
