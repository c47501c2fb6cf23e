package io.circumflex.it.gridmix;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapred.gridmix.Gridmix;
import org.apache.hadoop.mapreduce.Cluster;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.SleepJob;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.tools.rumen.TraceBuilder;
import org.apache.hadoop.util.ToolRunner;

/**
 * The Gridmix evaluation ({@code make gridmix}; docs/evaluation.md). For each trace, for each
 * scheduler: start a fresh {@link EvalCluster}, replay the trace with hadoop-gridmix 3.4.1
 * ({@code SLEEPJOB}: every task sleeps for its traced runtime; {@code REPLAY}: jobs are submitted at
 * the trace's gaps), then read every job's submission and finish time from the ResourceManager and
 * write {@code <out>/<trace>/jobs-<scheduler>.csv}. {@code circumflex gridmix-report} turns the CSVs
 * into the tables and plots.
 *
 * <p>Traces: {@code recorded} is made here: a few MapReduce sleep jobs run on a mini cluster
 * (CapacityScheduler), then Rumen's TraceBuilder turns their job history into a Rumen trace
 * ({@code <out>/recorded/trace.json}). {@code burst} is recorded the same way from a burst of eight
 * jobs of mixed sizes (16, 12, 8, 6, 4, 3, 2 and 1 maps of 20 s, one 5 s reduce each, largest first,
 * 2 s apart): the loaded regime of docs/evaluation.md, where queueing rather than JVM start-up decides
 * response times. {@code swim} (and any {@code swim<suffix>}, such as {@code swim-mid}) is a Rumen trace given
 * with {@code --swim-trace} ({@code --swim<suffix>-trace}) (written by
 * {@code circumflex gridmix-trace} from the SWIM day).
 *
 * <p>Arguments: {@code --work DIR} (scratch), {@code --out DIR} (default {@code results/gridmix}),
 * {@code --traces recorded,swim}, {@code --swim-trace FILE}, {@code --schedulers a,b,...},
 * {@code --small} (the recorded trace with 3 jobs instead of 6), {@code --reuse-trace} (keep an existing
 * {@code <out>/recorded/trace.json} instead of recording a new one, so that one scheduler per invocation,
 * each under the machine lock, still replays the same recorded trace), {@code --task-slots N} (task
 * containers on the node, default {@value EvalCluster#DEFAULT_TASK_SLOTS}), {@code --repeat N} (replay
 * each trace N times, the schedulers interleaved within each round so that drifting machine load falls on
 * all of them alike; round k writes {@code <out>/<trace>/run<k>/jobs-<scheduler>.csv}).
 */
public final class GridmixEval {
  private GridmixEval() {}

  /** One sleep job of the recorded workload: maps, reduces, map and reduce sleep (ms), gap before it (ms). */
  static final int[][] RECORDED = {
    {8, 1, 8000, 4000, 0},
    {1, 0, 2000, 0, 3000},
    {4, 0, 4000, 0, 2000},
    {2, 1, 2000, 2000, 2000},
    {1, 0, 3000, 0, 2000},
    {3, 0, 2000, 0, 2000},
  };

  /** The burst workload (same columns): mixed sizes, largest first, 2 s apart. */
  private static final int[][] BURST = {
    {16, 1, 20000, 5000, 0},
    {12, 1, 20000, 5000, 2000},
    {8, 1, 20000, 5000, 2000},
    {6, 1, 20000, 5000, 2000},
    {4, 1, 20000, 5000, 2000},
    {3, 1, 20000, 5000, 2000},
    {2, 1, 20000, 5000, 2000},
    {1, 1, 20000, 5000, 2000},
  };

