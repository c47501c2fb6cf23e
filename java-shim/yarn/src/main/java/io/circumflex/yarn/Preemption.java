package io.circumflex.yarn;

import io.circumflex.CircumflexException;
import io.circumflex.nativeapi.NativeEngine;
import io.circumflex.shim.EngineGuard;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoAppAttempt;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries out the engine's preemption decisions on YARN ({@code circumflex.preemption.*},
 * {@code docs/preemption.md}). The engine decides which job gives how many tasks of which phase back,
 * and for whom; this class only applies that with YARN's own means:
 * <ol>
 *   <li>On the scheduler's update timer, after the tick, it asks the engine ({@link #decide}); for each
 *       decision it takes the victim application's {@code count} youngest running task containers of
 *       that phase (by the start the engine was told; AM containers never: the engine's decisions
 *       are about tasks, and an AM container is not one) that were not asked back already.</li>
 *   <li>Those containers go to their AM as a <b>strict preemption set</b>: {@link #strictFor} is the
 *       third argument of {@code allocate}'s {@code Allocation}, resent on every {@code allocate} until
 *       the container is gone, as the FairScheduler does.</li>
 *   <li>After {@code circumflex.preemption.grace.ms} ({@link #killDue}) those still running are killed
 *       with {@code SchedulerUtils.createPreemptedContainerStatus} (exit status {@code PREEMPTED}, -102),
 *       never {@code createKilledContainerStatus} (-106): with -102 the MapReduce AM ends the attempt
 *       KILLED and re-runs it without counting it toward {@code mapreduce.*.maxattempts}; with -106 a
 *       running attempt ends FAILED.</li>
 *   <li>A container asked back that ends before it is killed for any reason but success (the kill
 *       above, or its AM giving it up) is reported to the engine as preempted ({@link #gone} tells the
 *       bridge), so the engine re-queues the task and earmarks the freed slot for the beneficiary: that
 *       node's next heartbeat offers it to the beneficiary first. A container that succeeded first is
 *       an ordinary task end.</li>
 * </ol>
 *
 * <p>Off ({@code circumflex.preemption.enabled=false}, the default) the engine decides nothing, so
 * nothing here does anything and every {@code allocate} passes {@code null} as before.
 *
 * <p>Threads: {@link #decide}, {@link #killDue} and {@link #gone} run under the scheduler's lock;
 * {@link #strictFor} runs on {@code allocate}'s IPC threads, which is why the per-application sets are
 * concurrent.
 */
final class Preemption {
  private static final Logger LOG = LoggerFactory.getLogger(Preemption.class);
  /** Most decisions read per native call (more are kept natively and read by the next call). */
  private static final int MAX_DECISIONS = 64;

  private final EngineGuard guard;
  private final EngineBridge bridge;
  private final int[] decisions = new int[MAX_DECISIONS * NativeEngine.PREEMPTION_STRIDE];
  private volatile long graceMs = 15_000;

  /** Containers asked back and not yet gone, with when they were asked (insertion order = ask order). */
  private final Map<ContainerId, Long> asked = new LinkedHashMap<>();
  /** The same containers per application, for {@code allocate} (IPC threads read it). */
  private final Map<ApplicationId, Set<ContainerId>> strict = new ConcurrentHashMap<>();

  Preemption(EngineGuard guard, EngineBridge bridge) {
    this.guard = guard;
    this.bridge = bridge;
  }

  /** Reads the grace period from the scheduler configuration (the engine validated the key). */
  void configure(Configuration conf) {
    graceMs = Math.max(0, conf.getLong("circumflex.preemption.grace.ms", 15_000));
  }

  /**
   * Asks the engine for decisions at {@code now} and asks their containers back. Timer only, after the
   * tick.
   */
  void decide(Map<ApplicationId, SchedulerApplication<FifoAppAttempt>> applications, long now) {
    NativeEngine engine = guard.engine();
    if (engine == null) {
      return;
    }
    bridge.flush();
    int written;
    do {
      try {
        written = engine.preemptions(now, decisions);
      } catch (CircumflexException | IllegalArgumentException | LinkageError e) {
        guard.failed("preemptions", e, engine);
        return;
      }
      for (int i = 0; i < written; i++) {
        int base = i * NativeEngine.PREEMPTION_STRIDE;
        apply(applications, decisions[base], decisions[base + 1], decisions[base + 2], decisions[base + 3], now);
      }
    } while (written == MAX_DECISIONS);
  }

  private void apply(Map<ApplicationId, SchedulerApplication<FifoAppAttempt>> applications, int victim, int phase,
      int count, int beneficiary, long now) {
    ApplicationId appId = bridge.appOf(victim);
    SchedulerApplication<FifoAppAttempt> app = appId == null ? null : applications.get(appId);
    FifoAppAttempt attempt = app == null ? null : app.getCurrentAppAttempt();
    if (attempt == null) {
      return; // the victim left meanwhile; the decision expires in the engine
    }
    List<Candidate<ContainerId>> candidates = new ArrayList<>();
    synchronized (attempt) {
      for (RMContainer c : attempt.getLiveContainers()) {
        ContainerId id = c.getContainerId();
        candidates.add(new Candidate<>(id, bridge.taskPhase(id), bridge.taskStartMs(id), c.isAMContainer()));
      }
    }
    List<ContainerId> chosen = youngestFirst(candidates, phase, count, asked.keySet());
    for (ContainerId id : chosen) {
      ask(id, now);
    }
    LOG.info("Circumflex preemption: asking {} of {} {} containers of {} (engine job {}) back for engine job {}: {}",
        chosen.size(), count, phase == NativeEngine.REDUCE ? "reduce" : "map", appId, victim, beneficiary, chosen);
  }

  /** Asks {@code id} back at {@code now}: it joins its application's strict preemption set. */
  void ask(ContainerId id, long now) {
    asked.put(id, now);
    strict.computeIfAbsent(id.getApplicationAttemptId().getApplicationId(), k -> ConcurrentHashMap.newKeySet())
        .add(id);
  }

  /** Containers asked back at least the grace period before {@code now}, in ask order. */
  List<ContainerId> due(long now) {
    List<ContainerId> due = new ArrayList<>();
    for (Map.Entry<ContainerId, Long> e : asked.entrySet()) {
      if (now - e.getValue() >= graceMs) {
        due.add(e.getKey());
      }
    }
    return due;
  }

  /**
   * Kills, with the {@code PREEMPTED} exit status, every container asked back at least the grace period
   * ago that is still running. Timer only. {@code scheduler} completes the container, which reaches
   * {@link #gone} and the bridge (the engine hears a preemption, not a failure).
   */
  void killDue(CircumflexScheduler scheduler, long now) {
    if (asked.isEmpty()) {
      return;
    }
    if (!guard.isActive()) {
      // The engine that decided is gone (fallback): its decisions die with it, nothing is killed.
      asked.clear();
      strict.clear();
      return;
    }
    for (ContainerId id : due(now)) {
      RMContainer container = scheduler.getRMContainer(id);
      if (container == null) {
        gone(id); // completed without our hearing of it (application gone)
        continue;
      }
      LOG.info("Circumflex preemption: killing {} after the grace period ({} ms)", id, graceMs);
      scheduler.completedContainer(container,
          SchedulerUtils.createPreemptedContainerStatus(id, SchedulerUtils.PREEMPTED_CONTAINER),
          RMContainerEventType.KILL);
      gone(id); // completedContainer reached gone() already unless the container had completed meanwhile
    }
    bridge.flush();
  }

  /**
   * The strict preemption set of {@code attemptId}'s application for {@code allocate}: the containers
   * asked back and not yet gone, or null when there are none (as before preemption existed).
   */
  Set<ContainerId> strictFor(ApplicationAttemptId attemptId) {
    Set<ContainerId> set = strict.get(attemptId.getApplicationId());
    if (set == null || set.isEmpty()) {
      return null;
    }
    Set<ContainerId> copy = new HashSet<>();
    for (ContainerId id : set) {
      if (id.getApplicationAttemptId().equals(attemptId)) {
        copy.add(id);
      }
    }
    return copy.isEmpty() ? null : copy;
  }

  /** A container completed (any cause); returns whether it had been asked back. */
  boolean gone(ContainerId id) {
    if (asked.remove(id) == null) {
      return false;
    }
    ApplicationId appId = id.getApplicationAttemptId().getApplicationId();
    Set<ContainerId> set = strict.get(appId);
    if (set != null) {
      set.remove(id);
      if (set.isEmpty()) {
        strict.remove(appId, set);
      }
    }
    return true;
  }

  /** An application left: forgets what was asked of it. */
  void applicationDone(ApplicationId appId) {
    strict.remove(appId);
    for (Iterator<ContainerId> it = asked.keySet().iterator(); it.hasNext(); ) {
      if (it.next().getApplicationAttemptId().getApplicationId().equals(appId)) {
        it.remove();
      }
    }
  }

  /** Containers asked back and not yet gone (tests, status). */
  int inFlight() {
    return asked.size();
  }

  /** A running container of the victim application, as the choice sees it. */
  static final class Candidate<K> {
    final K id;
    /** Engine phase code, or -1 when the engine does not know it as a task. */
    final int phase;
    final long startMs;
    final boolean am;

    Candidate(K id, int phase, long startMs, boolean am) {
      this.id = id;
      this.phase = phase;
      this.startMs = startMs;
      this.am = am;
    }
  }

  /**
   * The host's half of "youngest first" (the engine counted the same tasks): up to {@code count} task
   * containers of {@code phase}, latest start first, skipping AM containers, containers the engine does
   * not know as tasks and those in {@code skip} (already asked back).
   */
  static <K> List<K> youngestFirst(List<Candidate<K>> candidates, int phase, int count, Set<K> skip) {
    List<Candidate<K>> eligible = new ArrayList<>();
    for (Candidate<K> c : candidates) {
      if (!c.am && c.phase == phase && !skip.contains(c.id)) {
        eligible.add(c);
      }
    }
    Collections.sort(eligible, Comparator.comparingLong((Candidate<K> c) -> c.startMs).reversed());
    List<K> out = new ArrayList<>(Math.min(Math.max(count, 0), eligible.size()));
    for (int i = 0; i < eligible.size() && i < count; i++) {
      out.add(eligible.get(i).id);
    }
    return out;
  }
}
