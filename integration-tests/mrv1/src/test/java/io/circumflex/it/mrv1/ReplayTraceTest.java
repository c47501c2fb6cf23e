package io.circumflex.it.mrv1;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.junit.Test;

/** The replayer's trace parsing and report, without a cluster. */
public class ReplayTraceTest {
  @Test
  public void parsesJobsCommentsHeaderAndPerJobConf() {
    List<Replay.TraceJob> jobs = Replay.parse(Arrays.asList(
        "# comment", "name,arrival_ms,maps,reduces,map_ms,reduce_ms,conf", "a,0,3,1,1000,500,",
        "b,250,1,0,10,0,circumflex.job.weight=2;circumflex.job.deadline.ms=60000"));
    assertEquals(2, jobs.size());
    assertEquals("a", jobs.get(0).name);
    assertEquals(3, jobs.get(0).maps);
    assertTrue(jobs.get(0).conf.isEmpty());
    assertEquals(250, jobs.get(1).arrivalMs);
    assertEquals("2", jobs.get(1).conf.get("circumflex.job.weight"));
    assertEquals("60000", jobs.get(1).conf.get("circumflex.job.deadline.ms"));
  }

  @Test
  public void malformedLinesNameTheLineAndField() {
    expectError(Arrays.asList("a,0,zero,1,10,10"), "line 1", "maps");
    expectError(Arrays.asList("a,0,0,1,10,10"), "line 1", "maps = 0");
    expectError(Arrays.asList("x", "a,0,1,1"), "line 1", "expected name");
    expectError(Arrays.asList("a,0,1,1,10,10,weight"), "line 1", "key=value");
    expectError(Collections.singletonList("# nothing"), "no jobs", "");
  }

  private static void expectError(List<String> lines, String a, String b) {
    try {
      Replay.parse(lines);
      fail("expected an error for " + lines);
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().contains(a) && e.getMessage().contains(b));
    }
  }

  @Test
  public void theShippedTraceParses() throws Exception {
    File trace = new File(System.getProperty("circumflex.it.projectdir", "."), "traces/mixed-8.csv");
    if (!trace.isFile()) {
      trace = new File("traces/mixed-8.csv");
    }
    List<Replay.TraceJob> jobs = Replay.parse(Files.readAllLines(trace.toPath(), StandardCharsets.UTF_8));
    assertEquals(8, jobs.size());
  }

  @Test
  public void reportsResponseTimesAndRejections() {
    Replay.TraceJob a = new Replay.TraceJob("a", 0, 2, 1, 10, 10, Collections.<String, String>emptyMap());
    Replay.TraceJob b = new Replay.TraceJob("b", 1000, 1, 0, 10, 0, Collections.<String, String>emptyMap());
    List<Replay.Outcome> outcomes = Arrays.asList(new Replay.Outcome(0, a, "job_1", 0, 100, 5000, false, "SUCCEEDED"),
        new Replay.Outcome(1, b, "", 1000, -1, -1, true, "REJECTED"));
    String csv = Replay.jobsCsv(outcomes);
    assertTrue(csv, csv.startsWith("index,external_id,arrival_ms,start_ms,finish_ms,response_ms,"));
    assertTrue(csv, csv.contains("0,a,0,100,5000,5000,2,1,false,SUCCEEDED"));
    assertTrue(csv, csv.contains("1,b,1000,,,,1,0,true,REJECTED"));
    double[] s = Replay.summary(outcomes);
    assertEquals(5.0, s[0], 1e-9);
    assertEquals(5.0, s[1], 1e-9);
    assertEquals(5.0, s[2], 1e-9);
    assertEquals(1.0, s[3], 1e-9);
  }
}
