package io.circumflex.scan;

/** Counters of shared-scan work, in each job's own counters (group {@code io.circumflex.scan.ScanCounter}). */
public enum ScanCounter {
  /** Rider jobs whose map function a C-map ran on its split (driver side, per rider and split). */
  RIDERS_SERVED,
  /** Riders a C-map gave up on (their mapper failed or could not be loaded); they re-compute. */
  RIDERS_DROPPED,
  /** Splits whose map output this job's reduces took from a driver (counted by reduce 0). */
  SPLITS_RIDDEN,
  /** Splits a reduce of this job re-computed because no driver served them (per reduce). */
  SPLITS_RECOMPUTED,
  /** Dataset bytes those re-computations read (split lengths; per reduce). */
  RECOMPUTED_SPLIT_BYTES
}
