package org.apache.hadoop.mapred;

/**
 * What the MRv1 shim remembers of Hadoop's objects for the engine: jobs, trackers and the attempts it
 * launched, with their engine ids (a refresh that ends a fallback replays them into a new engine).
 */
final class Tracked {
  private Tracked() {}

  /** A job as the scheduler tracks it. */
  static final class TrackedJob {
    final JobInProgress jip;
    /** Submission time as told to the engine ({@code CircumflexTaskScheduler.submissionTime}); a refresh replays it. */
    final long submittedAt;
    /** Engine id, or -1 when the engine has not seen the job (fallback). */
    int engineId = -1;
    int sentPendingMap = -1;
    int sentPendingReduce = -1;
    Boolean sentReady;
    boolean finished;

    TrackedJob(JobInProgress jip, long submittedAt) {
      this.jip = jip;
      this.submittedAt = submittedAt;
    }
  }

  /** A tracker as the scheduler tracks it. */
  static final class TrackedNode {
    final String trackerName;
    final String host;
    final String rack;
    int engineId = -1;
    int mapSlots;
    int reduceSlots;

    TrackedNode(String trackerName, String host, String rack) {
      this.trackerName = trackerName;
      this.host = host;
      this.rack = rack;
    }
  }

  /** An attempt this scheduler launched. */
  static final class Launched {
    final TrackedJob job;
    final int phase;
    final TrackedNode node;
    final int locality;
    final long launchedAt;
    /**
     * Killed (or being killed) for an engine preemption decision: its end is reported as preempted, not
     * as a task end, unless it succeeded first.
     */
    boolean preempted;

    Launched(TrackedJob job, int phase, TrackedNode node, int locality, long launchedAt) {
      this.job = job;
      this.phase = phase;
      this.node = node;
      this.locality = locality;
      this.launchedAt = launchedAt;
    }
  }
}
