package io.circumflex.it.mrv1;

import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.hadoop.mapred.RunningJob;

/**
 * The Gridmix 1.x stand-in (hadoop-gridmix 1.2.1 is not on Maven Central): replays a workload trace
 * as SleepJobs against a MiniMRCluster running the Circumflex scheduler, once per policy, and
 * reports per-job response times as CSV files and a table.
 *
 * <p>Trace format (CSV, {@code #} comments, an optional header as the first other line):
 * {@code name,arrival_ms,maps,reduces,map_ms,reduce_ms[,conf]} where {@code arrival_ms} is the
 * submission offset from the start of the replay, {@code map_ms}/{@code reduce_ms} how long each
 * task sleeps, and the optional {@code conf} is {@code key=value;key=value} added to the job's
 * configuration (e.g. {@code circumflex.job.weight=2;circumflex.job.deadline.ms=60000}).
 *
 * <p>Usage: {@code Replay --trace FILE [--policies fifo,fair,hadoop-jobqueue] [--trackers 2] [--map-slots 2]
 * [--reduce-slots 1] [--out DIR] [--set key=value ...]}. Output per policy:
 * {@code DIR/<policy>/jobs.csv} with the simulator's per-job column names where they apply
 * ({@code index,external_id,arrival_ms,start_ms,finish_ms,response_ms,maps,reduces,rejected,state};
 * times in ms from the replay's start: arrival = submission, start = first task launch, finish =
 * job completion); {@code DIR/summary.csv}; and a table on stdout.
 */
public final class Replay {
  /**
   * Policy name that runs Hadoop 1.2.1's default {@code JobQueueTaskScheduler} instead of Circumflex,
   * as the baseline. (The contrib FairScheduler, {@code hadoop-fairscheduler:1.2.1}, is not on Maven
   * Central, so it cannot join the comparison.)
   */
  static final String HADOOP_DEFAULT = "hadoop-jobqueue";

  /** One job of the trace. */
  static final class TraceJob {
    final String name;
    final long arrivalMs;
    final int maps;
    final int reduces;
    final long mapMs;
    final long reduceMs;
    final Map<String, String> conf;

    TraceJob(String name, long arrivalMs, int maps, int reduces, long mapMs, long reduceMs, Map<String, String> conf) {
      this.name = name;
      this.arrivalMs = arrivalMs;
      this.maps = maps;
      this.reduces = reduces;
      this.mapMs = mapMs;
      this.reduceMs = reduceMs;
      this.conf = conf;
    }
  }

  /** One replayed job's outcome, times relative to the replay's start. */
  static final class Outcome {
    final int index;
    final TraceJob job;
    final String jobId;
    final long arrival;
    final long start;
    final long finish;
    final boolean rejected;
    final String state;

    Outcome(int index, TraceJob job, String jobId, long arrival, long start, long finish, boolean rejected,
        String state) {
      this.index = index;
      this.job = job;
      this.jobId = jobId;
      this.arrival = arrival;
      this.start = start;
      this.finish = finish;
      this.rejected = rejected;
      this.state = state;
    }

    long response() {
      return finish - arrival;
    }
  }

  private Replay() {}

  /** Parses a trace; every malformed line is an error naming the line and the field. */
  static List<TraceJob> parse(List<String> lines) {
    List<TraceJob> jobs = new ArrayList<TraceJob>();
    boolean first = true;
    for (int n = 0; n < lines.size(); n++) {
      String line = lines.get(n).trim();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      boolean header = first && line.startsWith("name,");
      first = false;
      if (header) {
        continue;
      }
      String[] f = line.split(",", -1);
      String where = "trace line " + (n + 1) + " '" + line + "'";
      if (f.length < 6 || f.length > 7) {
        throw new IllegalArgumentException(where + ": expected name,arrival_ms,maps,reduces,map_ms,reduce_ms[,conf]");
      }
      Map<String, String> conf = new LinkedHashMap<String, String>();
      if (f.length == 7 && !f[6].trim().isEmpty()) {
        for (String kv : f[6].split(";")) {
          int eq = kv.indexOf('=');
          if (eq <= 0) {
            throw new IllegalArgumentException(where + ": conf entry '" + kv + "' is not key=value");
          }
          conf.put(kv.substring(0, eq).trim(), kv.substring(eq + 1).trim());
        }
      }
      jobs.add(new TraceJob(f[0].trim(), number(where, "arrival_ms", f[1], 0),
          (int) number(where, "maps", f[2], 1), (int) number(where, "reduces", f[3], 0),
          number(where, "map_ms", f[4], 0), number(where, "reduce_ms", f[5], 0), conf));
    }
    if (jobs.isEmpty()) {
      throw new IllegalArgumentException("the trace has no jobs");
    }
    return jobs;
  }

