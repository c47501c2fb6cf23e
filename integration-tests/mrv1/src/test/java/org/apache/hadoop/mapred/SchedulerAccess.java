package org.apache.hadoop.mapred;

/** Test access to the JobTracker's scheduler ({@code getTaskScheduler()} is package-private). */
public final class SchedulerAccess {
  private SchedulerAccess() {}

  /** The Circumflex scheduler of {@code jt}, or null when another scheduler is configured. */
  public static CircumflexTaskScheduler circumflex(JobTracker jt) {
    TaskScheduler s = jt.getTaskScheduler();
    return s instanceof CircumflexTaskScheduler ? (CircumflexTaskScheduler) s : null;
  }
}
