package io.circumflex.it.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotSame;
import static org.junit.Assert.assertTrue;

import io.circumflex.it.yarn.MiniCircumflexCluster.JobSpec;
import io.circumflex.yarn.CircumflexScheduler;
import java.io.File;
import java.net.ServerSocket;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.TypeConverter;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.junit.Test;

/**
 * ResourceManager restart with work-preserving recovery (issue 11): a fair-scheduled sleep job is
 * running when the ResourceManager is restarted from a file-system state store. The new
 * ResourceManager's Circumflex scheduler gets the application back (APP_ADDED with the recovery
 * flag), the NodeManager's running containers back ({@code recoverContainersOnNode}), and the AM's
 * asks again when it re-registers. The job must succeed within the same application attempt (its
 * running containers survived), the new engine must know the job and end it, and the scheduler must
 * not fall back to FIFO.
 */
public class RestartIT {
  private static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  @Test(timeout = 300_000)
  public void jobSurvivesAResourceManagerRestart() throws Exception {
    Map<String, String> keys = new HashMap<>();
    keys.put("circumflex.policy", "fair");
    keys.put("circumflex.epoch.ms", "1000");
    keys.put(YarnConfiguration.RECOVERY_ENABLED, "true");
    keys.put(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_ENABLED, "true");
    keys.put(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_SCHEDULING_WAIT_MS, "1000");
    keys.put(YarnConfiguration.RM_STORE,
        "org.apache.hadoop.yarn.server.resourcemanager.recovery.FileSystemRMStateStore");
    File store = new File(System.getProperty("circumflex.it.workdir", "build/it-work"), "rm-state-" + System.nanoTime());
    keys.put(YarnConfiguration.FS_RM_STATE_STORE_URI, store.toURI().toString());
    // The restarted ResourceManager must listen where the NodeManager and the AM look for it.
    keys.put(YarnConfiguration.YARN_MINICLUSTER_FIXED_PORTS, "true");
    // Without RPC the mini cluster's NodeManagers call the first ResourceManager's resource tracker
    // object directly, captured when they start: after a restart they keep talking to the stopped one
    // and never resync. Over RPC they reach whichever ResourceManager listens on the fixed port.
    keys.put(YarnConfiguration.YARN_MINICLUSTER_USE_RPC, "true");
    keys.put(YarnConfiguration.NM_RESOURCEMANAGER_CONNECT_RETRY_INTERVAL_MS, "500");
    for (String key : new String[] {YarnConfiguration.RM_ADDRESS, YarnConfiguration.RM_SCHEDULER_ADDRESS,
        YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS, YarnConfiguration.RM_ADMIN_ADDRESS,
        YarnConfiguration.RM_WEBAPP_ADDRESS}) {
      keys.put(key, "localhost:" + freePort());
    }
    try (MiniCircumflexCluster cluster = MiniCircumflexCluster.start("it-restart", keys, 1)) {
      Job job = cluster.sleepJob(new JobSpec("survivor", 8, 1, 3000), Collections.<String, String>emptyMap());
      job.submit();
      ApplicationId appId = TypeConverter.toYarn(job.getJobID()).getAppId();
      long deadline = System.currentTimeMillis() + 120_000;
      while (job.mapProgress() <= 0.1f && System.currentTimeMillis() < deadline) {
        Thread.sleep(200);
      }
      assertTrue("maps progress before the restart", job.mapProgress() > 0.1f);
      CircumflexScheduler before = cluster.scheduler();
      System.out.println("restart: restarting the ResourceManager at map progress " + job.mapProgress());
      cluster.yarn().restartResourceManager(0);
      CircumflexScheduler after = cluster.scheduler();
      assertNotSame("a new scheduler runs in the new ResourceManager", before, after);
      assertTrue("the job must succeed across the restart", job.waitForCompletion(false));
      RMApp app = cluster.yarn().getResourceManager().getRMContext().getRMApps().get(appId);
      assertEquals("work-preserving: the AM attempt survived", 1, app.getAppAttempts().size());
      long end = System.currentTimeMillis() + 30_000;
      String status = after.statusJson();
      while (status.contains("\"status\":\"active\"") && System.currentTimeMillis() < end) {
        Thread.sleep(200);
        status = after.statusJson();
      }
      System.out.println("restart: engine status after the job " + status);
      // The external id is the application id or, from job.xml, the MapReduce job id: same suffix.
      String suffix = appId.toString().substring("application_".length());
      assertTrue("the new engine got the recovered job: " + status, status.contains(suffix));
      assertFalse("no job is left active: " + status, status.contains("\"status\":\"active\""));
      assertFalse("no fallback: " + after.getFallbackCause(), after.isFallbackActive());
    }
  }
}
