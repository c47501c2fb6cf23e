package org.apache.hadoop.yarn.sls.scheduler;

import com.codahale.metrics.Snapshot;
import com.codahale.metrics.Timer;
import java.lang.reflect.Field;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEventType;

/**
 * Reads what SLS keeps package-private: the per-operation {@link Timer}s of {@link SchedulerMetrics}
 * (SLS only publishes once-a-second samples of their sliding-window means) and the metrics tear-down
 * of {@link SLSSchedulerCommons}, and the attempt-to-queue map SLS's wrappers keep privately. It lives in SLS's package for that reason alone, as the shim's
 * {@code CircumflexAttempts} does for {@code FifoAppAttempt}; it changes nothing in SLS.
 */
public final class SlsMetricsAccess {
  private SlsMetricsAccess() {}

  /** Stops SLS's metrics (CSV reporter, web app, writers) as SLS's own wrappers do on service stop. */
  public static void stopMetrics(SLSSchedulerCommons commons) {
    commons.stopMetrics();
  }

  /**
   * Statistics of every timer SLS keeps for a scheduler: {@code allocate}, {@code handle} and
   * {@code handle.<EVENT TYPE>}. Each entry: count (all calls of the run) and, over the timer's
   * sliding window ({@code yarn.sls.metrics.timer.window.size} last calls), mean, p50, p90, p99 and
   * max in microseconds. Timers that never ran are left out.
   */
  public static Map<String, double[]> timers(SchedulerMetrics metrics) {
    Map<String, double[]> out = new LinkedHashMap<>();
    put(out, "allocate", metrics.getSchedulerAllocateTimer());
    put(out, "handle", metrics.getSchedulerHandleTimer());
    for (SchedulerEventType type : SchedulerEventType.values()) {
      put(out, "handle." + type, metrics.getSchedulerHandleTimer(type));
    }
    return out;
  }

  /** Order of the values in each {@link #timers} entry. */
  public static final String[] COLUMNS = {"count", "window", "mean_us", "p50_us", "p90_us", "p99_us", "max_us"};

  private static void put(Map<String, double[]> out, String name, Timer timer) {
    if (timer == null || timer.getCount() == 0) {
      return;
    }
    Snapshot s = timer.getSnapshot();
    double perUs = TimeUnit.MICROSECONDS.toNanos(1);
    out.put(name, new double[] {timer.getCount(), s.size(), s.getMean() / perUs, s.getMedian() / perUs,
        s.getValue(0.90) / perUs, s.get99thPercentile() / perUs, s.getMax() / perUs});
  }

  /**
   * SLS's attempt-to-queue map inside the {@link SLSSchedulerCommons} of an {@link SLSFairScheduler} or
   * {@link SLSCapacityScheduler} (or a subclass): SLS fills it only after {@code APP_ATTEMPT_ADDED} has
   * been handled, which can be after the RM's first {@code allocate} for the attempt (see
   * {@code io.circumflex.sls.SlsFairScheduler}).
   */
  @SuppressWarnings("unchecked")
  public static Map<ApplicationAttemptId, String> queueMap(SchedulerWrapper scheduler) {
    try {
      Class<?> c = scheduler.getClass();
      Field commons = null;
      while (commons == null && c != null) {
        try {
          commons = c.getDeclaredField("schedulerCommons");
        } catch (NoSuchFieldException e) {
          c = c.getSuperclass();
        }
      }
      if (commons == null) {
        throw new IllegalStateException(scheduler.getClass() + " has no SLSSchedulerCommons field 'schedulerCommons'");
      }
      commons.setAccessible(true);
      Field map = SLSSchedulerCommons.class.getDeclaredField("appQueueMap");
      map.setAccessible(true);
      return (Map<ApplicationAttemptId, String>) map.get(commons.get(scheduler));
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("this hadoop-sls keeps no SLSSchedulerCommons.appQueueMap (3.4.x expected)", e);
    }
  }

  /** Records the attempt's queue (its application's, as SLS itself would) if SLS has not yet. */
  public static void rememberQueue(Map<ApplicationAttemptId, String> queues, AbstractYarnScheduler<?, ?> scheduler,
      ApplicationAttemptId attemptId) {
    if (attemptId == null || queues.containsKey(attemptId)) {
      return;
    }
    SchedulerApplication<?> app = scheduler.getSchedulerApplications().get(attemptId.getApplicationId());
    if (app != null && app.getQueue() != null) {
      queues.putIfAbsent(attemptId, app.getQueue().getQueueName());
    }
  }
}
