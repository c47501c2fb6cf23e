package org.apache.hadoop.mapred;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import org.apache.hadoop.mapred.Tracked.TrackedJob;

/**
 * What the MRv1 shim schedules while the engine is not in charge ({@code io.circumflex.shim.EngineGuard}):
 * Hadoop's default order (priority, then submission time), and the order {@code getJobs} appends
 * jobs the plan does not list in. Stateless; called under the scheduler's lock.
 */
final class CircumflexFifoFallback {
  private CircumflexFifoFallback() {}

  /**
   * FIFO fallback: Hadoop's default order (priority, then submission time), node- or rack-local
   * maps first, then any map; then reduces.
   */
  static List<Task> assign(Collection<TrackedJob> jobs, TaskTrackerStatus tts, int freeMap, int freeReduce,
      int clusterSize, int uniqueHosts) throws IOException {
    List<Task> assigned = new ArrayList<Task>();
    List<JobInProgress> order = order(jobs);
    for (JobInProgress jip : order) {
      if (jip.getStatus().getRunState() != JobStatus.RUNNING) {
        continue;
      }
      while (freeMap > 0) {
        Task t = jip.obtainNewNodeOrRackLocalMapTask(tts, clusterSize, uniqueHosts);
        if (t == null) {
          t = jip.obtainNewMapTask(tts, clusterSize, uniqueHosts);
        }
        if (t == null) {
          break;
        }
        assigned.add(t);
        freeMap -= Math.max(1, t.getNumSlotsRequired());
      }
      while (freeReduce > 0) {
        Task t = jip.obtainNewReduceTask(tts, clusterSize, uniqueHosts);
        if (t == null) {
          break;
        }
        assigned.add(t);
        freeReduce -= Math.max(1, t.getNumSlotsRequired());
      }
    }
    return assigned;
  }

  /** Hadoop's FIFO order: higher priority first, then earlier start (submission) time, then id. */
  static List<JobInProgress> order(Collection<TrackedJob> tracked) {
    List<JobInProgress> order = new ArrayList<JobInProgress>(tracked.size());
    for (TrackedJob t : tracked) {
      order.add(t.jip);
    }
    Collections.sort(order, new Comparator<JobInProgress>() {
      @Override
      public int compare(JobInProgress a, JobInProgress b) {
        int c = a.getPriority().compareTo(b.getPriority());
        if (c != 0) {
          return c;
        }
        c = Long.compare(a.getStartTime(), b.getStartTime());
        return c != 0 ? c : a.getJobID().compareTo(b.getJobID());
      }
    });
    return order;
  }
}
