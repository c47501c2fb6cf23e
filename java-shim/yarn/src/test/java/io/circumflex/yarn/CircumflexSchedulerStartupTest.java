package io.circumflex.yarn;

import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.junit.BeforeClass;
import org.junit.Test;

/** A real ResourceManager's start-up with the Circumflex scheduler: good and bad configurations. */
public class CircumflexSchedulerStartupTest {

  /** Several ResourceManagers in one JVM register the same metrics sources; allow it, as Hadoop's tests do. */
  @BeforeClass
  public static void allowRepeatedMetricsSources() {
    DefaultMetricsSystem.setMiniClusterMode(true);
  }

  private static YarnConfiguration conf(String key, String value) {
    YarnConfiguration conf = new YarnConfiguration();
    conf.setClass(YarnConfiguration.RM_SCHEDULER, CircumflexScheduler.class, ResourceScheduler.class);
    conf.set(key, value);
    return conf;
  }

  private static String chain(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      sb.append(c).append(" <- ");
    }
    return sb.toString();
  }

  @Test
  public void unknownPolicyFailsResourceManagerStartupNamingKeyValueAndAllowed() {
    ResourceManager rm = new ResourceManager();
    try {
      rm.init(conf("circumflex.policy", "lottery"));
      fail("the ResourceManager must not start with circumflex.policy=lottery");
    } catch (RuntimeException e) {
      String all = chain(e);
      assertTrue(all, all.contains("circumflex.policy"));
      assertTrue(all, all.contains("lottery"));
      assertTrue(all, all.contains("fifo"));
    } finally {
      rm.stop();
    }
  }

  @Test
  public void malformedValueFailsResourceManagerStartup() {
    ResourceManager rm = new ResourceManager();
    try {
      rm.init(conf("circumflex.epoch.ms", "soon"));
      fail("the ResourceManager must not start with circumflex.epoch.ms=soon");
    } catch (RuntimeException e) {
      String all = chain(e);
      assertTrue(all, all.contains("circumflex.epoch.ms") && all.contains("soon") && all.contains("integer"));
    } finally {
      rm.stop();
    }
  }

  @Test
  public void goodConfigurationStartsTheEngine() {
    ResourceManager rm = new ResourceManager();
    try {
      rm.init(conf("circumflex.policy", "fair"));
      CircumflexScheduler scheduler = (CircumflexScheduler) rm.getResourceScheduler();
      assertFalse(scheduler.getFallbackCause(), scheduler.isFallbackActive());
      assertNotNull(scheduler.statusJson());
      assertTrue(scheduler.statusJson(), scheduler.statusJson().contains("\"policy\":\"fair\""));
    } finally {
      rm.stop();
    }
  }
}
