package io.circumflex.observe;

import io.circumflex.CircumflexException;
import io.circumflex.nativeapi.NativeEngine;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The scheduler metrics both daemons publish through metrics2: the engine's native counters (plans
 * and plan time, node updates, jobs admitted, rejected and finished, deadline misses, active jobs)
 * plus what only the shim sees (time spent in node updates including the JNI crossing, refreshes
 * applied and refused, whether the FIFO fallback is active and how often it started; the
 * {@code io.circumflex.shim.EngineGuard} keeps those two). Hadoop 1.x and 3.x have different metrics2 interfaces, so each shim has a
 * thin {@code MetricsSource} that copies {@link #read} into its builder.
 */
public final class EngineMetrics {
  /** One value to publish. */
  public static final class Metric {
    public final String name;
    public final String description;
    public final long value;
    /** Monotonic (a counter) rather than a level (a gauge). */
    public final boolean counter;

    Metric(String name, String description, long value, boolean counter) {
      this.name = name;
      this.description = description;
      this.value = value;
      this.counter = counter;
    }

    @Override
    public String toString() {
      return name + "=" + value;
    }
  }

  /** Metrics2 record and source name. */
  public static final String SOURCE_NAME = "CircumflexScheduler";
  /** Metrics2 source description. */
  public static final String SOURCE_DESCRIPTION = "Circumflex scheduler: planning, heartbeats, admission, deadlines";

  // Published name, description and counter flag of each native counter, in NativeEngine.COUNTER_NAMES order.
  private static final String[][] NATIVE = {
    {"Plans", "Plans computed", "c"},
    {"LastPlanNanos", "Time of the last plan, ns", "g"},
    {"PlanNanos", "Total planning time, ns", "c"},
    {"NodeUpdates", "Heartbeats answered by the engine", "c"},
    {"JobsAdmitted", "Jobs accepted by admission control", "c"},
    {"JobsRejected", "Jobs refused by admission control", "c"},
    {"JobsFinished", "Jobs finished", "c"},
    {"DeadlineMisses", "Finished jobs that finished after their deadline", "c"},
    {"ActiveJobs", "Jobs accepted and not finished", "g"},
    {"Preemptions", "Tasks the engine decided to take back", "c"},
    {"PreemptedTasks", "Tasks killed for a preemption", "c"},
    {"PreemptedLostMillis", "Work thrown away by preemption kills, slot-ms", "c"},
    {"PreemptionsInFlight", "Tasks asked back and not yet killed", "g"},
  };

  private final AtomicLong nodeUpdateCalls = new AtomicLong();
  private final AtomicLong nodeUpdateNanos = new AtomicLong();
  private final AtomicLong refreshes = new AtomicLong();
  private final AtomicLong refreshesRejected = new AtomicLong();
  private final AtomicLong fallbacks = new AtomicLong();
  private final AtomicBoolean fallbackActive = new AtomicBoolean();

  /** Records one node-update call that took {@code nanos} (JNI crossing included). */
  public void nodeUpdateTimed(long nanos) {
    nodeUpdateCalls.incrementAndGet();
    nodeUpdateNanos.addAndGet(nanos);
  }

  /** Records a refresh that was applied ({@code applied}) or refused. */
  public void refreshed(boolean applied) {
    (applied ? refreshes : refreshesRejected).incrementAndGet();
  }

  /** Records a switch to the FIFO fallback. */
  public void fellBack() {
    fallbacks.incrementAndGet();
    fallbackActive.set(true);
  }

  /** Sets whether the FIFO fallback is active (cleared when an engine takes charge). */
  public void fallbackActive(boolean active) {
    fallbackActive.set(active);
  }

  /**
   * Every metric now. {@code engine} may be null (fallback) or closed concurrently: the native
   * counters are then left out, the shim's own ones are still reported.
   */
  public List<Metric> read(NativeEngine engine) {
    List<Metric> out = new ArrayList<>(NATIVE.length + 6);
    if (engine != null) {
      long[] values = new long[NativeEngine.COUNTER_NAMES.length];
      int n;
      try {
        n = engine.counters(values);
      } catch (CircumflexException closedOrBroken) {
        n = 0;
      }
      for (int i = 0; i < n && i < NATIVE.length; i++) {
        out.add(new Metric(NATIVE[i][0], NATIVE[i][1], values[i], "c".equals(NATIVE[i][2])));
      }
    }
    out.add(new Metric("NodeUpdateCalls", "Node updates timed by the shim", nodeUpdateCalls.get(), true));
    out.add(new Metric("NodeUpdateNanos", "Total node-update time including JNI, ns", nodeUpdateNanos.get(), true));
    out.add(new Metric("Refreshes", "Refreshes applied", refreshes.get(), true));
    out.add(new Metric("RefreshesRejected", "Refreshes refused (old policy kept)", refreshesRejected.get(), true));
    out.add(new Metric("Fallbacks", "Switches to the FIFO fallback after an engine failure", fallbacks.get(), true));
    out.add(new Metric("FallbackActive", "1 while the FIFO fallback schedules", fallbackActive.get() ? 1 : 0, false));
    return out;
  }
}
