package io.circumflex.yarn;

import io.circumflex.CircumflexException;
import io.circumflex.CircumflexInvalidJobException;
import io.circumflex.CircumflexRejectedException;
import io.circumflex.nativeapi.NativeEngine;
import io.circumflex.observe.EngineMetrics;
import io.circumflex.shim.EngineGuard;
import io.circumflex.shim.TaskBatch;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerAppUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoAppAttempt;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine-facing side of the YARN shim: engine ids of applications, nodes and task containers, the
 * translation of YARN events into engine events (node added, lost or resized; application submitted
 * or done; pending asks; task containers started and finished), and the heartbeat's question to the
 * engine, whose choices it applies through {@link AskMatcher}. Every call goes through the shims'
 * {@link EngineGuard}. A refresh that ends a fallback replays YARN's state into a new engine here
 * ({@link #recover}).
 *
 * <p><b>Crossings per event.</b> Task starts and ends are buffered in a {@link TaskBatch} and sent
 * before any other engine call, so a heartbeat crosses JNI three times whatever it carries: its
 * completions (one call), the engine's answer for the node (one), its launches (one). A submission is
 * one call (job, reduce readiness and empty pending counts), an {@code allocate} one (both phases'
 * pending counts).
 *
 * <p><b>AM admission</b> ({@link AmPlacement.AmGate}): AM asks, starts and ends are buffered and sent
 * in one call ({@code nativeAmEvents}) before the engine is asked which AMs may start
 * ({@code nativeAmAdmissions}, once per heartbeat while an AM waits) and on the timer; an AM's size
 * crosses as slots (its memory over the slot, rounded up).
 *
 * <p>Called under the scheduler's lock.
 */
final class EngineBridge implements AskMatcher.Placement, AmPlacement.AmGate {
  private static final Logger LOG = LoggerFactory.getLogger(EngineBridge.class);
  /** Most choices read per heartbeat. */
  private static final int MAX_CHOICES = 256;

  private final EngineGuard guard;
  private final AskMatcher matcher;
  private final AmPlacement amPlacement;
  private final EngineMetrics observed;
  private final int[] choices = new int[MAX_CHOICES * NativeEngine.CHOICE_STRIDE];
  /** Task starts and ends not yet sent to the engine. */
  private final TaskBatch events = new TaskBatch();
  /** Node label of the accelerated pool ({@code circumflex.adaptive.accelerated.label}), or null. */
  private String acceleratedLabel;
  /** Whether the engine's AM gate is configured on ({@code circumflex.am.admission.enabled}). */
  private boolean amGate;
  /** AM events not yet sent ({@link NativeEngine#AM_EVENT_STRIDE} longs each). */
  private long[] amEvents = new long[16 * NativeEngine.AM_EVENT_STRIDE];
  private int amEventCount;
  /** The engine's last answer of admitted AMs (job ids), and as applications. */
  private int[] admittedJobs = new int[64];
  private final List<ApplicationId> admittedApps = new ArrayList<>();

  private Map<ApplicationId, Integer> jobOfApp = new HashMap<>();
  private Map<Integer, ApplicationId> appOfJob = new HashMap<>();
  private Map<NodeId, Integer> engineNodes = new HashMap<>();
  /**
   * Engine node ids by node object, a cache of {@link #engineNodes} for the heartbeat: a {@code NodeId}
   * lookup hashes the host string anew on every call (the profile showed it as the largest single cost
   * of an idle heartbeat). A node that re-registers is a new object, so an entry never goes stale.
   */
  private Map<FiCaSchedulerNode, Integer> engineNodeOfNode = new IdentityHashMap<>();
  /** Task slots the engine was last told per node. */
  private Map<NodeId, Integer> engineCapacity = new HashMap<>();
  /** Task containers the engine knows about. */
  private Map<ContainerId, TaskRecord> tasks = new HashMap<>();

  /** The choice being applied, for {@link #placed}: set before each {@link AskMatcher#assign}. */
  private int choiceJob;
  private int choiceNode;
  private long choiceNow;

  EngineBridge(EngineGuard guard, AskMatcher matcher, AmPlacement amPlacement) {
    this.guard = guard;
    this.matcher = matcher;
    this.amPlacement = amPlacement;
    this.observed = guard.metrics();
  }

  /** Sets the node label that marks accelerated nodes (null for none) and whether the AM gate is on. */
  void configure(String label, boolean amGateOn) {
    acceleratedLabel = label == null || label.trim().isEmpty() ? null : label.trim();
    amGate = amGateOn;
  }

  /** Whether an engine is in charge (not the FIFO fallback). */
  boolean engineActive() {
    return guard.isActive();
  }

  // ----- nodes -----------------------------------------------------------------------------------

  /** Registers a node with its slots (and its accelerated label). */
  void addNode(FiCaSchedulerNode node, RMNode rmNode) {
    events.flush(guard);
    final int slots = matcher.slotsOf(rmNode.getTotalCapability());
    Integer id = guard.call("addNode", e -> e.addNode(node.getNodeName(), rmNode.getRackName(), slots, 0), null);
    if (id != null) {
      engineNodes.put(rmNode.getNodeID(), id);
      engineCapacity.put(rmNode.getNodeID(), slots);
      if (isAccelerated(rmNode)) {
        guard.run("setNodeAccelerated", e -> e.setNodeAccelerated(id, true));
      }
    }
  }

  private boolean isAccelerated(RMNode rmNode) {
    Set<String> labels = rmNode.getNodeLabels();
    return acceleratedLabel != null && labels != null && labels.contains(acceleratedLabel);
  }

  /** Tells the engine a node's task capacity when it changed (AMs started or ended, resize). */
  void syncCapacity(FiCaSchedulerNode node) {
    Integer id = engineNodes.get(node.getNodeID());
    if (id == null) {
      return;
    }
    int slots = matcher.taskSlots(node, amPlacement.heldMb(node.getNodeID()));
    Integer known = engineCapacity.get(node.getNodeID());
    if (known == null || known != slots) {
      events.flush(guard);
      engineCapacity.put(node.getNodeID(), slots);
      guard.run("setNodeCapacity", e -> e.setNodeCapacity(id, slots, 0));
    }
  }

  /** Syncs the capacity of every node where AM memory changed; {@code nodes} finds a live node. */
  void syncChangedCapacities(Function<NodeId, FiCaSchedulerNode> nodes) {
    Set<NodeId> changed = amPlacement.changedNodes();
    if (!guard.isActive() || changed.isEmpty()) {
      return;
    }
    for (NodeId id : changed) {
      FiCaSchedulerNode node = nodes.apply(id);
      if (node != null) {
        syncCapacity(node);
      }
    }
    changed.clear();
  }

  /** Forgets a lost node (its containers were completed first). */
  void removeNode(FiCaSchedulerNode node) {
    events.flush(guard);
    engineNodeOfNode.remove(node);
    engineCapacity.remove(node.getNodeID());
    Integer id = engineNodes.remove(node.getNodeID());
    if (id != null) {
      guard.run("removeNode", e -> e.removeNode(id, System.currentTimeMillis()));
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

  // ----- applications ----------------------------------------------------------------------------

  /**
   * Submits an application. The AM ramps reduces up itself (slow start), so a reduce ask is proof the
   * reduces are ready: reduces are declared ready at submission and the asks do the rest; nothing is
   * pending until the AM asks. Rejections and malformed per-job values are thrown for the scheduler to
   * reject the application; any other failure falls back (a job the engine cannot take would starve).
   */
  void submit(ApplicationId appId, Map<String, String> jobConf, long now) {
    NativeEngine engine = guard.engine();
    if (engine == null) {
      return;
    }
    events.flush(guard);
    try {
      int job = engine.submitJob(jobConf, now, true, 0, 0);
      jobOfApp.put(appId, job);
      appOfJob.put(job, appId);
    } catch (CircumflexRejectedException | CircumflexInvalidJobException e) {
      throw e;
    } catch (CircumflexException | IllegalArgumentException | LinkageError e) {
      guard.fallBack("submitJob failed for " + appId, e, engine);
    }
  }

  /** Ends an application's engine job. */
  void finish(ApplicationId appId) {
    Integer job = jobOfApp.remove(appId);
    if (job != null) {
      events.flush(guard);
      appOfJob.remove(job);
      guard.run("finishJob", e -> e.finishJob(job, System.currentTimeMillis()));
    }
  }

  /** Forwards an attempt's outstanding asks per phase (null while it waits for its AM: nothing). */
  void forwardPending(ApplicationId appId, int[] pending) {
    Integer job = jobOfApp.get(appId);
    if (job == null || pending == null) {
      return;
    }
    events.flush(guard);
    flushAmEvents();
    guard.run("setPending", e -> e.setPendingPhases(job, pending[NativeEngine.MAP], pending[NativeEngine.REDUCE]));
  }

  // ----- task containers -------------------------------------------------------------------------

  @Override
  public void placed(RMContainer container, FiCaSchedulerNode node, SchedulerRequestKey key, int locality) {
    int job = choiceJob;
    int engineNode = choiceNode;
    long now = choiceNow;
    int phase = AskMatcher.phaseOf(key);
    tasks.put(container.getContainerId(), new TaskRecord(job, phase, engineNode, now));
    events.started(guard, job, phase, engineNode, locality, now);
  }

  /** A recovered running task container (after an RM restart): the engine counts it from {@code now}. */
  void recoveredTask(ContainerId id, NodeId nodeId, int phase, long now) {
    Integer job = jobOfApp.get(id.getApplicationAttemptId().getApplicationId());
    Integer node = engineNodes.get(nodeId);
    if (job == null || node == null || tasks.containsKey(id)) {
      return;
    }
    tasks.put(id, new TaskRecord(job, phase, node, now));
    events.started(guard, job, phase, node, NativeEngine.ANY, now);
    LOG.info("recovered {} on {} as a {} task of engine job {}", id, nodeId,
        phase == NativeEngine.REDUCE ? "reduce" : "map", job);
  }

  /** Whether the engine knows {@code id} as a task. */
  boolean isTask(ContainerId id) {
    return tasks.containsKey(id);
  }

  /**
   * A container completed: a task's end goes to the engine with its duration and outcome. A task
   * container killed for a preemption ({@code PREEMPTED}), or asked back ({@code askedBack}, by
   * {@link Preemption}) and ended other than by success, is reported as preempted instead: the engine
   * re-queues it and earmarks its slot for the job the decision named.
   */
  void containerCompleted(ContainerId id, ContainerStatus status, boolean askedBack) {
    TaskRecord task = tasks.remove(id);
    if (task == null) {
      return;
    }
    long now = System.currentTimeMillis();
    int exit = status.getExitStatus();
    if (exit == ContainerExitStatus.PREEMPTED || askedBack && exit != ContainerExitStatus.SUCCESS) {
      events.preempted(task.job, task.phase, task.node, now - task.startMs, now);
      return;
    }
    boolean success = exit == ContainerExitStatus.SUCCESS || exit == ContainerExitStatus.KILLED_BY_APPMASTER;
    events.finished(task.job, task.phase, task.node, now - task.startMs, success, now);
  }

  /** The application of engine job {@code job}, or null. */
  ApplicationId appOf(int job) {
    return appOfJob.get(job);
  }

  /** The engine phase of task container {@code id}, or -1 when the engine does not know it as a task. */
  int taskPhase(ContainerId id) {
    TaskRecord task = tasks.get(id);
    return task == null ? -1 : task.phase;
  }

  /** When the engine was told task container {@code id} started, ms (0 when unknown). */
  long taskStartMs(ContainerId id) {
    TaskRecord task = tasks.get(id);
    return task == null ? 0 : task.startMs;
  }

  // ----- the heartbeat ---------------------------------------------------------------------------

  /**
   * Asks the engine which jobs get {@code node}'s free slots and places their containers in that order.
   * The engine is called directly (not through a guard lambda) so the heartbeat allocates no call
   * object; the guard still decides what a failure means.
   */
  void assign(FiCaSchedulerNode node, Map<ApplicationId, SchedulerApplication<FifoAppAttempt>> applications,
      long now) {
    Integer engineNode = engineNodeOf(node);
    NativeEngine engine = guard.engine();
    if (engineNode == null || engine == null) {
      return;
    }
    events.flush(guard);
    int free = matcher.slotsOf(node.getUnallocatedResource());
    long started = System.nanoTime();
    int written;
    try {
      written = engine.nodeUpdate(engineNode, free, 0, now, choices);
    } catch (CircumflexException | IllegalArgumentException | LinkageError e) {
      guard.failed("nodeUpdate", e, engine);
      return;
    } finally {
      observed.nodeUpdateTimed(System.nanoTime() - started);
    }
    choiceNode = engineNode;
    choiceNow = now;
    for (int i = 0; i < written && matcher.fits(node); i++) {
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
      choiceJob = job;
      synchronized (attempt) {
        if (attempt.isStopped() || SchedulerAppUtils.isPlaceBlacklisted(attempt, node, LOG)) {
          continue;
        }
        int left = count;
        for (SchedulerRequestKey key : attempt.getSchedulerKeys()) {
          if (left <= 0 || !guard.isActive()) {
            break;
          }
          if (AskMatcher.phaseOf(key) == phase) {
            left -= matcher.assign(node, attempt, key, left, locality, this);
          }
        }
      }
    }
    events.flush(guard);
  }

  /** Sends buffered task and AM events now (the timer does, so an idle cluster's releases arrive too). */
  void flush() {
    events.flush(guard);
    flushAmEvents();
  }

  // ----- AM admission ----------------------------------------------------------------------------

  @Override
  public boolean gating() {
    return amGate && guard.isActive();
  }

  @Override
  public List<ApplicationId> admitted(long now) {
    admittedApps.clear();
    NativeEngine engine = guard.engine();
    if (engine == null) {
      return admittedApps;
    }
    flushAmEvents();
    int total;
    try {
      total = engine.amAdmissions(now, admittedJobs);
      if (total > admittedJobs.length) {
        admittedJobs = new int[Math.max(total, 2 * admittedJobs.length)];
        total = engine.amAdmissions(now, admittedJobs);
      }
    } catch (CircumflexException | IllegalArgumentException | LinkageError e) {
      guard.failed("amAdmissions", e, engine);
      return admittedApps;
    }
    for (int i = 0; i < Math.min(total, admittedJobs.length); i++) {
      ApplicationId app = appOfJob.get(admittedJobs[i]);
      if (app != null) {
        admittedApps.add(app);
      }
    }
    return admittedApps;
  }

  @Override
  public void amRequested(ApplicationId app, long mb) {
    amEvent(NativeEngine.AM_REQUESTED, app, mb);
  }

  @Override
  public void amStarted(ApplicationId app, long mb) {
    amEvent(NativeEngine.AM_STARTED, app, mb);
  }

  @Override
  public void amEnded(ApplicationId app) {
    amEvent(NativeEngine.AM_FINISHED, app, 0);
  }

  /** Buffers one AM event of {@code app} ({@code mb} as slots, rounded up). */
  private void amEvent(long kind, ApplicationId app, long mb) {
    Integer job = jobOfApp.get(app);
    if (job == null || guard.engine() == null) {
      return;
    }
    if ((amEventCount + 1) * NativeEngine.AM_EVENT_STRIDE > amEvents.length) {
      amEvents = Arrays.copyOf(amEvents, 2 * amEvents.length);
    }
    long slotMb = matcher.slotMb();
    int base = amEventCount * NativeEngine.AM_EVENT_STRIDE;
    amEvents[base] = kind;
    amEvents[base + 1] = job;
    amEvents[base + 2] = Math.min(1 << 20, (mb + slotMb - 1) / slotMb);
    amEvents[base + 3] = System.currentTimeMillis();
    amEventCount++;
  }

  /** Sends the buffered AM events in one call. */
  private void flushAmEvents() {
    if (amEventCount == 0) {
      return;
    }
    final int count = amEventCount;
    amEventCount = 0;
    guard.run("amEvents", e -> e.amEvents(amEvents, count));
  }

  // ----- recovery --------------------------------------------------------------------------------

  /**
   * Ends a fallback: replays YARN's state into {@code candidate} (nodes with their task capacity and
   * labels, every application with its configuration {@code confs} and submission time
   * {@code submitted}, its pending asks, its running task containers) and, if every call succeeds,
   * puts it in charge through the guard. Any failure throws and leaves the fallback as it was (the
   * caller closes the candidate).
   */
  void recover(NativeEngine candidate, Collection<FiCaSchedulerNode> nodes,
      Map<ApplicationId, SchedulerApplication<FifoAppAttempt>> applications,
      Map<ApplicationId, Map<String, String>> confs, Map<ApplicationId, Long> submitted, long now) {
    events.flush(guard); // in fallback: drops what the failed engine would have needed
    Map<ApplicationId, Integer> jobs = new HashMap<>();
    Map<Integer, ApplicationId> apps = new HashMap<>();
    Map<NodeId, Integer> nodeIds = new HashMap<>();
    Map<NodeId, Integer> capacities = new HashMap<>();
    Map<ContainerId, TaskRecord> running = new HashMap<>();
    for (FiCaSchedulerNode node : nodes) {
      int slots = matcher.taskSlots(node, amPlacement.heldMb(node.getNodeID()));
      int id = candidate.addNode(node.getNodeName(), node.getRackName(), slots, 0);
      if (isAccelerated(node.getRMNode())) {
        candidate.setNodeAccelerated(id, true);
      }
      nodeIds.put(node.getNodeID(), id);
      capacities.put(node.getNodeID(), slots);
    }
    for (Map.Entry<ApplicationId, SchedulerApplication<FifoAppAttempt>> entry : applications.entrySet()) {
      ApplicationId appId = entry.getKey();
      FifoAppAttempt attempt = entry.getValue().getCurrentAppAttempt();
      int[] pending = null;
      if (attempt != null) {
        synchronized (attempt) {
          pending = AskMatcher.pendingPerPhase(attempt);
        }
      }
      int job = candidate.submitJob(confs.get(appId), Math.min(now, submitted.getOrDefault(appId, now)), true,
          pending == null ? 0 : pending[NativeEngine.MAP], pending == null ? 0 : pending[NativeEngine.REDUCE]);
      jobs.put(appId, job);
      apps.put(job, appId);
      if (attempt == null) {
        continue;
      }
      for (RMContainer container : attempt.getLiveContainers()) {
        Integer node = nodeIds.get(container.getAllocatedNode());
        if (container.isAMContainer()) {
          long mb = container.getAllocatedResource().getMemorySize();
          long slots = Math.min(1 << 20, (mb + matcher.slotMb() - 1) / matcher.slotMb());
          candidate.amEvents(new long[] {NativeEngine.AM_STARTED, job, slots, now}, 1);
          continue;
        }
        if (node == null) {
          continue;
        }
        int phase = container.getAllocatedSchedulerKey() == null ? NativeEngine.MAP
            : AskMatcher.phaseOf(container.getAllocatedSchedulerKey());
        candidate.taskStarted(job, phase, node, NativeEngine.ANY, now);
        running.put(container.getContainerId(), new TaskRecord(job, phase, node, now));
      }
    }
    jobOfApp = jobs;
    appOfJob = apps;
    engineNodes = nodeIds;
    engineNodeOfNode = new IdentityHashMap<>();
    engineCapacity = capacities;
    tasks = running;
    amEventCount = 0;
    amPlacement.changedNodes().clear();
    guard.recover(candidate);
  }

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
}
