package io.circumflex.it.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import io.circumflex.it.yarn.MiniCircumflexCluster.JobSpec;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobCounter;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.server.nodemanager.NodeManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.junit.Test;

/**
 * Node loss on a real MiniMRYarnCluster with two NodeManagers (issue 11): while a job's maps run
 * on both nodes, the NodeManager that does not host the job's ApplicationMaster is stopped. Its
 * containers are lost, the scheduler removes the node from the engine (re-planning on the smaller
 * cluster), the MapReduce AM re-runs the lost tasks on the remaining node, and the job succeeds
 * with no fallback to FIFO.
 */
public class NodeLossIT {
  private static final long WAIT_MS = 120_000;
  private static final int NODE_MANAGERS = 2;

  @Test
  public void jobSurvivesTheLossOfANodeManagerMidRun() throws Exception {
    Map<String, String> keys = new HashMap<>();
    keys.put("circumflex.policy", "fair");
    keys.put("circumflex.epoch.ms", "1000");
    try (MiniCircumflexCluster cluster = MiniCircumflexCluster.start("it-node-loss", keys, 1, NODE_MANAGERS)) {
      Job job = cluster.sleepJob(new JobSpec("survivor", 10, 1, 4000), Collections.<String, String>emptyMap());
      job.submit();
      NodeManager victim = awaitTaskOnNodeWithoutAm(cluster, job);
      NodeId lost = victim.getNMContext().getNodeId();
      System.out.println("node loss: stopping " + lost + " while it runs tasks of " + job.getJobID());
      victim.stop();
      assertTrue("the job must succeed after the node loss", job.waitForCompletion(false));
      long killed = job.getCounters().findCounter(JobCounter.NUM_KILLED_MAPS).getValue()
          + job.getCounters().findCounter(JobCounter.NUM_FAILED_MAPS).getValue();
      System.out.println("node loss: " + killed + " map attempts killed or failed and re-run; status "
          + cluster.scheduler().statusJson());
      assertTrue("the lost node's map attempts were re-run elsewhere", killed >= 1);
      assertFalse("no fallback: " + cluster.scheduler().getFallbackCause(), cluster.scheduler().isFallbackActive());
      assertEquals("the scheduler keeps one node", 1, cluster.scheduler().getNumClusterNodes());
      // The application leaves the scheduler shortly after the client sees success.
      long deadline = System.currentTimeMillis() + 30_000;
      String status = cluster.scheduler().statusJson();
      while (status.contains("\"status\":\"active\"") && System.currentTimeMillis() < deadline) {
        Thread.sleep(200);
        status = cluster.scheduler().statusJson();
      }
      assertTrue("the engine marks the lost node dead: " + status, status.contains("\"alive\":false"));
      assertFalse("no job is left active in the engine: " + status, status.contains("\"status\":\"active\""));
    }
  }

  /** Waits until a NodeManager other than the AM's runs a container of the job; returns it. */
  private static NodeManager awaitTaskOnNodeWithoutAm(MiniCircumflexCluster cluster, Job job) throws Exception {
    long deadline = System.currentTimeMillis() + WAIT_MS;
    while (System.currentTimeMillis() < deadline) {
      RMApp app = cluster.yarn().getResourceManager().getRMContext().getRMApps()
          .get(org.apache.hadoop.mapreduce.TypeConverter.toYarn(job.getJobID()).getAppId());
      if (app != null && app.getCurrentAppAttempt() != null
          && app.getCurrentAppAttempt().getMasterContainer() != null) {
        NodeId amNode = app.getCurrentAppAttempt().getMasterContainer().getNodeId();
        for (int i = 0; i < NODE_MANAGERS; i++) {
          NodeManager nm = cluster.yarn().getNodeManager(i);
          NodeId id = nm.getNMContext().getNodeId();
          if (!id.equals(amNode) && nm.getNMContext().getContainers().size() >= 1) {
            return nm;
          }
        }
      }
      Thread.sleep(200);
    }
    throw new AssertionError("no task of " + job.getJobID() + " ran outside the AM's node within " + WAIT_MS + " ms");
  }
}
