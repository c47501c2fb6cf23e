package io.circumflex.it.mrv1;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.mapred.JobInProgress;
import org.apache.hadoop.mapred.RunningJob;
import org.codehaus.jackson.JsonNode;
import org.codehaus.jackson.map.ObjectMapper;
import org.junit.ClassRule;
import org.junit.Test;

/**
 * {@code fifo} on a real MiniMRCluster: concurrent SleepJobs with maps and reduces all succeed,
 * identical jobs get their maps and finish in submission order, and a malformed per-job value is refused at
 * submission with a message naming the key.
 */
public class FifoSchedulingIT {
  @ClassRule
  public static final Mrv1Cluster.PerClass CLUSTER = new Mrv1Cluster.PerClass(fifoWithoutLocalityDelay());

  /**
   * SleepJob maps have no input locality, so delay scheduling would only let a newly RUNNING job
   * wait out its skips while later jobs take the slots; with both delays 0 the test sees FIFO alone.
   */
  private static Map<String, String> fifoWithoutLocalityDelay() {
    Map<String, String> conf = new HashMap<String, String>();
    conf.put("circumflex.policy", "fifo");
    conf.put("circumflex.locality.node.delay", "0");
    conf.put("circumflex.locality.rack.delay", "0");
    return conf;
  }

  @Test
  public void identicalJobsFinishInSubmissionOrder() throws Exception {
    assertTrue(CLUSTER.get().scheduler().getFallbackReason(), CLUSTER.get().scheduler().isEngineActive());
    // Each job is submitted once the previous one is RUNNING (Hadoop's own FIFO scheduler also skips
    // jobs still in PREP). With 8 maps of 2 s on 4 map slots, the next job arrives while the previous
    // one still has maps waiting.
    List<RunningJob> jobs = CLUSTER.get().submitInSequence("fifo", 3, 8, 1, 2000, 500);
    List<Mrv1Cluster.JobTimes> times = CLUSTER.get().awaitSuccess(jobs);
    for (int i = 1; i < times.size(); i++) {
      assertTrue("submission order " + times, times.get(i - 1).submit <= times.get(i).submit);
      assertTrue("fifo finishes in submission order: " + times, times.get(i - 1).finish <= times.get(i).finish);
      assertTrue("fifo launches every map of a job before any map of a later job: " + times,
          times.get(i - 1).lastMapStart <= times.get(i).firstMapStart);
    }
    assertTrue("the engine stayed in charge: " + CLUSTER.get().scheduler().getFallbackReason(),
        CLUSTER.get().scheduler().isEngineActive());
    assertEngineSawEveryTask(CLUSTER.get().scheduler().getEngineStatusJson(), jobs, 8, 1);
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
      CLUSTER.get().submitSleep("bad-weight", 1, 1, 10, 10, Collections.singletonMap("circumflex.job.weight", "heavy"));
      fail("a non-numeric weight must be refused");
    } catch (IOException e) {
      String msg = String.valueOf(e.getMessage());
      assertTrue(msg, msg.contains("circumflex.job.weight"));
      assertTrue(msg, msg.contains("heavy"));
    }
    assertTrue("a bad job does not disturb the scheduler", CLUSTER.get().scheduler().isEngineActive());
    for (JobInProgress jip : CLUSTER.get().scheduler().getJobs(null)) {
      assertTrue("the rejected job is not queued: " + jip.getJobID(),
          !"bad-weight".equals(jip.getProfile().getJobName()));
    }
    RunningJob ok = CLUSTER.get().submitSleep("after-bad", 1, 1, 10, 10, null);
    Mrv1Cluster.await(ok);
    assertEquals(true, ok.isSuccessful());
  }
}
