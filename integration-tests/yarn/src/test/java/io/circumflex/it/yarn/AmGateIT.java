package io.circumflex.it.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import io.circumflex.it.yarn.MiniCircumflexCluster.JobResult;
import io.circumflex.it.yarn.MiniCircumflexCluster.JobSpec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.Test;

/**
 * The engine's AM gate ({@code circumflex.am.admission.enabled}, {@code engine/admission.rs}) on the YARN
 * mini cluster: the node has room for 2 AMs (512 MB each) plus 4 task slots (256 MB), 2 048 MB in all,
 * and six jobs arrive 0.2 s apart, so their AMs alone (3 072 MB) would more than fill it. With AMs held
 * to half of the pool (the default share; 4 of 8 slots: two 2-slot AMs at a time) the gate
 * starts them two at a time in plan order; it never deadlocks and every job succeeds. While jobs wait,
 * the status shows each with why, and the AMs never hold more than the share once more than one runs
 * (three AMs at once would be over it).
 *
 * <p>(The share was a quarter, the gate's first default: one AM at a time, which ran the six jobs
 * strictly one after the other, about 2 minutes of {@code make test}, and left the share check nothing
 * to check, since one AM is always allowed. Tasks sleep 1 s: their length plays no part in what is shown.)
 */
public class AmGateIT {
  private static final Pattern HELD = Pattern.compile("\"gate\":\\{\"capacity\":(\\d+),\"held\":(\\d+),\"limit\":(\\d+),\"running\":(\\d+)\\}");

  @Test
  public void sixJobsWhoseAmsWouldFillTheNodeAllSucceedUnderTheGate() throws Exception {
    Map<String, String> keys = new HashMap<>();
    keys.put("circumflex.policy", "flex");
    keys.put("circumflex.objective", "avg_response_time");
    keys.put("circumflex.epoch.ms", "1000");
    keys.put("circumflex.am.admission.enabled", "true");
    keys.put("circumflex.am.max.share", "0.5");
    try (MiniCircumflexCluster cluster = MiniCircumflexCluster.start("it-amgate", keys, 2)) {
      AtomicBoolean done = new AtomicBoolean();
      AtomicInteger sawWaiting = new AtomicInteger();
      AtomicInteger maxRunning = new AtomicInteger();
      List<String> violations = new ArrayList<>();
      Thread watcher = new Thread(() -> {
        while (!done.get()) {
          String status = cluster.scheduler().statusJson();
          Matcher m = HELD.matcher(status);
          if (m.find()) {
            int held = Integer.parseInt(m.group(2));
            int limit = Integer.parseInt(m.group(3));
            int running = Integer.parseInt(m.group(4));
            maxRunning.accumulateAndGet(running, Math::max);
            if (running > 1 && held > limit) {
              synchronized (violations) {
                violations.add(status);
              }
            }
          }
          if (status.contains("\"reason\":\"over_share\"") || status.contains("\"reason\":\"ranked_behind\"")) {
            sawWaiting.incrementAndGet();
          }
          try {
            Thread.sleep(200);
          } catch (InterruptedException e) {
            return;
          }
        }
      });
      watcher.setDaemon(true);
      watcher.start();
      List<JobSpec> specs = new ArrayList<>();
      int[] maps = {4, 1, 3, 2, 1, 2};
      for (int i = 0; i < maps.length; i++) {
        specs.add(new JobSpec("gate-" + i, maps[i], 1, 1_000));
      }
      List<JobResult> results = cluster.run(specs, 200);
      done.set(true);
      watcher.join(5_000);
      for (JobResult r : results) {
        System.out.println(r);
        assertTrue(r.name + " succeeded", r.success);
      }
      System.out.printf("status polls with a job waiting over the share or ranked behind: %d; most AMs running: %d%n",
          sawWaiting.get(), maxRunning.get());
      assertTrue("the status showed jobs waiting for their AM with a reason", sawWaiting.get() > 0);
      assertTrue("AMs over the share while more than one ran: " + violations, violations.isEmpty());
      assertFalse("no fallback: " + cluster.scheduler().getFallbackCause(), cluster.scheduler().isFallbackActive());
      String status = cluster.scheduler().statusJson();
      assertTrue("nothing waits at the end: " + status, status.contains("\"waiting\":[]"));
      assertEquals("every job finished in the engine", maps.length, finished(status));
    }
  }

  /** {@code stats.finished} of the status JSON. */
  private static int finished(String status) {
    Matcher m = Pattern.compile("\"finished\":(\\d+)").matcher(status);
    return m.find() ? Integer.parseInt(m.group(1)) : -1;
  }
}
