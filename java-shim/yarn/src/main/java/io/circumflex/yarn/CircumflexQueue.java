package io.circumflex.yarn;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.authorize.AccessControlList;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueState;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.factories.RecordFactory;
import org.apache.hadoop.yarn.factory.providers.RecordFactoryProvider;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ActiveUsersManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Queue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.util.resource.Resources;

/**
 * The scheduler's one queue ({@value #NAME}, open to every user, the whole cluster): YARN's
 * {@link Queue} contract, the queue's metrics and users, and the resources its containers use. Ordering
 * between applications is not the queue's business (the engine decides it), so there is nothing more
 * to a queue here; multi-queue set-ups are out of scope.
 *
 * <p>Not thread-safe on its own: the scheduler calls it under its lock, except the advisory reads of
 * {@link #headroom()} from {@code allocate()} (a figure one heartbeat old is as good as YARN's own).
 */
final class CircumflexQueue implements Queue {
  /** The queue's name. */
  static final String NAME = "default";
  private static final RecordFactory RECORDS = RecordFactoryProvider.getRecordFactory(null);

  private final Supplier<Resource> cluster;
  private final Resource used = RECORDS.newRecordInstance(Resource.class);
  private QueueMetrics metrics;
  private ActiveUsersManager usersManager;
  /** Whether used resources changed since the available resources were last published. */
  private boolean availableStale = true;

  /** A queue over the cluster whose total {@code cluster} reads. */
  CircumflexQueue(Supplier<Resource> cluster) {
    this.cluster = cluster;
  }

  /** Creates the queue's metrics and users manager (at {@code serviceInit}). */
  void init(Configuration configuration) {
    metrics = QueueMetrics.forQueue(NAME, null, false, configuration);
    usersManager = new ActiveUsersManager(metrics);
  }

  /** A container of {@code resource} was allocated. */
  void allocated(Resource resource) {
    Resources.addTo(used, resource);
    availableStale = true;
  }

  /** A container of {@code resource} was released. */
  void released(Resource resource) {
    Resources.subtractFrom(used, resource);
    availableStale = true;
  }

  /** Marks the published available resources stale (a container completed). */
  void usageChanged() {
    availableStale = true;
  }

  /** What the cluster has left: every application's headroom (one queue, no limits). */
  Resource headroom() {
    return Resources.subtract(cluster.get(), used);
  }

  /** Publishes the available resources if they changed since the last heartbeat. */
  void publishAvailable() {
    if (availableStale) {
      availableStale = false;
      metrics.setAvailableResourcesToQueue(Resources.subtract(cluster.get(), used));
    }
  }

  @Override
  public String getQueueName() {
    return NAME;
  }

  @Override
  public QueueMetrics getMetrics() {
    return metrics;
  }

  @Override
  public QueueInfo getQueueInfo(boolean includeChildQueues, boolean recursive) {
    QueueInfo info = RECORDS.newRecordInstance(QueueInfo.class);
    info.setQueueName(NAME);
    info.setCapacity(1.0f);
    long clusterMb = cluster.get().getMemorySize();
    info.setCurrentCapacity(clusterMb == 0 ? 0.0f : (float) used.getMemorySize() / clusterMb);
    info.setMaximumCapacity(1.0f);
    info.setChildQueues(new ArrayList<QueueInfo>());
    info.setQueueState(QueueState.RUNNING);
    return info;
  }

  @Override
  public List<QueueUserACLInfo> getQueueUserAclInfo(UserGroupInformation user) {
    QueueUserACLInfo acls = RECORDS.newRecordInstance(QueueUserACLInfo.class);
    acls.setQueueName(NAME);
    acls.setUserAcls(Arrays.asList(QueueACL.values()));
    return Collections.singletonList(acls);
  }

  @Override
  public boolean hasAccess(QueueACL acl, UserGroupInformation user) {
    return new AccessControlList("*").isUserAllowed(user);
  }

  @Override
  public ActiveUsersManager getAbstractUsersManager() {
    return usersManager;
  }

  @Override
  public void recoverContainer(Resource clusterResource, SchedulerApplicationAttempt attempt,
      RMContainer rmContainer) {
    if (rmContainer.getState().equals(RMContainerState.COMPLETED)) {
      return;
    }
    Resources.addTo(used, rmContainer.getAllocatedResource());
    attempt.setHeadroom(Resources.subtract(cluster.get(), used));
  }

  @Override
  public Set<String> getAccessibleNodeLabels() {
    return null;
  }

  @Override
  public String getDefaultNodeLabelExpression() {
    return null;
  }

  @Override
  public void incPendingResource(String nodeLabel, Resource resourceToInc) {}

  @Override
  public void decPendingResource(String nodeLabel, Resource resourceToDec) {}

  @Override
  public Priority getDefaultApplicationPriority() {
    return null;
  }

  @Override
  public void incReservedResource(String partition, Resource reservedRes) {}

  @Override
  public void decReservedResource(String partition, Resource reservedRes) {}
}
