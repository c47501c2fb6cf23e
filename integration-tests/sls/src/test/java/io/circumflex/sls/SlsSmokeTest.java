package io.circumflex.sls;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.List;
import org.junit.Test;

/**
 * A small SLS run (20 simulated NMs, 10 applications) under one Circumflex policy, end to end: SLS
 * must start the RM with {@link SlsCircumflexScheduler}, every application must finish, and SLS's
 * metrics (timers, {@code realtimetrack.json}, {@code jobruntime.csv}) must be written. The full
 * comparison at scale is {@code make sls}.
 */
public class SlsSmokeTest {
  @Test
  public void tenApplicationsFinishUnderCircumflexFairAndMetricsAreWritten() throws Exception {
    Path work = Paths.get(System.getProperty("circumflex.sls.workdir", "build/sls-smoke"));
    SlsInput.Params params = SlsInput.Params.parse(Arrays.asList("--nodes", "20", "--nodes-per-rack", "10", "--jobs",
        "10", "--max-maps", "8", "--max-reduces", "2", "--arrival-span-ms", "5000", "--min-task-ms", "1000",
        "--max-task-ms", "3000", "--seed", "7"));
    List<SlsInput.Job> jobs = SlsInput.write(params, work.resolve("input"));
    assertEquals(10, jobs.size());

    Path out = work.resolve("circumflex-fair");
    SlsRun.Outcome o = SlsRun.run("circumflex:fair", work.resolve("input/trace.json"),
        work.resolve("input/nodes.json"), out, 80_000);

    assertNull("the native engine must run (no FIFO fallback)", o.fallback);
    assertEquals("applications SLS started", 10, o.apps);
    assertTrue("all applications finish; " + o.remaining + " left after " + o.wallMs + " ms", o.finished);
    double[] nodeUpdate = o.timers.get("handle.NODE_UPDATE");
    assertTrue("SLS timed NODE_UPDATE events", nodeUpdate != null && nodeUpdate[0] > 0);
    double[] own = o.timers.get("own.NODE_UPDATE");
    // Heartbeats go on while the two are read one after the other, so the counts may differ by a few.
    assertTrue("the harness's heartbeat timer saw the NODE_UPDATEs SLS timed",
        own != null && Math.abs(own[0] - nodeUpdate[0]) <= 5 + nodeUpdate[0] / 100);
    double[] allocate = o.timers.get("allocate");
    assertTrue("SLS timed allocate calls", allocate != null && allocate[0] > 0);

    List<String> runtimes = Files.readAllLines(out.resolve("jobruntime.csv"), StandardCharsets.UTF_8);
    assertEquals("jobruntime.csv: header + one line per application", 11, runtimes.size());
    String track = new String(Files.readAllBytes(out.resolve("realtimetrack.json")), StandardCharsets.UTF_8);
    assertTrue("realtimetrack.json has samples", track.startsWith("[") && track.length() > 10);
    assertTrue("summary.json written", Files.size(out.resolve("summary.json")) > 0);
  }
}
