package io.circumflex.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import io.circumflex.observe.EngineMetrics;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAddedSchedulerEvent;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * The shared fallback regime in the YARN shim, on a real (initialised) ResourceManager: the
 * {@code test-panic} policy (test library only) panics when it plans with an active job, so the first
 * submission sends the scheduler to FIFO; a refresh to a working policy replays the application into a
 * new engine and ends the fallback.
 */
public class FallbackRecoveryTest {
  @BeforeClass
  public static void allowRepeatedMetricsSources() {
    DefaultMetricsSystem.setMiniClusterMode(true);
  }

  private static YarnConfiguration conf(String policy) {
    YarnConfiguration conf = new YarnConfiguration();
    conf.setClass(YarnConfiguration.RM_SCHEDULER, CircumflexScheduler.class, ResourceScheduler.class);
    conf.set("circumflex.policy", policy);
    return conf;
  }

  private static Map<String, Long> metrics(CircumflexScheduler scheduler) {
    Map<String, Long> out = new HashMap<>();
    for (EngineMetrics.Metric m : scheduler.readMetrics()) {
      out.put(m.name, m.value);
    }
    return out;
  }

  @Test
  public void aNativePanicFallsBackAndASuccessfulRefreshReplaysTheApplicationIntoANewEngine() throws Exception {
    ResourceManager rm = new ResourceManager();
    try {
      rm.init(conf("test-panic"));
      CircumflexScheduler scheduler = (CircumflexScheduler) rm.getResourceScheduler();
      assertFalse("starts on the engine: " + scheduler.getFallbackCause(), scheduler.isFallbackActive());

      ApplicationId app = ApplicationId.newInstance(1, 1);
      scheduler.handle(new AppAddedSchedulerEvent(app, "default", "alice"));
      assertTrue("the panic sends the scheduler to FIFO", scheduler.isFallbackActive());
      String cause = scheduler.getFallbackCause();
      assertTrue(cause, cause.contains("submitJob failed for " + app) && cause.contains("deliberate panic"));
      assertTrue("the application is accepted all the same", scheduler.applicationMap().containsKey(app));
      assertNull("no status in fallback", scheduler.statusJson());
      assertEquals(Long.valueOf(1), metrics(scheduler).get("FallbackActive"));

      scheduler.reinitialize(conf("fifo"), rm.getRMContext());
      assertFalse("a successful refresh ends the fallback", scheduler.isFallbackActive());
      assertNull(scheduler.getFallbackCause());
      String status = scheduler.statusJson();
      assertTrue(status, status.contains("\"policy\":\"fifo\""));
      assertTrue("the live application was replayed: " + status, status.contains(app.toString()));
      Map<String, Long> values = metrics(scheduler);
      assertEquals(values.toString(), Long.valueOf(0), values.get("FallbackActive"));
      assertEquals(values.toString(), Long.valueOf(1), values.get("Fallbacks"));
      assertEquals(values.toString(), Long.valueOf(1), values.get("ActiveJobs"));
    } finally {
      rm.stop();
    }
  }
}
