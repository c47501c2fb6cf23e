package io.circumflex.it.mrv1;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.hadoop.mapred.JobID;
import org.apache.hadoop.mapred.JobInProgress;
import org.apache.hadoop.mapred.JobStatus;
import org.apache.hadoop.mapred.JobTracker;
import org.apache.hadoop.mapred.RunningJob;
import org.junit.Test;

/**
 * JobTracker restart with job recovery on a real Hadoop 1.2.1 MiniMRCluster (issue 11): while a
 * job's maps run, the JobTracker is stopped and a new one started with
 * {@code mapred.jobtracker.restart.recover=true}. Its recovery manager re-submits the job from the
 * system directory; the new JobTracker's Circumflex scheduler (a new instance with a new engine)
 * must receive it through its listener, schedule it, and the job must succeed with the engine in
 * charge, the engine having ended it, and no job left active in the engine.
 */
public class RestartIT {
  private static boolean isFinal(JobInProgress jip) {
    int state = jip.getStatus().getRunState();
    return state == JobStatus.SUCCEEDED || state == JobStatus.FAILED || state == JobStatus.KILLED;
  }

  @Test
  public void jobRecoveredAfterAJobTrackerRestartSucceedsUnderTheEngine() throws Exception {
    Map<String, String> conf = new HashMap<String, String>();
    conf.put("circumflex.policy", "fair");
    Mrv1Cluster cluster = new Mrv1Cluster(2, 2, 1, conf);
    try {
      RunningJob job = cluster.submitSleep("recovered", 8, 1, 3000, 500, null);
      JobID id = job.getID();
      cluster.awaitRunning(job);
      JobInProgress before = cluster.jobTracker().getJob(id);
      long deadline = System.currentTimeMillis() + 60000;
      while (before.runningMaps() < 2 && !isFinal(before) && System.currentTimeMillis() < deadline) {
        Thread.sleep(100);
      }
      assertTrue("maps run before the restart: " + before.runningMaps(), before.runningMaps() >= 2);
      System.out.println("restart: stopping the JobTracker with " + before.runningMaps() + " maps running, "
          + before.finishedMaps() + " finished");
      long submittedBefore = before.getStartTime();
      long stopAt = System.currentTimeMillis();
      cluster.restartJobTrackerWithRecovery();
      System.out.println("restart: new JobTracker up after " + (System.currentTimeMillis() - stopAt) + " ms");

      JobTracker jt = cluster.jobTracker();
      JobInProgress recovered = jt.getJob(id);
      assertNotNull("the new JobTracker recovered " + id, recovered);
      assertTrue("the new scheduler runs the engine: " + cluster.scheduler().getFallbackReason(),
          cluster.scheduler().isEngineActive());
      String during = cluster.scheduler().getEngineStatusJson();
      System.out.println("restart: engine status after recovery " + during);
      assertTrue("the new engine has the recovered job: " + during, during.contains(id.toString()));

      long done = System.currentTimeMillis() + 120000;
      while (!isFinal(recovered) && System.currentTimeMillis() < done) {
        Thread.sleep(200);
      }
      assertEquals("the recovered job succeeds", JobStatus.SUCCEEDED, recovered.getStatus().getRunState());
      assertEquals("all maps finished", recovered.desiredMaps(), recovered.finishedMaps());
      assertTrue("the engine stayed in charge: " + cluster.scheduler().getFallbackReason(),
          cluster.scheduler().isEngineActive());
      long succeededAfter = System.currentTimeMillis() - stopAt;
      // The scheduler ends the job in the engine at the next heartbeat that sees it final.
      long ended = System.currentTimeMillis() + 30000;
      String after = cluster.scheduler().getEngineStatusJson();
      while (after.contains("\"status\":\"active\"") && System.currentTimeMillis() < ended) {
        Thread.sleep(200);
        after = cluster.scheduler().getEngineStatusJson();
      }
      System.out.println("restart: job succeeded " + succeededAfter + " ms after the restart began; engine status "
          + after);
      assertTrue("the new engine ended the recovered job: " + after, after.contains("\"status\":\"finished\""));
      // What Hadoop 1.2.1 recovers (docs/mrv1.md, "JobTracker restart"): the job is re-submitted from
      // the system directory and every task runs again (the trackers are re-initialised, their tasks
      // killed), so no task start time predates the restart and none needs carrying over. The
      // re-submitted JobInProgress starts its clock at recovery; the scheduler gives the engine the
      // original submission instead (the job.xml's write time), so deadlines do not move by the downtime.
      Mrv1Cluster.JobTimes times = cluster.times(id);
      Matcher submit = Pattern.compile("\"external_id\":\"" + id + "\".*?\"submit_ms\":(\\d+)").matcher(after);
      assertTrue("the engine lists the job's submission: " + after, submit.find());
      long engineSubmit = Long.parseLong(submit.group(1));
      System.out.println("restart: original submission " + submittedBefore + ", recovered job's start time "
          + recovered.getStartTime() + ", engine's submission " + engineSubmit + ", first map start "
          + times.firstMapStart + " (restart began " + stopAt + ")");
      assertTrue("every map of the recovered job ran again after the restart: " + times,
          times.firstMapStart >= stopAt);
      assertTrue("the recovered JobInProgress's start time is the recovery's: " + recovered.getStartTime(),
          recovered.getStartTime() >= stopAt);
      assertTrue("the engine counts from the original submission (" + submittedBefore + "), not the recovery: "
          + engineSubmit, engineSubmit <= submittedBefore && engineSubmit > submittedBefore - 10000);
      assertFalse("no job is left active in the engine: " + after, after.contains("\"status\":\"active\""));
    } finally {
      cluster.close();
    }
  }
}
