package io.circumflex.observe;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.circumflex.nativeapi.NativeEngine;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.Test;

public class EngineMetricsTest {
  private static Map<String, Long> byName(List<EngineMetrics.Metric> metrics) {
    Map<String, Long> out = new HashMap<>();
    for (EngineMetrics.Metric m : metrics) {
      out.put(m.name, m.value);
    }
    return out;
  }

  @Test
  public void valuesMoveWithTheEngineAndTheShim() {
    Map<String, String> config = new HashMap<>();
    config.put("circumflex.policy", "fifo");
    EngineMetrics metrics = new EngineMetrics();
    try (NativeEngine engine = NativeEngine.create(config)) {
      Map<String, Long> before = byName(metrics.read(engine));
      assertEquals(Long.valueOf(0), before.get("JobsAdmitted"));
      Map<String, String> job = new HashMap<>();
      job.put("mapreduce.job.maps", "1");
      engine.submitJob(job, 0);
      metrics.nodeUpdateTimed(1500);
      metrics.refreshed(false);
      Map<String, Long> after = byName(metrics.read(engine));
      assertEquals(Long.valueOf(1), after.get("JobsAdmitted"));
      assertTrue(after.toString(), after.get("Plans") > before.get("Plans"));
      assertEquals(Long.valueOf(1500), after.get("NodeUpdateNanos"));
      assertEquals(Long.valueOf(1), after.get("RefreshesRejected"));
      engine.close();
      Map<String, Long> closed = byName(metrics.read(engine));
      assertTrue("a closed engine drops only the native values: " + closed, !closed.containsKey("Plans"));
      assertEquals(Long.valueOf(1), closed.get("NodeUpdateCalls"));
    }
  }
}
