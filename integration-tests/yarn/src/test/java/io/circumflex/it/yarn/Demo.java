package io.circumflex.it.yarn;

import io.circumflex.it.yarn.MiniCircumflexCluster.JobResult;
import io.circumflex.it.yarn.MiniCircumflexCluster.JobSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;

/**
 * The main job ({@code make demo}): runs one small workload on an embedded MiniMRYarnCluster under
 * each policy (fifo, fair) and prints every job's response time (finish minus submission) and the
 * mean per policy.
 *
 * <p>Workload: one long job (16 maps of 3 s) submitted first, then three short jobs (2 maps of
 * 1.5 s each), all MapReduce sleep jobs, submitted 3 s apart, on 4 task slots. FIFO makes the short
 * jobs wait until every map of the long job has started; fair sharing gives them slots as they
 * arrive. The figures include JVM start-up of every container (seconds each on a busy 2-core
 * machine), so they vary from run to run.
 * Arguments: policy names to run (default {@code fifo fair}).
 */
public final class Demo {
  private Demo() {}

  static List<JobSpec> workload() {
    return Arrays.asList(
        new JobSpec("long-16maps", 16, 0, 3000),
        new JobSpec("short-a", 2, 0, 1500),
        new JobSpec("short-b", 2, 0, 1500),
        new JobSpec("short-c", 2, 0, 1500));
  }

  public static void main(String[] args) throws Exception {
    DefaultMetricsSystem.setMiniClusterMode(true);
    List<String> policies = args.length > 0 ? Arrays.asList(args) : Arrays.asList("fifo", "fair");
    Map<String, List<JobResult>> byPolicy = new LinkedHashMap<>();
    for (String policy : policies) {
      Map<String, String> keys = new HashMap<>();
      keys.put("circumflex.policy", policy);
      keys.put("circumflex.epoch.ms", "1000");
      System.out.println("== running the workload under " + policy + " ...");
      try (MiniCircumflexCluster cluster = MiniCircumflexCluster.start("demo-" + policy, keys, workload().size())) {
        List<JobResult> results = cluster.run(workload(), 3000);
        if (cluster.scheduler().isFallbackActive()) {
          throw new IllegalStateException("native engine failed: " + cluster.scheduler().getFallbackCause());
        }
        byPolicy.put(policy, results);
      }
    }
    System.out.println();
    System.out.println("Per-job response time (s): finish - submit, MiniMRYarnCluster, 1 NodeManager, "
        + MiniCircumflexCluster.TASK_SLOTS + " task slots");
    StringBuilder header = new StringBuilder(String.format("%-13s", "job"));
    for (String policy : byPolicy.keySet()) {
      header.append(String.format("%10s", policy));
    }
    System.out.println(header);
    List<JobSpec> specs = workload();
    for (int i = 0; i < specs.size(); i++) {
      StringBuilder row = new StringBuilder(String.format("%-13s", specs.get(i).name));
      for (List<JobResult> results : byPolicy.values()) {
        JobResult r = results.get(i);
        row.append(String.format("%10s", r.success ? String.format("%.1f", r.responseMs() / 1000.0) : "FAILED"));
      }
      System.out.println(row);
    }
    StringBuilder mean = new StringBuilder(String.format("%-13s", "mean"));
    for (List<JobResult> results : byPolicy.values()) {
      double sum = 0;
      for (JobResult r : results) {
        sum += r.responseMs();
      }
      mean.append(String.format("%10.1f", sum / results.size() / 1000.0));
    }
    System.out.println(mean);
    List<Boolean> allOk = new ArrayList<>();
    for (List<JobResult> results : byPolicy.values()) {
      for (JobResult r : results) {
        allOk.add(r.success);
      }
    }
    if (allOk.contains(Boolean.FALSE)) {
      System.exit(1);
    }
  }
}
