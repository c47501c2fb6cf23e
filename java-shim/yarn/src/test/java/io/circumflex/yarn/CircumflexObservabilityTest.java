package io.circumflex.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import io.circumflex.observe.EngineMetrics;
import io.circumflex.yarn.webapp.CircumflexSchedulerPage;
import io.circumflex.yarn.webapp.CircumflexSchedulerWebService;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAddedSchedulerEvent;
import org.apache.log4j.AppenderSkeleton;
import org.apache.log4j.Level;
import org.apache.log4j.Logger;
import org.apache.log4j.spi.LoggingEvent;
import org.junit.BeforeClass;
import org.junit.Test;

/** Refresh, fallback and recovery, metrics, native logs and web registration on a real (initialised) ResourceManager. */
public class CircumflexObservabilityTest {

  @BeforeClass
  public static void allowRepeatedMetricsSources() {
    DefaultMetricsSystem.setMiniClusterMode(true);
  }

  /** Collects log4j events of the native loggers. */
  static final class Captured extends AppenderSkeleton {
    final List<String> lines = new ArrayList<>();

    @Override
    protected synchronized void append(LoggingEvent event) {
      lines.add(event.getLevel() + " " + event.getLoggerName() + " " + event.getRenderedMessage());
    }

    @Override
    public void close() {}

    @Override
    public boolean requiresLayout() {
      return false;
    }
  }

  private static YarnConfiguration conf(String policy) {
    YarnConfiguration conf = new YarnConfiguration();
    conf.setClass(YarnConfiguration.RM_SCHEDULER, CircumflexScheduler.class, ResourceScheduler.class);
    conf.set("circumflex.policy", policy);
    conf.set(CircumflexScheduler.KEY_NATIVE_LOG, "info");
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
  public void refreshAppliesAGoodPolicyRefusesABadOneAndLogsBothNatively() throws Exception {
    Captured captured = new Captured();
    Logger nativeLoggers = Logger.getLogger("circumflex.native");
    nativeLoggers.setLevel(Level.INFO);
    nativeLoggers.addAppender(captured);
    ResourceManager rm = new ResourceManager();
    try {
      rm.init(conf("fifo"));
      CircumflexScheduler scheduler = (CircumflexScheduler) rm.getResourceScheduler();
      Configuration bad = conf("lottery");
      try {
        scheduler.reinitialize(bad, rm.getRMContext());
        fail("a refresh to an unknown policy must be refused");
      } catch (IOException expected) {
        String message = expected.getMessage();
        assertTrue(message, message.contains("circumflex.policy") && message.contains("lottery"));
        assertTrue(message, message.contains("running policy is kept"));
      }
      assertTrue(scheduler.statusJson(), scheduler.statusJson().contains("\"policy\":\"fifo\""));
      scheduler.reinitialize(conf("fair"), rm.getRMContext());
      assertTrue(scheduler.statusJson(), scheduler.statusJson().contains("\"policy\":\"fair\""));
      Map<String, Long> values = metrics(scheduler);
      assertEquals(values.toString(), Long.valueOf(1), values.get("Refreshes"));
      assertEquals(values.toString(), Long.valueOf(1), values.get("RefreshesRejected"));
      assertTrue(values.toString(), values.get("Plans") >= 1);
      String log = captured.lines.toString();
      assertTrue("the native refresh line reaches log4j: " + log,
          log.contains("INFO circumflex.native.circumflex.ffi.ops refreshed: policy fifo -> fair"));
      assertTrue("the native refusal reaches log4j: " + log,
          log.contains("WARN circumflex.native.circumflex.ffi.ops refresh rejected"));
    } finally {
      nativeLoggers.removeAppender(captured);
      rm.stop();
    }
  }

  @Test
  public void theSchedulerRegistersItsPageAndRestResourceUnlessTheOperatorChose() {
    Configuration conf = new Configuration(false);
    conf.set(WebDefaults.KEY_EXTERNAL_CLASSES, "org.example.Other");
    WebDefaults.register(conf);
    assertEquals(CircumflexSchedulerPage.class.getName(), conf.get(WebDefaults.KEY_SCHEDULER_PAGE));
    assertEquals("org.example.Other," + CircumflexSchedulerWebService.class.getName(),
        conf.get(WebDefaults.KEY_EXTERNAL_CLASSES));
    WebDefaults.register(conf);
    assertEquals("registration is idempotent", "org.example.Other," + CircumflexSchedulerWebService.class.getName(),
        conf.get(WebDefaults.KEY_EXTERNAL_CLASSES));
    Configuration chosen = new Configuration(false);
    chosen.set(WebDefaults.KEY_SCHEDULER_PAGE, "org.example.Page");
    WebDefaults.register(chosen);
    assertEquals("org.example.Page", chosen.get(WebDefaults.KEY_SCHEDULER_PAGE));
  }

  @Test
  public void restEnvelopeKeepsYarnsShape() {
    assertEquals("{\"scheduler\":{\"schedulerInfo\":{\"type\":\"circumflexScheduler\",\"policy\":\"fair\"}}}",
        CircumflexSchedulerWebService.envelope("{\"policy\":\"fair\"}"));
    assertEquals("{\"scheduler\":{\"schedulerInfo\":{\"type\":\"circumflexScheduler\"}}}",
        CircumflexSchedulerWebService.envelope(" { } "));
  }

  /**
   * The shared fallback regime in the YARN shim: the {@code test-panic} policy (test library only)
   * panics when it plans with an active job, so the first submission sends the scheduler to FIFO; a
   * refresh to a working policy replays the application into a new engine and ends the fallback.
   */
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
