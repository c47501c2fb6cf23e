package io.circumflex.shim;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import io.circumflex.nativeapi.NativeEngine;
import io.circumflex.observe.EngineMetrics;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.commons.logging.Log;
import org.junit.Test;

/**
 * The shims' one failure regime, against real native engines: the {@code test-panic} policy (built into
 * the test library only) panics when it plans with an active job, so a submission fails natively.
 */
public class EngineGuardTest {
  /** A commons-logging Log that records "LEVEL message" for error, warn and info. */
  private static Log recording(final List<String> lines) {
    return (Log) Proxy.newProxyInstance(Log.class.getClassLoader(), new Class<?>[] {Log.class},
        new InvocationHandler() {
          @Override
          public Object invoke(Object proxy, Method method, Object[] args) {
            String name = method.getName();
            if (name.equals("error") || name.equals("warn") || name.equals("info")) {
              lines.add(name.toUpperCase() + " " + args[0]);
            }
            return method.getReturnType() == boolean.class ? Boolean.FALSE : null;
          }
        });
  }

  private static NativeEngine engine(String policy) {
    return NativeEngine.create(Collections.singletonMap("circumflex.policy", policy));
  }

  private static Map<String, String> oneMapJob() {
    Map<String, String> job = new HashMap<>();
    job.put("mapreduce.job.maps", "1");
    return job;
  }

  private static Map<String, Long> metrics(EngineGuard guard) {
    Map<String, Long> out = new HashMap<>();
    for (EngineMetrics.Metric m : guard.metrics().read(guard.engine())) {
      out.put(m.name, m.value);
    }
    return out;
  }

  private static int count(List<String> lines, String prefix) {
    int n = 0;
    for (String line : lines) {
      if (line.startsWith(prefix)) {
        n++;
      }
    }
    return n;
  }

  @Test
  public void aNativeFailureFallsBackLogsOnceAndASuccessfulRefreshRecovers() {
    List<String> lines = new ArrayList<>();
    EngineGuard guard = new EngineGuard(recording(lines));
    assertFalse("no engine before start", guard.isActive());
    guard.start(engine("test-panic"));
    assertTrue(guard.isActive());
    assertNull(guard.fallbackCause());
    assertEquals(Long.valueOf(0), metrics(guard).get("FallbackActive"));

    Integer id = guard.call("submitJob", e -> e.submitJob(oneMapJob(), 0), -1);
    assertEquals("the failed call answers its fallback value", Integer.valueOf(-1), id);
    assertFalse("a native panic ends the engine's charge", guard.isActive());
    assertTrue(guard.fallbackCause(), guard.fallbackCause().startsWith("submitJob: "));
    assertTrue(guard.fallbackCause(), guard.fallbackCause().contains("deliberate panic"));
    assertEquals(lines.toString(), 1, count(lines, "ERROR Circumflex fallback: submitJob: "));
    Map<String, Long> fallen = metrics(guard);
    assertEquals(Long.valueOf(1), fallen.get("Fallbacks"));
    assertEquals(Long.valueOf(1), fallen.get("FallbackActive"));

    // In fallback every call answers its fallback value without touching native code or the log.
    assertFalse(guard.run("tick", e -> e.tick(1)));
    assertEquals(lines.toString(), 1, count(lines, "ERROR"));

    // The same failure from a second engine (the refresh replayed a job that panics again): logged
    // once only, because the guard has seen that error since the last recovery.
    NativeEngine second = engine("test-panic");
    guard.start(second);
    guard.call("submitJob", e -> e.submitJob(oneMapJob(), 1), -1);
    assertFalse(guard.isActive());
    assertTrue("the failed engine is closed", second.isClosed());
    assertEquals(lines.toString(), 1, count(lines, "ERROR"));

    // A successful refresh recovers: the new engine is in charge and old errors may be logged again.
    NativeEngine fresh = engine("fifo");
    guard.recover(fresh);
    assertTrue(guard.isActive());
    assertNull(guard.fallbackCause());
    assertEquals(lines.toString(), 1, count(lines, "INFO Circumflex recovered"));
    Map<String, Long> recovered = metrics(guard);
    assertEquals(Long.valueOf(0), recovered.get("FallbackActive"));
    assertEquals("the counter keeps history", Long.valueOf(2), recovered.get("Fallbacks"));
    int job = guard.call("submitJob", e -> e.submitJob(oneMapJob(), 2), -1);
    assertTrue("the recovered engine schedules", job >= 0);
    guard.stop();
    assertTrue(fresh.isClosed());
  }

  @Test
  public void unknownIdsAndRefusedArgumentsLeaveTheEngineInCharge() {
    List<String> lines = new ArrayList<>();
    EngineGuard guard = new EngineGuard(recording(lines));
    guard.start(engine("fifo"));
    assertFalse("an unknown job id is ignored", guard.run("setPending", e -> e.setPending(12345, NativeEngine.MAP, 1)));
    assertTrue(guard.isActive());
    assertEquals("and not logged above DEBUG: " + lines, 0, lines.size());
    for (int i = 0; i < 3; i++) {
      assertFalse(guard.run("addNode", e -> e.addNode(null, "/r1", 1, 0)));
    }
    assertTrue("a refused argument is one event, not an engine failure", guard.isActive());
    assertEquals("logged once: " + lines, 1, count(lines, "WARN Circumflex ignored addNode"));
    guard.stop();
    assertFalse(guard.isActive());
  }
}
