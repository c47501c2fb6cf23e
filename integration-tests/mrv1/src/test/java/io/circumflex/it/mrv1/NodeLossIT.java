package io.circumflex.it.mrv1;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.mapred.JobInProgress;
import org.apache.hadoop.mapred.RunningJob;
import org.junit.Test;

/**
 * Node loss on a real Hadoop 1.2.1 MiniMRCluster with two TaskTrackers (issue 11): while a job's
 * maps run on both trackers, TaskTracker 1 is stopped. The JobTracker declares it lost after the
 * (shortened) expiry interval and fails its tasks; the Circumflex scheduler's tracker sweep removes
 * the node from the engine; the tasks re-run on the remaining tracker and the job succeeds with the
 * engine still in charge.
 */
public class NodeLossIT {
  @Test
  public void jobSurvivesTheLossOfATaskTrackerMidRun() throws Exception {
    Map<String, String> conf = new HashMap<String, String>();
    conf.put("circumflex.policy", "fair");
    // A stopped tracker is declared lost after 6 s instead of 10 min.
    conf.put("mapred.tasktracker.expiry.interval", "6000");
    Mrv1Cluster cluster = new Mrv1Cluster(2, 2, 1, conf);
    try {
      RunningJob job = cluster.submitSleep("survivor", 12, 1, 3000, 500, null);
      cluster.awaitRunning(job);
      JobInProgress jip = cluster.jobTracker().getJob(job.getID());
      long deadline = System.currentTimeMillis() + 120000;
      while (jip.runningMaps() < 3 && !job.isComplete() && System.currentTimeMillis() < deadline) {
        Thread.sleep(100);
      }
      assertTrue("maps run on both trackers before the loss: " + jip.runningMaps(), jip.runningMaps() >= 3);
      System.out.println("node loss: stopping TaskTracker 1 with " + jip.runningMaps() + " maps running");
      cluster.stopTaskTracker(1);
      Mrv1Cluster.await(job);
      assertTrue("the job must succeed after the tracker loss", job.isSuccessful());
      long listed = System.currentTimeMillis() + 30000;
      while (cluster.jobTracker().taskTrackers().size() > 1 && System.currentTimeMillis() < listed) {
        Thread.sleep(200);
      }
      assertEquals("the JobTracker lists only the surviving tracker", 1, cluster.jobTracker().taskTrackers().size());
      String status = cluster.scheduler().getEngineStatusJson();
      System.out.println("node loss: engine status " + status);
      assertTrue("the engine stayed in charge: " + cluster.scheduler().getFallbackReason(),
          cluster.scheduler().isEngineActive());
      assertTrue("the engine marks the lost node dead: " + status, status.contains("\"alive\":false"));
      System.out.println("node loss: finished maps " + jip.finishedMaps() + " of " + jip.desiredMaps());
    } finally {
      cluster.close();
    }
  }
}
