package io.circumflex.it.yarn;

import static org.junit.Assert.assertTrue;

import io.circumflex.it.yarn.MiniCircumflexCluster.JobResult;
import io.circumflex.it.yarn.MiniCircumflexCluster.JobSpec;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.Test;

/**
 * Real MapReduce sleep jobs on a MiniMRYarnCluster whose Circumflex scheduler runs a native policy that
 * panics: the ResourceManager keeps running in FIFO fallback, exposes the cause, and the jobs still
 * succeed. (Its own cluster, started with that policy: the fallback must come from a daemon that started
 * on it. Moved out of {@link YarnSchedulingIT}, whose tests now share one cluster.)
 */
public class YarnFallbackIT {
  /** Two identical jobs of 6 maps of 1.5 s: more maps than the task slots. */
  private static List<JobSpec> jobs() {
    List<JobSpec> jobs = new ArrayList<>();
    for (int i = 1; i <= 2; i++) {
      jobs.add(new JobSpec("sleep-" + i, 6, 0, 1500));
    }
    return jobs;
  }

  @Test
  public void nativePanicFallsBackToFifoAndJobsStillSucceed() throws Exception {
    try (MiniCircumflexCluster cluster =
        MiniCircumflexCluster.start("it-fallback", Collections.singletonMap("circumflex.policy", "test-panic"), 2)) {
      List<JobResult> results = cluster.run(jobs(), 500);
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
