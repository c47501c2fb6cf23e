package io.circumflex.shim;

import io.circumflex.CircumflexException;
import io.circumflex.CircumflexInternalException;
import io.circumflex.CircumflexUnknownIdException;
import io.circumflex.nativeapi.NativeEngine;
import io.circumflex.observe.EngineMetrics;
import org.apache.commons.logging.Log;

/**
 * The one failure regime of both shims (MRv1 {@code CircumflexTaskScheduler} and YARN
 * {@code CircumflexScheduler}): it owns the current {@link NativeEngine}, runs every engine call, and
 * decides what a failure means. A Hadoop daemon must never go down because of its scheduler.
 *
 * <p><b>The regime.</b>
 * <ul>
 *   <li><b>Engine failure</b>: a {@link CircumflexInternalException} (a caught native panic, an engine
 *       left unusable by one, a library that cannot load) or a {@link LinkageError} (library or
 *       symbol missing). The guard drops and closes the engine and the shim schedules in FIFO order
 *       (its own {@code FifoFallback}); the line {@code Circumflex fallback: <operation>: <cause>} is
 *       logged at ERROR once per distinct error (class and first line of the message), the cause is
 *       kept ({@link #fallbackCause()}, shown on both scheduler pages) and counted in metrics
 *       ({@code Fallbacks}, {@code FallbackActive}).</li>
 *   <li><b>Recovery</b>: a successful operator refresh ({@code mradmin -refreshQueues},
 *       {@code yarn rmadmin -refreshQueues}) builds a new engine, the shim replays its daemon's state
 *       into it (trackers or nodes, live jobs, running tasks), and {@link #recover} puts it in charge:
 *       the cause is cleared and the once-logged errors are forgotten, so a recurrence is logged
 *       again. A refresh whose engine cannot be built or replayed is refused and the fallback stays.
 *       Nothing recovers on its own: a panic is a bug, and retrying it on every heartbeat would only
 *       flood the log.</li>
 *   <li><b>Unknown id</b> ({@link CircumflexUnknownIdException}): the engine retired a job or node
 *       before Hadoop did (a job completes on its last task while Hadoop runs its cleanup); logged at
 *       DEBUG and ignored.</li>
 *   <li><b>Any other refusal</b> (another {@link CircumflexException}, or an
 *       {@link IllegalArgumentException} for an argument out of range): the engine refused one event
 *       and is still consistent (it validates before it mutates); logged at WARN once per distinct
 *       message and ignored.</li>
 * </ul>
 * Configuration errors at start-up and refresh, rejections and malformed jobs at submission are not
 * the guard's business: the shims catch them at those call sites, where they have a meaning for the
 * operator or the submitter.
 *
 * <p><b>Threads.</b> The engine reference is volatile and every transition is synchronized on the
 * guard, so a timer thread can call through the guard while a daemon thread falls back or recovers;
 * a failure of an engine that is no longer current (replaced meanwhile) changes nothing.
 */
public final class EngineGuard {
  /** An engine call that returns a value. */
  public interface Call<T> {
    /** Runs the call on {@code engine}. */
    T call(NativeEngine engine);
  }

  /** An engine call without a value. */
  public interface Action {
    /** Runs the call on {@code engine}. */
    void run(NativeEngine engine);
  }

  private final Log log;
  private final OnceLogger once;
  private final EngineMetrics metrics = new EngineMetrics();
  /** Null while in fallback (or before start and after stop). */
  private volatile NativeEngine engine;
  /** Why the fallback is active (the failure that started it), or null while an engine is in charge. */
  private volatile String fallbackCause = "not started";

  /** A guard that logs through {@code log} (the shim's own logger). */
  public EngineGuard(Log log) {
    this.log = log;
    this.once = new OnceLogger(log);
  }

  /** The engine in charge, or null in fallback. Use {@link #call}/{@link #run} to call it. */
  public NativeEngine engine() {
    return engine;
  }

  /** Whether an engine is in charge. */
  public boolean isActive() {
    return engine != null;
  }

  /** Why the shim schedules in FIFO order (the failure that started the fallback), or null. */
  public String fallbackCause() {
    return fallbackCause;
  }

  /** The metrics both shims publish; the guard keeps its fallback gauge and counter. */
  public EngineMetrics metrics() {
    return metrics;
  }

