package io.circumflex.sls;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEventType;

/**
 * The harness's own NODE_UPDATE timer, the same for every scheduler of a comparison: it times the
 * scheduler's handling of each heartbeat (the call SLS's {@code handle.NODE_UPDATE} timer wraps) and
 * files it as <b>busy</b> or <b>idle</b> by the state just before the call:
 * <ul>
 *   <li>busy: the node has room for at least one minimum allocation and the cluster has pending
 *       demand (the root queue's pending memory is positive), so the scheduler has a placement to
 *       decide;</li>
 *   <li>idle: everything else (a full node, or nothing asked for).</li>
 * </ul>
 * SLS's mean mixes the two in whatever proportion a run happens to have (a scheduler that finishes
 * late times many idle heartbeats), so the split is what makes two runs comparable.
 *
 * <p>{@link #classify} and {@link #time} run on the RM's scheduler event thread, one event at a time;
 * durations are kept in full (a few hundred thousand per run).
 */
public final class HeartbeatCost {
  /** The wrappers around each scheduler expose their timer through this. */
  public interface Source {
    /** This scheduler's heartbeat timer. */
    HeartbeatCost heartbeatCost();
  }

  private long[] busy = new long[1024];
  private int busyCount;
  private long[] idle = new long[1024];
  private int idleCount;

  private boolean nextIsBusy;

  /**
   * Files the coming NODE_UPDATE as busy or idle (call before SLS's timers start, so the look-up is not
   * part of any timed call); other events are ignored.
   */
  public void classify(AbstractYarnScheduler<?, ?> scheduler, SchedulerEvent event) {
    if (event.getType() == SchedulerEventType.NODE_UPDATE && event instanceof NodeUpdateSchedulerEvent) {
      nextIsBusy = isBusy(scheduler, (NodeUpdateSchedulerEvent) event);
    }
  }

  /** Handles {@code event} through {@code handler}, timing it if it is a NODE_UPDATE. */
  public void time(SchedulerEvent event, Runnable handler) {
    if (event.getType() == SchedulerEventType.NODE_UPDATE) {
      timeNodeUpdate(handler);
    } else {
      handler.run();
    }
  }

  /**
   * Times one NODE_UPDATE. A method of its own so that a profile can select the heartbeat handling of
   * any scheduler by this frame ({@code JfrTop ... HeartbeatCost.timeNodeUpdate}).
   */
  private void timeNodeUpdate(Runnable handler) {
    long start = System.nanoTime();
    try {
      handler.run();
    } finally {
      record(nextIsBusy, System.nanoTime() - start);
    }
  }

  private static boolean isBusy(AbstractYarnScheduler<?, ?> scheduler, NodeUpdateSchedulerEvent event) {
    SchedulerNode node = scheduler.getSchedulerNode(event.getRMNode().getNodeID());
    if (node == null || scheduler.getRootQueueMetrics() == null
        || scheduler.getRootQueueMetrics().getPendingMB() <= 0) {
      return false;
    }
    Resource free = node.getUnallocatedResource();
    Resource min = scheduler.getMinimumResourceCapability();
    return free.getMemorySize() >= min.getMemorySize() && free.getVirtualCores() >= min.getVirtualCores();
  }

  /** Records one heartbeat of {@code nanos}. */
  synchronized void record(boolean isBusy, long nanos) {
    if (isBusy) {
      if (busyCount == busy.length) {
        busy = Arrays.copyOf(busy, busy.length * 2);
      }
      busy[busyCount++] = nanos;
    } else {
      if (idleCount == idle.length) {
        idle = Arrays.copyOf(idle, idle.length * 2);
      }
      idle[idleCount++] = nanos;
    }
  }

  /**
   * {@code own.NODE_UPDATE.busy}, {@code own.NODE_UPDATE.idle} and {@code own.NODE_UPDATE} (both), each
   * in the column order of {@code SlsMetricsAccess.COLUMNS} (count, window, mean, p50, p90, p99, max;
   * microseconds; the window is every call). Empty classes are left out.
   */
  public synchronized Map<String, double[]> stats() {
    Map<String, double[]> out = new LinkedHashMap<>();
    long[] all = Arrays.copyOf(busy, busyCount + idleCount);
    System.arraycopy(idle, 0, all, busyCount, idleCount);
    put(out, "own.NODE_UPDATE", all, all.length);
    put(out, "own.NODE_UPDATE.busy", busy, busyCount);
    put(out, "own.NODE_UPDATE.idle", idle, idleCount);
    return out;
  }

  static void put(Map<String, double[]> out, String name, long[] values, int n) {
    if (n == 0) {
      return;
    }
    long[] v = Arrays.copyOf(values, n);
    Arrays.sort(v);
    double sum = 0;
    for (long x : v) {
      sum += x;
    }
    out.put(name, new double[] {n, n, sum / n / 1000.0, at(v, 0.50), at(v, 0.90), at(v, 0.99), v[n - 1] / 1000.0});
  }

  /** The {@code q} quantile of sorted nanoseconds, in microseconds (nearest rank). */
  private static double at(long[] sorted, double q) {
    int rank = (int) Math.ceil(q * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))] / 1000.0;
  }
}
