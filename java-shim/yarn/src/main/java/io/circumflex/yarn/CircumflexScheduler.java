package io.circumflex.yarn;

import io.circumflex.CircumflexConfigException;
import io.circumflex.CircumflexException;
import io.circumflex.CircumflexInvalidJobException;
import io.circumflex.CircumflexRejectedException;
import io.circumflex.CircumflexUnknownIdException;
import io.circumflex.nativeapi.NativeEngine;
import io.circumflex.nativeapi.NativeLog;
import io.circumflex.observe.EngineMetrics;
import io.circumflex.yarn.webapp.CircumflexSchedulerPage;
import io.circumflex.yarn.webapp.CircumflexSchedulerWebService;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import org.apache.hadoop.conf.Configurable;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.authorize.AccessControlList;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueState;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.exceptions.YarnRuntimeException;
import org.apache.hadoop.yarn.factories.RecordFactory;
import org.apache.hadoop.yarn.factory.providers.RecordFactoryProvider;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.RMStateStore.RMState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ActiveUsersManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Queue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerAppUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.PendingAsk;
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
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;
import org.apache.hadoop.yarn.server.utils.BuilderUtils;
import org.apache.hadoop.yarn.util.resource.DefaultResourceCalculator;
import org.apache.hadoop.yarn.util.resource.ResourceCalculator;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Circumflex YARN scheduler: set {@code yarn.resourcemanager.scheduler.class} to this class and
 * {@code circumflex.policy} (and any other {@code circumflex.*} key) in {@code yarn-site.xml}.
 *
 * <p>Thin by design: it translates YARN events into engine events, asks the native engine which
 * jobs get a heartbeating node's free capacity, and applies those choices with YARN's own
 * allocation calls. It holds no policy logic. The structure follows Hadoop's FifoScheduler: one
 * queue ({@code default}), {@code FifoAppAttempt} for container bookkeeping (created through
 * {@link CircumflexAttempts}, hadoop-apis.md 2.6 option A), applications kept in application-id
 * order.
 *
 * <p>Mapping decisions:
 * <ul>
 *   <li><b>Slots.</b> The engine's pool is shared (YARN containers). A node has
 *       {@code (memory - memory of running AM containers) / yarn.scheduler.minimum-allocation-mb}
 *       slots (AMs are not tasks; counting their memory would make every policy plan for slots that
 *       do not exist); a heartbeat offers
 *       {@code unallocated memory / minimum allocation} free slots. Containers are then placed with
 *       their real size, and allocation stops when the next one does not fit.</li>
 *   <li><b>Phases.</b> MapReduce AMs ask with priority 20 (maps), 5 (fast-fail maps) and 10
 *       (reduces). Priority 10 is the reduce phase; every other priority is the map phase (for
 *       non-MapReduce applications all work is "map" work). Pending counts per phase (the ANY asks)
 *       are forwarded on every {@code allocate()}. The AM ramps reduces up itself (slow start), so
 *       a reduce ask is proof the reduces are ready: the shim declares reduces ready at submission
 *       and the asks do the rest.</li>
 *   <li><b>AM containers</b> are allocated before any task, in application arrival order, outside
 *       the policy: an application without its AM has no tasks to schedule, and delaying AMs only
 *       delays every policy's decisions. They are not tasks and are not reported to the engine. An
 *       AM that does not fit reserves its memory on one node: that node's engine capacity drops by it,
 *       so freed task slots are held for the AM instead of being refilled one by one.</li>
 *   <li><b>Locality.</b> For each choice the shim takes node-local asks first, then rack-local if
 *       the choice allows rack, then off-switch if it allows any. An ask with no node or rack names
 *       can run anywhere and counts as node-local (it has no better place to wait for).</li>
 *   <li><b>Per-job settings</b> come from the application's {@code job.xml} and tags
 *       ({@link JobConfCollector}); a malformed value or an admission refusal rejects the
 *       application with the engine's message.</li>
 *   <li><b>Epochs.</b> The scheduler update thread calls {@code tick} every
 *       {@link #TICK_INTERVAL_MS} ms; the engine re-plans only when its epoch has passed or its
 *       state changed.</li>
 * </ul>
 *
 * <p><b>Failure safety.</b> If the library cannot load, or a native call throws anything but an
 * unknown-id error, the scheduler switches to FIFO order by application id for the rest of its
 * life, logs the cause once per distinct error, and reports it through {@link #isFallbackActive()},
 * {@link #getFallbackCause()} and the "Circumflex fallback" log line; the ResourceManager keeps
 * running. (Switching back would need the engine to be rebuilt from YARN's state; not attempted.)
 * Unknown-id errors mean the engine retired a job or node before YARN did, and are ignored.
 * A bad {@code circumflex.*} value is different: it fails {@code serviceInit}, so the RM does not
 * start with a configuration the operator did not intend.
 */
public class CircumflexScheduler extends AbstractYarnScheduler<FifoAppAttempt, FiCaSchedulerNode>
    implements Configurable {
  private static final Logger LOG = LoggerFactory.getLogger(CircumflexScheduler.class);
  private static final RecordFactory RECORDS = RecordFactoryProvider.getRecordFactory(null);

  /** How often the update thread ticks the engine, ms. */
  public static final long TICK_INTERVAL_MS = 250;
  /** Prefix of every key forwarded to the engine. */
  public static final String KEY_PREFIX = "circumflex.";
  /** Log level of the native side ({@code env_logger} syntax). Not forwarded to the engine. */
  public static final String KEY_NATIVE_LOG = "circumflex.yarn.native.log";
  /** Priority with which MapReduce AMs ask for reduce containers. */
  public static final int MR_REDUCE_PRIORITY = 10;
  /** The {@code job} argument of {@link #assign} for AM containers (not engine tasks). */
  private static final int AM_CONTAINER = -2;
  /** Most choices read per heartbeat. */
  private static final int MAX_CHOICES = 256;
  private static final String QUEUE_NAME = "default";

  private Configuration conf;
  private final ResourceCalculator calculator = new DefaultResourceCalculator();
  private final Resource usedResource = RECORDS.newRecordInstance(Resource.class);
  private boolean usePortForNodeName;
  private long slotMb;
  /** Node label of the accelerated pool ({@code circumflex.adaptive.accelerated.label}), or null. */
  private String acceleratedLabel;
  private QueueMetrics metrics;
  private ActiveUsersManager usersManager;

  private NativeEngine engine;
  private volatile String fallbackCause;
  private final Set<String> reportedErrors = Collections.newSetFromMap(new ConcurrentHashMap<String, Boolean>());
  private final int[] choices = new int[MAX_CHOICES * NativeEngine.CHOICE_STRIDE];

  private final Map<ApplicationId, Integer> jobOfApp = new HashMap<>();
  private final Map<Integer, ApplicationId> appOfJob = new HashMap<>();
  private final Map<org.apache.hadoop.yarn.api.records.NodeId, Integer> engineNodes = new HashMap<>();
  private final Map<ContainerId, TaskRecord> tasks = new HashMap<>();
  /** AM containers per node: their memory is not task capacity, so the engine must not count it. */
  private final Map<ContainerId, org.apache.hadoop.yarn.api.records.NodeId> amContainers = new HashMap<>();
  private final Map<org.apache.hadoop.yarn.api.records.NodeId, Integer> engineCapacity = new HashMap<>();
  /** Memory of the AM containers on each node (MB), kept with {@link #amContainers}: O(1) task slots. */
  private final Map<org.apache.hadoop.yarn.api.records.NodeId, Long> amMbOnNode = new HashMap<>();
  /** Nodes whose task capacity may have changed since the engine last heard it (AMs started or ended). */
  private final Set<org.apache.hadoop.yarn.api.records.NodeId> capacityChanged = new HashSet<>();
  /**
   * Attempts that asked for their AM container and may not have it yet, in application order: the
   * heartbeat walks these, not every application. Filled by {@code allocate()} (the RM registers the AM
   * ask through it), pruned by {@link #assignAmContainers} once the RM has the AM container.
   */
  private final TreeMap<ApplicationId, FifoAppAttempt> waitingForAm = new TreeMap<>();
  /**
   * Engine node ids by node object, a cache of {@link #engineNodes} for the heartbeat: a {@code NodeId}
   * lookup hashes the host string anew on every call (the profile showed it as the largest single cost
   * of an idle heartbeat). A node that re-registers is a new object, so an entry never goes stale.
   */
  private final Map<FiCaSchedulerNode, Integer> engineNodeOfNode = new IdentityHashMap<>();
  /**
   * AM reservations: an attempt waiting for its AM container that did not fit on the first node that
   * could ever hold it reserves the AM's memory there until the AM is placed or the attempt ends.
   * Without it every freed task slot was refilled at once and a 512 MB AM waited for two 256 MB slots
   * to free in the same heartbeat (30 s in the Gridmix evaluation); YARN's own schedulers reserve too.
   */
  private final Map<ApplicationAttemptId, AmReservation> amReservations = new HashMap<>();
  /** Memory reserved for waiting AMs on each node (MB), the sum of {@link #amReservations} there. */
  private final Map<org.apache.hadoop.yarn.api.records.NodeId, Long> reservedAmMbOnNode = new HashMap<>();
  /** Whether used resources changed since the queue's available resources were last published. */
  private boolean availableStale = true;
  private long fallbackAllocations;
  /** Metrics2 values the shim measures itself (node-update time, refreshes). */
  private final EngineMetrics observed = new EngineMetrics();
  private boolean metricsRegistered;

  /** A task container the engine knows about. */
  private static final class TaskRecord {
    final int job;
    final int phase;
    final int node;
    final long startMs;

    TaskRecord(int job, int phase, int node, long startMs) {
      this.job = job;
      this.phase = phase;
      this.node = node;
      this.startMs = startMs;
    }
  }

  private final Queue queue = new Queue() {
    @Override
    public String getQueueName() {
      return QUEUE_NAME;
    }

    @Override
    public QueueMetrics getMetrics() {
      return metrics;
    }

    @Override
    public QueueInfo getQueueInfo(boolean includeChildQueues, boolean recursive) {
      QueueInfo info = RECORDS.newRecordInstance(QueueInfo.class);
      info.setQueueName(QUEUE_NAME);
      info.setCapacity(1.0f);
      long clusterMb = getClusterResource().getMemorySize();
      info.setCurrentCapacity(clusterMb == 0 ? 0.0f : (float) usedResource.getMemorySize() / clusterMb);
      info.setMaximumCapacity(1.0f);
      info.setChildQueues(new ArrayList<QueueInfo>());
      info.setQueueState(QueueState.RUNNING);
      return info;
    }

    @Override
    public List<QueueUserACLInfo> getQueueUserAclInfo(UserGroupInformation user) {
      QueueUserACLInfo acls = RECORDS.newRecordInstance(QueueUserACLInfo.class);
      acls.setQueueName(QUEUE_NAME);
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
      Resources.addTo(usedResource, rmContainer.getAllocatedResource());
      attempt.setHeadroom(Resources.subtract(getClusterResource(), usedResource));
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
  };

  public CircumflexScheduler() {
    super(CircumflexScheduler.class.getName());
  }

  // ----- life cycle ----------------------------------------------------------------------------

  @Override
  public void serviceInit(Configuration configuration) throws Exception {
    registerWebDefaults(configuration);
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
      slotMb = Math.max(1, minimumAllocation.getMemorySize());
      usePortForNodeName = configuration.getBoolean(YarnConfiguration.RM_SCHEDULER_INCLUDE_PORT_IN_NODE_NAME,
          YarnConfiguration.DEFAULT_RM_SCHEDULER_USE_PORT_FOR_NODE_NAME);
      metrics = QueueMetrics.forQueue(QUEUE_NAME, null, false, configuration);
      usersManager = new ActiveUsersManager(metrics);
      updateInterval = TICK_INTERVAL_MS;
    }
    super.serviceInit(configuration);
    startEngine(configuration);
  }

  /** Creates the engine; a bad configuration fails start-up, a missing library means fallback. */
  private synchronized void startEngine(Configuration configuration) {
    Map<String, String> keys = engineKeys(configuration);
    String label = keys.get("circumflex.adaptive.accelerated.label");
    acceleratedLabel = label == null || label.trim().isEmpty() ? null : label.trim();
    try {
      NativeEngine.init(configuration.get(KEY_NATIVE_LOG, "warn"));
      engine = NativeEngine.create(keys);
      LOG.info("Circumflex engine started: policy {} ({} keys), slot = {} MB", keys.get("circumflex.policy"),
          keys.size(), slotMb);
      registerMetrics();
    } catch (CircumflexConfigException e) {
      throw new YarnRuntimeException("Circumflex configuration rejected: " + e.getMessage(), e);
    } catch (CircumflexException | LinkageError e) {
      fallBack("cannot start the native engine", e);
    }
  }

  @Override
  public void serviceStop() throws Exception {
    synchronized (this) {
      if (metricsRegistered) {
        DefaultMetricsSystem.instance().unregisterSource(EngineMetrics.SOURCE_NAME);
        metricsRegistered = false;
      }
      if (engine != null) {
        engine.close();
      }
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
   * (AdminService passes {@code yarn-site.xml} freshly read through the RM's configuration provider) to
   * the running engine: a changed policy or parameters, jobs and nodes kept, everything re-planned. A
   * bad configuration is refused with an IOException naming the key, and the old policy keeps running.
   */
  @Override
  public synchronized void reinitialize(Configuration configuration, RMContext context) throws IOException {
    if (engine != null) {
      Map<String, String> keys = engineKeys(configuration);
      try {
        NativeEngine.setLogLevel(configuration.get(KEY_NATIVE_LOG, "warn"));
        engine.reconfigure(keys, System.currentTimeMillis());
        observed.refreshed(true);
        LOG.info("Circumflex refreshed: policy {} ({} keys)", keys.get("circumflex.policy"), keys.size());
      } catch (CircumflexConfigException e) {
        observed.refreshed(false);
        throw new IOException("Circumflex refresh rejected, the running policy is kept: " + e.getMessage(), e);
      } catch (CircumflexException | LinkageError e) {
        fallBack("reconfigure failed", e);
      } finally {
        drainNativeLog();
      }
    }
    setConf(configuration);
    super.reinitialize(configuration, context);
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

  /** Key of the RM's plug-in scheduler page class. */
  static final String KEY_SCHEDULER_PAGE = "yarn.http.rmwebapp.scheduler.page.class";
  /** Key of the RM web app's extra JAX-RS resources. */
  static final String KEY_EXTERNAL_CLASSES = "yarn.http.rmwebapp.external.classes";

  /**
   * Points the RM web app at the Circumflex page and REST resource unless the operator chose
   * otherwise: the scheduler is initialised before the web app starts and shares the RM's
   * configuration, so one scheduler class setting is enough for the whole UI.
   */
  static void registerWebDefaults(Configuration configuration) {
    configuration.setIfUnset(KEY_SCHEDULER_PAGE, CircumflexSchedulerPage.class.getName());
    String rest = CircumflexSchedulerWebService.class.getName();
    List<String> external = new ArrayList<>(configuration.getTrimmedStringCollection(KEY_EXTERNAL_CLASSES));
    if (!external.contains(rest)) {
      external.add(rest);
      configuration.set(KEY_EXTERNAL_CLASSES, String.join(",", external));
    }
  }

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
    NativeEngine current;
    synchronized (this) {
      current = engine;
    }
    return observed.read(current);
  }

  /** The engine's status as an HTML fragment for the scheduler page, or null in fallback. */
  public synchronized String statusHtml() {
    return engine == null ? null : guard("statusHtml", () -> engine.statusHtml(System.currentTimeMillis()), null);
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

  // ----- failure safety --------------------------------------------------------------------------

  /** Whether the scheduler runs in FIFO fallback because the native side failed. */
  public boolean isFallbackActive() {
    return fallbackCause != null;
  }

  /** Why the fallback is active (first failure), or null. */
  public String getFallbackCause() {
    return fallbackCause;
  }

  /** Containers allocated by the FIFO fallback. */
  public synchronized long getFallbackAllocations() {
    return fallbackAllocations;
  }

  /** The engine's status JSON, or null in fallback. */
  public synchronized String statusJson() {
    return engine == null ? null : guard("statusJson", () -> engine.statusJson(System.currentTimeMillis()), null);
  }

  /** The engine's current plan JSON, or null in fallback. */
  public synchronized String planJson() {
    return engine == null ? null : guard("planJson", () -> engine.planJson(), null);
  }

  private void fallBack(String what, Throwable cause) {
    String message = what + ": " + cause;
    if (fallbackCause == null) {
      fallbackCause = message;
    }
    if (reportedErrors.add(cause.getClass().getName() + ": " + firstLine(cause.getMessage()))) {
      LOG.error("Circumflex fallback: {}; allocating in FIFO order (by application id) from now on; "
          + "the ResourceManager keeps running", what, cause);
    }
    if (engine != null) {
      NativeEngine broken = engine;
      engine = null;
      try {
        broken.close();
      } catch (CircumflexException closeFailure) {
        LOG.debug("closing the failed engine also failed", closeFailure);
      }
    }
  }

  private static String firstLine(String s) {
    if (s == null) {
      return "";
    }
    int nl = s.indexOf('\n');
    return nl < 0 ? s : s.substring(0, nl);
  }

  private interface NativeCall<T> {
    T call();
  }

  /** Runs a native call; unknown ids are benign, anything else switches to the fallback. */
  private <T> T guard(String what, NativeCall<T> call, T onFailure) {
    if (engine == null) {
      return onFailure;
    }
    try {
      return call.call();
    } catch (CircumflexUnknownIdException e) {
      LOG.debug("{}: {} (engine already retired it)", what, e.getMessage());
      return onFailure;
    } catch (CircumflexException | LinkageError e) {
      fallBack(what + " failed", e);
      return onFailure;
    }
  }

  private void guardRun(String what, Runnable call) {
    guard(what, () -> {
      call.run();
      return Boolean.TRUE;
    }, Boolean.FALSE);
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
    final int slots = slotsOf(rmNode.getTotalCapability());
    Integer id = guard("addNode", () -> engine.addNode(node.getNodeName(), rmNode.getRackName(), slots, 0), null);
    if (id != null) {
      engineNodes.put(rmNode.getNodeID(), id);
      engineCapacity.put(rmNode.getNodeID(), slots);
      Set<String> labels = rmNode.getNodeLabels();
      if (acceleratedLabel != null && labels != null && labels.contains(acceleratedLabel)) {
        guard("setNodeAccelerated", () -> {
          engine.setNodeAccelerated(id, true);
          return null;
        }, null);
      }
    }
  }

  /**
   * Task slots of a node: its memory minus what AM containers hold and what waiting AMs reserved on it,
   * in minimum allocations. The engine never offers more than this minus its running tasks.
   */
  private int taskSlotsOf(FiCaSchedulerNode node) {
    long amMb = heldForAmsMb(node.getNodeID());
    return (int) Math.max(0, Math.min(Integer.MAX_VALUE, (node.getTotalResource().getMemorySize() - amMb) / slotMb));
  }

  /** Tells the engine a node's task capacity when it changed (AMs started or ended, resize). */
  private void syncEngineCapacity(FiCaSchedulerNode node) {
    Integer id = engineNodes.get(node.getNodeID());
    if (id == null) {
      return;
    }
    int slots = taskSlotsOf(node);
    Integer known = engineCapacity.get(node.getNodeID());
    if (known == null || known != slots) {
      engineCapacity.put(node.getNodeID(), slots);
      guardRun("setNodeCapacity", () -> engine.setNodeCapacity(id, slots, 0));
    }
  }

  private int slotsOf(Resource capability) {
    return (int) Math.min(Integer.MAX_VALUE, capability.getMemorySize() / slotMb);
  }

  private synchronized void updateEngineCapacity(RMNode rmNode) {
    FiCaSchedulerNode node = nodeTracker.getNode(rmNode.getNodeID());
    if (node != null) {
      syncEngineCapacity(node);
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
    engineNodeOfNode.remove(node);
    releaseReservationsOn(rmNode.getNodeID());
    engineCapacity.remove(rmNode.getNodeID());
    Integer id = engineNodes.remove(rmNode.getNodeID());
    if (id != null) {
      guardRun("removeNode", () -> engine.removeNode(id, System.currentTimeMillis()));
    }
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
    Integer engineNode = engineNodes.get(nm.getNodeID());
    long now = System.currentTimeMillis();
    for (org.apache.hadoop.yarn.server.api.protocolrecords.NMContainerStatus report : containerReports) {
      ContainerId id = report.getContainerId();
      RMContainer rmContainer = getRMContainer(id);
      if (report.getContainerState() != org.apache.hadoop.yarn.api.records.ContainerState.RUNNING
          || rmContainer == null || tasks.containsKey(id) || amContainers.containsKey(id)) {
        continue;
      }
      // (Used resources were added back by the queue's recoverContainer, called by the parent.)
      if (rmContainer.isAMContainer()) {
        amContainerStarted(id, nm.getNodeID(), rmContainer.getAllocatedResource().getMemorySize());
        continue;
      }
      Integer job = jobOfApp.get(id.getApplicationAttemptId().getApplicationId());
      if (job == null || engineNode == null) {
        continue;
      }
      final int phase = report.getPriority() != null && report.getPriority().getPriority() == MR_REDUCE_PRIORITY
          ? NativeEngine.REDUCE : NativeEngine.MAP;
      final int node = engineNode;
      tasks.put(id, new TaskRecord(job, phase, node, now));
      guardRun("taskStarted", () -> engine.taskStarted(job, phase, node, NativeEngine.ANY, now));
      LOG.info("recovered {} on {} as a {} task of engine job {}", id, nm.getNodeID(),
          phase == NativeEngine.REDUCE ? "reduce" : "map", job);
    }
  }

  private synchronized void addApplication(ApplicationId appId, String user, boolean recovering,
      boolean unmanagedAM) {
    long now = System.currentTimeMillis();
    if (engine != null) {
      Map<String, String> jobConf = collectJobConf(appId, user);
      LOG.debug("submitting {} to the engine with {} keys (maps {}, reduces {})", appId, jobConf.size(),
          jobConf.get("mapreduce.job.maps"), jobConf.get("mapreduce.job.reduces"));
      try {
        int job = engine.submitJob(jobConf, now);
        engine.setReducesReady(job, true);
        engine.setPending(job, NativeEngine.MAP, 0);
        engine.setPending(job, NativeEngine.REDUCE, 0);
        jobOfApp.put(appId, job);
        appOfJob.put(job, appId);
      } catch (CircumflexRejectedException | CircumflexInvalidJobException e) {
        LOG.info("Circumflex rejected application {}: {}", appId, e.getMessage());
        rmContext.getDispatcher().getEventHandler()
            .handle(new RMAppEvent(appId, RMAppEventType.APP_REJECTED, e.getMessage()));
        return;
      } catch (CircumflexException | LinkageError e) {
        fallBack("submitJob failed for " + appId, e);
      }
    }
    SchedulerApplication<FifoAppAttempt> application = new SchedulerApplication<>(queue, user, unmanagedAM);
    applications.put(appId, application);
    metrics.submitApp(user, unmanagedAM);
    LOG.info("Accepted application {} from user {} ({} applications)", appId, user, applications.size());
    if (!recovering) {
      rmContext.getDispatcher().getEventHandler().handle(new RMAppEvent(appId, RMAppEventType.APP_ACCEPTED));
    }
  }

  private Map<String, String> collectJobConf(ApplicationId appId, String user) {
    RMApp app = rmContext.getRMApps() == null ? null : rmContext.getRMApps().get(appId);
    Map<String, String> jobConf = JobConfCollector.fromApplication(appId.toString(),
        app == null ? null : app.getName(), user, app == null ? null : app.getApplicationTags());
    if (app != null) {
      try {
        JobConfCollector.addJobXml(app.getApplicationSubmissionContext(), getConfOrDefault(), jobConf);
      } catch (IOException | RuntimeException e) {
        String message = "cannot read " + JobConfCollector.JOB_XML + " of " + appId + ": " + e;
        if (reportedErrors.add("job.xml: " + e.getClass().getName())) {
          LOG.warn("Circumflex: {}; the job runs with default settings", message);
        }
      }
    }
    return jobConf;
  }

  private Configuration getConfOrDefault() {
    return conf != null ? conf : new Configuration();
  }

  private synchronized void doneApplication(ApplicationId appId, RMAppState finalState) {
    Integer job = jobOfApp.remove(appId);
    if (job != null) {
      appOfJob.remove(job);
      guardRun("finishJob", () -> engine.finishJob(job, System.currentTimeMillis()));
    }
    SchedulerApplication<FifoAppAttempt> application = applications.get(appId);
    if (application == null) {
      return;
    }
    usersManager.deactivateApplication(application.getUser(), appId);
    application.stop(finalState);
    applications.remove(appId);
  }

  private synchronized void addApplicationAttempt(ApplicationAttemptId attemptId, boolean transferState,
      boolean recovering) {
    SchedulerApplication<FifoAppAttempt> application = applications.get(attemptId.getApplicationId());
    if (application == null) {
      LOG.warn("attempt {} of an unknown (rejected?) application; ignored", attemptId);
      return;
    }
    FifoAppAttempt attempt = CircumflexAttempts.newAttempt(attemptId, application.getUser(), queue, usersManager,
        rmContext);
    if (transferState) {
      attempt.transferStateFromPreviousAttempt(application.getCurrentAppAttempt());
    }
    application.setCurrentAppAttempt(attempt);
    metrics.submitAppAttempt(application.getUser(), application.isUnmanagedAM());
    if (!recovering) {
      rmContext.getDispatcher().getEventHandler()
          .handle(new RMAppAttemptEvent(attemptId, RMAppAttemptEventType.ATTEMPT_ADDED));
    }
  }

  private synchronized void doneApplicationAttempt(ApplicationAttemptId attemptId, RMAppAttemptState finalState,
      boolean keepContainers) {
    FifoAppAttempt attempt = getApplicationAttempt(attemptId);
    if (attempt == null) {
      LOG.warn("unknown application attempt {} finished", attemptId);
      return;
    }
    for (RMContainer container : attempt.getLiveContainers()) {
      if (keepContainers && container.getState().equals(RMContainerState.RUNNING)) {
        continue;
      }
      super.completedContainer(container,
          SchedulerUtils.createAbnormalContainerStatus(container.getContainerId(),
              SchedulerUtils.COMPLETED_APPLICATION),
          RMContainerEventType.KILL);
    }
    attempt.stop(finalState);
    releaseReservation(attemptId);
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
      pending = pendingPerPhase(attempt);
      // Headroom is computed for the asking attempt here (as FairScheduler does in allocate), not for
      // every application on every heartbeat. usedResource is read without the scheduler's lock: the
      // figure is advisory and a value one heartbeat old is as good as YARN's own.
      attempt.setHeadroom(Resources.subtract(getClusterResource(), usedResource));
      Resource headroom = attempt.getHeadroom();
      attempt.setApplicationHeadroomForMetrics(headroom);
      allocation = new Allocation(attempt.pullNewlyAllocatedContainers(), headroom, null, null, null,
          attempt.pullUpdatedNMTokens());
    }
    if (pending == null) {
      awaitAmContainer(attempt);
    }
    forwardPending(attemptId.getApplicationId(), pending);
    return allocation;
  }

  /** Puts an attempt that waits for its AM container on the heartbeat's short list. */
  private synchronized void awaitAmContainer(FifoAppAttempt attempt) {
    if (!attempt.isStopped() && attempt.isWaitingForAMContainer()) {
      waitingForAm.put(attempt.getApplicationId(), attempt);
    }
  }

  private synchronized void forwardPending(ApplicationId appId, int[] pending) {
    Integer job = jobOfApp.get(appId);
    if (job == null || pending == null) {
      return;
    }
    guardRun("setPending", () -> {
      engine.setPending(job, NativeEngine.MAP, pending[NativeEngine.MAP]);
      engine.setPending(job, NativeEngine.REDUCE, pending[NativeEngine.REDUCE]);
    });
  }

  /** Outstanding ANY asks per phase; null while the attempt still waits for its AM container. */
  private static int[] pendingPerPhase(FifoAppAttempt attempt) {
    if (attempt.isWaitingForAMContainer()) {
      return null;
    }
    int[] pending = new int[2];
    for (SchedulerRequestKey key : attempt.getSchedulerKeys()) {
      pending[phaseOf(key)] += attempt.getOutstandingAsksCount(key, ResourceRequest.ANY);
    }
    return pending;
  }

  private static int phaseOf(SchedulerRequestKey key) {
    return key.getPriority().getPriority() == MR_REDUCE_PRIORITY ? NativeEngine.REDUCE : NativeEngine.MAP;
  }

  // ----- node update: the hot path ------------------------------------------------------------

  /**
   * One heartbeat. Kept cheap because the RM's single event thread runs it for every node every
   * second: the work is proportional to what changes (containers completed, the few attempts waiting
   * for an AM, the engine's choices for this node), never to the number of applications. A full node
   * does nothing beyond YARN's own container bookkeeping. Headroom is set in {@code allocate()}.
   */
  @Override
  protected synchronized void nodeUpdate(RMNode rmNode) {
    super.nodeUpdate(rmNode);
    FiCaSchedulerNode node = nodeTracker.getNode(rmNode.getNodeID());
    if (node == null
        || rmContext.isWorkPreservingRecoveryEnabled() && !rmContext.isSchedulerReadyForAllocatingContainers()) {
      return;
    }
    if (!waitingForAm.isEmpty() && fits(node)) {
      assignAmContainers(node);
    }
    if (engine != null && !capacityChanged.isEmpty()) {
      syncChangedCapacities();
    }
    if (fits(node)) {
      if (engine != null) {
        assignFromEngine(node, System.currentTimeMillis());
      }
      if (engine == null && fits(node)) {
        assignFifo(node);
      }
    }
    if (availableStale) {
      availableStale = false;
      metrics.setAvailableResourcesToQueue(Resources.subtract(getClusterResource(), usedResource));
    }
  }

  /** Tells the engine the task capacity of every node where AM containers started or ended. */
  private void syncChangedCapacities() {
    for (org.apache.hadoop.yarn.api.records.NodeId id : capacityChanged) {
      FiCaSchedulerNode changed = nodeTracker.getNode(id);
      if (changed != null) {
        syncEngineCapacity(changed);
      }
    }
    capacityChanged.clear();
  }

  private void amContainerStarted(ContainerId id, org.apache.hadoop.yarn.api.records.NodeId nodeId, long mb) {
    releaseReservation(id.getApplicationAttemptId());
    if (amContainers.put(id, nodeId) == null) {
      amMbOnNode.merge(nodeId, mb, Long::sum);
      capacityChanged.add(nodeId);
    }
  }

  private void amContainerEnded(ContainerId id, long mb) {
    org.apache.hadoop.yarn.api.records.NodeId nodeId = amContainers.remove(id);
    if (nodeId != null) {
      subtractMb(amMbOnNode, nodeId, mb);
      capacityChanged.add(nodeId);
    }
  }

  /** Memory on a node that tasks cannot use: running AM containers plus reservations for waiting AMs. */
  private long heldForAmsMb(org.apache.hadoop.yarn.api.records.NodeId nodeId) {
    return amMbOnNode.getOrDefault(nodeId, 0L) + reservedAmMbOnNode.getOrDefault(nodeId, 0L);
  }

  /** Lowers a per-node memory tally by {@code mb}, dropping the node's entry when nothing is left. */
  private static void subtractMb(Map<org.apache.hadoop.yarn.api.records.NodeId, Long> perNode,
      org.apache.hadoop.yarn.api.records.NodeId nodeId, long mb) {
    perNode.computeIfPresent(nodeId, (node, held) -> held - mb > 0 ? held - mb : null);
  }

  private boolean fits(FiCaSchedulerNode node) {
    return Resources.greaterThanOrEqual(calculator, getClusterResource(), node.getUnallocatedResource(),
        minimumAllocation);
  }

  /**
   * AM containers first, in application order, outside the policy: only the attempts that asked for
   * one and do not have it yet ({@link #waitingForAm}).
   */
  private void assignAmContainers(FiCaSchedulerNode node) {
    Iterator<FifoAppAttempt> waiting = waitingForAm.values().iterator();
    while (waiting.hasNext()) {
      FifoAppAttempt attempt = waiting.next();
      if (attempt.isStopped() || !attempt.isWaitingForAMContainer()) {
        waiting.remove();
        releaseReservation(attempt.getApplicationAttemptId());
        continue;
      }
      if (LOG.isDebugEnabled()) {
        LOG.debug("{} waits for its AM container; {} MB free on {}", attempt.getApplicationAttemptId(),
            node.getUnallocatedResource().getMemorySize(), node.getNodeName());
      }
      synchronized (attempt) {
        if (SchedulerAppUtils.isPlaceBlacklisted(attempt, node, LOG)) {
          continue;
        }
        for (SchedulerRequestKey key : attempt.getSchedulerKeys()) {
          assign(node, attempt, key, Integer.MAX_VALUE, NativeEngine.ANY, AM_CONTAINER, -1, 0L);
        }
        if (attempt.isWaitingForAMContainer() && !amReservations.containsKey(attempt.getApplicationAttemptId())) {
          reserveForAm(node, attempt);
        }
      }
      if (!fits(node)) {
        return;
      }
    }
  }

  /**
   * Reserves the memory of {@code attempt}'s AM asks on {@code node}, if the node could ever hold it
   * with one task slot left unreserved (so the running jobs can always finish: a node of nothing but AMs
   * and reservations would deadlock). The node's engine capacity drops by it at the next sync.
   */
  private void reserveForAm(FiCaSchedulerNode node, FifoAppAttempt attempt) {
    long amMb = 0;
    for (SchedulerRequestKey key : attempt.getSchedulerKeys()) {
      PendingAsk ask = attempt.getPendingAsk(key, ResourceRequest.ANY);
      amMb += ask.getCount() * ask.getPerAllocationResource().getMemorySize();
    }
    org.apache.hadoop.yarn.api.records.NodeId nodeId = node.getNodeID();
    if (amMb > 0 && node.getTotalResource().getMemorySize() - heldForAmsMb(nodeId) - amMb >= slotMb) {
      amReservations.put(attempt.getApplicationAttemptId(), new AmReservation(nodeId, amMb));
      reservedAmMbOnNode.merge(nodeId, amMb, Long::sum);
      capacityChanged.add(nodeId);
      LOG.debug("reserved {} MB on {} for the AM of {}", amMb, node.getNodeName(), attempt.getApplicationAttemptId());
    }
  }

  /** Drops the AM reservation of {@code attemptId} (its AM was placed, or the attempt ended). */
  private void releaseReservation(ApplicationAttemptId attemptId) {
    AmReservation reservation = amReservations.remove(attemptId);
    if (reservation != null) {
      subtractMb(reservedAmMbOnNode, reservation.node, reservation.mb);
      capacityChanged.add(reservation.node);
    }
  }

  /** Drops every AM reservation on a lost node; the waiting AMs reserve again elsewhere. */
  private void releaseReservationsOn(org.apache.hadoop.yarn.api.records.NodeId nodeId) {
    amReservations.values().removeIf(reservation -> reservation.node.equals(nodeId));
    reservedAmMbOnNode.remove(nodeId);
  }

  /** Memory held on one node for a waiting AM. */
  private static final class AmReservation {
    final org.apache.hadoop.yarn.api.records.NodeId node;
    final long mb;

    AmReservation(org.apache.hadoop.yarn.api.records.NodeId node, long mb) {
      this.node = node;
      this.mb = mb;
    }
  }

  /** Applies the engine's choices for this node in order. */
  private void assignFromEngine(FiCaSchedulerNode node, long now) {
    Integer engineNode = engineNodeOf(node);
    if (engineNode == null) {
      return;
    }
    int free = slotsOf(node.getUnallocatedResource());
    long started = System.nanoTime();
    Integer written = guard("nodeUpdate", () -> engine.nodeUpdate(engineNode, free, 0, now, choices), null);
    observed.nodeUpdateTimed(System.nanoTime() - started);
    if (written == null) {
      return;
    }
    for (int i = 0; i < written && fits(node); i++) {
      int base = i * NativeEngine.CHOICE_STRIDE;
      int job = choices[base];
      int phase = choices[base + 1];
      int count = choices[base + 2];
      int locality = choices[base + 3];
      ApplicationId appId = appOfJob.get(job);
      SchedulerApplication<FifoAppAttempt> app = appId == null ? null : applications.get(appId);
      FifoAppAttempt attempt = app == null ? null : app.getCurrentAppAttempt();
      if (attempt == null || attempt.isWaitingForAMContainer()) {
        continue;
      }
      synchronized (attempt) {
        if (attempt.isStopped() || SchedulerAppUtils.isPlaceBlacklisted(attempt, node, LOG)) {
          continue;
        }
        int left = count;
        for (SchedulerRequestKey key : attempt.getSchedulerKeys()) {
          if (left <= 0 || engine == null) {
            break;
          }
          if (phaseOf(key) == phase) {
            left -= assign(node, attempt, key, left, locality, job, engineNode, now);
          }
        }
      }
    }
  }

  /** The engine's id of a node, or null if the engine does not know it. */
  private Integer engineNodeOf(FiCaSchedulerNode node) {
    Integer id = engineNodeOfNode.get(node);
    if (id == null) {
      id = engineNodes.get(node.getNodeID());
      if (id != null) {
        engineNodeOfNode.put(node, id);
      }
    }
    return id;
  }

  /** FIFO fallback: every application in id order, every ask, as much as fits. */
  private void assignFifo(FiCaSchedulerNode node) {
    for (SchedulerApplication<FifoAppAttempt> app : applications.values()) {
      FifoAppAttempt attempt = app.getCurrentAppAttempt();
      if (attempt == null) {
        continue;
      }
      synchronized (attempt) {
        if (attempt.isStopped() || SchedulerAppUtils.isPlaceBlacklisted(attempt, node, LOG)) {
          continue;
        }
        for (SchedulerRequestKey key : attempt.getSchedulerKeys()) {
          fallbackAllocations += assign(node, attempt, key, Integer.MAX_VALUE, NativeEngine.ANY, -1, -1, 0L);
        }
      }
      if (!fits(node)) {
        return;
      }
    }
  }

  /**
   * Allocates up to {@code max} containers of {@code key} on {@code node}: node-local asks, then
   * rack-local if {@code allowed} permits, then off-switch if it permits any. Reports each task
   * to the engine when {@code job >= 0}; records AM containers when {@code job == AM_CONTAINER}.
   * Returns the number allocated.
   */
  private int assign(FiCaSchedulerNode node, FifoAppAttempt attempt, SchedulerRequestKey key, int max,
      int allowed, int job, int engineNode, long now) {
    int total = 0;
    PendingAsk any = attempt.getPendingAsk(key, ResourceRequest.ANY);
    if (any.getCount() <= 0) {
      return 0;
    }
    boolean placeFree = hasNoPlacement(attempt, key);
    PendingAsk local = attempt.getPendingAsk(key, node.getNodeName());
    // A node-local container also consumes one of the rack's ask and one of ANY (YARN's locality
    // allocator throws a NullPointerException once either is used up), and an AM may ask for more on a
    // node than on its rack (SLS's simulated AMs do): allocate no more than all three allow.
    int localRoom = Math.min(local.getCount(),
        Math.min(attempt.getPendingAsk(key, node.getRackName()).getCount(), any.getCount()));
    if (localRoom > 0) {
      total += allocate(node, attempt, key, Math.min(max, localRoom), NodeType.NODE_LOCAL,
          local.getPerAllocationResource(), job, NativeEngine.NODE_LOCAL, engineNode, now);
    }
    PendingAsk rack = attempt.getPendingAsk(key, node.getRackName());
    int rackRoom = Math.min(rack.getCount(), attempt.getPendingAsk(key, ResourceRequest.ANY).getCount());
    if (allowed >= NativeEngine.RACK_LOCAL && rackRoom > 0 && total < max) {
      total += allocate(node, attempt, key, Math.min(max - total, rackRoom), NodeType.RACK_LOCAL,
          rack.getPerAllocationResource(), job, NativeEngine.RACK_LOCAL, engineNode, now);
    }
    any = attempt.getPendingAsk(key, ResourceRequest.ANY);
    if ((allowed >= NativeEngine.ANY || placeFree) && any.getCount() > 0 && total < max) {
      int reported = placeFree ? NativeEngine.NODE_LOCAL : NativeEngine.ANY;
      total += allocate(node, attempt, key, Math.min(max - total, any.getCount()), NodeType.OFF_SWITCH,
          any.getPerAllocationResource(), job, reported, engineNode, now);
    }
    return total;
  }

  /** Whether the key's asks name no node or rack (the request can run anywhere equally well). */
  private static boolean hasNoPlacement(FifoAppAttempt attempt, SchedulerRequestKey key) {
    Map<String, ResourceRequest> requests = attempt.getAppPlacementAllocator(key) == null ? null
        : attempt.getAppPlacementAllocator(key).getResourceRequests();
    if (requests == null) {
      return true;
    }
    for (String resourceName : requests.keySet()) {
      if (!ResourceRequest.ANY.equals(resourceName)) {
        return false;
      }
    }
    return true;
  }

  private int allocate(FiCaSchedulerNode node, FifoAppAttempt attempt, SchedulerRequestKey key, int wanted,
      NodeType type, Resource capability, int job, int locality, int engineNode, long now) {
    long perContainer = Math.max(1, capability.getMemorySize());
    int fit = (int) Math.min(wanted, node.getUnallocatedResource().getMemorySize() / perContainer);
    int done = 0;
    for (int i = 0; i < fit; i++) {
      ContainerId id = BuilderUtils.newContainerId(attempt.getApplicationAttemptId(), attempt.getNewContainerId());
      Container container = BuilderUtils.newContainer(id, node.getNodeID(), node.getHttpAddress(), capability,
          key.getPriority(), null, key.getAllocationRequestId());
      RMContainer rmContainer = attempt.allocate(type, node, key, container);
      if (rmContainer == null) {
        break;
      }
      node.allocateContainer(rmContainer);
      Resources.addTo(usedResource, rmContainer.getAllocatedResource());
      availableStale = true;
      done++;
      if (LOG.isDebugEnabled()) {
        LOG.debug("allocated {} on {} ({}, priority {}, engine job {})", id, node.getNodeName(), type,
            key.getPriority().getPriority(), job);
      }
      if (job == AM_CONTAINER) {
        amContainerStarted(id, node.getNodeID(), rmContainer.getAllocatedResource().getMemorySize());
      }
      if (job >= 0) {
        final int phase = phaseOf(key);
        tasks.put(id, new TaskRecord(job, phase, engineNode, now));
        guardRun("taskStarted", () -> engine.taskStarted(job, phase, engineNode, locality, now));
      }
    }
    return done;
  }

  // ----- containers ------------------------------------------------------------------------------

  @Override
  protected synchronized void completedContainerInternal(RMContainer rmContainer, ContainerStatus status,
      RMContainerEventType event) {
    Container container = rmContainer.getContainer();
    FifoAppAttempt attempt = getCurrentAttemptForContainer(container.getId());
    FiCaSchedulerNode node = nodeTracker.getNode(container.getNodeId());
    amContainerEnded(container.getId(), container.getResource().getMemorySize());
    availableStale = true;
    TaskRecord task = tasks.remove(container.getId());
    if (task != null) {
      long now = System.currentTimeMillis();
      int exit = status.getExitStatus();
      boolean success = exit == ContainerExitStatus.SUCCESS || exit == ContainerExitStatus.KILLED_BY_APPMASTER;
      guardRun("taskFinished",
          () -> engine.taskFinished(task.job, task.phase, task.node, now - task.startMs, success, now));
    }
    if (attempt == null) {
      LOG.info("container {} of an unknown application completed ({})", container.getId(), event);
      return;
    }
    attempt.containerCompleted(rmContainer, status, event, RMNodeLabelsManagerNoLabel.NO_LABEL);
    if (node != null) {
      node.releaseContainer(rmContainer.getContainerId(), false);
    }
    Resources.subtractFrom(usedResource, container.getResource());
  }

  /** Holder for the default partition name, so the import list stays readable. */
  private static final class RMNodeLabelsManagerNoLabel {
    static final String NO_LABEL =
        org.apache.hadoop.yarn.server.resourcemanager.nodelabels.RMNodeLabelsManager.NO_LABEL;
  }

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
    return metrics;
  }

  @Override
  public synchronized boolean checkAccess(UserGroupInformation callerUGI, QueueACL acl, String queueName) {
    return queue.hasAccess(acl, callerUGI);
  }

  @Override
  public synchronized List<ApplicationAttemptId> getAppsInQueue(String queueName) {
    if (!QUEUE_NAME.equals(queueName)) {
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
    guard("tick", () -> engine.tick(System.currentTimeMillis()), Boolean.FALSE);
    drainNativeLog();
  }
}
