package io.circumflex.it.mrv1;

import static org.junit.Assert.assertTrue;

import java.util.Collection;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.mapred.JobInProgress;
import org.apache.hadoop.mapred.RunningJob;
import org.junit.ClassRule;
import org.junit.Test;

/**
 * {@code fair} on a real MiniMRCluster: concurrent identical SleepJobs all succeed and share the map
 * slots: each job's first map launches before the previous job's last map launches (FIFO launches
 * every map of the earlier job first, see {@link FifoSchedulingIT}), so their execution intervals
 * overlap.
 */
public class FairSchedulingIT {
  @ClassRule
  public static final Mrv1Cluster.PerClass CLUSTER = new Mrv1Cluster.PerClass(Collections.singletonMap("circumflex.policy", "fair"));

  @Test
  public void concurrentJobsShareTheClusterAndAllSucceed() throws Exception {
    // As in the fifo test, each job is submitted once the previous one is RUNNING.
    // 16 maps of 2.5 s on 4 map slots: four waves, so the next job is RUNNING while maps still wait.
    List<RunningJob> jobs = CLUSTER.get().submitInSequence("fair", 3, 16, 1, 2500, 500);
    Collection<JobInProgress> queued = CLUSTER.get().scheduler().getJobs("default");
    assertTrue("getJobs lists the running jobs: " + queued.size(), queued.size() >= 1);
    List<Mrv1Cluster.JobTimes> times = CLUSTER.get().awaitSuccess(jobs);
    for (int i = 1; i < times.size(); i++) {
      assertTrue("fair launches maps of the next job while the previous still has maps waiting: " + times,
          times.get(i).firstMapStart < times.get(i - 1).lastMapStart);
      assertTrue("execution intervals overlap: " + times,
          times.get(i).firstTaskStart < times.get(i - 1).lastTaskFinish);
    }
    assertTrue("the engine stayed in charge: " + CLUSTER.get().scheduler().getFallbackReason(),
        CLUSTER.get().scheduler().isEngineActive());
  }
}