  /** Logs {@code message} at WARN once per distinct {@code key} (until the next recovery). */
  public boolean warnOnce(String key, String message) {
    return once.warn(key, message, null);
  }

  /** Puts a freshly created engine in charge at start-up. */
  public synchronized void start(NativeEngine fresh) {
    engine = fresh;
    fallbackCause = null;
    metrics.fallbackActive(false);
  }

  /**
   * Puts {@code fresh} (created and replayed by a successful refresh) in charge, closing the engine it
   * replaces if any; clears the fallback and forgets the once-logged errors.
   */
  public synchronized void recover(NativeEngine fresh) {
    NativeEngine old = engine;
    boolean wasFallback = old == null && fallbackCause != null;
    start(fresh);
    once.reset();
    if (old != null && old != fresh) {
      closeQuietly(old);
    }
    if (wasFallback) {
      log.info("Circumflex recovered: a new engine is in charge after a successful refresh");
    }
  }

  /** Closes the engine at shutdown; later calls do nothing. */
  public synchronized void stop() {
    NativeEngine old = engine;
    engine = null;
    fallbackCause = "stopped";
    if (old != null) {
      closeQuietly(old);
    }
  }

  /**
   * Runs {@code call} on the engine in charge and returns its value, or {@code onFailure} in fallback
   * and when the call fails (see the regime in the class doc).
   */
  public <T> T call(String operation, Call<T> call, T onFailure) {
    NativeEngine current = engine;
    if (current == null) {
      return onFailure;
    }
    try {
      return call.call(current);
    } catch (CircumflexException | IllegalArgumentException | LinkageError e) {
      failed(operation, e, current);
    }
    return onFailure;
  }

  /**
   * Applies the regime to {@code error}, thrown by {@code engine} in {@code operation}: for hot paths
   * that call the engine directly (from {@link #engine()}) in their own try block, so the heartbeat
   * allocates no call object.
   */
  public void failed(String operation, Throwable error, NativeEngine engine) {
    if (error instanceof CircumflexInternalException || error instanceof LinkageError) {
      fallBack(operation, error, engine);
    } else if (error instanceof CircumflexUnknownIdException) {
      if (log.isDebugEnabled()) {
        log.debug("Circumflex " + operation + ": " + error.getMessage() + " (the engine already retired it)");
      }
    } else if (error instanceof CircumflexException || error instanceof IllegalArgumentException) {
      once.warn(operation + ":" + firstLine(error.getMessage()), "Circumflex ignored " + operation + ": "
          + error.getMessage(), null);
    } else if (error instanceof RuntimeException) {
      throw (RuntimeException) error;
    } else if (error instanceof Error) {
      throw (Error) error;
    } else {
      throw new IllegalStateException("unexpected checked exception from the engine", error);
    }
  }

  /** Runs {@code action} on the engine in charge; returns whether it completed. */
  public boolean run(String operation, Action action) {
    return call(operation, engine -> {
      action.run(engine);
      return Boolean.TRUE;
    }, Boolean.FALSE);
  }

  /**
   * Switches to the FIFO fallback because {@code failed} (the engine in charge, or null when no engine
   * could be created) failed in {@code operation}. If another engine has replaced {@code failed}
   * meanwhile, only the log line is written.
   */
  public synchronized void fallBack(String operation, Throwable cause, NativeEngine failed) {
    String message = operation + ": " + cause;
    if (once.firstTime("fallback:" + cause.getClass().getName() + ": " + firstLine(cause.getMessage()))) {
      log.error("Circumflex fallback: " + message + "; scheduling in FIFO order until a successful refresh; "
          + "the daemon keeps running", cause);
    }
    if (engine != failed) {
      return;
    }
    fallbackCause = message;
    engine = null;
    metrics.fellBack();
    if (failed != null) {
      closeQuietly(failed);
    }
  }

  private void closeQuietly(NativeEngine old) {
    try {
      old.close();
    } catch (RuntimeException | LinkageError e) {
      // A poisoned engine may fail to close; it is abandoned either way.
      log.debug("closing the replaced engine failed", e);
    }
  }

  private static String firstLine(String s) {
    if (s == null) {
      return "";
    }
    int nl = s.indexOf('\n');
    return nl < 0 ? s : s.substring(0, nl);
  }
}
