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
import org.codehaus.jackson.JsonNode;
import org.codehaus.jackson.map.ObjectMapper;
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
    System.out.println("job times (JobTracker ms): " + times);
    for (int i = 1; i < times.size(); i++) {
      assertTrue("submission order " + times, times.get(i - 1).submit <= times.get(i).submit);
      assertTrue("fifo finishes in submission order: " + times, times.get(i - 1).finish <= times.get(i).finish);
      assertTrue("fifo starts maps in submission order: " + times,
          times.get(i - 1).firstMapStart <= times.get(i).firstMapStart);
    }
    assertTrue("the engine stayed in charge: " + cluster.scheduler().getFallbackReason(),
        cluster.scheduler().isEngineActive());
    assertEngineSawEveryTask(cluster.scheduler().getEngineStatusJson(), jobs, 4, 1);
  }

  /**
   * The engine's own view (status JSON) agrees with Hadoop's: each job finished, with every map
   * and reduce reported finished, so task starts and ends were forwarded from the heartbeats.
   */
  static void assertEngineSawEveryTask(String statusJson, List<RunningJob> jobs, int maps, int reduces)
      throws IOException {
    JsonNode status = new ObjectMapper().readTree(statusJson);
    assertEquals(statusJson, "fifo", status.get("policy").getTextValue());
    for (RunningJob job : jobs) {
      JsonNode found = null;
      for (JsonNode j : status.get("jobs")) {
        if (job.getID().toString().equals(j.get("external_id").getTextValue())) {
          found = j;
        }
      }
      assertTrue("engine knows " + job.getID() + ": " + statusJson, found != null);
      assertEquals(found.toString(), "finished", found.get("status").getTextValue());
      assertEquals(found.toString(), maps, found.get("phases").get(0).get("finished").getIntValue());
      assertEquals(found.toString(), reduces, found.get("phases").get(1).get("finished").getIntValue());
      assertEquals(found.toString(), 0, found.get("phases").get(0).get("running").getIntValue());
    }
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