  public static void main(String[] args) throws Exception {
    Map<String, String> opts = new HashMap<>();
    boolean small = false;
    boolean reuseTrace = false;
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--small")) {
        small = true;
      } else if (args[i].equals("--reuse-trace")) {
        reuseTrace = true;
      } else if (args[i].startsWith("--") && i + 1 < args.length) {
        opts.put(args[i].substring(2), args[++i]);
      } else {
        throw new IllegalArgumentException("bad argument " + args[i]
            + ": expected --work, --out, --traces, --swim-trace, --schedulers, --task-slots, --repeat,"
            + " --circumflex-keys, --small or --reuse-trace");
      }
    }
    File work = new File(opts.getOrDefault("work", "build/gridmix-work")).getAbsoluteFile();
    File out = new File(opts.getOrDefault("out", "results/gridmix")).getAbsoluteFile();
    List<String> traces = Arrays.asList(opts.getOrDefault("traces", "recorded,swim").split(","));
    List<String> schedulers = opts.containsKey("schedulers")
        ? Arrays.asList(opts.get("schedulers").split(",")) : EvalCluster.SCHEDULERS;
    int taskSlots = positive(opts, "task-slots", EvalCluster.DEFAULT_TASK_SLOTS);
    int repeat = positive(opts, "repeat", 1);
    Map<String, String> circumflexKeys = circumflexKeys(opts.getOrDefault("circumflex-keys", ""));
    DefaultMetricsSystem.setMiniClusterMode(true);
    Files.createDirectories(work.toPath());
    List<String> failures = new ArrayList<>();
    for (String trace : traces) {
      File traceDir = new File(out, trace);
      Files.createDirectories(traceDir.toPath());
      File traceFile = new File(traceDir, "trace.json");
      if (trace.equals("recorded") || trace.equals("burst")) {
        if (reuseTrace && traceFile.isFile()) {
          System.out.println("== reusing the recorded trace " + traceFile);
        } else if (trace.equals("burst")) {
          record(work, traceFile, BURST, BURST.length, taskSlots);
        } else {
          record(work, traceFile, RECORDED, small ? 3 : RECORDED.length, taskSlots);
        }
      } else if (trace.startsWith("swim")) {
        // Each SWIM window is a trace of its own name: --traces swim,swim-mid --swim-trace A --swim-mid-trace B.
        String given = opts.get(trace + "-trace");
        if (given == null) {
          throw new IllegalArgumentException("--traces " + trace + " needs --" + trace
              + "-trace FILE (circumflex gridmix-trace)");
        }
        if (!new File(given).getAbsoluteFile().equals(traceFile)) {
          Files.copy(new File(given).toPath(), traceFile.toPath(), StandardCopyOption.REPLACE_EXISTING);
        }
      } else {
        throw new IllegalArgumentException("unknown trace " + trace
            + ": expected recorded, burst or a SWIM window swim<suffix> (with --swim<suffix>-trace FILE)");
      }
      List<TraceJobs.Job> jobs = TraceJobs.read(traceFile, new Configuration());
      for (int round = 1; round <= repeat; round++) {
        File runDir = repeat > 1 ? new File(traceDir, "run" + round) : traceDir;
        String runName = repeat > 1 ? trace + "-run" + round : trace;
        Files.createDirectories(runDir.toPath());
        for (String scheduler : schedulers) {
          long t0 = System.currentTimeMillis();
          System.out.printf(Locale.ROOT, "== %s: %d jobs under %s ...%n", runName, jobs.size(), scheduler);
          File csv = new File(runDir, "jobs-" + scheduler + ".csv");
          Files.deleteIfExists(csv.toPath());
          try {
            List<String> rows = replay(work, runName, trace, scheduler, traceFile, jobs, taskSlots, circumflexKeys);
            Files.write(csv.toPath(), rows, StandardCharsets.UTF_8);
            System.out.printf(Locale.ROOT, "   done in %.0f s -> %s%n", (System.currentTimeMillis() - t0) / 1000.0, csv);
          } catch (Exception e) {
            // One scheduler's failure must not cost the others' runs; it is reported and counted.
            failures.add(runName + " under " + scheduler + ": " + e);
            System.out.println("   FAILED: " + e);
          }
        }
      }
    }
    if (!failures.isEmpty()) {
      System.out.println("failed runs:");
      failures.forEach(f -> System.out.println("  " + f));
      System.exit(1);
    }
    // Hadoop's mini clusters leave non-daemon threads behind.
    System.exit(0);
  }

  /**
   * {@code circumflex.a=1,circumflex.b=x}: keys set on the Circumflex schedulers' clusters on top of the
   * evaluation's own (e.g. a lever under study); anything else is refused by name.
   */
  static Map<String, String> circumflexKeys(String spec) {
    Map<String, String> keys = new LinkedHashMap<>();
    for (String entry : spec.split(",")) {
      if (entry.trim().isEmpty()) {
        continue;
      }
      int eq = entry.indexOf('=');
      String key = eq < 0 ? entry.trim() : entry.substring(0, eq).trim();
      if (eq < 0 || !key.startsWith("circumflex.") || eq == entry.length() - 1) {
        throw new IllegalArgumentException("--circumflex-keys " + entry
            + ": expected circumflex.<key>=<value>, comma-separated");
      }
      keys.put(key, entry.substring(eq + 1).trim());
    }
    return keys;
  }

  private static int positive(Map<String, String> opts, String key, int otherwise) {
    String v = opts.get(key);
    if (v == null) {
      return otherwise;
    }
    try {
      int n = Integer.parseInt(v.trim());
      if (n >= 1) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException("--" + key + " " + v + ": expected a whole number of at least 1");
  }

  /**
   * Runs the first {@code count} jobs of {@code workload} (rows of {@link #RECORDED}'s columns) on a
   * mini cluster with {@code taskSlots} task slots and writes their Rumen trace (TraceBuilder over the
   * job history files) to {@code traceFile}.
   */
  static void record(File work, File traceFile, int[][] workload, int count, int taskSlots) throws Exception {
    System.out.printf(Locale.ROOT, "== recording %d sleep jobs for the Rumen trace ...%n", count);
    File history = new File(work, "record-history");
    deleteTree(history.toPath());
    try (EvalCluster cluster = EvalCluster.start("record", "hadoop-capacity", count, taskSlots, work)) {
      for (Job job : submitSleepJobs(cluster, workload, count, "recorded")) {
        if (!job.waitForCompletion(false)) {
          throw new IllegalStateException("recording job " + job.getJobName() + " failed");
        }
      }
      // The AM copies each job's .jhist and _conf.xml to the history's intermediate done directory when
      // the job ends; the history server may already have moved some to the done directory. Collect both.
      Files.createDirectories(history.toPath());
      int found = 0;
      try (Stream<Path> files = Files.walk(new File(work, "record").toPath())) {
        for (Path p : files.collect(Collectors.toList())) {
          String name = p.getFileName().toString();
          if (name.endsWith(".jhist") || (name.startsWith("job_") && name.endsWith("_conf.xml"))) {
            Files.copy(p, history.toPath().resolve(name), StandardCopyOption.REPLACE_EXISTING);
            found += name.endsWith(".jhist") ? 1 : 0;
          }
        }
      }
      if (found < count) {
        throw new IllegalStateException("found " + found + " job history files for " + count + " jobs under "
            + new File(work, "record"));
      }
      File topology = new File(work, "record-topology.json");
      int rc = ToolRunner.run(new Configuration(cluster.config()), new TraceBuilder(), new String[] {
        "file://" + traceFile.getAbsolutePath(), "file://" + topology.getAbsolutePath(),
        "file://" + history.getAbsolutePath()});
      if (rc != 0) {
        throw new IllegalStateException("TraceBuilder failed with " + rc);
      }
    }
  }

  /**
   * Submits the first {@code count} jobs of {@code workload} (rows of {@link #RECORDED}'s columns) to
   * {@code cluster} as MapReduce sleep jobs, each after its gap, without waiting for them; names them
   * {@code <prefix>-<i>-<maps>m<reduces>r}.
   */
  static List<Job> submitSleepJobs(EvalCluster cluster, int[][] workload, int count, String prefix)
      throws Exception {
    List<Job> jobs = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      int[] spec = workload[i];
      Thread.sleep(spec[4]);
      Configuration conf = new Configuration(cluster.config());
      SleepJob sleep = new SleepJob();
      sleep.setConf(conf);
      Job job = sleep.createJob(spec[0], spec[1], spec[2], 1, spec[3], 1);
      job.setJobName(String.format(Locale.ROOT, "%s-%d-%dm%dr", prefix, i, spec[0], spec[1]));
      job.submit();
      jobs.add(job);
    }
    return jobs;
  }

  /**
   * Replays {@code traceFile} with Gridmix under {@code scheduler} on {@code taskSlots} task slots;
   * returns the per-job CSV lines. {@code runName} names the run's cluster (and its lines in the log).
   */
  static List<String> replay(File work, String runName, String trace, String scheduler, File traceFile,
      List<TraceJobs.Job> jobs, int taskSlots, Map<String, String> circumflexKeys) throws Exception {
    String name = runName + "-" + scheduler;
    File io = new File(work, name + "-io");
    deleteTree(io.toPath());
    // Sleep jobs read no input, but Gridmix's file pool wants one non-empty file under <iopath>/input.
    Files.createDirectories(new File(io, "input").toPath());
    Files.write(new File(io, "input/part-0").toPath(), new byte[4096]);
    List<String> rows = new ArrayList<>();
    rows.add("trace,scheduler,seq,original_id,maps,reduces,map_ms_max,map_ms_sum,reduce_ms_max,reduce_ms_sum,"
        + "trace_submit_ms,submit_ms,finish_ms,state");
    try (EvalCluster cluster = EvalCluster.start(name, scheduler, jobs.size(), taskSlots, work, circumflexKeys)) {
      Configuration conf = new Configuration(cluster.config());
      conf.set("gridmix.job.type", "SLEEPJOB");
      conf.set("gridmix.job-submission.policy", "REPLAY");
      conf.setLong("gridmix.min.file.size", 0);
      conf.set("gridmix.output.directory", "gridmix-out");
      conf.setBoolean("gridmix.distributed-cache-emulation.enable", false);
      conf.setBoolean("gridmix.compression-emulation.enable", false);
      conf.setBoolean("gridmix.highram-emulation.enable", false);
      conf.setBoolean("gridmix.task.jvm-options.enable", false);
      conf.setInt("gridmix.sleep.interval", 1);
      String[] argv = {"file://" + io.getAbsolutePath(), "file://" + traceFile.getAbsolutePath()};
      int rc = runWithLimit(conf, argv, RUN_LIMIT_MS);
      if (rc != 0) {
        throw new IllegalStateException("Gridmix exited with " + rc + " on " + trace + " under " + scheduler);
      }
      String fallback = cluster.fallbackCause();
      if (fallback != null) {
        throw new IllegalStateException("the Circumflex engine fell back to FIFO: " + fallback);
      }
      Map<Integer, JobStatus> bySeq = new HashMap<>();
      for (Map.Entry<String, JobStatus> e : jobStatusesByName(conf).entrySet()) {
        if (e.getKey().matches("GRIDMIX\\d+")) {
          bySeq.put(Integer.parseInt(e.getKey().substring("GRIDMIX".length())), e.getValue());
        }
      }
      if (bySeq.size() != jobs.size()) {
        throw new IllegalStateException("the RM lists " + bySeq.size() + " Gridmix jobs; the trace has " + jobs.size());
      }
      // Gridmix numbers jobs in trace order from its first sequence number.
      int first = bySeq.keySet().stream().mapToInt(Integer::intValue).min().orElse(0);
      for (int i = 0; i < jobs.size(); i++) {
        JobStatus s = bySeq.get(first + i);
        TraceJobs.Job j = jobs.get(i);
        if (s == null) {
          throw new IllegalStateException("no GRIDMIX job with sequence number " + (first + i));
        }
        rows.add(String.format(Locale.ROOT, "%s,%s,%d,%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%s", trace, scheduler, i,
            j.id, j.maps, j.reduces, j.mapMsMax, j.mapMsSum, j.reduceMsMax, j.reduceMsSum, j.submitMs,
            s.getStartTime(), s.getFinishTime(), s.getState()));
      }
    }
    return rows;
  }

  /**
   * Every job the ResourceManager lists, by job name, with submission and finish as the RM saw them
   * (its application reports; a finished job's own start time is when its AM started it).
   */
  static Map<String, JobStatus> jobStatusesByName(Configuration conf) throws Exception {
    Map<String, JobStatus> byName = new HashMap<>();
    Cluster client = new Cluster(conf);
    try {
      for (JobStatus status : client.getAllJobStatuses()) {
        if (status.getJobName() != null) {
          byName.put(status.getJobName(), status);
        }
      }
    } finally {
      client.close();
    }
    return byName;
  }

  /** Longest one Gridmix replay may take before it counts as stalled (the longest seen: ~5 min). */
  static final long RUN_LIMIT_MS = 15 * 60 * 1000L;

  /** Runs Gridmix in a thread of its own; a run past {@code limitMs} is reported as stalled. */
  static int runWithLimit(Configuration conf, String[] argv, long limitMs) throws Exception {
    final int[] rc = {-1};
    final Exception[] failure = {null};
    Thread t = new Thread(() -> {
      try {
        rc[0] = ToolRunner.run(conf, new Gridmix(), argv);
      } catch (Exception e) {
        failure[0] = e;
      }
    }, "gridmix-run");
    t.setDaemon(true);
    t.start();
    t.join(limitMs);
    if (t.isAlive()) {
      t.interrupt();
      throw new IllegalStateException("Gridmix stalled: not done after " + limitMs / 1000 + " s");
    }
    if (failure[0] != null) {
      throw failure[0];
    }
    return rc[0];
  }

  static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path p : paths.sorted((a, b) -> b.compareTo(a)).collect(Collectors.toList())) {
        Files.delete(p);
      }
    }
  }
}
