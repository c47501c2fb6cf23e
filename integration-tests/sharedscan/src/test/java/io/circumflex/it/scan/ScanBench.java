package io.circumflex.it.scan;

import io.circumflex.it.scan.ScanJobs.Kind;
import io.circumflex.scan.ScanCounter;
import io.circumflex.scan.SharedScan;
import java.io.File;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.Counters;
import org.apache.hadoop.mapreduce.FileSystemCounter;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormatCounter;

/**
 * The shared-scan benchmark ({@code make scan-bench}, results/shared-scans/): jobs arriving as a
 * Poisson process over one generated dataset, run on a MiniDFSCluster + MiniMRYarnCluster, once as
 * CIRCUMFLEX with sharing (policy {@code circumflex}, every job submitted through {@link SharedScan})
 * and once as FLEX without sharing (policy {@code flex}, plain submit), for several rounds (round r
 * uses arrival seed {@code seed + r}, the same in both set-ups). Per job: response time (finish -
 * submit), dataset bytes read (file input bytes + bytes re-computed by riders) and all HDFS bytes
 * read. Prints and writes a CSV and a Markdown summary with 95% intervals over rounds.
 *
 * <p>Options: {@code --mib N} dataset size (default 1024), {@code --jobs N} (6), {@code --rounds N}
 * (3), {@code --gap-s S} mean inter-arrival time (20), {@code --seed N} (1), {@code --split-mib N}
 * split size (128), {@code --out DIR}, {@code --resume true}: keep the complete rounds of an earlier
 * run's {@code DIR/jobs.csv} (same options) and run only the rounds still missing, so the 3 rounds can
 * be collected over several sittings of a machine that cannot give the whole run one sitting.
 */
public final class ScanBench {
  private ScanBench() {}

  /** One finished job of one round. */
  static final class Row {
    final String setup;
    final int round;
    final int index;
    final Kind kind;
    final long arrivalMs;
    final long responseMs;
    final long datasetBytes;
    final long hdfsBytes;

    Row(String setup, int round, int index, Kind kind, long arrivalMs, long responseMs, long datasetBytes, long hdfsBytes) {
      this.setup = setup;
      this.round = round;
      this.index = index;
      this.kind = kind;
      this.arrivalMs = arrivalMs;
      this.responseMs = responseMs;
      this.datasetBytes = datasetBytes;
      this.hdfsBytes = hdfsBytes;
    }
  }

