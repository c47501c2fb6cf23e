package io.circumflex.it.yarn;

import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import io.circumflex.it.yarn.MiniCircumflexCluster.JobResult;
import io.circumflex.it.yarn.MiniCircumflexCluster.JobSpec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * Real MapReduce sleep jobs on a MiniMRYarnCluster scheduled by Circumflex: three identical jobs
 * submitted concurrently must all succeed; under fifo they finish in submission order, under fair
 * their task execution intervals overlap. (With a native policy that panics, the ResourceManager keeps
 * running in FIFO fallback and the jobs still succeed: {@link YarnFallbackIT}.)
 *
 * <p>Both tests run on one cluster, started once (a mini cluster's start and stop cost tens of seconds of
 * {@code make test}), with the same set-up they had each on their own: room for 3 AMs plus 4 task slots,
 * 1 s epochs. Each test waits until the cluster is empty and then switches the scheduler to its policy
 * as {@code yarn rmadmin -refreshQueues} would, so either order passes.
 */
public class YarnSchedulingIT {
  private static MiniCircumflexCluster cluster;

  @BeforeClass
  public static void startCluster() {
    cluster = MiniCircumflexCluster.start("it-policies", policy("fifo"), 3);
  }

  @AfterClass
  public static void stopCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }

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
    cluster.awaitIdle(120_000);
    cluster.reconfigure(policy(policy));
    String status = cluster.scheduler().statusJson();
    assertTrue("the scheduler runs " + policy + ": " + status, status.contains("\"policy\":\"" + policy + "\""));
    List<JobResult> results = cluster.run(jobs, staggerMs);
    for (JobResult r : results) {
      System.out.println(policy + ": " + r);
      assertTrue(policy + ": job must succeed: " + r, r.success);
    }
    assertFalse("no fallback under " + policy + ": " + cluster.scheduler().getFallbackCause(),
        cluster.scheduler().isFallbackActive());
    return results;
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
}
