package io.circumflex.nativeapi;

import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One native scheduling engine: the Java face of the Rust {@code Engine}. Thin: it forwards, it
 * decides nothing.
 *
 * <p>Ownership: the instance owns one native handle from {@code nativeCreate}; {@link #close()}
 * frees it exactly once (an {@link AtomicBoolean} owner flag makes close idempotent and safe when
 * raced). There is no finalizer: close it (try-with-resources, or the scheduler's
 * {@code serviceStop}). Calls after close throw {@link io.circumflex.CircumflexUnknownIdException}.
 *
 * <p>Threads: every method may be called from any thread; the native side serializes calls on
 * one engine with a mutex. Native code never calls back into Java.
 *
 * <p>Units and codes: times are host milliseconds ({@code System.currentTimeMillis()} in the
 * shims), durations milliseconds; {@link #MAP}/{@link #REDUCE} phase codes; {@link #NODE_LOCAL},
 * {@link #RACK_LOCAL}, {@link #ANY} locality codes; job and node ids are the ints this class
 * returns.
 *
 * <p>Errors: every method may throw a {@link io.circumflex.CircumflexException} subclass: config
 * (at creation), invalid job or rejected (at submission), unknown id, or internal (a caught native
 * panic, with its message and native backtrace).
 */
public final class NativeEngine implements AutoCloseable {
  /** Phase code of map tasks. */
  public static final int MAP = 0;
  /** Phase code of reduce tasks. */
  public static final int REDUCE = 1;
  /** Locality code: the task must run on a node holding its data. */
  public static final int NODE_LOCAL = 0;
  /** Locality code: the task may run on the data's rack. */
  public static final int RACK_LOCAL = 1;
  /** Locality code: the task may run anywhere. */
  public static final int ANY = 2;
  /** Ints per choice in {@link #nodeUpdate}'s output: job, phase, count, locality. */
  public static final int CHOICE_STRIDE = 4;
  /** Ints per record of {@link #tasksStarted}: job, phase, node, locality. */
  public static final int STARTED_STRIDE = 4;
  /** Longs per record of {@link #tasksFinished}: job, phase, node, duration ms, success (0/1), finish time. */
  public static final int FINISHED_STRIDE = 6;
  /** Ints per decision of {@link #preemptions}: victim job, phase, count, beneficiary job. */
  public static final int PREEMPTION_STRIDE = 4;
  /** Longs per record of {@link #tasksPreempted}: job, phase, node, ran ms, kill time. */
  public static final int PREEMPTED_STRIDE = 5;
  /** Longs per record of {@link #amEvents}: kind, job, AM slots (0: as requested), time ms. */
  public static final int AM_EVENT_STRIDE = 4;
  /** {@link #amEvents} kind: the job's AM asks for a container. */
  public static final long AM_REQUESTED = 0;
  /** {@link #amEvents} kind: the job's AM container runs. */
  public static final long AM_STARTED = 1;
  /** {@link #amEvents} kind: the job's AM asks for tasks. */
  public static final long AM_REGISTERED = 2;
  /** {@link #amEvents} kind: the job's AM container ended. */
  public static final long AM_FINISHED = 3;

  private static String version;

  private final long handle;
  private final AtomicBoolean owner = new AtomicBoolean(true);

  private NativeEngine(long handle) {
    this.handle = handle;
  }

  /**
   * Loads the library (see {@link NativeLoader}) and initializes it once: panic hook and Rust
   * logging at {@code logLevel} (env_logger syntax; null or empty = warn). Returns the library
   * version.
   */
  public static synchronized String init(String logLevel) {
    NativeLoader.load();
    if (version == null) {
      version = nativeInit(logLevel == null ? "" : logLevel);
    }
    return version;
  }

  /**
   * Creates an engine from scheduler configuration keys (every {@code circumflex.*} key; others
   * are ignored by the native side).
   *
   * @throws io.circumflex.CircumflexConfigException naming the bad key, its value and what is allowed
   */
  public static NativeEngine create(Map<String, String> config) {
    init(null);
    return new NativeEngine(nativeCreate(Json.object(config)));
  }

  /** Frees the native engine. Idempotent. */
  @Override
  public void close() {
    if (owner.compareAndSet(true, false)) {
      nativeClose(handle);
    }
  }

  /** Whether {@link #close()} has been called. */
  public boolean isClosed() {
    return !owner.get();
  }

  /** Registers a node and returns its id. YARN (shared pool): all slots as {@code mapSlots}, 0 reduce. */
  public int addNode(String name, String rack, int mapSlots, int reduceSlots) {
    return nativeAddNode(handle, name, rack, mapSlots, reduceSlots);
  }

  /** Puts a node in or out of the accelerated pool (hardware affinity, e.g. from a YARN node label). */
  public void setNodeAccelerated(int node, boolean accelerated) {
    nativeSetNodeAccelerated(handle, node, accelerated);
  }

  /** Marks a node lost; report its running tasks as failed with {@link #taskFinished}. */
  public void removeNode(int node, long now) {
    nativeRemoveNode(handle, node, now);
  }

  /** Changes a node's slots. */
  public void setNodeCapacity(int node, int mapSlots, int reduceSlots) {
    nativeSetNodeCapacity(handle, node, mapSlots, reduceSlots);
  }

  /**
   * Submits a job from its configuration keys (the shim collects and forwards; the native side
   * maps and validates them) at {@code now}; returns the job id.
   *
   * @throws io.circumflex.CircumflexInvalidJobException naming a malformed key
   * @throws io.circumflex.CircumflexRejectedException carrying the admission policy's reason
   */
  public int submitJob(Map<String, String> jobConf, long now) {
    return nativeSubmitJob(handle, Json.object(jobConf), now);
  }

  /**
   * {@link #submitJob} plus the job's reduce readiness and pending counts, in one native call.
   *
   * @throws io.circumflex.CircumflexInvalidJobException naming a malformed key
   * @throws io.circumflex.CircumflexRejectedException carrying the admission policy's reason
   */
  public int submitJob(Map<String, String> jobConf, long now, boolean reducesReady, int pendingMap,
      int pendingReduce) {
    return nativeSubmitJobWith(handle, Json.object(jobConf), now, reducesReady, pendingMap, pendingReduce);
  }

  /** Sets both phases' pending task counts in one native call. */
  public void setPendingPhases(int job, int pendingMap, int pendingReduce) {
    nativeSetPendingPhases(handle, job, pendingMap, pendingReduce);
  }

  /**
   * Reports the first {@code count} task starts of the caller-owned {@code records} ({@link
   * #STARTED_STRIDE} ints each: job, phase, node, locality) at {@code now}, in one native call (a
   * heartbeat's launches). Returns how many were applied: records naming a job or node the engine no
   * longer knows are skipped. A malformed record throws {@link IllegalArgumentException} naming it, and
   * then nothing is applied.
   */
  public int tasksStarted(int[] records, int count, long now) {
    return nativeTasksStarted(handle, records, count, now);
  }

  /**
   * Reports the first {@code count} task ends of the caller-owned {@code records} ({@link
   * #FINISHED_STRIDE} longs each: job, phase, node, duration ms, success 0 or 1, finish time), in one
   * native call (a heartbeat's completions); returns how many were applied, as {@link #tasksStarted}.
   */
  public int tasksFinished(long[] records, int count) {
    return nativeTasksFinished(handle, records, count);
  }

  /**
   * Writes the current plan's job ids in priority order into the caller-owned {@code out} (as many as
   * fit) and returns how many the plan has; grow {@code out} and call again when that is more.
   */
  public int planOrder(int[] out) {
    return nativePlanOrder(handle, out);
  }

  /**
   * Asks the engine for preemption decisions at {@code now} (from the timer, after {@link #tick}; never
   * from a heartbeat) and writes as many whole decisions as fit into the caller-owned {@code out}
   * ({@link #PREEMPTION_STRIDE} ints each: victim job, phase, count, beneficiary job); returns how many it
   * wrote. Decisions that did not fit are kept natively and written first by the next call: when {@code
   * out} comes back full, call again. For each decision the host takes {@code count} of the victim's
   * youngest running tasks of that phase and, after {@code circumflex.preemption.grace.ms}, kills those
   * still running and reports them with {@link #tasksPreempted}. Empty while preemption is off.
   */
  public int preemptions(long now, int[] out) {
    return nativePreemptions(handle, now, out);
  }

  /**
   * Reports the first {@code count} records of the caller-owned {@code records} ({@link #PREEMPTED_STRIDE}
   * longs each: job, phase, node, ran ms, kill time) as tasks killed for a preemption, instead of their
   * ends: each is re-queued (not a failure), its work counted as lost, its slot earmarked for the
   * decision's beneficiary. Returns how many were applied, as {@link #tasksFinished}.
   */
  public int tasksPreempted(long[] records, int count) {
    return nativeTasksPreempted(handle, records, count);
  }

  /**
   * Which waiting AMs may start at {@code now} (the engine's AM gate, {@code circumflex.am.*}): writes
   * their engine job ids in plan order into {@code out} (as many as fit) and returns how many there are;
   * a caller whose array was too short grows it and calls again. Once per heartbeat batch while an AM
   * waits; empty while the gate is off.
   */
  public int amAdmissions(long now, int[] out) {
    return nativeAmAdmissions(handle, now, out);
  }

  /**
   * Applies the first {@code count} AM events of {@code records} ({@link #AM_EVENT_STRIDE} longs each:
   * kind {@link #AM_REQUESTED} .. {@link #AM_FINISHED}, job, AM slots, time ms) in one call; returns how
   * many were applied (records of jobs the engine no longer knows are skipped). No-ops while the gate is
   * off.
   */
  public int amEvents(long[] records, int count) {
    return nativeAmEvents(handle, records, count);
  }

  /** Sets how many tasks of {@code phase} wait for a slot. */
  public void setPending(int job, int phase, int pending) {
    nativeSetPending(handle, job, phase, pending);
  }

  /** Tells the engine whether the job's reduces may run now. */
  public void setReducesReady(int job, boolean ready) {
    nativeSetReducesReady(handle, job, ready);
  }

  /** Reports a task launched at {@code locality}. */
  public void taskStarted(int job, int phase, int node, int locality, long now) {
    nativeTaskStarted(handle, job, phase, node, locality, now);
  }

  /** Reports a task end after {@code durationMs}; a failure puts the task back to pending. */
  public void taskFinished(int job, int phase, int node, long durationMs, boolean success, long now) {
    nativeTaskFinished(handle, job, phase, node, durationMs, success, now);
  }

  /** Ends a job (done, killed or failed). Idempotent. */
  public void finishJob(int job, long now) {
    nativeFinishJob(handle, job, now);
  }

  /** Re-plans if an epoch passed or state changed; returns whether it planned. Timer thread only. */
  public boolean tick(long now) {
    return nativeTick(handle, now);
  }

  /**
   * Answers a heartbeat from {@code node} with free slots. Fills {@code out} (preallocate once and
   * reuse; length a multiple of {@link #CHOICE_STRIDE}) with choices in the order to try them, each
   * {@code job, phase, count, locality}, and returns the number of choices written. Never re-plans
   * and allocates nothing on the Java heap.
   */
  public int nodeUpdate(int node, int freeMap, int freeReduce, long now, int[] out) {
    return nativeNodeUpdate(handle, node, freeMap, freeReduce, now, out);
  }

  /** The current plan as JSON (UI, tests). */
  public String planJson() {
    return nativePlanJson(handle);
  }

  /** Policy, counters, nodes and jobs as JSON (UI, tests). */
  public String statusJson(long now) {
    return nativeStatusJson(handle, now);
  }

  /**
   * Changes the native log level ({@code env_logger} syntax, e.g. {@code info} or {@code
   * circumflex::ffi=debug}) for the whole process. Throws {@link io.circumflex.CircumflexConfigException}
   * for a level that does not parse; the old level then stays.
   */
  public static synchronized void setLogLevel(String logLevel) {
    init(logLevel);
    nativeInit(logLevel == null ? "" : logLevel);
  }

  /** The status as an HTML fragment for scheduler pages; text from jobs is escaped natively. */
  public String statusHtml(long now) {
    return nativeStatusHtml(handle, now);
  }

  /**
   * Replaces the policy and its parameters (operator refresh) from every {@code circumflex.*} key and
   * re-plans at {@code now}. Throws {@link io.circumflex.CircumflexConfigException} naming the bad key;
   * the running policy then stays.
   */
  public void reconfigure(Map<String, String> config, long now) {
    nativeReconfigure(handle, Json.object(config), now);
  }

  /** Names of the counters {@link #counters} writes, in order (rust-core's ffi::COUNTER_NAMES). */
  public static final String[] COUNTER_NAMES = {
    "plans", "last_plan_ns", "total_plan_ns", "node_updates", "admitted", "rejected", "finished",
    "deadline_misses", "active_jobs", "preemptions", "preempted_tasks", "preempted_lost_ms",
    "preemptions_in_flight",
  };

  /** Writes the engine's counters (see {@link #COUNTER_NAMES}) into {@code out}; returns how many. */
  public int counters(long[] out) {
    return nativeCounters(handle, out);
  }

  /**
   * Takes every buffered native log record (process-wide, all engines), encoded as {@code
   * LEVEL\u001ftarget\u001fmessage\u001e} per record; {@link NativeLog} decodes and forwards them.
   */
  static String drainLogs() {
    NativeLoader.load();
    return nativeDrainLogs();
  }

  // Natives: static, handle first (RocksDB style); documented in rust-core/src/ffi/jni.rs.
  private static native String nativeStatusHtml(long handle, long now);

  private static native void nativeReconfigure(long handle, String configJson, long now);

  private static native int nativeCounters(long handle, long[] out);

  private static native String nativeDrainLogs();

  private static native String nativeInit(String logLevel);

  private static native long nativeCreate(String configJson);

  private static native void nativeClose(long handle);

  private static native int nativeAddNode(long handle, String name, String rack, int mapSlots, int reduceSlots);

  private static native void nativeRemoveNode(long handle, int node, long now);

  private static native void nativeSetNodeAccelerated(long handle, int node, boolean accelerated);

  private static native void nativeSetNodeCapacity(long handle, int node, int mapSlots, int reduceSlots);

  private static native int nativeSubmitJob(long handle, String jobConfJson, long now);

  private static native void nativeSetPending(long handle, int job, int phase, int pending);

  private static native int nativeSubmitJobWith(long handle, String jobConfJson, long now, boolean reducesReady,
      int pendingMap, int pendingReduce);

  private static native void nativeSetPendingPhases(long handle, int job, int pendingMap, int pendingReduce);

  private static native int nativeTasksStarted(long handle, int[] records, int count, long now);

  private static native int nativeTasksFinished(long handle, long[] records, int count);

  private static native int nativePlanOrder(long handle, int[] out);

  private static native int nativePreemptions(long handle, long now, int[] out);

  private static native int nativeTasksPreempted(long handle, long[] records, int count);

  private static native int nativeAmAdmissions(long handle, long now, int[] out);

  private static native int nativeAmEvents(long handle, long[] records, int count);

  private static native void nativeSetReducesReady(long handle, int job, boolean ready);

  private static native void nativeTaskStarted(long handle, int job, int phase, int node, int locality, long now);

  private static native void nativeTaskFinished(
      long handle, int job, int phase, int node, long durationMs, boolean success, long now);

  private static native void nativeFinishJob(long handle, int job, long now);

  private static native boolean nativeTick(long handle, long now);

  private static native int nativeNodeUpdate(
      long handle, int node, int freeMap, int freeReduce, long now, int[] out);

  private static native String nativePlanJson(long handle);

  private static native String nativeStatusJson(long handle, long now);

  /** Minimal JSON writer for string maps (the only JSON Java sends), so common has no dependencies. */
  static final class Json {
    private Json() {}

    static String object(Map<String, String> map) {
      StringBuilder sb = new StringBuilder(32 + 48 * map.size()).append('{');
      boolean first = true;
      for (Map.Entry<String, String> e : map.entrySet()) {
        if (e.getKey() == null || e.getValue() == null) {
          continue;
        }
        if (!first) {
          sb.append(',');
        }
        first = false;
        string(sb, e.getKey()).append(':');
        string(sb, e.getValue());
      }
      return sb.append('}').toString();
    }

    static StringBuilder string(StringBuilder sb, String s) {
      sb.append('"');
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        switch (c) {
          case '"':
            sb.append("\\\"");
            break;
          case '\\':
            sb.append("\\\\");
            break;
          case '\n':
            sb.append("\\n");
            break;
          case '\r':
            sb.append("\\r");
            break;
          case '\t':
            sb.append("\\t");
            break;
          default:
            if (c < 0x20) {
              sb.append(String.format("\\u%04x", (int) c));
            } else {
              sb.append(c);
            }
        }
      }
      return sb.append('"');
    }
  }
}
