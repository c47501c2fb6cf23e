package io.circumflex.shim;

import io.circumflex.CircumflexException;
import io.circumflex.nativeapi.NativeEngine;

/**
 * A heartbeat's task events, sent to the engine in two native calls (one for the ends, one for the
 * starts; a third for tasks killed for a preemption, which end as preempted rather than finished)
 * instead of one per task: the shims add records as Hadoop reports them and {@link #flush}
 * before any other engine call, so the engine sees events in the order they happened (ends of earlier
 * starts first; starts are only added while the engine's answer for a node is applied, after which the
 * shim flushes).
 *
 * <p>The record arrays are owned here and reused; they grow (doubling) only when a heartbeat carries
 * more events than any before, so a steady heartbeat allocates nothing. Not thread-safe: the shims use
 * it under their scheduler lock.
 */
public final class TaskBatch {
  private int[] started = new int[64 * NativeEngine.STARTED_STRIDE];
  private int startedCount;
  private long startedAt;
  private long[] finished = new long[64 * NativeEngine.FINISHED_STRIDE];
  private int finishedCount;
  private long[] preempted = new long[16 * NativeEngine.PREEMPTED_STRIDE];
  private int preemptedCount;

  /** Adds a task start at {@code now}; a start at another time first flushes the buffered ones. */
  public void started(EngineGuard guard, int job, int phase, int node, int locality, long now) {
    if (startedCount > 0 && now != startedAt) {
      flush(guard);
    }
    if ((startedCount + 1) * NativeEngine.STARTED_STRIDE > started.length) {
      started = java.util.Arrays.copyOf(started, started.length * 2);
    }
    int at = startedCount * NativeEngine.STARTED_STRIDE;
    started[at] = job;
    started[at + 1] = phase;
    started[at + 2] = node;
    started[at + 3] = locality;
    startedCount++;
    startedAt = now;
  }

  /** Adds a task end at {@code now} after {@code durationMs}. */
  public void finished(int job, int phase, int node, long durationMs, boolean success, long now) {
    if ((finishedCount + 1) * NativeEngine.FINISHED_STRIDE > finished.length) {
      finished = java.util.Arrays.copyOf(finished, finished.length * 2);
    }
    int at = finishedCount * NativeEngine.FINISHED_STRIDE;
    finished[at] = job;
    finished[at + 1] = phase;
    finished[at + 2] = node;
    finished[at + 3] = durationMs;
    finished[at + 4] = success ? 1 : 0;
    finished[at + 5] = now;
    finishedCount++;
  }

  /**
   * Adds a task killed for a preemption at {@code now} after running {@code ranMs}: the engine re-queues
   * it, counts its work as lost and earmarks its slot for the decision's beneficiary
   * ({@code docs/preemption.md}); report it here instead of with {@link #finished}.
   */
  public void preempted(int job, int phase, int node, long ranMs, long now) {
    if ((preemptedCount + 1) * NativeEngine.PREEMPTED_STRIDE > preempted.length) {
      preempted = java.util.Arrays.copyOf(preempted, preempted.length * 2);
    }
    int at = preemptedCount * NativeEngine.PREEMPTED_STRIDE;
    preempted[at] = job;
    preempted[at + 1] = phase;
    preempted[at + 2] = node;
    preempted[at + 3] = Math.max(0, ranMs);
    preempted[at + 4] = now;
    preemptedCount++;
  }

  /** Whether events wait to be sent. */
  public boolean isEmpty() {
    return startedCount == 0 && finishedCount == 0 && preemptedCount == 0;
  }

  /**
   * Sends the buffered ends, then the buffered preemption kills, then the buffered starts, each in one
   * native call, through the guard's
   * regime; the buffer is empty afterwards whatever happened (in fallback the events are dropped: the
   * engine that would need them is gone, and a recovery replays the running tasks).
   */
  public void flush(EngineGuard guard) {
    if (isEmpty()) {
      return;
    }
    NativeEngine engine = guard.engine();
    try {
      if (engine != null && finishedCount > 0) {
        engine.tasksFinished(finished, finishedCount);
      }
      if (engine != null && preemptedCount > 0) {
        engine.tasksPreempted(preempted, preemptedCount);
      }
      if (engine != null && startedCount > 0) {
        engine.tasksStarted(started, startedCount, startedAt);
      }
    } catch (CircumflexException | IllegalArgumentException | LinkageError e) {
      guard.failed("taskEvents", e, engine);
    } finally {
      startedCount = 0;
      finishedCount = 0;
      preemptedCount = 0;
    }
  }
}
