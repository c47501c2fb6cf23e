package io.circumflex.it.mrv1;

import static org.junit.Assert.assertTrue;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.mapred.JobInProgress;
import org.apache.hadoop.mapred.RunningJob;
import org.junit.ClassRule;
import org.junit.Test;

/**
 * {@code fair} on a real MiniMRCluster: concurrent identical SleepJobs all succeed and their map
 * phases overlap (each job's first map starts before every earlier job's last map ends), which FIFO
 * would not do with more maps per job than the cluster has map slots.
 */
public class FairSchedulingIT {
  @ClassRule
  public static final Mrv1Cluster.PerClass CLUSTER = new Mrv1Cluster.PerClass(Collections.singletonMap("circumflex.policy", "fair"));

  @Test
  public void concurrentJobsShareTheClusterAndAllSucceed() throws Exception {
    List<RunningJob> jobs = new ArrayList<RunningJob>();
    for (int i = 0; i < 3; i++) {
      jobs.add(CLUSTER.get().submitSleep("fair-" + i, 6, 1, 2000, 500, null));
      Thread.sleep(300);
    }
    Thread.sleep(1500);
    Collection<JobInProgress> queued = CLUSTER.get().scheduler().getJobs("default");
    assertTrue("getJobs lists the running jobs: " + queued.size(), queued.size() >= 1);
    List<Mrv1Cluster.JobTimes> times = new ArrayList<Mrv1Cluster.JobTimes>();
    for (RunningJob job : jobs) {
      Mrv1Cluster.await(job);
      assertTrue(job.getID() + " succeeded", job.isSuccessful());
      times.add(CLUSTER.get().times(job.getID()));
    }
    System.out.println("job times (JobTracker ms): " + times);
    for (int i = 0; i < times.size(); i++) {
      for (int j = i + 1; j < times.size(); j++) {
        assertTrue("map phases overlap under fair: " + times.get(i) + " / " + times.get(j),
            times.get(j).firstMapStart < times.get(i).lastMapFinish);
      }
    }
    assertTrue("the engine stayed in charge: " + CLUSTER.get().scheduler().getFallbackReason(),
        CLUSTER.get().scheduler().isEngineActive());
  }
}
