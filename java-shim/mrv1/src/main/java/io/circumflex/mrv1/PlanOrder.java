package io.circumflex.mrv1;

import java.util.ArrayList;
import java.util.List;

/**
 * Reads the job order out of the engine's plan JSON ({@code NativeEngine.planJson()}).
 *
 * <p>The plan is {@code {"computed_at":T,"entries":[{"job":ID,"target":[M,R],...},...]}} with
 * entries in priority order. Only the ids and their order are needed here (for
 * {@code TaskScheduler.getJobs}), so this scans for the {@code "job":} keys inside
 * {@code "entries"} instead of pulling a JSON library into the JobTracker's classpath. The format
 * is produced by serde from {@code policy::Plan}; a change there that this scanner cannot read
 * yields an empty order, and the caller falls back to submission order.
 */
public final class PlanOrder {
  private static final String ENTRIES = "\"entries\"";
  private static final String JOB_KEY = "\"job\":";

  private PlanOrder() {}

  /** Engine job ids in plan order; empty when the JSON has no readable entries. */
  public static List<Integer> jobIds(String planJson) {
    List<Integer> ids = new ArrayList<Integer>();
    if (planJson == null) {
      return ids;
    }
    int at = planJson.indexOf(ENTRIES);
    if (at < 0) {
      return ids;
    }
    while ((at = planJson.indexOf(JOB_KEY, at)) >= 0) {
      at += JOB_KEY.length();
      while (at < planJson.length() && planJson.charAt(at) == ' ') {
        at++;
      }
      int start = at;
      while (at < planJson.length() && Character.isDigit(planJson.charAt(at))) {
        at++;
      }
      if (at == start) {
        continue;
      }
      try {
        ids.add(Integer.valueOf(planJson.substring(start, at)));
      } catch (NumberFormatException tooLarge) {
        // An id beyond int range cannot be one the engine handed out; skip it.
      }
    }
    return ids;
  }
}
