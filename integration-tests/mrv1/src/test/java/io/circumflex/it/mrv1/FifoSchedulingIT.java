package io.circumflex.it.mrv1;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.mapred.JobInProgress;
import org.apache.hadoop.mapred.RunningJob;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * {@code fifo} on a real MiniMRCluster: concurrent SleepJobs with maps and reduces all succeed,
 * identical jobs finish in submission order, and a malformed per-job value is refused at
 * submission with a message naming the key.
 */
public class FifoSchedulingIT {
  private static Mrv1Cluster cluster;

  @BeforeClass
  public static void startCluster() throws IOException {
    cluster = new Mrv1Cluster(2, 2, 1, Collections.singletonMap("circumflex.policy", "fifo"));
  }

  @AfterClass
  public static void stopCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  public void identicalJobsFinishInSubmissionOrder() throws Exception {
    assertTrue(cluster.scheduler().getFallbackReason(), cluster.scheduler().isEngineActive());
    List<RunningJob> jobs = new ArrayList<RunningJob>();
    for (int i = 0; i < 3; i++) {
      jobs.add(cluster.submitSleep("fifo-" + i, 4, 1, 1500, 500, null));
      Thread.sleep(300);
    }
    List<Mrv1Cluster.JobTimes> times = new ArrayList<Mrv1Cluster.JobTimes>();
    for (RunningJob job : jobs) {
      Mrv1Cluster.await(job);
      assertTrue(job.getID() + " succeeded", job.isSuccessful());
      times.add(cluster.times(job.getID()));
    }
    for (int i = 1; i < times.size(); i++) {
      assertTrue("submission order " + times, times.get(i - 1).submit <= times.get(i).submit);
      assertTrue("fifo finishes in submission order: " + times, times.get(i - 1).finish <= times.get(i).finish);
      assertTrue("fifo starts maps in submission order: " + times,
          times.get(i - 1).firstMapStart <= times.get(i).firstMapStart);
    }
    assertTrue("the engine stayed in charge: " + cluster.scheduler().getFallbackReason(),
        cluster.scheduler().isEngineActive());
    String status = cluster.scheduler().getEngineStatusJson();
    assertTrue(status, status.contains("fifo"));
  }

  @Test
  public void malformedPerJobValueIsRejectedAtSubmissionNamingTheKey() throws Exception {
    try {
      cluster.submitSleep("bad-weight", 1, 1, 10, 10, Collections.singletonMap("circumflex.job.weight", "heavy"));
      fail("a non-numeric weight must be refused");
    } catch (IOException e) {
      String msg = String.valueOf(e.getMessage());
      assertTrue(msg, msg.contains("circumflex.job.weight"));
      assertTrue(msg, msg.contains("heavy"));
    }
    assertTrue("a bad job does not disturb the scheduler", cluster.scheduler().isEngineActive());
    for (JobInProgress jip : cluster.scheduler().getJobs(null)) {
      assertTrue("the rejected job is not queued: " + jip.getJobID(),
          !"bad-weight".equals(jip.getProfile().getJobName()));
    }
    RunningJob ok = cluster.submitSleep("after-bad", 1, 1, 10, 10, null);
    Mrv1Cluster.await(ok);
    assertEquals(true, ok.isSuccessful());
  }
}