  public static void main(String[] args) throws Exception {
    long mib = 1024;
    int jobs = 6;
    int rounds = 3;
    double gapS = 20;
    long seed = 1;
    long splitMib = 128;
    File out = new File("results/shared-scans");
    boolean resume = false;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException("option " + a + " needs a value");
      }
      String v = args[++i];
      switch (a) {
        case "--mib": mib = Long.parseLong(v); break;
        case "--jobs": jobs = Integer.parseInt(v); break;
        case "--rounds": rounds = Integer.parseInt(v); break;
        case "--gap-s": gapS = Double.parseDouble(v); break;
        case "--seed": seed = Long.parseLong(v); break;
        case "--split-mib": splitMib = Long.parseLong(v); break;
        case "--out": out = new File(v); break;
        case "--resume": resume = Boolean.parseBoolean(v); break;
        default: throw new IllegalArgumentException("unknown option " + a
            + "; allowed: --mib --jobs --rounds --gap-s --seed --split-mib --out --resume");
      }
    }
    out.mkdirs();
    String[] setups = {"circumflex+sharing", "flex"};
    List<Row> rows = resume ? completeRounds(new File(out, "jobs.csv"), setups, jobs) : new ArrayList<>();
    int first = rows.isEmpty() ? 0 : rows.get(rows.size() - 1).round + 1;
    if (resume) {
      System.err.printf("resuming: %d complete rounds kept from %s%n", first, new File(out, "jobs.csv"));
    }
    // One cluster and one dataset for both set-ups: the scheduler's policy is switched between set-ups
    // (the refresh `yarn rmadmin -refreshQueues` makes) while the cluster is idle, and the set-ups
    // alternate round by round (round r runs set-up r mod 2 first), so load from other work on the
    // machine falls on both alike. Results are written after every set-up round: a run cut short
    // keeps the rounds it finished.
    try (ScanCluster cluster = ScanCluster.start("scan-bench", jobs, "circumflex")) {
      Path input = new Path("/data/bench.txt");
      long genStart = System.currentTimeMillis();
      long size = ScanJobs.generateBytes(cluster.fs(), input, mib * 1024 * 1024, 19);
      long splitBytes = splitMib * 1024 * 1024;
      System.err.printf("dataset %d bytes, %d splits, generated in %.1f s%n", size,
          (size + splitBytes - 1) / splitBytes, (System.currentTimeMillis() - genStart) / 1000.0);
      for (int r = first; r < rounds; r++) {
        for (int k = 0; k < 2; k++) {
          String setup = setups[(r + k) % 2];
          boolean shared = setup.startsWith("circumflex");
          cluster.setPolicy(shared ? "circumflex" : "flex");
          long roundStart = System.currentTimeMillis();
          rows.addAll(round(cluster, setup, shared, r, jobs, gapS, seed + r, input, splitBytes));
          System.err.printf("%s round %d took %.1f s%n", setup, r, (System.currentTimeMillis() - roundStart) / 1000.0);
          write(out, rows, mib, size, jobs, rounds, r + (k == 1 ? 1 : 0), gapS, seed, splitMib);
        }
      }
    }
  }

  private static List<Row> round(ScanCluster cluster, String setup, boolean shared, int round, int jobs,
      double gapS, long seed, Path input, long splitBytes) throws Exception {
    Random rnd = new Random(seed);
    long[] arrival = new long[jobs];
    long t = 0;
    for (int i = 0; i < jobs; i++) {
      arrival[i] = t;
      t += (long) (-Math.log(1 - rnd.nextDouble()) * gapS * 1000);
    }
    Kind[] kinds = Kind.values();
    List<Job> submitted = new ArrayList<>();
    long[] submitMs = new long[jobs];
    long start = System.currentTimeMillis();
    for (int i = 0; i < jobs; i++) {
      long wait = start + arrival[i] - System.currentTimeMillis();
      if (wait > 0) {
        Thread.sleep(wait);
      }
      Job j = ScanJobs.job(cluster.conf(), kinds[i % kinds.length], input,
          new Path("/out/" + (shared ? "s" : "u") + "/r" + round + "/j" + i), splitBytes);
      j.getConfiguration().set("it.grep.pattern", "w" + (i % 10) + "[0-9]");
      submitMs[i] = System.currentTimeMillis();
      if (shared) {
        SharedScan.submit(j);
      } else {
        j.submit();
      }
      submitted.add(j);
    }
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < jobs; i++) {
      Job j = submitted.get(i);
      if (!j.waitForCompletion(false)) {
        throw new IllegalStateException(setup + " round " + round + " job " + i + " failed");
      }
      Counters c = j.getCounters();
      long dataset = c.findCounter(FileInputFormatCounter.BYTES_READ).getValue()
          + c.findCounter(ScanCounter.RECOMPUTED_SPLIT_BYTES).getValue();
      long hdfs = c.getGroup(FileSystemCounter.class.getName()).findCounter("HDFS_BYTES_READ").getValue();
      Row row = new Row(setup, round, i, kinds[i % kinds.length], arrival[i], j.getFinishTime() - submitMs[i], dataset, hdfs);
      System.err.printf("%s r%d j%d %s arrival %.1fs response %.1fs dataset %d hdfs %d%n", setup, round, i,
          row.kind, arrival[i] / 1000.0, row.responseMs / 1000.0, dataset, hdfs);
      rows.add(row);
    }
    return rows;
  }

  /** Student t, two-sided 95%, for n - 1 degrees of freedom (n <= 10), else the normal 1.96. */
  private static double t95(int n) {
    double[] t = {0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262};
    return n - 1 < t.length && n >= 2 ? t[n - 1] : 1.96;
  }

  /** Mean and 95% half-width of per-round values. */
  private static double[] interval(double[] perRound) {
    int n = perRound.length;
    double mean = 0;
    for (double v : perRound) {
      mean += v / n;
    }
    double var = 0;
    for (double v : perRound) {
      var += (v - mean) * (v - mean) / Math.max(1, n - 1);
    }
    return new double[] {mean, n < 2 ? Double.NaN : t95(n) * Math.sqrt(var / n)};
  }

  /** {@code mean ± half-width}, or the mean alone with "no interval" while only one round is complete. */
  static String withInterval(double[] meanAndHalfWidth, int decimals) {
    String mean = String.format(Locale.ROOT, "%." + decimals + "f", meanAndHalfWidth[0]);
    if (Double.isNaN(meanAndHalfWidth[1])) {
      return mean + " (one round: no interval)";
    }
    return mean + String.format(Locale.ROOT, " ± %." + decimals + "f", meanAndHalfWidth[1]);
  }

  private static double[] perRound(List<Row> rows, String setup, int rounds, boolean responseTime, boolean hdfs) {
    double[] v = new double[rounds];
    int[] count = new int[rounds];
    for (Row r : rows) {
      if (r.setup.equals(setup) && r.round < rounds) {
        v[r.round] += responseTime ? r.responseMs / 1000.0 : (hdfs ? r.hdfsBytes : r.datasetBytes) / 1048576.0;
        count[r.round]++;
      }
    }
    if (responseTime) {
      for (int i = 0; i < rounds; i++) {
        v[i] /= Math.max(1, count[i]);
      }
    }
    return v;
  }

  /**
   * The rows of the complete rounds 0..k-1 of an earlier run's jobs.csv (a round is complete when both
   * set-ups have all {@code jobs} rows); a later round, complete or not, is dropped with the partial one
   * (it is run again). A missing file keeps nothing; a malformed one is refused by name.
   */
  static List<Row> completeRounds(File csv, String[] setups, int jobs) throws Exception {
    List<Row> kept = new ArrayList<>();
    if (!csv.isFile()) {
      return kept;
    }
    List<String> lines = java.nio.file.Files.readAllLines(csv.toPath(), StandardCharsets.UTF_8);
    List<Row> all = new ArrayList<>();
    for (int n = 1; n < lines.size(); n++) {
      String[] f = lines.get(n).split(",");
      if (f.length != 8) {
        throw new IllegalArgumentException(csv + " line " + (n + 1) + ": expected 8 columns, found " + f.length);
      }
      try {
        all.add(new Row(f[0], Integer.parseInt(f[1]), Integer.parseInt(f[2]), Kind.valueOf(f[3]),
            Math.round(Double.parseDouble(f[4]) * 1000), Math.round(Double.parseDouble(f[5]) * 1000),
            Long.parseLong(f[6]), Long.parseLong(f[7])));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(csv + " line " + (n + 1) + ": " + e.getMessage(), e);
      }
    }
    for (int r = 0; ; r++) {
      List<Row> round = new ArrayList<>();
      for (Row row : all) {
        if (row.round == r) {
          round.add(row);
        }
      }
      for (String setup : setups) {
        if (round.stream().filter(row -> row.setup.equals(setup)).count() != jobs) {
          return kept;
        }
      }
      kept.addAll(round);
    }
  }

  /** Writes jobs.csv (every finished job) and summary.md (statistics over the {@code done} complete rounds). */
  private static void write(File out, List<Row> rows, long mib, long datasetBytes, int jobs, int requested, int done,
      double gapS, long seed, long splitMib) throws Exception {
    try (PrintWriter csv = new PrintWriter(new File(out, "jobs.csv"), StandardCharsets.UTF_8.name())) {
      csv.println("setup,round,job,kind,arrival_s,response_s,dataset_bytes_read,hdfs_bytes_read");
      for (Row r : rows) {
        csv.printf(Locale.ROOT, "%s,%d,%d,%s,%.3f,%.3f,%d,%d%n", r.setup, r.round, r.index, r.kind,
            r.arrivalMs / 1000.0, r.responseMs / 1000.0, r.datasetBytes, r.hdfsBytes);
      }
    }
    StringBuilder md = new StringBuilder();
    md.append("# Shared scans on YARN MapReduce: CIRCUMFLEX with sharing vs FLEX without\n\n");
    md.append(String.format(Locale.ROOT, "Generated by `make scan-bench SCAN_BENCH_ARGS=\"--mib %d --jobs %d --rounds %d"
        + " --gap-s %s --seed %d --split-mib %d\"` (integration-tests/sharedscan ScanBench). Dataset %d bytes (%.0f MiB)."
        + " One NodeManager with 4 task containers, one DataNode, %d MiB splits; jobs cycle word count, grep count, per-key sum; Poisson"
        + " arrivals, round r uses seed %d + r in both set-ups. Intervals: 95%%, Student t over %d rounds.%n%n",
        mib, jobs, requested, gapS, seed, splitMib, datasetBytes, datasetBytes / 1048576.0, splitMib, seed, done));
    if (done < requested) {
      md.append(String.format(Locale.ROOT, "**Incomplete run: %d of %d rounds finished** (jobs.csv also holds the"
          + " finished set-up of an unfinished round).%n%n", done, requested));
    }
    int rounds = done;
    if (rounds == 0) {
      try (PrintWriter w = new PrintWriter(new File(out, "summary.md"), StandardCharsets.UTF_8.name())) {
        w.print(md);
      }
      return;
    }
    md.append("| set-up | mean response time (s) | dataset MiB read | all HDFS MiB read |\n|---|---|---|---|\n");
    double[][] rt = new double[2][];
    String[] setups = {"circumflex+sharing", "flex"};
    for (int s = 0; s < 2; s++) {
      rt[s] = interval(perRound(rows, setups[s], rounds, true, false));
      double[] ds = interval(perRound(rows, setups[s], rounds, false, false));
      double[] hd = interval(perRound(rows, setups[s], rounds, false, true));
      md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s |%n", setups[s], withInterval(rt[s], 1),
          withInterval(ds, 0), withInterval(hd, 0)));
    }
    // Rounds are paired (same arrivals in both set-ups): the per-round ratio's interval as well.
    double[] a = perRound(rows, setups[0], rounds, true, false);
    double[] b = perRound(rows, setups[1], rounds, true, false);
    double[] ratio = new double[rounds];
    for (int r = 0; r < rounds; r++) {
      ratio[r] = a[r] / b[r];
    }
    double[] paired = interval(ratio);
    md.append(String.format(Locale.ROOT, "%nMean response time ratio CIRCUMFLEX+sharing / FLEX: **%.2f** (per-round"
        + " ratios, paired by arrivals: %s; paper, simulated: 0.81 for negatively to 0.47 for positively"
        + " correlated workloads).%n", rt[0][0] / rt[1][0], withInterval(paired, 2)));
    try (PrintWriter w = new PrintWriter(new File(out, "summary.md"), StandardCharsets.UTF_8.name())) {
      w.print(md);
    }
    System.out.print(md);
  }
}
