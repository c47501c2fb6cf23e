package io.circumflex.nativeapi;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import io.circumflex.CircumflexConfigException;
import io.circumflex.CircumflexException;
import io.circumflex.CircumflexInternalException;
import io.circumflex.CircumflexInvalidJobException;
import io.circumflex.CircumflexUnknownIdException;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import org.junit.Test;

/** The JNI contract seen from Java: values cross correctly and every failure is a named exception. */
public class NativeEngineTest {

  private static Map<String, String> policy(String name) {
    return Collections.singletonMap("circumflex.policy", name);
  }

  private static Map<String, String> job(int maps, int reduces) {
    Map<String, String> conf = new HashMap<>();
    conf.put("mapreduce.job.maps", Integer.toString(maps));
    conf.put("mapreduce.job.reduces", Integer.toString(reduces));
    conf.put("mapreduce.job.name", "job \"quoted\"\n");
    return conf;
  }

  @Test
  public void initReportsTheLibraryVersion() {
    String version = NativeEngine.init("warn");
    assertTrue(version, version.matches("\\d+\\.\\d+\\.\\d+.*"));
    assertEquals(NativeLoader.State.LOADED, NativeLoader.state());
  }

  @Test
  public void fifoHandsTheNodeToTheFirstJob() {
    Map<String, String> config = new HashMap<>(policy("fifo"));
    config.put("circumflex.locality.node.delay", "0");
    config.put("circumflex.locality.rack.delay", "0");
    try (NativeEngine e = NativeEngine.create(config)) {
      int node = e.addNode("h1", "/r1", 4, 0);
      int a = e.submitJob(job(6, 0), 0);
      int b = e.submitJob(job(6, 0), 1);
      int[] out = new int[4 * 16];
      int n = e.nodeUpdate(node, 4, 0, 2, out);
      assertTrue("at least one choice", n >= 1);
      assertArrayEquals(new int[] {a, NativeEngine.MAP, 4, NativeEngine.ANY}, java.util.Arrays.copyOf(out, 4));
      for (int i = 0; i < 4; i++) {
        e.taskStarted(a, NativeEngine.MAP, node, NativeEngine.NODE_LOCAL, 3);
      }
      assertEquals(0, e.nodeUpdate(node, 0, 0, 4, out));
      e.taskFinished(a, NativeEngine.MAP, node, 100, true, 103);
      n = e.nodeUpdate(node, 1, 0, 104, out);
      assertEquals(a, out[0]);
      assertTrue(e.statusJson(105).contains("\"policy\":\"fifo\""));
      assertTrue(e.planJson().contains("\"entries\""));
      assertTrue(b > a);
    }
  }

  @Test
  public void batchesAndThePlanOrderCrossAsPrimitives() {
    Map<String, String> config = new HashMap<>(policy("fifo"));
    config.put("circumflex.locality.node.delay", "0");
    config.put("circumflex.locality.rack.delay", "0");
    try (NativeEngine e = NativeEngine.create(config)) {
      int node = e.addNode("h1", "/r1", 4, 0);
      int a = e.submitJob(job(4, 0), 0, true, 4, 0);
      int b = e.submitJob(job(2, 0), 1, true, 2, 0);
      int[] order = new int[1];
      assertEquals("the plan's length, though only one id fits", 2, e.planOrder(order));
      assertEquals(a, order[0]);
      order = new int[4];
      assertEquals(2, e.planOrder(order));
      assertArrayEquals(new int[] {a, b}, java.util.Arrays.copyOf(order, 2));

      int[] started = {a, NativeEngine.MAP, node, NativeEngine.NODE_LOCAL, 99, NativeEngine.MAP, node, 0,
          a, NativeEngine.MAP, node, NativeEngine.ANY, -7, -7, -7, -7};
      assertEquals("one call, the retired job skipped, the count bounds the records", 2,
          e.tasksStarted(started, 3, 2));
      int[] out = new int[4 * 8];
      int n = e.nodeUpdate(node, 2, 0, 3, out);
      assertTrue(n >= 1);
      assertEquals("a, with two tasks running and two pending, is still served first", a, out[0]);
      assertTrue(e.statusJson(3), e.statusJson(3).contains("\"running\":[2,0]"));
      long[] finished = {a, NativeEngine.MAP, node, 50, 1, 52, a, NativeEngine.MAP, node, 60, 0, 62};
      assertEquals(2, e.tasksFinished(finished, 2));
      try {
        e.tasksStarted(new int[] {a, 9, node, 0}, 1, 70);
        fail("expected IllegalArgumentException");
      } catch (IllegalArgumentException ex) {
        assertTrue(ex.getMessage(), ex.getMessage().contains("records[0].phase = 9"));
      }
      e.setPendingPhases(b, 0, 0);
      assertTrue(e.statusJson(80), e.statusJson(80).contains("\"policy\":\"fifo\""));
    }
  }

