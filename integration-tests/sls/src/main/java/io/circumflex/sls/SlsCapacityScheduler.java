package io.circumflex.sls;

import java.util.List;
import java.util.Map;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.sls.scheduler.SLSCapacityScheduler;
import org.apache.hadoop.yarn.sls.scheduler.SlsMetricsAccess;

/**
 * SLS's own timed CapacityScheduler ({@link SLSCapacityScheduler}, everything it does kept) plus the
 * harness's busy/idle heartbeat timer ({@link HeartbeatCost}) and the same queue-recording fix as
 * {@link SlsFairScheduler} (under CapacityScheduler the race only files metrics under a "null" queue).
 * SLS swaps its wrapper in only when the configured class is exactly {@code CapacityScheduler}, and then
 * also turns on the preemption monitor; {@link SlsRun} sets the same two keys for this class.
 */
public class SlsCapacityScheduler extends SLSCapacityScheduler implements HeartbeatCost.Source {
  private final HeartbeatCost heartbeats = new HeartbeatCost();
  private final Map<ApplicationAttemptId, String> queues = SlsMetricsAccess.queueMap(this);

  @Override
  public Allocation allocate(ApplicationAttemptId attemptId, List<ResourceRequest> ask,
      List<SchedulingRequest> schedulingRequests, List<ContainerId> release, List<String> blacklistAdditions,
      List<String> blacklistRemovals, ContainerUpdates updateRequests) {
    SlsMetricsAccess.rememberQueue(queues, this, attemptId);
    return super.allocate(attemptId, ask, schedulingRequests, release, blacklistAdditions, blacklistRemovals,
        updateRequests);
  }

  @Override
  public void handle(SchedulerEvent event) {
    heartbeats.classify(this, event);
    super.handle(event);
  }

  @Override
  public void propagatedHandle(SchedulerEvent event) {
    heartbeats.time(event, () -> super.propagatedHandle(event));
  }

  @Override
  public HeartbeatCost heartbeatCost() {
    return heartbeats;
  }
}
