package io.circumflex.sls;

import io.circumflex.yarn.CircumflexScheduler;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.sls.SLSRunner;
import org.apache.hadoop.yarn.sls.scheduler.SLSSchedulerCommons;
import org.apache.hadoop.yarn.sls.scheduler.SchedulerMetrics;
import org.apache.hadoop.yarn.sls.scheduler.SchedulerWrapper;
import org.apache.hadoop.yarn.sls.scheduler.SlsMetricsAccess;
import org.apache.hadoop.yarn.sls.scheduler.Tracker;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Circumflex scheduler as SLS needs it: SLS casts the ResourceManager's scheduler to
 * {@link SchedulerWrapper} unconditionally, and times every {@code handle} and {@code allocate}
 * through {@link SLSSchedulerCommons}, exactly as it does for its own {@code SLSFairScheduler} and
 * {@code SLSCapacityScheduler}; so the per-operation costs of all three come from the same timers.
 *
 * <p>Set {@code yarn.resourcemanager.scheduler.class} to this class (SLS leaves any scheduler other
 * than Fair, Capacity and Fifo as it is). The metrics SLS keeps for it are
 * {@link CircumflexSchedulerMetrics}, named by the configuration key
 * {@code io.circumflex.yarn.CircumflexScheduler} (the class passed to {@code initMetrics}); the shipped
 * {@code sls-runner.xml} sets it.
 *
 * <p>The scheduler has one queue, {@code default}: every queue a trace names maps to it.
 */
public class SlsCircumflexScheduler extends CircumflexScheduler implements SchedulerWrapper, HeartbeatCost.Source {
  private static final Logger LOG = LoggerFactory.getLogger(SlsCircumflexScheduler.class);
  private static final String QUEUE = "default";

  private final SLSSchedulerCommons commons = new SLSSchedulerCommons(this);
  private volatile SLSRunner runner;
  private final HeartbeatCost heartbeats = new HeartbeatCost();

  @Override
  public void setConf(Configuration configuration) {
    super.setConf(configuration);
    commons.initMetrics(CircumflexScheduler.class, configuration);
  }

  @Override
  public Allocation allocate(ApplicationAttemptId attemptId, List<ResourceRequest> ask,
      List<SchedulingRequest> schedulingRequests, List<ContainerId> release, List<String> blacklistAdditions,
      List<String> blacklistRemovals, ContainerUpdates updateRequests) {
    return commons.allocate(attemptId, ask, schedulingRequests, release, blacklistAdditions, blacklistRemovals,
        updateRequests);
  }

  @Override
  public Allocation allocatePropagated(ApplicationAttemptId attemptId, List<ResourceRequest> ask,
      List<SchedulingRequest> schedulingRequests, List<ContainerId> release, List<String> blacklistAdditions,
      List<String> blacklistRemovals, ContainerUpdates updateRequests) {
    return super.allocate(attemptId, ask, schedulingRequests, release, blacklistAdditions, blacklistRemovals,
        updateRequests);
  }

  @Override
  public void handle(SchedulerEvent event) {
    // As SLSFairScheduler does: a failing event must not kill the dispatcher thread of the simulated RM.
    heartbeats.classify(this, event);
    try {
      commons.handle(event);
    } catch (RuntimeException e) {
      LOG.error("Circumflex under SLS: handling {} failed", event.getType(), e);
    }
  }

  @Override
  public void propagatedHandle(SchedulerEvent event) {
    heartbeats.time(event, () -> super.handle(event));
  }

  @Override
  public HeartbeatCost heartbeatCost() {
    return heartbeats;
  }

  @Override
  public void serviceStop() throws Exception {
    SlsMetricsAccess.stopMetrics(commons);
    super.serviceStop();
  }

  @Override
  public String getRealQueueName(String queue) {
    return QUEUE;
  }

  @Override
  public SchedulerMetrics getSchedulerMetrics() {
    return commons.getSchedulerMetrics();
  }

  @Override
  public Tracker getTracker() {
    return commons.getTracker();
  }

  @Override
  public void setSLSRunner(SLSRunner slsRunner) {
    this.runner = slsRunner;
  }

  @Override
  public SLSRunner getSLSRunner() {
    return runner;
  }
}
