package io.circumflex.yarn;

import io.circumflex.CircumflexConfigException;
import io.circumflex.CircumflexException;
import io.circumflex.CircumflexInvalidJobException;
import io.circumflex.CircumflexRejectedException;
import io.circumflex.nativeapi.NativeEngine;
import io.circumflex.nativeapi.NativeLog;
import io.circumflex.observe.EngineMetrics;
import io.circumflex.shim.EngineGuard;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListMap;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.conf.Configurable;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.exceptions.YarnRuntimeException;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.nodelabels.RMNodeLabelsManager;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.RMStateStore.RMState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.ContainerExpiredSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeResourceUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.ReleaseContainerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.CircumflexAttempts;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoAppAttempt;
import org.apache.hadoop.yarn.util.resource.DefaultResourceCalculator;
import org.apache.hadoop.yarn.util.resource.ResourceCalculator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Circumflex YARN scheduler: set {@code yarn.resourcemanager.scheduler.class} to this class and
 * {@code circumflex.policy} (and any other {@code circumflex.*} key) in {@code yarn-site.xml}.
 *
 * <p>Thin by design: it translates YARN events into engine events, asks the native engine which
 * jobs get a heartbeating node's free capacity, and applies those choices with YARN's own
 * allocation calls. It holds no policy logic. The structure follows Hadoop's FifoScheduler: one
 * queue, {@code FifoAppAttempt} for container bookkeeping (created through {@link CircumflexAttempts},
 * hadoop-apis.md 2.6 option A), applications kept in application-id order.
 *
 * <p>This class keeps the service life cycle and Hadoop's {@code ResourceScheduler} contract (events,
 * {@code allocate}, queries, refresh) and delegates the mechanisms, each in its own class:
 * <ul>
 *   <li>{@link EngineBridge}: engine ids and the translation of YARN events into engine events, the
 *       heartbeat's question to the engine, and the replay that ends a fallback;</li>
 *   <li>{@link Preemption}: the engine's preemption decisions carried out (strict preemption sets in
 *       {@code allocate}, the kill with the {@code PREEMPTED} exit status after the grace period);</li>
 *   <li>{@link AmPlacement}: AM containers first, in arrival order, and AM reservations (decided here,
 *       not by the engine);</li>
 *   <li>{@link AskMatcher}: the slot model, phases by priority, and the locality cascade;</li>
 *   <li>{@link ApplicationLifecycle}: applications and attempts, and their per-job settings;</li>
 *   <li>{@link FifoFallback}: what schedules while the engine is not in charge;</li>
 *   <li>{@link CircumflexQueue} (the one queue) and {@link WebDefaults} (the RM web app's page).</li>
 * </ul>
 *
 * <p><b>Per-job settings</b> come from the application's {@code job.xml} and tags
 * ({@link JobConfCollector}); a malformed value or an admission refusal rejects the application with
 * the engine's message. <b>Epochs:</b> the scheduler update thread calls {@code tick} every
 * {@link #TICK_INTERVAL_MS} ms; the engine re-plans only when its epoch has passed or its state changed.
 *
 * <p><b>Failure safety</b> is the shims' one regime, {@link EngineGuard}: a native failure switches to
 * FIFO order by application id, logs {@code Circumflex fallback: <cause>} once per distinct error and
 * exposes it ({@link #isFallbackActive()}, {@link #getFallbackCause()}, the scheduler page, metrics);
 * the ResourceManager keeps running. A successful {@code yarn rmadmin -refreshQueues} replays the
 * cluster's nodes, applications and running tasks into a new engine and ends the fallback. A bad
 * {@code circumflex.*} value is different: it fails {@code serviceInit}, so the RM does not start with
 * a configuration the operator did not intend.
 */
public class CircumflexScheduler extends AbstractYarnScheduler<FifoAppAttempt, FiCaSchedulerNode>
    implements Configurable {
  private static final Logger LOG = LoggerFactory.getLogger(CircumflexScheduler.class);

  /** How often the update thread ticks the engine, ms. */
  public static final long TICK_INTERVAL_MS = 250;
  /** Prefix of every key forwarded to the engine. */
  public static final String KEY_PREFIX = "circumflex.";
  /** Log level of the native side ({@code env_logger} syntax). Not forwarded to the engine. */
  public static final String KEY_NATIVE_LOG = "circumflex.yarn.native.log";
  /** Priority with which MapReduce AMs ask for reduce containers. */
  public static final int MR_REDUCE_PRIORITY = 10;

  private Configuration conf;
  private final ResourceCalculator calculator = new DefaultResourceCalculator();
  private boolean usePortForNodeName;

  private final EngineGuard guard = new EngineGuard(LogFactory.getLog(CircumflexScheduler.class));
  /** Metrics2 values the shim measures itself (node-update time, refreshes, fallbacks). */
  private final EngineMetrics observed = guard.metrics();
  private boolean metricsRegistered;

  private final CircumflexQueue queue = new CircumflexQueue(this::getClusterResource);
  private final AskMatcher matcher = new AskMatcher(queue, this::getClusterResource, calculator);
  private final AmPlacement amPlacement = new AmPlacement(matcher);
  private final FifoFallback fifo = new FifoFallback(matcher);
  private final EngineBridge bridge = new EngineBridge(guard, matcher, amPlacement);
  private final Preemption preemption = new Preemption(guard, bridge);
  private final ApplicationLifecycle lifecycle =
      new ApplicationLifecycle(this, queue, bridge, amPlacement, this::getConf);

  public CircumflexScheduler() {
    super(CircumflexScheduler.class.getName());
    amPlacement.setGate(bridge);
  }

  // ----- life cycle ----------------------------------------------------------------------------

  @Override
  public void serviceInit(Configuration configuration) throws Exception {
    WebDefaults.register(configuration);
    int minMb = configuration.getInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB,
        YarnConfiguration.DEFAULT_RM_SCHEDULER_MINIMUM_ALLOCATION_MB);
    int maxMb = configuration.getInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB,
        YarnConfiguration.DEFAULT_RM_SCHEDULER_MAXIMUM_ALLOCATION_MB);
    if (minMb <= 0 || minMb > maxMb) {
      throw new YarnRuntimeException("invalid scheduler memory allocation: "
          + YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB + "=" + minMb + ", "
          + YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB + "=" + maxMb + ": expected 0 < min <= max");
    }
    synchronized (this) {
      applications = new ConcurrentSkipListMap<>();
      minimumAllocation = super.getMinimumAllocation();
      initMaximumResourceCapability(super.getMaximumAllocation());
      matcher.configure(minimumAllocation);
      usePortForNodeName = configuration.getBoolean(YarnConfiguration.RM_SCHEDULER_INCLUDE_PORT_IN_NODE_NAME,
          YarnConfiguration.DEFAULT_RM_SCHEDULER_USE_PORT_FOR_NODE_NAME);
      queue.init(configuration);
      updateInterval = TICK_INTERVAL_MS;
    }
    super.serviceInit(configuration);
    preemption.configure(configuration);
    startEngine(configuration);
  }

  /** Creates the engine; a bad configuration fails start-up, a missing library means fallback. */
  private synchronized void startEngine(Configuration configuration) {
    Map<String, String> keys = engineKeys(configuration);
    bridge.configure(keys.get("circumflex.adaptive.accelerated.label"), amGateOn(keys));
    try {
      NativeEngine.init(configuration.get(KEY_NATIVE_LOG, "warn"));
      guard.start(NativeEngine.create(keys));
      LOG.info("Circumflex engine started: policy {} ({} keys), slot = {} MB", keys.get("circumflex.policy"),
          keys.size(), matcher.slotMb());
      registerMetrics();
    } catch (CircumflexConfigException e) {
      throw new YarnRuntimeException("Circumflex configuration rejected: " + e.getMessage(), e);
    } catch (CircumflexException | LinkageError e) {
      guard.fallBack("cannot start the native engine", e, null);
    }
  }

  @Override
  public void serviceStop() throws Exception {
    synchronized (this) {
      if (metricsRegistered) {
        DefaultMetricsSystem.instance().unregisterSource(EngineMetrics.SOURCE_NAME);
        metricsRegistered = false;
      }
      guard.stop();
    }
    super.serviceStop();
  }

  @Override
  public synchronized void setConf(Configuration configuration) {
    this.conf = configuration;
  }

  @Override
  public synchronized Configuration getConf() {
    return conf;
  }

  @Override
  public synchronized void setRMContext(RMContext context) {
    this.rmContext = context;
  }

  /**
   * {@code yarn rmadmin -refreshQueues}: applies the {@code circumflex.*} keys of {@code configuration}
   * (AdminService passes {@code yarn-site.xml} freshly read through the RM's configuration provider).
   * With an engine in charge: a changed policy or parameters, jobs and nodes kept, everything re-planned.
   * In fallback: a new engine is built and the cluster's state replayed into it, which ends the fallback.
   * A bad configuration (or a replay the new engine refuses) is refused with an IOException naming the
   * cause, and the running policy (or the fallback) stays.
   */
  @Override
  public synchronized void reinitialize(Configuration configuration, RMContext context) throws IOException {
    Map<String, String> keys = engineKeys(configuration);
    NativeEngine current = guard.engine();
    try {
      NativeEngine.setLogLevel(configuration.get(KEY_NATIVE_LOG, "warn"));
      if (current != null) {
        current.reconfigure(keys, System.currentTimeMillis());
      } else if (!"stopped".equals(guard.fallbackCause())) {
        recoverEngine(keys);
      }
      observed.refreshed(true);
      LOG.info("Circumflex refreshed: policy {} ({} keys)", keys.get("circumflex.policy"), keys.size());
    } catch (CircumflexConfigException | CircumflexRejectedException | CircumflexInvalidJobException e) {
      observed.refreshed(false);
      throw new IOException("Circumflex refresh rejected, the running policy is kept: " + e.getMessage(), e);
    } catch (CircumflexException | LinkageError e) {
      if (current != null) {
        guard.fallBack("reconfigure failed", e, current);
      } else {
        observed.refreshed(false);
        throw new IOException("Circumflex refresh failed, the FIFO fallback stays: " + e.getMessage(), e);
      }
    } finally {
      drainNativeLog();
    }
    preemption.configure(configuration);
    setConf(configuration);
    super.reinitialize(configuration, context);
  }

  /** Ends a fallback: a new engine from {@code keys}, the cluster replayed into it. */
  private void recoverEngine(Map<String, String> keys) {
    bridge.configure(keys.get("circumflex.adaptive.accelerated.label"), amGateOn(keys));
    Map<ApplicationId, Map<String, String>> confs = lifecycle.jobConfs();
    Map<ApplicationId, Long> submitted = lifecycle.submitTimes();
    NativeEngine candidate = NativeEngine.create(keys);
    try {
      bridge.recover(candidate, nodeTracker.getAllNodes(), applications, confs, submitted, System.currentTimeMillis());
      registerMetrics();
    } catch (RuntimeException | LinkageError e) {
      candidate.close();
      throw e;
    }
  }

  /** Whether {@code keys} turn the engine's AM gate on (the engine validates the value itself). */
  private static boolean amGateOn(Map<String, String> keys) {
    return "true".equalsIgnoreCase(String.valueOf(keys.get("circumflex.am.admission.enabled")).trim());
  }

  /** Every {@code circumflex.*} key the engine takes (the shim's own {@code circumflex.yarn.*} are not). */
  static Map<String, String> engineKeys(Configuration configuration) {
    Map<String, String> keys = new TreeMap<>();
    for (Map.Entry<String, String> e : configuration.getPropsWithPrefix(KEY_PREFIX).entrySet()) {
      String key = KEY_PREFIX + e.getKey();
      if (!key.startsWith("circumflex.yarn.")) {
        keys.put(key, e.getValue());
      }
    }
    keys.put("circumflex.pool.mode", "shared");
    return keys;
  }

  // ----- observability ---------------------------------------------------------------------------

  private void registerMetrics() {
    if (!metricsRegistered) {
      try {
        DefaultMetricsSystem.instance().register(EngineMetrics.SOURCE_NAME, EngineMetrics.SOURCE_DESCRIPTION,
            new CircumflexMetricsSource(this));
        metricsRegistered = true;
      } catch (org.apache.hadoop.metrics2.MetricsException e) {
        LOG.warn("Circumflex metrics not published: {}", e.getMessage());
      }
    }
  }

  /** The metrics2 values now (native counters are left out in fallback). */
  public List<EngineMetrics.Metric> readMetrics() {
    return observed.read(guard.engine());
  }

  /** The engine's status as an HTML fragment for the scheduler page, or null in fallback. */
  public synchronized String statusHtml() {
    return guard.call("statusHtml", e -> e.statusHtml(System.currentTimeMillis()), null);
  }

  /** Forwards buffered native log records to log4j. */
  private static void drainNativeLog() {
    try {
      NativeLog.drainTo(io.circumflex.nativeapi.CommonsLoggingSink.INSTANCE);
    } catch (CircumflexException | LinkageError e) {
      LOG.debug("cannot drain the native log", e);
    }
  }

  @Override
  public void recover(RMState state) {
    // Work-preserving recovery of engine state is not supported: recovered containers are counted
    // as used resources (by the queue) but the engine starts empty.
  }

  /** Whether the scheduler runs in FIFO fallback because the native side failed. */
  public boolean isFallbackActive() {
    return !guard.isActive();
  }

  /** Why the fallback is active (the failure that started it), or null. */
  public String getFallbackCause() {
    return guard.fallbackCause();
  }

  /** Containers allocated by the FIFO fallback. */
  public synchronized long getFallbackAllocations() {
    return fifo.allocations();
  }

  /** The engine's status JSON, or null in fallback. */
  public synchronized String statusJson() {
    return guard.call("statusJson", e -> e.statusJson(System.currentTimeMillis()), null);
  }

  /** The engine's current plan JSON, or null in fallback. */
  public synchronized String planJson() {
    return guard.call("planJson", NativeEngine::planJson, null);
  }

  // ----- events --------------------------------------------------------------------------------

  @Override
  public void handle(SchedulerEvent event) {
    switch (event.getType()) {
      case NODE_ADDED: {
        NodeAddedSchedulerEvent e = (NodeAddedSchedulerEvent) event;
        addNode(e.getAddedRMNode());
        recoverContainersOnNode(e.getContainerReports(), e.getAddedRMNode());
        break;
      }
      case NODE_REMOVED:
        removeNode(((NodeRemovedSchedulerEvent) event).getRemovedRMNode());
        break;
      case NODE_RESOURCE_UPDATE: {
        NodeResourceUpdateSchedulerEvent e = (NodeResourceUpdateSchedulerEvent) event;
        updateNodeResource(e.getRMNode(), e.getResourceOption());
        updateEngineCapacity(e.getRMNode());
        break;
      }
      case NODE_UPDATE:
        nodeUpdate(((NodeUpdateSchedulerEvent) event).getRMNode());
        break;
      case APP_ADDED: {
        AppAddedSchedulerEvent e = (AppAddedSchedulerEvent) event;
        addApplication(e.getApplicationId(), e.getUser(), e.getIsAppRecovering(), e.isUnmanagedAM());
        break;
      }
      case APP_REMOVED: {
        AppRemovedSchedulerEvent e = (AppRemovedSchedulerEvent) event;
        doneApplication(e.getApplicationID(), e.getFinalState());
        break;
      }
      case APP_ATTEMPT_ADDED: {
        AppAttemptAddedSchedulerEvent e = (AppAttemptAddedSchedulerEvent) event;
        addApplicationAttempt(e.getApplicationAttemptId(), e.getTransferStateFromPreviousAttempt(),
            e.getIsAttemptRecovering());
        break;
      }
      case APP_ATTEMPT_REMOVED: {
        AppAttemptRemovedSchedulerEvent e = (AppAttemptRemovedSchedulerEvent) event;
        doneApplicationAttempt(e.getApplicationAttemptID(), e.getFinalAttemptState(),
            e.getKeepContainersAcrossAppAttempts());
        break;
      }
      case CONTAINER_EXPIRED: {
        ContainerId id = ((ContainerExpiredSchedulerEvent) event).getContainerId();
        completedContainer(getRMContainer(id),
            SchedulerUtils.createAbnormalContainerStatus(id, SchedulerUtils.EXPIRED_CONTAINER),
            RMContainerEventType.EXPIRE);
        break;
      }
      case RELEASE_CONTAINER: {
        RMContainer container = ((ReleaseContainerEvent) event).getContainer();
        completedContainer(container,
            SchedulerUtils.createAbnormalContainerStatus(container.getContainerId(),
                SchedulerUtils.RELEASED_CONTAINER),
            RMContainerEventType.RELEASED);
        break;
      }
      default:
        LOG.error("Circumflex scheduler: unsupported event type {}; ignored", event.getType());
    }
  }

  private synchronized void addNode(RMNode rmNode) {
    FiCaSchedulerNode node = new FiCaSchedulerNode(rmNode, usePortForNodeName);
    nodeTracker.addNode(node);
    bridge.addNode(node, rmNode);
  }

  private synchronized void updateEngineCapacity(RMNode rmNode) {
    FiCaSchedulerNode node = nodeTracker.getNode(rmNode.getNodeID());
    if (node != null) {
      bridge.syncCapacity(node);
    }
  }

  private synchronized void removeNode(RMNode rmNode) {
    FiCaSchedulerNode node = nodeTracker.getNode(rmNode.getNodeID());
    if (node == null) {
      return;
    }
    for (RMContainer container : node.getCopiedListOfRunningContainers()) {
      super.completedContainer(container,
          SchedulerUtils.createAbnormalContainerStatus(container.getContainerId(), SchedulerUtils.LOST_CONTAINER),
          RMContainerEventType.KILL);
    }
    nodeTracker.removeNode(rmNode.getNodeID());
    amPlacement.nodeRemoved(rmNode.getNodeID());
    bridge.removeNode(node);
  }

  /**
   * Work-preserving recovery: after a ResourceManager restart each NodeManager re-registers with the
   * containers it still runs. The parent rebuilds the RMContainers, the node's and the attempt's
   * bookkeeping; here the engine learns them too, so its per-job running counts and per-node usage
   * match the cluster again (recovered applications were re-submitted to the engine by
   * {@code addApplication} with the recovery flag). AM containers are remembered as such; task
   * containers become engine tasks of their phase, started now (their true start is unknown to
   * the engine, and only durations of tasks that finish later feed its estimates).
   */
  @Override
  public synchronized void recoverContainersOnNode(
      List<org.apache.hadoop.yarn.server.api.protocolrecords.NMContainerStatus> containerReports, RMNode nm) {
    super.recoverContainersOnNode(containerReports, nm);
    if (containerReports == null) {
      return;
    }
    long now = System.currentTimeMillis();
    for (org.apache.hadoop.yarn.server.api.protocolrecords.NMContainerStatus report : containerReports) {
      ContainerId id = report.getContainerId();
      RMContainer rmContainer = getRMContainer(id);
      if (report.getContainerState() != org.apache.hadoop.yarn.api.records.ContainerState.RUNNING
          || rmContainer == null || bridge.isTask(id) || amPlacement.isAm(id)) {
        continue;
      }
      // (Used resources were added back by the queue's recoverContainer, called by the parent.)
      if (rmContainer.isAMContainer()) {
        amPlacement.started(id, nm.getNodeID(), rmContainer.getAllocatedResource().getMemorySize());
        continue;
      }
      int phase = report.getPriority() != null && report.getPriority().getPriority() == MR_REDUCE_PRIORITY
          ? NativeEngine.REDUCE : NativeEngine.MAP;
      bridge.recoveredTask(id, nm.getNodeID(), phase, now);
    }
  }

  private synchronized void addApplication(ApplicationId appId, String user, boolean recovering,
      boolean unmanagedAM) {
    lifecycle.addApplication(appId, user, recovering, unmanagedAM);
  }

  private synchronized void doneApplication(ApplicationId appId, RMAppState finalState) {
    lifecycle.doneApplication(appId, finalState);
    preemption.applicationDone(appId);
  }

  private synchronized void addApplicationAttempt(ApplicationAttemptId attemptId, boolean transferState,
      boolean recovering) {
    lifecycle.addApplicationAttempt(attemptId, transferState, recovering);
  }

  private synchronized void doneApplicationAttempt(ApplicationAttemptId attemptId, RMAppAttemptState finalState,
      boolean keepContainers) {
    lifecycle.doneApplicationAttempt(attemptId, finalState, keepContainers);
  }

  /** The RM context (a protected field of {@code AbstractYarnScheduler}), for the mechanism classes. */
  RMContext rmContext() {
    return rmContext;
  }

  /** The applications map of {@code AbstractYarnScheduler} (protected there), for the mechanism classes. */
  Map<ApplicationId, SchedulerApplication<FifoAppAttempt>> applicationMap() {
    return applications;
  }

  // ----- allocate (IPC threads) -----------------------------------------------------------------

  @Override
  public Allocation allocate(ApplicationAttemptId attemptId, List<ResourceRequest> ask,
      List<SchedulingRequest> schedulingRequests, List<ContainerId> release, List<String> blacklistAdditions,
      List<String> blacklistRemovals, ContainerUpdates updateRequests) {
    FifoAppAttempt attempt = getApplicationAttempt(attemptId);
    if (attempt == null || !attempt.getApplicationAttemptId().equals(attemptId)) {
      LOG.error("allocate for an unknown or previous attempt {}", attemptId);
      return EMPTY_ALLOCATION;
    }
    normalizeResourceRequests(ask);
    releaseContainers(release, attempt);
    // One critical section from updating the asks to pulling the containers, as in FifoScheduler:
    // the RM asserts that the allocate() which registers an AM ask returns no container yet.
    // Pending counts go to the engine after it, outside the attempt's lock (nodeUpdate takes the
    // scheduler's lock before an attempt's, so taking them the other way round could deadlock).
    int[] pending;
    Allocation allocation;
    synchronized (attempt) {
      if (attempt.isStopped()) {
        return EMPTY_ALLOCATION;
      }
      if (!ask.isEmpty()) {
        attempt.updateResourceRequests(ask);
      }
      attempt.updateBlacklist(blacklistAdditions, blacklistRemovals);
      pending = AskMatcher.pendingPerPhase(attempt);
      // Headroom is computed for the asking attempt here (as FairScheduler does in allocate), not for
      // every application on every heartbeat. Used resources are read without the scheduler's lock:
      // the figure is advisory and a value one heartbeat old is as good as YARN's own.
      attempt.setHeadroom(queue.headroom());
      Resource headroom = attempt.getHeadroom();
      attempt.setApplicationHeadroomForMetrics(headroom);
      // The strict preemption set: the containers the engine asked back, resent until they are gone.
      allocation = new Allocation(attempt.pullNewlyAllocatedContainers(), headroom,
          preemption.strictFor(attemptId), null, null, attempt.pullUpdatedNMTokens());
    }
    if (pending == null) {
      awaitAmContainer(attempt);
    }
    forwardPending(attemptId.getApplicationId(), pending);
    return allocation;
  }

  private synchronized void awaitAmContainer(FifoAppAttempt attempt) {
    amPlacement.await(attempt);
  }

  private synchronized void forwardPending(ApplicationId appId, int[] pending) {
    bridge.forwardPending(appId, pending);
  }

  // ----- node update: the hot path ------------------------------------------------------------

  /**
   * One heartbeat. Kept cheap because the RM's single event thread runs it for every node every
   * second: the work is proportional to what changes (containers completed, the few attempts waiting
   * for an AM, the engine's choices for this node), never to the number of applications. A full node
   * does nothing beyond YARN's own container bookkeeping, except reserving for an AM the engine admitted.
   * Headroom is set in {@code allocate()}.
   */
  @Override
  protected synchronized void nodeUpdate(RMNode rmNode) {
    super.nodeUpdate(rmNode);
    FiCaSchedulerNode node = nodeTracker.getNode(rmNode.getNodeID());
    if (node == null
        || rmContext.isWorkPreservingRecoveryEnabled() && !rmContext.isSchedulerReadyForAllocatingContainers()) {
      return;
    }
    // A full node is still offered to the AMs the engine admits: one that fits nowhere reserves it, and
    // the engine then preempts for it (docs/am-admission.md). Without the gate, as YARN's FIFO does, only
    // a node with room is.
    if (amPlacement.anyWaiting() && (matcher.fits(node) || bridge.gating())) {
      amPlacement.assign(node, System.currentTimeMillis());
    }
    bridge.syncChangedCapacities(nodeTracker::getNode);
    if (matcher.fits(node)) {
      if (guard.isActive()) {
        bridge.assign(node, applications, System.currentTimeMillis());
      }
      if (!guard.isActive() && matcher.fits(node)) {
        fifo.assign(node, applications.values());
      }
    }
    queue.publishAvailable();
  }

  // ----- containers ------------------------------------------------------------------------------

  @Override
  protected synchronized void completedContainerInternal(RMContainer rmContainer, ContainerStatus status,
      RMContainerEventType event) {
    Container container = rmContainer.getContainer();
    FifoAppAttempt attempt = getCurrentAttemptForContainer(container.getId());
    FiCaSchedulerNode node = nodeTracker.getNode(container.getNodeId());
    amPlacement.ended(container.getId(), container.getResource().getMemorySize());
    queue.usageChanged();
    bridge.containerCompleted(container.getId(), status, preemption.gone(container.getId()));
    if (attempt == null) {
      LOG.info("container {} of an unknown application completed ({})", container.getId(), event);
      return;
    }
    attempt.containerCompleted(rmContainer, status, event, RMNodeLabelsManager.NO_LABEL);
    if (node != null) {
      node.releaseContainer(rmContainer.getContainerId(), false);
    }
    queue.released(container.getResource());
  }

  /**
   * {@code ResourceScheduler.killContainer}: an outside request to kill a container (in Hadoop 3.4 only
   * the CapacityScheduler's own queues call it; nothing in this shim does). It keeps the stock
   * {@code KILLED_BY_RESOURCEMANAGER} status (-106), with which a running MapReduce attempt ends FAILED;
   * that is why preemption never comes here ({@link Preemption} kills with {@code PREEMPTED}, -102), and
   * why the shim's own kills (node lost, attempt done, expired, released) use the abnormal statuses
   * ({@code ABORTED}, -100), which the MapReduce AM treats as a kill, not a failure.
   */
  @Override
  public void killContainer(RMContainer container) {
    ContainerStatus status = SchedulerUtils.createKilledContainerStatus(container.getContainerId(),
        "Killed by the ResourceManager");
    completedContainer(container, status, RMContainerEventType.KILL);
  }

  // ----- queries ---------------------------------------------------------------------------------

  @Override
  public QueueInfo getQueueInfo(String queueName, boolean includeChildQueues, boolean recursive) {
    return queue.getQueueInfo(false, false);
  }

  @Override
  public List<QueueUserACLInfo> getQueueUserAclInfo() {
    return queue.getQueueUserAclInfo(null);
  }

  @Override
  public ResourceCalculator getResourceCalculator() {
    return calculator;
  }

  @Override
  public int getNumClusterNodes() {
    return nodeTracker.nodeCount();
  }

  @Override
  public QueueMetrics getRootQueueMetrics() {
    return queue.getMetrics();
  }

  @Override
  public synchronized boolean checkAccess(UserGroupInformation callerUGI, QueueACL acl, String queueName) {
    return queue.hasAccess(acl, callerUGI);
  }

  @Override
  public synchronized List<ApplicationAttemptId> getAppsInQueue(String queueName) {
    if (!CircumflexQueue.NAME.equals(queueName)) {
      return null;
    }
    List<ApplicationAttemptId> attempts = new ArrayList<>(applications.size());
    for (SchedulerApplication<FifoAppAttempt> app : applications.values()) {
      if (app.getCurrentAppAttempt() != null) {
        attempts.add(app.getCurrentAppAttempt().getApplicationAttemptId());
      }
    }
    return attempts;
  }

  @Override
  public RMContainer getRMContainer(ContainerId containerId) {
    FifoAppAttempt attempt = getCurrentAttemptForContainer(containerId);
    return attempt == null ? null : attempt.getRMContainer(containerId);
  }

  // ----- timer -----------------------------------------------------------------------------------

  /** Called by the scheduler update thread every {@link #TICK_INTERVAL_MS}: lets the engine re-plan. */
  @Override
  public synchronized void update() {
    bridge.flush();
    long now = System.currentTimeMillis();
    guard.call("tick", e -> e.tick(now), Boolean.FALSE);
    preemption.decide(applications, now);
    preemption.killDue(this, now);
    drainNativeLog();
  }

  /** Containers asked back for a preemption and not yet gone (tests). */
  public synchronized int preemptionsInFlight() {
    return preemption.inFlight();
  }
}
