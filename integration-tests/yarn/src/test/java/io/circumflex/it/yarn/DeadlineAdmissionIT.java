package io.circumflex.it.yarn;

import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import io.circumflex.it.yarn.MiniCircumflexCluster.JobSpec;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.mapreduce.Job;
import org.junit.Test;

/**
 * RTMR admission control on a real MiniMRYarnCluster: a job whose deadline can be met is accepted
 * and meets it; a job whose minimum work cannot fit before its deadline is refused at submission,
 * and the client sees the engine's reason.
 */
public class DeadlineAdmissionIT {
  private static Map<String, String> rtmr() {
    Map<String, String> keys = new HashMap<>();
    keys.put("circumflex.policy", "rtmr");
    keys.put("circumflex.epoch.ms", "1000");
    // Worst-case task times the admission test assumes (per task: no input bytes declared).
    keys.put("circumflex.rtmr.map.task.ms", "10000");
    keys.put("circumflex.rtmr.reduce.task.ms", "10000");
    return keys;
  }

  private static Map<String, String> deadline(long relativeMs) {
    Map<String, String> keys = new HashMap<>();
    keys.put("circumflex.job.deadline.ms", Long.toString(relativeMs));
    return keys;
  }

  @Test
  public void meetableDeadlineIsMetAndImpossibleOneIsRefusedWithTheReason() throws Exception {
    try (MiniCircumflexCluster cluster = MiniCircumflexCluster.start("it-deadline", rtmr(), 2)) {
      // 2 maps + 1 reduce at 10 s worst case each need about 20 s: a 10-minute deadline is easy.
      long deadlineMs = 600_000;
      Job ok = cluster.sleepJob(new JobSpec("meetable", 2, 1, 1000), deadline(deadlineMs));
      long submitted = System.currentTimeMillis();
      ok.submit();
      assertTrue("the accepted job must succeed", ok.waitForCompletion(false));
      long response = ok.getFinishTime() - submitted;
      System.out.println("rtmr: meetable job finished in " + response + " ms (deadline " + deadlineMs + " ms)");
      assertTrue("the accepted job must meet its deadline: " + response + " ms", response <= deadlineMs);

      // 40 maps can never finish in 5 s when one map may take 10 s.
      Job impossible = cluster.sleepJob(new JobSpec("impossible", 40, 1, 1000), deadline(5_000));
      try {
        impossible.submit();
        boolean succeeded = impossible.waitForCompletion(false);
        String why = impossible.getStatus() == null ? "" : impossible.getStatus().getFailureInfo();
        assertFalse("an impossible deadline must not run to success", succeeded);
        assertTrue("the refusal must carry the engine's reason: " + why, why.contains("cannot meet its deadline"));
      } catch (IOException refused) {
        String why = String.valueOf(refused.getMessage());
        System.out.println("rtmr: impossible job refused at submission: " + why);
        assertTrue("the refusal must carry the engine's reason: " + why, why.contains("cannot meet its deadline"));
      }
      assertFalse("no fallback: " + cluster.scheduler().getFallbackCause(), cluster.scheduler().isFallbackActive());
    }
  }
}
