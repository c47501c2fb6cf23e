package io.circumflex.it.gridmix;

import java.io.File;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;

/**
 * The main job ({@code make demo}): Circumflex FLEX against Hadoop's own FairScheduler and
 * CapacityScheduler on an embedded MiniMRYarnCluster, each configured as in the Gridmix evaluation
 * ({@link EvalCluster}: preemption on for FLEX and the FairScheduler, the CapacityScheduler's default AM
 * limit). For each scheduler a fresh cluster runs the same workload, then every job's response time
 * (finish minus submission, ResourceManager times), the mean per scheduler and FLEX's ratio to each
 * Hadoop scheduler are printed.
 *
 * <p>The workload is the Gridmix evaluation's recorded one ({@link GridmixEval#RECORDED}: six MapReduce
 * sleep jobs of 1-8 maps, two with a reduce, 2-3 s apart) on {@value EvalCluster#DEFAULT_TASK_SLOTS}
 * task slots, chosen because it already existed, before any demo run. One round: the figures include
 * every container's JVM start-up on this machine and vary from run to run; `make gridmix-loaded` is the
 * measured comparison (rounds, intervals). Arguments: {@code --work DIR}, {@code --schedulers a,b,...}.
 */
public final class Demo {
  private Demo() {}

  static final List<String> SCHEDULERS = Arrays.asList("circumflex-flex", "hadoop-fair", "hadoop-capacity");

  public static void main(String[] args) throws Exception {
    File work = new File("build/demo-work").getAbsoluteFile();
    List<String> schedulers = SCHEDULERS;
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--work") && i + 1 < args.length) {
        work = new File(args[++i]).getAbsoluteFile();
      } else if (args[i].equals("--schedulers") && i + 1 < args.length) {
        schedulers = Arrays.asList(args[++i].split(","));
      } else {
        throw new IllegalArgumentException("bad argument " + args[i] + ": expected --work DIR or --schedulers a,b,...");
      }
    }
    DefaultMetricsSystem.setMiniClusterMode(true);
    Files.createDirectories(work.toPath());
    int[][] workload = GridmixEval.RECORDED;
    Map<String, double[]> responseS = new LinkedHashMap<>();
    List<String> failures = new ArrayList<>();
    for (String scheduler : schedulers) {
      System.out.printf(Locale.ROOT, "== %d jobs under %s ...%n", workload.length, scheduler);
      long t0 = System.currentTimeMillis();
      double[] rt = new double[workload.length];
      try (EvalCluster cluster = EvalCluster.start("demo-" + scheduler, scheduler, workload.length,
          EvalCluster.DEFAULT_TASK_SLOTS, work)) {
        List<Job> jobs = GridmixEval.submitSleepJobs(cluster, workload, workload.length, "demo");
        for (Job job : jobs) {
          if (!job.waitForCompletion(false)) {
            failures.add(job.getJobName() + " under " + scheduler);
          }
        }
        // Submission and finish as the ResourceManager saw them, not the finished Job's own start time.
        Map<String, JobStatus> byName = GridmixEval.jobStatusesByName(cluster.config());
        for (int i = 0; i < jobs.size(); i++) {
          JobStatus s = byName.get(jobs.get(i).getJobName());
          boolean ok = s != null && s.getState() == JobStatus.State.SUCCEEDED;
          rt[i] = ok ? (s.getFinishTime() - s.getStartTime()) / 1000.0 : Double.NaN;
        }
        String fallback = cluster.fallbackCause();
        if (fallback != null) {
          failures.add(scheduler + ": the Circumflex engine fell back to FIFO: " + fallback);
        }
      }
      responseS.put(scheduler, rt);
      System.out.printf(Locale.ROOT, "   done in %.0f s%n", (System.currentTimeMillis() - t0) / 1000.0);
    }
    print(workload, responseS);
    if (!failures.isEmpty()) {
      System.out.println("failed:");
      failures.forEach(f -> System.out.println("  " + f));
      System.exit(1);
    }
    // Hadoop's mini clusters leave non-daemon threads behind.
    System.exit(0);
  }

  private static void print(int[][] workload, Map<String, double[]> responseS) {
    System.out.println();
    System.out.printf(Locale.ROOT, "Response time (s): finish - submission, MiniMRYarnCluster, 1 NodeManager, "
        + "%d task slots besides the AMs%n", EvalCluster.DEFAULT_TASK_SLOTS);
    StringBuilder header = new StringBuilder(String.format(Locale.ROOT, "%-16s", "job"));
    responseS.keySet().forEach(s -> header.append(String.format(Locale.ROOT, "%17s", s)));
    System.out.println(header);
    for (int i = 0; i < workload.length; i++) {
      StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "%-16s",
          String.format(Locale.ROOT, "%d: %dm %dr", i, workload[i][0], workload[i][1])));
      for (double[] rt : responseS.values()) {
        row.append(String.format(Locale.ROOT, "%17s", Double.isNaN(rt[i]) ? "FAILED" : String.format(Locale.ROOT, "%.1f", rt[i])));
      }
      System.out.println(row);
    }
    Map<String, Double> means = new LinkedHashMap<>();
    StringBuilder meanRow = new StringBuilder(String.format(Locale.ROOT, "%-16s", "mean"));
    for (Map.Entry<String, double[]> e : responseS.entrySet()) {
      double mean = Arrays.stream(e.getValue()).average().orElse(Double.NaN);
      means.put(e.getKey(), mean);
      meanRow.append(String.format(Locale.ROOT, "%17.1f", mean));
    }
    System.out.println(meanRow);
    Double flex = means.get("circumflex-flex");
    if (flex != null) {
      for (Map.Entry<String, Double> e : means.entrySet()) {
        if (!e.getKey().equals("circumflex-flex")) {
          System.out.printf(Locale.ROOT, "mean response time, circumflex-flex / %s: %.2fx%n", e.getKey(), flex / e.getValue());
        }
      }
    }
  }
}
