package io.circumflex.sls;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertEquals;

import java.util.Map;
import org.junit.Test;

public class HeartbeatCostTest {
  @Test
  public void busyAndIdleHeartbeatsAreSummarisedSeparatelyAndTogether() {
    HeartbeatCost cost = new HeartbeatCost();
    for (long ns : new long[] {3_000, 1_000, 2_000, 10_000}) {
      cost.record(true, ns);
    }
    for (int i = 1; i <= 2000; i++) { // past the initial capacity, so growth is exercised
      cost.record(false, 500);
    }
    Map<String, double[]> stats = cost.stats();
    // count, window, mean, p50, p90, p99, max (microseconds); nearest-rank quantiles
    assertArrayEquals(new double[] {4, 4, 4.0, 2.0, 10.0, 10.0, 10.0}, stats.get("own.NODE_UPDATE.busy"), 1e-9);
    assertArrayEquals(new double[] {2000, 2000, 0.5, 0.5, 0.5, 0.5, 0.5}, stats.get("own.NODE_UPDATE.idle"), 1e-9);
    double[] all = stats.get("own.NODE_UPDATE");
    assertEquals(2004, all[0], 0.0);
    assertEquals((16_000 + 2000 * 500) / 2004.0 / 1000.0, all[2], 1e-9);
    assertEquals(10.0, all[6], 0.0);
  }

  @Test
  public void anEmptyClassIsLeftOut() {
    HeartbeatCost cost = new HeartbeatCost();
    cost.record(false, 1_000);
    Map<String, double[]> stats = cost.stats();
    assertFalse(stats.containsKey("own.NODE_UPDATE.busy"));
    assertEquals(1, stats.get("own.NODE_UPDATE.idle")[0], 0.0);
  }
}
