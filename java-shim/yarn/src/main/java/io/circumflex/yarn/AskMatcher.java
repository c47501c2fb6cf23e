package io.circumflex.yarn;

import io.circumflex.nativeapi.NativeEngine;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.PendingAsk;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoAppAttempt;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;
import org.apache.hadoop.yarn.server.utils.BuilderUtils;
import org.apache.hadoop.yarn.util.resource.ResourceCalculator;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ask matching on one node: which of an attempt's outstanding asks a container goes to, at which
 * locality, and how YARN's memory maps to the engine's slots. Every container the scheduler places
 * (AM, engine-chosen task, FIFO fallback) is placed here; what happens next is the caller's
 * {@link Placement}.
 *
 * <p><b>The slot model.</b> The engine's pool is shared (YARN containers). A slot is one
 * {@code yarn.scheduler.minimum-allocation-mb}; a node has {@code (memory - memory held for AMs) /
 * slot} task slots ({@link #taskSlots}: AMs are not tasks, and counting their memory would make every
 * policy plan for slots that do not exist); a heartbeat offers {@code unallocated memory / slot} free
 * slots. Containers are placed with their real size, and placement stops when the next one does not fit.
 *
 * <p><b>Phases.</b> MapReduce AMs ask with priority 20 (maps), 5 (fast-fail maps) and 10 (reduces).
 * Priority {@link CircumflexScheduler#MR_REDUCE_PRIORITY} is the reduce phase; every other priority is
 * the map phase (for non-MapReduce applications all work is "map" work).
 *
 * <p><b>The locality cascade</b> ({@link #assign}): node-local asks first, then rack-local if the
 * engine's choice allows rack, then off-switch if it allows any. An ask with no node or rack names can
 * run anywhere and counts as node-local (it has no better place to wait for). Today this cascade, like
 * the delay counting behind the engine's allowed level, is decided here with the engine's allowed level
 * as its bound; the simulator models the same levels.
 *
 * <p>Called under the scheduler's lock and the attempt's monitor.
 */
final class AskMatcher {
  private static final Logger LOG = LoggerFactory.getLogger(AskMatcher.class);

  /** What the scheduler does with each container placed: AM bookkeeping, an engine task start, a count. */
  interface Placement {
    /** {@code container} was allocated on {@code node} for {@code key} at engine locality {@code locality}. */
    void placed(RMContainer container, FiCaSchedulerNode node, SchedulerRequestKey key, int locality);
  }

  private final CircumflexQueue queue;
  private final Supplier<Resource> cluster;
  private final ResourceCalculator calculator;
  private Resource minimumAllocation;
  private long slotMb = 1;

  AskMatcher(CircumflexQueue queue, Supplier<Resource> cluster, ResourceCalculator calculator) {
    this.queue = queue;
    this.cluster = cluster;
    this.calculator = calculator;
  }

  /** Sets the smallest container, which is also the engine's slot. */
  void configure(Resource minimum) {
    minimumAllocation = minimum;
    slotMb = Math.max(1, minimum.getMemorySize());
  }

  /** Memory of one engine slot, MB. */
  long slotMb() {
    return slotMb;
  }

  /** Whether the smallest container still fits on {@code node}. */
  boolean fits(FiCaSchedulerNode node) {
    return Resources.greaterThanOrEqual(calculator, cluster.get(), node.getUnallocatedResource(), minimumAllocation);
  }

  /** Slots in {@code capability}. */
  int slotsOf(Resource capability) {
    return (int) Math.min(Integer.MAX_VALUE, capability.getMemorySize() / slotMb);
  }

  /** Task slots of {@code node} when {@code heldForAmsMb} of its memory is held for AMs. */
  int taskSlots(FiCaSchedulerNode node, long heldForAmsMb) {
    return (int) Math.max(0, Math.min(Integer.MAX_VALUE,
        (node.getTotalResource().getMemorySize() - heldForAmsMb) / slotMb));
  }

  /** The engine phase of an ask's priority. */
  static int phaseOf(SchedulerRequestKey key) {
    return key.getPriority().getPriority() == CircumflexScheduler.MR_REDUCE_PRIORITY
        ? NativeEngine.REDUCE : NativeEngine.MAP;
  }

  /** Outstanding ANY asks per phase; null while the attempt still waits for its AM container. */
  static int[] pendingPerPhase(FifoAppAttempt attempt) {
    if (attempt.isWaitingForAMContainer()) {
      return null;
    }
    int[] pending = new int[2];
    for (SchedulerRequestKey key : attempt.getSchedulerKeys()) {
      pending[phaseOf(key)] += attempt.getOutstandingAsksCount(key, ResourceRequest.ANY);
    }
    return pending;
  }

  /**
   * Places up to {@code max} containers of {@code key} on {@code node}: node-local asks, then
   * rack-local if {@code allowed} permits, then off-switch if it permits any. Hands each container to
   * {@code placement}; returns the number placed.
   */
  int assign(FiCaSchedulerNode node, FifoAppAttempt attempt, SchedulerRequestKey key, int max, int allowed,
      Placement placement) {
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
          local.getPerAllocationResource(), NativeEngine.NODE_LOCAL, placement);
    }
    PendingAsk rack = attempt.getPendingAsk(key, node.getRackName());
    int rackRoom = Math.min(rack.getCount(), attempt.getPendingAsk(key, ResourceRequest.ANY).getCount());
    if (allowed >= NativeEngine.RACK_LOCAL && rackRoom > 0 && total < max) {
      total += allocate(node, attempt, key, Math.min(max - total, rackRoom), NodeType.RACK_LOCAL,
          rack.getPerAllocationResource(), NativeEngine.RACK_LOCAL, placement);
    }
    any = attempt.getPendingAsk(key, ResourceRequest.ANY);
    if ((allowed >= NativeEngine.ANY || placeFree) && any.getCount() > 0 && total < max) {
      int reported = placeFree ? NativeEngine.NODE_LOCAL : NativeEngine.ANY;
      total += allocate(node, attempt, key, Math.min(max - total, any.getCount()), NodeType.OFF_SWITCH,
          any.getPerAllocationResource(), reported, placement);
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
      NodeType type, Resource capability, int locality, Placement placement) {
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
      queue.allocated(rmContainer.getAllocatedResource());
      done++;
      if (LOG.isDebugEnabled()) {
        LOG.debug("allocated {} on {} ({}, priority {})", id, node.getNodeName(), type,
            key.getPriority().getPriority());
      }
      placement.placed(rmContainer, node, key, locality);
    }
    return done;
  }
}