  @Test
  public void badConfigurationIsAConfigExceptionNamingKeyValueAndAllowed() {
    try {
      NativeEngine.create(policy("lottery")).close();
      fail("expected CircumflexConfigException");
    } catch (CircumflexConfigException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("circumflex.policy"));
      assertTrue(e.getMessage(), e.getMessage().contains("lottery"));
      assertTrue(e.getMessage(), e.getMessage().contains("fifo"));
    }
  }

  @Test
  public void malformedJobKeyIsAnInvalidJobException() {
    try (NativeEngine e = NativeEngine.create(policy("fair"))) {
      Map<String, String> conf = job(2, 1);
      conf.put("circumflex.job.deadline.ms", "tomorrow");
      try {
        e.submitJob(conf, 0);
        fail("expected CircumflexInvalidJobException");
      } catch (CircumflexInvalidJobException ex) {
        assertTrue(ex.getMessage(), ex.getMessage().contains("circumflex.job.deadline.ms"));
        assertTrue(ex.getMessage(), ex.getMessage().contains("tomorrow"));
      }
    }
  }

  @Test
  public void unknownIdsAndClosedEnginesAreUnknownIdExceptions() {
    NativeEngine e = NativeEngine.create(policy("fifo"));
    int node = e.addNode("h1", "/r1", 1, 0);
    try {
      e.taskStarted(42, NativeEngine.MAP, node, NativeEngine.ANY, 0);
      fail("expected CircumflexUnknownIdException");
    } catch (CircumflexUnknownIdException ex) {
      assertTrue(ex.getMessage(), ex.getMessage().contains("42"));
    }
    e.close();
    e.close(); // idempotent
    assertTrue(e.isClosed());
    try {
      e.tick(0);
      fail("expected CircumflexUnknownIdException after close");
    } catch (CircumflexUnknownIdException ex) {
      assertTrue(ex.getMessage(), ex.getMessage().contains("handle"));
    }
  }

  @Test
  public void nodesJoinTheAcceleratedPoolByLabelCall() {
    try (NativeEngine e = NativeEngine.create(policy("adaptive"))) {
      int node = e.addNode("h1", "/r1", 2, 0);
      e.setNodeAccelerated(node, true);
      e.setNodeAccelerated(node, false);
      try {
        e.setNodeAccelerated(node + 7, true);
        fail("expected CircumflexUnknownIdException");
      } catch (CircumflexUnknownIdException ex) {
        assertTrue(ex.getMessage(), ex.getMessage().contains(String.valueOf(node + 7)));
      }
    }
  }

  @Test
  public void badArgumentsAreIllegalArgumentExceptions() {
    try (NativeEngine e = NativeEngine.create(policy("fifo"))) {
      int node = e.addNode("h1", "/r1", 1, 0);
      try {
        e.nodeUpdate(node, 1, 0, 0, new int[2]);
        fail("expected IllegalArgumentException");
      } catch (IllegalArgumentException ex) {
        assertTrue(ex.getMessage(), ex.getMessage().contains("out has length 2"));
      }
      try {
        e.addNode(null, "/r1", 1, 0);
        fail("expected IllegalArgumentException");
      } catch (IllegalArgumentException ex) {
        assertTrue(ex.getMessage(), ex.getMessage().contains("name is null"));
      }
    }
  }

  @Test
  public void aNativePanicIsAnInternalExceptionAndPoisonsOnlyItsEngine() {
    try (NativeEngine e = NativeEngine.create(policy("test-panic"));
        NativeEngine healthy = NativeEngine.create(policy("fifo"))) {
      try {
        e.submitJob(job(1, 0), 0);
        fail("expected CircumflexInternalException");
      } catch (CircumflexInternalException ex) {
        assertTrue(ex.getMessage(), ex.getMessage().contains("deliberate panic"));
        assertTrue(ex.getMessage(), ex.getMessage().contains("native backtrace"));
      }
      try {
        e.tick(1);
        fail("expected CircumflexInternalException on a poisoned engine");
      } catch (CircumflexInternalException ex) {
        assertTrue(ex.getMessage(), ex.getMessage().contains("unusable after an earlier panic"));
      }
      assertFalse(healthy.isClosed());
      healthy.tick(2);
    } catch (CircumflexException unexpected) {
      throw unexpected;
    }
  }

  @Test
  public void jsonEscapingRoundTripsThroughTheEngine() {
    assertEquals("{\"a\\\"b\":\"c\\\\d\\n\\u0001\"}",
        NativeEngine.Json.object(Collections.singletonMap("a\"b", "c\\d\n\u0001")));
  }

  private static Map<String, String> instantConfig(String policyName) {
    Map<String, String> config = new HashMap<>(policy(policyName));
    config.put("circumflex.locality.node.delay", "0");
    config.put("circumflex.locality.rack.delay", "0");
    return config;
  }

  @Test
  public void reconfigureSwapsThePolicyAndABadOneKeepsTheOld() {
    try (NativeEngine e = NativeEngine.create(instantConfig("fifo"))) {
      e.addNode("h1", "/r1", 4, 0);
      e.submitJob(job(2, 0), 0);
      e.reconfigure(instantConfig("fair"), 1);
      assertTrue(e.statusJson(2), e.statusJson(2).contains("\"policy\":\"fair\""));
      try {
        e.reconfigure(instantConfig("no-such-policy"), 3);
        fail("an unknown policy must be refused");
      } catch (CircumflexConfigException expected) {
        assertTrue(expected.getMessage(), expected.getMessage().contains("no-such-policy"));
      }
      assertTrue("the old policy keeps running", e.statusJson(4).contains("\"policy\":\"fair\""));
    }
  }

  @Test
  public void countersMoveWithEvents() {
    try (NativeEngine e = NativeEngine.create(instantConfig("fifo"))) {
      long[] before = new long[NativeEngine.COUNTER_NAMES.length];
      assertEquals("Java and Rust agree on the counter list", before.length, e.counters(before));
      int node = e.addNode("h1", "/r1", 4, 0);
      int a = e.submitJob(job(1, 0), 0);
      e.nodeUpdate(node, 4, 0, 1, new int[16]);
      e.finishJob(a, 2);
      long[] after = new long[NativeEngine.COUNTER_NAMES.length + 3];
      assertEquals(NativeEngine.COUNTER_NAMES.length, e.counters(after));
      java.util.List<String> names = java.util.Arrays.asList(NativeEngine.COUNTER_NAMES);
      assertEquals(1, after[names.indexOf("admitted")] - before[names.indexOf("admitted")]);
      assertEquals(1, after[names.indexOf("node_updates")] - before[names.indexOf("node_updates")]);
      assertEquals(1, after[names.indexOf("finished")]);
      assertTrue(after[names.indexOf("plans")] > before[names.indexOf("plans")]);
    }
  }

  @Test
  public void statusHtmlEscapesJobNames() {
    try (NativeEngine e = NativeEngine.create(instantConfig("fifo"))) {
      Map<String, String> conf = job(1, 0);
      conf.put("mapreduce.job.name", "<script>x</script>");
      e.submitJob(conf, 0);
      String html = e.statusHtml(1);
      assertTrue(html, html.contains("id=\"circumflex-jobs\""));
      assertTrue(html, html.contains("&lt;script&gt;x&lt;/script&gt;"));
      assertFalse(html, html.contains("<script>"));
    }
  }

  @Test
  public void aNativeLogRecordReachesTheSink() {
    NativeEngine.setLogLevel("info");
    try (NativeEngine e = NativeEngine.create(instantConfig("fifo"))) {
      NativeLog.drainTo((level, name, message) -> { });
      e.reconfigure(instantConfig("fair"), 1);
      final java.util.List<String> seen = new java.util.ArrayList<>();
      int n = NativeLog.drainTo((level, name, message) -> seen.add(level + " " + name + " " + message));
      assertTrue("records forwarded: " + seen, n >= 1);
      boolean found = false;
      for (String line : seen) {
        found |= line.startsWith("INFO circumflex.native.circumflex.ffi.ops ") && line.contains("fifo -> fair");
      }
      assertTrue(seen.toString(), found);
    } finally {
      NativeEngine.setLogLevel("warn");
    }
    try {
      NativeEngine.setLogLevel("info,bogus=notalevel");
      fail("a bad level must be refused");
    } catch (CircumflexConfigException expected) {
      assertTrue(expected.getMessage(), expected.getMessage().contains("notalevel"));
    }
  }

  @Test
  public void logDecodingSplitsRecordsAndFields() {
    final java.util.List<String> seen = new java.util.ArrayList<>();
    int n = NativeLog.decode("WARN\u001fa::b\u001fone\ntwo\u001eODD\u001fc\u001fthree\u001ebroken\u001e",
        (level, name, message) -> seen.add(level + "|" + name + "|" + message));
    assertEquals(2, n);
    assertEquals(java.util.Arrays.asList("WARN|circumflex.native.a.b|one\ntwo", "WARN|circumflex.native.c|three"), seen);
  }

  @Test
  public void theAmGateAdmitsInPlanOrderAndGatesTasksUntilTheAmAsks() {
    Map<String, String> config = instantConfig("fifo");
    config.put("circumflex.am.admission.enabled", "true");
    config.put("circumflex.am.max.share", "0.25");
    try (NativeEngine e = NativeEngine.create(config)) {
      int node = e.addNode("h1", "/r1", 8, 0);
      int first = e.submitJob(job(3, 0), 0, true, 0, 0);
      int second = e.submitJob(job(1, 0), 1, true, 0, 0);
      long[] events = {NativeEngine.AM_REQUESTED, first, 2, 2, NativeEngine.AM_REQUESTED, second, 2, 2};
      assertEquals(2, e.amEvents(events, 2));
      int[] admitted = new int[4];
      assertEquals("one AM of 2 slots within a quarter of 8", 1, e.amAdmissions(3, admitted));
      assertEquals(first, admitted[0]);
      int[] choices = new int[4 * NativeEngine.CHOICE_STRIDE];
      assertEquals("no task before its AM asks", 0, e.nodeUpdate(node, 8, 0, 3, choices));
      assertEquals(1, e.amEvents(new long[] {NativeEngine.AM_STARTED, first, 2, 4}, 1));
      e.setNodeCapacity(node, 6, 0);
      e.setPendingPhases(first, 3, 0);
      assertEquals(1, e.nodeUpdate(node, 6, 0, 5, choices));
      assertEquals(first, choices[0]);
      String status = e.statusJson(5);
      assertTrue(status, status.contains("\"reason\":\"over_share\""));
      try {
        e.amEvents(new long[] {9, first, 2, 4}, 1);
        fail("a bad kind must be refused");
      } catch (IllegalArgumentException expected) {
        assertTrue(expected.getMessage(), expected.getMessage().contains("records[0].kind = 9"));
      }
    }
  }
}
