package org.apache.hadoop.mapred;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.junit.After;
import org.junit.Test;

/** Start-up, refresh and tracker bookkeeping of the MRv1 shim against a real native engine. */
public class CircumflexTaskSchedulerTest {
  /** A scheduler whose refresh() reads a configuration the test controls. */
  static final class TestScheduler extends CircumflexTaskScheduler {
    Configuration next;

    @Override
    protected Configuration reloadConfiguration() {
      return next;
    }
  }

  private final FakeTaskTrackerManager ttm = new FakeTaskTrackerManager();
  private TestScheduler scheduler;

  private TestScheduler start(String policy) throws IOException {
    scheduler = new TestScheduler();
    scheduler.setConf(conf(policy));
    scheduler.setTaskTrackerManager(ttm);
    scheduler.start();
    return scheduler;
  }

  private static Configuration conf(String policy) {
    Configuration c = new Configuration(false);
    c.set("circumflex.policy", policy);
    return c;
  }

  private static org.apache.hadoop.mapreduce.server.jobtracker.TaskTracker tracker(String name, int maps, int reduces) {
    TaskTrackerStatus status = new TaskTrackerStatus("tracker_" + name + ":localhost/127.0.0.1:1", name, 0,
        new ArrayList<TaskStatus>(), 0, 0, maps, reduces);
    org.apache.hadoop.mapreduce.server.jobtracker.TaskTracker tt =
        new org.apache.hadoop.mapreduce.server.jobtracker.TaskTracker(status.getTrackerName());
    tt.setStatus(status);
    return tt;
  }

  @After
  public void stop() throws IOException {
    if (scheduler != null) {
      scheduler.terminate();
    }
  }

  @Test
  public void startsWithTheConfiguredPolicyAndRegistersListeners() throws IOException {
    start("fifo");
    assertTrue(scheduler.getFallbackReason(), scheduler.isEngineActive());
    assertNull(scheduler.getFallbackReason());
    assertTrue(scheduler.getEngineStatusJson(), scheduler.getEngineStatusJson().contains("fifo"));
    assertEquals("job listener and eager initialiser", 2, ttm.listeners.size());
    scheduler.terminate();
    assertEquals(0, ttm.listeners.size());
    assertFalse(scheduler.isEngineActive());
    scheduler = null;
  }

  @Test
  public void refusesToStartWithAnInvalidPolicyNamingTheKey() {
    scheduler = new TestScheduler();
    scheduler.setConf(conf("no-such-policy"));
    scheduler.setTaskTrackerManager(ttm);
    try {
      scheduler.start();
      fail("an unknown policy must stop start-up");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("circumflex.policy"));
      assertTrue(e.getMessage(), e.getMessage().contains("no-such-policy"));
    }
    assertTrue("no listener left behind", ttm.listeners.isEmpty());
    scheduler = null;
  }

  @Test
  public void refreshKeepsTheOldConfigurationOnErrorAndSwitchesOnSuccess() throws IOException {
    start("fifo");
    ttm.trackers.add(tracker("host1", 2, 1).getStatus());
    assertTrue(scheduler.assignTasks(tracker("host1", 2, 1)).isEmpty());

    scheduler.next = conf("no-such-policy");
    try {
      scheduler.refresh();
      fail("a bad policy must be refused");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("keeping the previous one"));
    }
    assertTrue(scheduler.isEngineActive());
    assertTrue(scheduler.getEngineStatusJson().contains("fifo"));

    scheduler.next = conf("fair");
    scheduler.refresh();
    String status = scheduler.getEngineStatusJson();
    assertTrue(status, status.contains("fair"));
    assertTrue("the tracker is replayed into the new engine: " + status, status.contains("host1"));
  }

  @Test
  public void registersTrackersWithTheirSlotsAndNothingToAssignWithoutJobs() throws IOException {
    start("fair");
    org.apache.hadoop.mapreduce.server.jobtracker.TaskTracker tt = tracker("host7", 3, 2);
    ttm.trackers.add(tt.getStatus());
    List<Task> tasks = scheduler.assignTasks(tt);
    assertTrue(tasks == null || tasks.isEmpty());
    String status = scheduler.getEngineStatusJson();
    assertTrue(status, status.contains("host7"));
    assertTrue("no jobs yet: " + scheduler.getJobs(null), scheduler.getJobs(null).isEmpty());
  }

  /** Collects log4j events of the native loggers. */
  static final class Captured extends org.apache.log4j.AppenderSkeleton {
    final List<String> lines = new ArrayList<>();

    @Override
    protected synchronized void append(org.apache.log4j.spi.LoggingEvent event) {
      lines.add(event.getLevel() + " " + event.getLoggerName() + " " + event.getRenderedMessage());
    }

    @Override
    public void close() {}

    @Override
    public boolean requiresLayout() {
      return false;
    }
  }

  private static java.util.Map<String, Long> metrics(CircumflexTaskScheduler s) {
    java.util.Map<String, Long> out = new java.util.HashMap<>();
    for (io.circumflex.observe.EngineMetrics.Metric m : s.readMetrics()) {
      out.put(m.name, m.value);
    }
    return out;
  }

  @Test
  public void refreshReconfiguresInPlaceCountsItAndLogsNativelyToLog4j() throws IOException {
    Captured captured = new Captured();
    org.apache.log4j.Logger nativeLoggers = org.apache.log4j.Logger.getLogger("circumflex.native");
    nativeLoggers.setLevel(org.apache.log4j.Level.INFO);
    nativeLoggers.addAppender(captured);
    try {
      Configuration first = conf("fifo");
      first.set(io.circumflex.mrv1.ConfKeys.NATIVE_LOG, "info");
      scheduler = new TestScheduler();
      scheduler.setConf(first);
      scheduler.setTaskTrackerManager(ttm);
      scheduler.start();
      ttm.trackers.add(tracker("host1", 2, 1).getStatus());
      scheduler.assignTasks(tracker("host1", 2, 1));
      Configuration next = conf("fair");
      next.set(io.circumflex.mrv1.ConfKeys.NATIVE_LOG, "info");
      scheduler.next = next;
      scheduler.refresh();
      scheduler.next = conf("no-such-policy");
      try {
        scheduler.refresh();
        fail("a bad policy must be refused");
      } catch (IOException expected) {
        assertTrue(expected.getMessage(), expected.getMessage().contains("no-such-policy"));
      }
      String status = scheduler.getEngineStatusJson();
      assertTrue("fair kept after the refused refresh: " + status, status.contains("\"policy\":\"fair\""));
      assertTrue("reconfigure kept the tracker: " + status, status.contains("host1"));
      java.util.Map<String, Long> values = metrics(scheduler);
      assertEquals(values.toString(), Long.valueOf(1), values.get("Refreshes"));
      assertEquals(values.toString(), Long.valueOf(1), values.get("RefreshesRejected"));
      assertTrue(values.toString(), values.get("Plans") >= 1);
      String html = scheduler.getEngineStatusHtml();
      assertTrue(html, html.contains("<tr><th>Policy</th><td>fair</td></tr>"));
      String log = captured.lines.toString();
      assertTrue("the native refresh line reaches log4j: " + log,
          log.contains("INFO circumflex.native.circumflex.ffi.ops refreshed: policy fifo -> fair"));
      assertTrue("the native refusal reaches log4j: " + log,
          log.contains("WARN circumflex.native.circumflex.ffi.ops refresh rejected"));
    } finally {
      nativeLoggers.removeAppender(captured);
    }
  }
}
