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
import org.apache.hadoop.yarn.sls.scheduler.SLSFairScheduler;
import org.apache.hadoop.yarn.sls.scheduler.SlsMetricsAccess;

/**
 * SLS's own timed FairScheduler ({@link SLSFairScheduler}, everything it does kept) with two additions
 * for the comparison:
 * <ul>
 *   <li>the harness's busy/idle heartbeat timer ({@link HeartbeatCost}), as in every scheduler of a run;</li>
 *   <li>a work-around for an SLS 3.4.2 race that kills applications under FairScheduler: SLS records an
 *       attempt's queue only after the scheduler's {@code APP_ATTEMPT_ADDED} handling returns, but that
 *       handling already sends {@code ATTEMPT_ADDED} to the RM, whose dispatcher may call {@code allocate}
 *       (the AM ask) first; SLS then looks up a null queue name and {@code FairSchedulerMetrics} throws
 *       ({@code NullPointerException: ... "name" is null} in {@code QueueManager.ensureRootPrefix}), the
 *       attempt never gets its AM and the run never finishes. {@link #allocate} records the queue
 *       (the application's, as SLS would) before SLS's code reads it.</li>
 * </ul>
 * SLS swaps its wrapper in only when the configured class is exactly {@code FairScheduler}, so naming
 * this class keeps it; the metrics class is still {@code FairSchedulerMetrics}.
 */
public class SlsFairScheduler extends SLSFairScheduler implements HeartbeatCost.Source {
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