  private static long number(String where, String field, String text, long min) {
    long v;
    try {
      v = Long.parseLong(text.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(where + ": " + field + " = '" + text + "' is not an integer");
    }
    if (v < min || v > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(where + ": " + field + " = " + v + " must be in [" + min + ", "
          + Integer.MAX_VALUE + "]");
    }
    return v;
  }

  /** Replays {@code trace} on a fresh cluster under {@code policy}. */
  static List<Outcome> run(List<TraceJob> trace, String policy, int trackers, int mapSlots, int reduceSlots,
      Map<String, String> extra) throws Exception {
    Map<String, String> schedulerConf = new LinkedHashMap<String, String>(extra);
    schedulerConf.put("circumflex.policy", policy);
    // The baseline: no Circumflex keys, so the JobTracker keeps Hadoop's own JobQueueTaskScheduler.
    boolean hadoopDefault = policy.equals(HADOOP_DEFAULT);
    Mrv1Cluster cluster = new Mrv1Cluster(trackers, mapSlots, reduceSlots, hadoopDefault ? null : schedulerConf);
    try {
      List<RunningJob> running = new ArrayList<RunningJob>();
      List<String> rejections = new ArrayList<String>();
      long t0 = System.currentTimeMillis();
      for (TraceJob job : trace) {
        long wait = t0 + job.arrivalMs - System.currentTimeMillis();
        if (wait > 0) {
          Thread.sleep(wait);
        }
        try {
          running.add(cluster.submitSleep(job.name, job.maps, job.reduces, job.mapMs, job.reduceMs, job.conf));
          rejections.add(null);
        } catch (IOException e) {
          running.add(null);
          rejections.add(e.getMessage());
          System.err.println("rejected " + job.name + ": " + e.getMessage());
        }
      }
      List<Outcome> outcomes = new ArrayList<Outcome>();
      for (int i = 0; i < trace.size(); i++) {
        RunningJob rj = running.get(i);
        if (rj == null) {
          long arrival = trace.get(i).arrivalMs;
          outcomes.add(new Outcome(i, trace.get(i), "", arrival, -1, -1, true, "REJECTED"));
          continue;
        }
        Mrv1Cluster.await(rj);
        Mrv1Cluster.JobTimes t = cluster.times(rj.getID());
        outcomes.add(new Outcome(i, trace.get(i), rj.getID().toString(), t.submit - t0, t.firstTaskStart - t0,
            t.finish - t0, false, rj.isSuccessful() ? "SUCCEEDED" : "FAILED"));
      }
      if (!hadoopDefault && !cluster.scheduler().isEngineActive()) {
        System.err.println("warning: the scheduler fell back to FIFO: " + cluster.scheduler().getFallbackReason());
      }
      return outcomes;
    } finally {
      cluster.close();
    }
  }

  static String jobsCsv(List<Outcome> outcomes) {
    StringBuilder sb = new StringBuilder(
        "index,external_id,arrival_ms,start_ms,finish_ms,response_ms,maps,reduces,rejected,state\n");
    for (Outcome o : outcomes) {
      sb.append(o.index).append(',').append(o.job.name).append(',').append(o.arrival).append(',')
          .append(o.rejected ? "" : String.valueOf(o.start)).append(',')
          .append(o.rejected ? "" : String.valueOf(o.finish)).append(',')
          .append(o.rejected ? "" : String.valueOf(o.response())).append(',')
          .append(o.job.maps).append(',').append(o.job.reduces).append(',').append(o.rejected).append(',')
          .append(o.state).append('\n');
    }
    return sb.toString();
  }

  /** Mean and max response (s) and makespan (s) over the jobs that ran. */
  static double[] summary(List<Outcome> outcomes) {
    double sum = 0;
    double max = 0;
    long first = Long.MAX_VALUE;
    long last = 0;
    int ran = 0;
    for (Outcome o : outcomes) {
      if (o.rejected) {
        continue;
      }
      ran++;
      sum += o.response() / 1000.0;
      max = Math.max(max, o.response() / 1000.0);
      first = Math.min(first, o.arrival);
      last = Math.max(last, o.finish);
    }
    return new double[] {ran == 0 ? 0 : sum / ran, max, ran == 0 ? 0 : (last - first) / 1000.0, ran};
  }

  public static void main(String[] args) throws Exception {
    String tracePath = null;
    String[] policies = {"fifo", "fair", HADOOP_DEFAULT};
    int trackers = 2;
    int mapSlots = 2;
    int reduceSlots = 1;
    File out = new File("replay-out");
    Map<String, String> extra = new LinkedHashMap<String, String>();
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      String v = i + 1 < args.length ? args[i + 1] : null;
      if (v == null) {
        throw new IllegalArgumentException(a + " needs a value");
      }
      i++;
      switch (a) {
        case "--trace":
          tracePath = v;
          break;
        case "--policies":
          policies = v.split(",");
          break;
        case "--trackers":
          trackers = Integer.parseInt(v);
          break;
        case "--map-slots":
          mapSlots = Integer.parseInt(v);
          break;
        case "--reduce-slots":
          reduceSlots = Integer.parseInt(v);
          break;
        case "--out":
          out = new File(v);
          break;
        case "--set":
          int eq = v.indexOf('=');
          if (eq <= 0) {
            throw new IllegalArgumentException("--set " + v + ": expected key=value");
          }
          extra.put(v.substring(0, eq), v.substring(eq + 1));
          break;
        default:
          throw new IllegalArgumentException("unknown option " + a
              + " (known: --trace --policies --trackers --map-slots --reduce-slots --out --set)");
      }
    }
    if (tracePath == null) {
      throw new IllegalArgumentException("--trace FILE is required");
    }
    List<TraceJob> trace = parse(Files.readAllLines(new File(tracePath).toPath(), StandardCharsets.UTF_8));
    out.mkdirs();
    StringBuilder summaryCsv = new StringBuilder("policy,jobs,ran,mean_response_s,max_response_s,makespan_s,wall_s\n");
    StringBuilder table = new StringBuilder(String.format(Locale.ROOT, "%-10s %6s %12s %12s %11s %8s%n", "policy",
        "jobs", "mean resp s", "max resp s", "makespan s", "wall s"));
    Map<String, List<Outcome>> all = new LinkedHashMap<String, List<Outcome>>();
    for (String policy : policies) {
      long wall0 = System.currentTimeMillis();
      List<Outcome> outcomes = run(trace, policy.trim(), trackers, mapSlots, reduceSlots, extra);
      double wall = (System.currentTimeMillis() - wall0) / 1000.0;
      all.put(policy, outcomes);
      File dir = new File(out, policy.trim());
      dir.mkdirs();
      write(new File(dir, "jobs.csv"), jobsCsv(outcomes));
      double[] s = summary(outcomes);
      summaryCsv.append(String.format(Locale.ROOT, "%s,%d,%d,%.3f,%.3f,%.3f,%.3f%n", policy, outcomes.size(),
          (int) s[3], s[0], s[1], s[2], wall));
      table.append(String.format(Locale.ROOT, "%-10s %6d %12.1f %12.1f %11.1f %8.1f%n", policy, outcomes.size(), s[0],
          s[1], s[2], wall));
    }
    write(new File(out, "summary.csv"), summaryCsv.toString());
    StringBuilder perJob = new StringBuilder(String.format(Locale.ROOT, "%-12s %5s %5s", "job", "maps", "reds"));
    for (String p : all.keySet()) {
      perJob.append(String.format(Locale.ROOT, " %10s", p + " s"));
    }
    perJob.append('\n');
    for (int i = 0; i < trace.size(); i++) {
      perJob.append(String.format(Locale.ROOT, "%-12s %5d %5d", trace.get(i).name, trace.get(i).maps,
          trace.get(i).reduces));
      for (List<Outcome> outcomes : all.values()) {
        Outcome o = outcomes.get(i);
        perJob.append(o.rejected ? String.format(Locale.ROOT, " %10s", "rejected")
            : String.format(Locale.ROOT, " %10.1f", o.response() / 1000.0));
      }
      perJob.append('\n');
    }
    System.out.println("Per-job response times (submission to completion):");
    System.out.print(perJob);
    System.out.println();
    System.out.print(table);
    System.out.println("CSV: " + out.getAbsolutePath() + "/{summary.csv,<policy>/jobs.csv}");
    // Hadoop 1.x leaves non-daemon threads behind after MiniMRCluster.shutdown().
    System.exit(0);
  }

  private static void write(File f, String text) throws IOException {
    PrintWriter w = new PrintWriter(f, "UTF-8");
    try {
      w.print(text);
    } finally {
      w.close();
    }
  }
}
