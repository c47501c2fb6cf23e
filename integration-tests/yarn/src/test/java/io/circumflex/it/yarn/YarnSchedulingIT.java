package io.circumflex.it.yarn;

import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import io.circumflex.it.yarn.MiniCircumflexCluster.JobResult;
import io.circumflex.it.yarn.MiniCircumflexCluster.JobSpec;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.Test;

/**
 * Real MapReduce sleep jobs on a MiniMRYarnCluster scheduled by Circumflex: three identical jobs
 * submitted concurrently must all succeed; under fifo they finish in submission order, under fair
 * their task execution intervals overlap; with a native policy that panics, the ResourceManager
 * keeps running in FIFO fallback and the jobs still succeed.
 */
public class YarnSchedulingIT {
  /** Identical jobs: more maps than the 4 task slots, so the policy's order shows. */
  private static List<JobSpec> identicalJobs() {
    return identicalJobs(1500);
  }

  private static List<JobSpec> identicalJobs(long taskMs) {
    List<JobSpec> jobs = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      jobs.add(new JobSpec("sleep-" + i, 6, 0, taskMs));
    }
    return jobs;
  }

  private static Map<String, String> policy(String name) {
    Map<String, String> keys = new HashMap<>();
    keys.put("circumflex.policy", name);
    keys.put("circumflex.epoch.ms", "1000");
    return keys;
  }

  private static List<JobResult> runWorkload(String policy, List<JobSpec> jobs, long staggerMs) throws Exception {
    try (MiniCircumflexCluster cluster = MiniCircumflexCluster.start("it-" + policy, policy(policy), 3)) {
      List<JobResult> results = cluster.run(jobs, staggerMs);
      for (JobResult r : results) {
        System.out.println(policy + ": " + r);
        assertTrue(policy + ": job must succeed: " + r, r.success);
      }
      assertFalse("no fallback under " + policy + ": " + cluster.scheduler().getFallbackCause(),
          cluster.scheduler().isFallbackActive());
      return results;
    }
  }

  @Test
  public void fifoFinishesIdenticalJobsInSubmissionOrder() throws Exception {
    // 3 s apart, so each AM asks for its maps before the next one does (AMs start in about 5 s).
    List<JobResult> results = runWorkload("fifo", identicalJobs(), 3000);
    for (int i = 1; i < results.size(); i++) {
      assertTrue("fifo: " + results.get(i - 1) + " must finish before " + results.get(i),
          results.get(i - 1).lastTaskFinishMs <= results.get(i).lastTaskFinishMs);
    }
  }

  @Test
  public void fairOverlapsTheJobsExecutionIntervals() throws Exception {
    // Submitted together, with tasks long enough that every job is still running when the last AM
    // starts, even when a loaded machine delays AM start-up by 20 s (seen in CI-like runs).
    List<JobResult> results = runWorkload("fair", identicalJobs(3000), 500);
    // Every pair of jobs ran tasks at the same time: each started before the other finished.
    for (int i = 0; i < results.size(); i++) {
      for (int j = i + 1; j < results.size(); j++) {
        JobResult a = results.get(i);
        JobResult b = results.get(j);
        assertTrue("fair: task intervals must overlap: " + a + " / " + b,
            a.firstTaskStartMs < b.lastTaskFinishMs && b.firstTaskStartMs < a.lastTaskFinishMs);
      }
    }
  }

  @Test
  public void nativePanicFallsBackToFifoAndJobsStillSucceed() throws Exception {
    try (MiniCircumflexCluster cluster =
        MiniCircumflexCluster.start("it-fallback", Collections.singletonMap("circumflex.policy", "test-panic"), 2)) {
      List<JobResult> results = cluster.run(identicalJobs().subList(0, 2), 500);
      for (JobResult r : results) {
        assertTrue("job must succeed in fallback: " + r, r.success);
      }
      assertTrue("the fallback must be exposed", cluster.scheduler().isFallbackActive());
      String cause = cluster.scheduler().getFallbackCause();
      assertTrue(cause, cause.contains("deliberate panic"));
      assertTrue("the FIFO fallback allocated the tasks", cluster.scheduler().getFallbackAllocations() > 0);
    }
  }
}
