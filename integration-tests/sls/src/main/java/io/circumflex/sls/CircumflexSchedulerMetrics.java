package io.circumflex.sls;

import org.apache.hadoop.yarn.sls.scheduler.SchedulerMetrics;

/**
 * SLS's metrics for the Circumflex scheduler. {@link SchedulerMetrics} is abstract but declares no
 * abstract method: the timers, counters and gauges it registers are generic; Fair's and Capacity's
 * subclasses only add queue gauges tied to their queue classes. The Circumflex scheduler has one
 * queue, so the generic set is all there is to record.
 */
public class CircumflexSchedulerMetrics extends SchedulerMetrics {
  /** Instantiated by SLS through reflection. */
  public CircumflexSchedulerMetrics() {
    super();
  }
}
