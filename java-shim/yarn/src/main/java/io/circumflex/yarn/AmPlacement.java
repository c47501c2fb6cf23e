package io.circumflex.yarn;

import io.circumflex.nativeapi.NativeEngine;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerAppUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.PendingAsk;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoAppAttempt;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * AM containers and their reservations: which attempts wait for their AM, where each AM runs, and
 * the memory held for AMs on each node (running AMs plus reservations), which is not task capacity.
 *
 * <p><b>Which AMs start, and in what order.</b> With the engine's AM gate on
 * ({@code circumflex.am.admission.enabled}, {@code engine/admission.rs}) the engine decides: once per
 * heartbeat this asks it which waiting AMs may start ({@link AmGate#admitted}, in plan order) and places
 * only those; every AM ask, placement and end is forwarded to it ({@link AmGate}). With the gate off (the
 * default) or in the FIFO fallback, AM containers are placed before any task in application arrival order,
 * as before the gate existed. AM containers are not engine tasks either way: the engine hears them only
 * as AM events, and their memory is taken out of the node's task capacity here.
 *
 * <p><b>Reservations.</b> An attempt waiting for its AM container that did not fit on the first node
 * that could ever hold it reserves the AM's memory there until the AM is placed or the attempt ends.
 * Without it every freed task slot was refilled at once and a 512 MB AM waited for two 256 MB slots to
 * free in the same heartbeat (30 s in the Gridmix evaluation); YARN's own schedulers reserve too. A
 * reservation leaves at least one task slot on the node unreserved, so the running jobs can always
 * finish (a node of nothing but AMs and reservations would deadlock).
 *
 * <p>Nodes whose held memory changed are collected in {@link #changedNodes()}; the scheduler tells the
 * engine their new task capacity before it next asks the engine for choices. Called under the
 * scheduler's lock.
 */
final class AmPlacement implements AskMatcher.Placement {
  private static final Logger LOG = LoggerFactory.getLogger(AmPlacement.class);

  private final AskMatcher matcher;
  /**
   * Attempts that asked for their AM container and may not have it yet, in application order: the
   * heartbeat walks these, not every application. Filled by {@code allocate()} (the RM registers the AM
   * ask through it), pruned by {@link #assign} once the RM has the AM container.
   */
  private final TreeMap<ApplicationId, FifoAppAttempt> waiting = new TreeMap<>();
  /** Running AM containers and their nodes. */
  private final Map<ContainerId, NodeId> amContainers = new HashMap<>();
  /** Memory of the AM containers on each node (MB), kept with {@link #amContainers}: O(1) task slots. */
  private final Map<NodeId, Long> amMbOnNode = new HashMap<>();
  private final Map<ApplicationAttemptId, Reservation> reservations = new HashMap<>();
  /** Memory reserved for waiting AMs on each node (MB), the sum of {@link #reservations} there. */
  private final Map<NodeId, Long> reservedMbOnNode = new HashMap<>();
  /** Nodes whose task capacity may have changed since the engine last heard it. */
  private final Set<NodeId> changed = new HashSet<>();
  /** The engine's AM gate (null: none, arrival order). */
  private AmGate gate;

  /**
   * The engine's side of AM admission: the AM events it hears and the AMs it admits. Implemented by
   * {@link EngineBridge}.
   */
  interface AmGate {
    /** Whether the engine decides which AMs start now (gate configured on and the engine in charge). */
    boolean gating();

    /** The applications whose AM may start now, in plan order (the list is reused by the next call). */
    List<ApplicationId> admitted(long now);

    /** {@code app}'s AM asks for a container of {@code mb}. */
    void amRequested(ApplicationId app, long mb);

    /** {@code app}'s AM container of {@code mb} runs. */
    void amStarted(ApplicationId app, long mb);

    /** {@code app}'s AM container ended. */
    void amEnded(ApplicationId app);
  }

  AmPlacement(AskMatcher matcher) {
    this.matcher = matcher;
  }

  /** Connects the engine's AM gate. */
  void setGate(AmGate gate) {
    this.gate = gate;
  }

  /** Puts an attempt that waits for its AM container on the heartbeat's short list. */
  void await(FifoAppAttempt attempt) {
    if (!attempt.isStopped() && attempt.isWaitingForAMContainer()
        && waiting.put(attempt.getApplicationId(), attempt) == null && gate != null) {
      long mb;
      synchronized (attempt) {
        mb = amMb(attempt);
      }
      gate.amRequested(attempt.getApplicationId(), mb);
    }
  }

  /** Whether any attempt may still wait for its AM container. */
  boolean anyWaiting() {
    return !waiting.isEmpty();
  }

  /**
   * Places AM containers on {@code node} for the attempts that asked for one and do not have it yet, and
   * reserves for the first that does not fit: the ones the engine admits, in plan order, while its gate
   * decides; otherwise all of them, in application order.
   */
  void assign(FiCaSchedulerNode node, long now) {
    Iterator<FifoAppAttempt> it = waiting.values().iterator();
    while (it.hasNext()) {
      FifoAppAttempt attempt = it.next();
      if (attempt.isStopped() || !attempt.isWaitingForAMContainer()) {
        it.remove();
        attemptEnded(attempt.getApplicationAttemptId());
      }
    }
    if (gate != null && gate.gating()) {
      for (ApplicationId app : gate.admitted(now)) {
        FifoAppAttempt attempt = waiting.get(app);
        if (attempt != null && !place(node, attempt)) {
          return;
        }
      }
      return;
    }
    for (FifoAppAttempt attempt : waiting.values()) {
      if (!place(node, attempt)) {
        return;
      }
    }
  }

  /** Places (or reserves for) {@code attempt}'s AM on {@code node}; returns whether the node fits more. */
  private boolean place(FiCaSchedulerNode node, FifoAppAttempt attempt) {
    if (LOG.isDebugEnabled()) {
      LOG.debug("{} waits for its AM container; {} MB free on {}", attempt.getApplicationAttemptId(),
          node.getUnallocatedResource().getMemorySize(), node.getNodeName());
    }
    synchronized (attempt) {
      if (SchedulerAppUtils.isPlaceBlacklisted(attempt, node, LOG)) {
        return true;
      }
      for (SchedulerRequestKey key : attempt.getSchedulerKeys()) {
        matcher.assign(node, attempt, key, Integer.MAX_VALUE, NativeEngine.ANY, this);
      }
      if (attempt.isWaitingForAMContainer() && !reservations.containsKey(attempt.getApplicationAttemptId())) {
        reserve(node, attempt);
      }
    }
    return matcher.fits(node);
  }

  @Override
  public void placed(RMContainer container, FiCaSchedulerNode node, SchedulerRequestKey key, int locality) {
    started(container.getContainerId(), node.getNodeID(), container.getAllocatedResource().getMemorySize());
  }

  /** An AM container of {@code mb} runs on {@code nodeId} (placed now, or recovered after a restart). */
  void started(ContainerId id, NodeId nodeId, long mb) {
    attemptEnded(id.getApplicationAttemptId());
    if (amContainers.put(id, nodeId) == null) {
      amMbOnNode.merge(nodeId, mb, Long::sum);
      changed.add(nodeId);
      if (gate != null) {
        gate.amStarted(id.getApplicationAttemptId().getApplicationId(), mb);
      }
    }
  }

  /** A container ended; if it was an AM, its memory becomes task capacity again. */
  void ended(ContainerId id, long mb) {
    NodeId nodeId = amContainers.remove(id);
    if (nodeId != null) {
      subtractMb(amMbOnNode, nodeId, mb);
      changed.add(nodeId);
      if (gate != null) {
        gate.amEnded(id.getApplicationAttemptId().getApplicationId());
      }
    }
  }

  /** Whether {@code id} is a running AM container. */
  boolean isAm(ContainerId id) {
    return amContainers.containsKey(id);
  }

  /** Memory on a node that tasks cannot use: running AM containers plus reservations for waiting AMs. */
  long heldMb(NodeId nodeId) {
    return amMbOnNode.getOrDefault(nodeId, 0L) + reservedMbOnNode.getOrDefault(nodeId, 0L);
  }

  /** Nodes whose held memory changed since the caller last cleared this set. */
  Set<NodeId> changedNodes() {
    return changed;
  }

  /**
   * Reserves the memory of {@code attempt}'s AM asks on {@code node}, if the node could ever hold it
   * with one task slot left unreserved.
   */
  private void reserve(FiCaSchedulerNode node, FifoAppAttempt attempt) {
    long amMb = amMb(attempt);
    NodeId nodeId = node.getNodeID();
    if (amMb > 0 && node.getTotalResource().getMemorySize() - heldMb(nodeId) - amMb >= matcher.slotMb()) {
      reservations.put(attempt.getApplicationAttemptId(), new Reservation(nodeId, amMb));
      reservedMbOnNode.merge(nodeId, amMb, Long::sum);
      changed.add(nodeId);
      LOG.debug("reserved {} MB on {} for the AM of {}", amMb, node.getNodeName(), attempt.getApplicationAttemptId());
    }
  }

  /** Memory of {@code attempt}'s outstanding AM asks, MB. */
  private static long amMb(FifoAppAttempt attempt) {
    long amMb = 0;
    for (SchedulerRequestKey key : attempt.getSchedulerKeys()) {
      PendingAsk ask = attempt.getPendingAsk(key, ResourceRequest.ANY);
      amMb += ask.getCount() * ask.getPerAllocationResource().getMemorySize();
    }
    return amMb;
  }

  /** Drops the reservation of {@code attemptId} (its AM was placed, or the attempt ended). */
  void attemptEnded(ApplicationAttemptId attemptId) {
    Reservation reservation = reservations.remove(attemptId);
    if (reservation != null) {
      subtractMb(reservedMbOnNode, reservation.node, reservation.mb);
      changed.add(reservation.node);
    }
  }

  /** Drops every reservation on a lost node; the waiting AMs reserve again elsewhere. */
  void nodeRemoved(NodeId nodeId) {
    reservations.values().removeIf(reservation -> reservation.node.equals(nodeId));
    reservedMbOnNode.remove(nodeId);
  }

  /** Lowers a per-node memory tally by {@code mb}, dropping the node's entry when nothing is left. */
  private static void subtractMb(Map<NodeId, Long> perNode, NodeId nodeId, long mb) {
    perNode.computeIfPresent(nodeId, (node, held) -> held - mb > 0 ? held - mb : null);
  }

  /** Memory held on one node for a waiting AM. */
  private static final class Reservation {
    final NodeId node;
    final long mb;

    Reservation(NodeId node, long mb) {
      this.node = node;
      this.mb = mb;
    }
  }
}
