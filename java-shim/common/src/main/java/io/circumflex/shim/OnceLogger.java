package io.circumflex.shim;

import java.util.LinkedHashSet;
import java.util.Set;
import org.apache.commons.logging.Log;

/**
 * Logs each distinct problem once. A scheduler error that repeats on every heartbeat (300 ms on a
 * small cluster) must not flood the JobTracker log, yet every new kind of failure must be seen.
 * Distinctness is by a caller-chosen key (typically the operation plus the exception message);
 * the set is bounded so a stream of unique messages cannot grow memory without limit.
 */
public final class OnceLogger {
  /** Most distinct keys remembered; beyond this the oldest are forgotten and may log again. */
  static final int MAX_KEYS = 1024;

  private final Log log;
  private final Set<String> seen = new LinkedHashSet<String>();

  /** Logs through {@code log}. */
  public OnceLogger(Log log) {
    this.log = log;
  }

  /** Logs {@code message} (with {@code cause}) at WARN the first time {@code key} is seen; returns whether it logged. */
  public synchronized boolean warn(String key, String message, Throwable cause) {
    if (!firstTime(key)) {
      return false;
    }
    if (cause == null) {
      log.warn(message);
    } else {
      log.warn(message, cause);
    }
    return true;
  }

  /**
   * Remembers {@code key} and returns whether it is new, logging nothing: for callers that log the
   * first occurrence at another level (the guard's fallback line is an ERROR).
   */
  public synchronized boolean firstTime(String key) {
    if (!seen.add(key)) {
      return false;
    }
    if (seen.size() > MAX_KEYS) {
      String oldest = seen.iterator().next();
      seen.remove(oldest);
    }
    return true;
  }

  /** Forgets every key (after a successful reconfiguration, old errors may recur and matter again). */
  public synchronized void reset() {
    seen.clear();
  }
}
