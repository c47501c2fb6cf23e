package io.circumflex.sls;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class SlsInputTest {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  private static final long MIB = 1L << 20;

  @Test
  public void sameArgumentsWriteTheSameBytes() throws Exception {
    List<String> args = Arrays.asList("--nodes", "50", "--jobs", "20", "--seed", "3");
    Path a = tmp.newFolder("a").toPath();
    Path b = tmp.newFolder("b").toPath();
    SlsInput.write(SlsInput.Params.parse(args), a);
    SlsInput.write(SlsInput.Params.parse(args), b);
    assertArrayEquals(Files.readAllBytes(a.resolve("trace.json")), Files.readAllBytes(b.resolve("trace.json")));
    assertArrayEquals(Files.readAllBytes(a.resolve("nodes.json")), Files.readAllBytes(b.resolve("nodes.json")));
  }

  @Test
  public void topologyHasEveryNodeOnceInRacksOfTheGivenSize() throws Exception {
    Path dir = tmp.newFolder().toPath();
    SlsInput.write(SlsInput.Params.parse(Arrays.asList("--nodes", "1000", "--nodes-per-rack", "40", "--jobs", "1")),
        dir);
    List<String> racks = Files.readAllLines(dir.resolve("nodes.json"), StandardCharsets.UTF_8);
    assertEquals(25, racks.size());
    String all = String.join("\n", racks);
    assertTrue(all.contains("{\"node\":\"node0\"}") && all.contains("{\"node\":\"node999\"}"));
    assertEquals(1000, all.split("\\{\"node\"").length - 1);
  }

  /** Worked example of the SWIM model (class docs), including the scaling of submit times and the caps. */
  @Test
  public void swimJobsFollowTheModel() throws Exception {
    Path swim = tmp.newFile("swim.tsv").toPath();
    Files.write(swim, Arrays.asList(
        // 1 GiB input, 2 GiB shuffle + 1 GiB output: 16 maps of 64 MiB, 3 reduces of 1 GiB.
        "job0\t100\t0\t" + (1024 * MIB) + "\t" + (2048 * MIB) + "\t" + (1024 * MIB),
        // map-only, tiny input, 640 MiB output: 10 maps (one per 64 MiB written), no reduces.
        "job1\t150\t50\t" + 1000 + "\t0\t" + (640 * MIB),
        // 10 GiB input: 160 maps, capped at 100.
        "job2\t300\t150\t" + (10240 * MIB) + "\t0\t0"), StandardCharsets.UTF_8);
    SlsInput.Params p = SlsInput.Params.parse(Arrays.asList("--swim", swim.toString(), "--jobs", "3",
        "--arrival-span-ms", "20000", "--max-maps", "100", "--min-task-ms", "1000", "--max-task-ms", "100000"));
    List<SlsInput.Job> jobs = SlsInput.swim(p);
    assertEquals(3, jobs.size());
    // Submit times 100, 150, 300 s map onto 0, 5, 20 s.
    assertEquals(0, jobs.get(0).submitMs);
    assertEquals(5000, jobs.get(1).submitMs);
    assertEquals(20000, jobs.get(2).submitMs);
    assertEquals(16, jobs.get(0).mapMs.length);
    assertEquals(3, jobs.get(0).reduceMs.length);
    // A 64 MiB map: 4 s + 64 MiB / 16 MiB/s = 8 s; a 1 GiB reduce: 4 s + 1024 / 8 = 132 s, clamped to 100 s.
    assertEquals(8000, jobs.get(0).mapMs[0]);
    assertEquals(100000, jobs.get(0).reduceMs[0]);
    assertEquals(10, jobs.get(1).mapMs.length);
    assertEquals(0, jobs.get(1).reduceMs.length);
    assertEquals(100, jobs.get(2).mapMs.length);
  }

  @Test
  public void badOptionsNameTheOptionAndValue() {
    try {
      SlsInput.Params.parse(Arrays.asList("--jobs", "-3"));
      fail("negative job count accepted");
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("--jobs") && e.getMessage().contains("-3"));
    }
    try {
      SlsInput.Params.parse(Arrays.asList("--jbos", "3"));
      fail("unknown option accepted");
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("--jbos"));
    }
  }
}
