package io.circumflex.it.scan;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.List;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/** {@link ScanBench}'s {@code --resume}: which rounds of an earlier jobs.csv are kept; how its summary states intervals. */
public class ScanBenchResumeTest {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  private static final String[] SETUPS = {"circumflex+sharing", "flex"};
  private static final String HEADER = "setup,round,job,kind,arrival_s,response_s,dataset_bytes_read,hdfs_bytes_read";

  private static String row(String setup, int round, int job) {
    return setup + "," + round + "," + job + ",GREP,1.500,100.250,1073741824,1073741900";
  }

  private File csv(String... lines) throws Exception {
    File f = tmp.newFile("jobs.csv");
    Files.write(f.toPath(), Arrays.asList(lines), StandardCharsets.UTF_8);
    return f;
  }

  @Test
  public void keepsOnlyLeadingCompleteRoundsAndDropsThePartialOne() throws Exception {
    File f = csv(HEADER,
        row("circumflex+sharing", 0, 0), row("circumflex+sharing", 0, 1), row("flex", 0, 0), row("flex", 0, 1),
        // round 1: only one set-up finished, so it is run again
        row("flex", 1, 0), row("flex", 1, 1));
    List<ScanBench.Row> kept = ScanBench.completeRounds(f, SETUPS, 2);
    assertEquals(4, kept.size());
    for (ScanBench.Row r : kept) {
      assertEquals(0, r.round);
    }
    assertEquals(100250, kept.get(0).responseMs);
    assertEquals(1073741824L, kept.get(0).datasetBytes);
  }

  @Test
  public void aMissingFileKeepsNothing() throws Exception {
    assertTrue(ScanBench.completeRounds(new File(tmp.getRoot(), "absent.csv"), SETUPS, 2).isEmpty());
  }

  @Test
  public void aMalformedLineIsRefusedByName() throws Exception {
    File f = csv(HEADER, "flex,0,0,NOT_A_KIND,1,2,3,4");
    try {
      ScanBench.completeRounds(f, SETUPS, 1);
      fail("a malformed line must be refused");
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("line 2"));
    }
  }

  @Test
  public void oneRoundIsReportedWithoutAnIntervalAndMoreWithOne() {
    assertEquals("984.8 (one round: no interval)", ScanBench.withInterval(new double[] {984.81, Double.NaN}, 1));
    assertEquals("0.91 ± 0.07", ScanBench.withInterval(new double[] {0.911, 0.0712}, 2));
  }
}
