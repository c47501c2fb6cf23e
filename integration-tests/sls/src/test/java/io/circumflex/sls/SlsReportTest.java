package io.circumflex.sls;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class SlsReportTest {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @Test
  public void nearestRankPercentiles() {
    double[] s = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    assertEquals(5, SlsReport.pct(s, 0.5), 0);
    assertEquals(9, SlsReport.pct(s, 0.9), 0);
    assertEquals(10, SlsReport.pct(s, 1.0), 0);
    assertEquals(5.5, SlsReport.mean(s), 1e-9);
  }

  @Test
  public void runtimesAndMakespanComeFromSimulatedTimes() throws Exception {
    Path csv = tmp.newFile("jobruntime.csv").toPath();
    Files.write(csv, Arrays.asList("JobID,real_start_time,real_end_time,simulate_start_time,simulate_end_time",
        "application_1_0001,0,5000,100,6100", "application_1_0002,1000,3000,1200,9200"), StandardCharsets.UTF_8);
    SlsReport.Result r = new SlsReport.Result("fair", null);
    SlsReport.readRuntimes(csv, r);
    assertEquals(Arrays.asList(6000L, 8000L), r.runtimesMs);
    assertEquals(9100, r.makespanMs);
  }

  /** The ratio table divides Circumflex's NODE_UPDATE mean by Fair's and Capacity's. */
  @Test
  public void reportStatesTheNodeUpdateRatios() throws Exception {
    Path out = tmp.newFolder().toPath();
    summary(out, "circumflex-fifo", 20.0);
    summary(out, "fair", 80.0);
    summary(out, "capacity", 50.0);
    List<String> names = Arrays.asList("circumflex:fifo", "fair", "capacity");
    SlsReport.write(out, names, SlsInput.Params.parse(Collections.<String>emptyList()),
        Collections.<SlsInput.Job>emptyList());
    String md = new String(Files.readAllBytes(out.resolve("report.md")), StandardCharsets.UTF_8);
    assertTrue(md, md.contains("| circumflex:fifo | 20.0 | 0.25x | 0.40x | met |"));
    assertTrue(Files.readAllLines(out.resolve("node-update.svg")).get(0).startsWith("<svg"));
  }

  /** The resources each run measured become a table, with CPU / wall as the cores used. */
  @Test
  public void reportStatesWhatEachRunCost() throws Exception {
    Path out = tmp.newFolder().toPath();
    SlsRun.Outcome o = outcome(10.0);
    o.wallMs = 100_000;
    o.startupMs = 20_000;
    o.resources = new SlsRun.Resources();
    o.resources.cpuMs = 150_000;
    o.resources.heapUsedPeakMb = 1500;
    o.resources.heapMaxMb = 6144;
    o.resources.gcCount = 40;
    o.resources.gcMs = 2_500;
    o.resources.loadAverage = 2.5;
    o.resources.threadCpuMs.put(SlsRun.threadGroup("pool-3-thread-17"), 90_000L);
    SlsRun.writeSummary(Files.createDirectories(out.resolve("fair")).resolve("summary.json"), "fair", o);
    SlsReport.write(out, Arrays.asList("fair"), SlsInput.Params.parse(Collections.<String>emptyList()),
        Collections.<SlsInput.Job>emptyList());
    String md = new String(Files.readAllBytes(out.resolve("report.md")), StandardCharsets.UTF_8);
    assertTrue(md, md.contains("| fair | 100 | 20.0 | 150 | 1.50 | 1500 | 6144 | 40 | 2.50 | 2.50 |"));
    assertTrue(md, md.contains("| pool-N-thread-N | 90.0 |"));
  }

  private static SlsRun.Outcome outcome(double meanUs) {
    SlsRun.Outcome o = new SlsRun.Outcome();
    o.finished = true;
    o.apps = 1;
    o.timers = new java.util.LinkedHashMap<>();
    o.timers.put("handle.NODE_UPDATE", new double[] {100, 100, meanUs, meanUs, meanUs, meanUs, meanUs});
    return o;
  }

  private static void summary(Path out, String dir, double meanUs) throws Exception {
    Path d = Files.createDirectories(out.resolve(dir));
    SlsRun.Outcome o = new SlsRun.Outcome();
    o.finished = true;
    o.apps = 1;
    o.timers = new java.util.LinkedHashMap<>();
    o.timers.put("handle.NODE_UPDATE", new double[] {100, 100, meanUs, meanUs, meanUs, meanUs, meanUs});
    SlsRun.writeSummary(d.resolve("summary.json"), dir, o);
  }
}
