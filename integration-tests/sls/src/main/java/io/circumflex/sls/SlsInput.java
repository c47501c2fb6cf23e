package io.circumflex.sls;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * Writes a deterministic SLS input: a topology file ({@code nodes.json}, SLS's {@code -nodes}) and an
 * SLS-format job trace ({@code trace.json}), either from the SWIM Facebook-2009 day or from a seeded
 * synthetic model. The generator is committed, its outputs are not.
 *
 * <p>SWIM gives bytes per job only; tasks and durations follow the same model as the Rust trace reader
 * ({@code rust-core/src/trace/swim.rs}): maps = ceil(input / 64 MiB) (map-only jobs at least
 * ceil(output / 64 MiB)), reduces = 0 without shuffle else ceil((shuffle + output) / 1 GiB); a map lasts
 * 4 s + bytes / 16 MiB/s, a reduce 4 s + its bytes / 8 MiB/s. Scaling to a 2-core machine (decisions,
 * since SLS runs in real time): the first {@code jobs} jobs of the day are taken in submit order, their
 * submit times are mapped linearly onto {@code [0, arrivalSpanMs]} (order and relative gaps kept),
 * maps are capped at {@code maxMaps}, reduces at {@code maxReduces}, and task durations are clamped to
 * {@code [minTaskMs, maxTaskMs]}.
 *
 * <p>Every task names a host (SLS asks node-local, rack-local and anywhere for it), drawn from the
 * topology by a {@link Random} seeded with {@code seed}: same arguments, same bytes.
 */
public final class SlsInput {
  private static final long MIB = 1L << 20;
  private static final long BLOCK = 64 * MIB;
  private static final long BYTES_PER_REDUCE = 1L << 30;

  /** Parameters; the defaults are the `make sls` run. */
  public static final class Params {
    int nodes = 1000;
    int nodesPerRack = 40;
    int jobs = 300;
    long arrivalSpanMs = 40_000;
    int maxMaps = 100;
    int maxReduces = 20;
    long minTaskMs = 2_000;
    long maxTaskMs = 15_000;
    long seed = 1;
    /** The SWIM TSV, or null for the synthetic model. */
    Path swim;

    /** Parses {@code --key value} pairs; unknown keys are errors naming the key. */
    static Params parse(List<String> args) {
      Params p = new Params();
      if (args.size() % 2 != 0) {
        throw new IllegalArgumentException("options come in --key value pairs, got " + args);
      }
      for (int i = 0; i + 1 < args.size(); i += 2) {
        String key = args.get(i);
        String value = args.get(i + 1);
        switch (key) {
          case "--nodes": p.nodes = positive(key, value); break;
          case "--nodes-per-rack": p.nodesPerRack = positive(key, value); break;
          case "--jobs": p.jobs = positive(key, value); break;
          case "--arrival-span-ms": p.arrivalSpanMs = positive(key, value); break;
          case "--max-maps": p.maxMaps = positive(key, value); break;
          case "--max-reduces": p.maxReduces = Integer.parseInt(value); break;
          case "--min-task-ms": p.minTaskMs = positive(key, value); break;
          case "--max-task-ms": p.maxTaskMs = positive(key, value); break;
          case "--seed": p.seed = Long.parseLong(value); break;
          case "--swim": p.swim = java.nio.file.Paths.get(value); break;
          default: throw new IllegalArgumentException("unknown option " + key + " (see SlsInput.Params)");
        }
      }
      if (p.minTaskMs > p.maxTaskMs) {
        throw new IllegalArgumentException("--min-task-ms " + p.minTaskMs + " exceeds --max-task-ms " + p.maxTaskMs);
      }
      return p;
    }

    private static int positive(String key, String value) {
      int v;
      try {
        v = Integer.parseInt(value);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(key + " must be a positive integer, got '" + value + "'", e);
      }
      if (v <= 0) {
        throw new IllegalArgumentException(key + " must be a positive integer, got " + v);
      }
      return v;
    }

    @Override
    public String toString() {
      return String.format(Locale.ROOT,
          "nodes=%d nodes-per-rack=%d jobs=%d arrival-span-ms=%d max-maps=%d max-reduces=%d task-ms=[%d,%d] seed=%d "
              + "source=%s", nodes, nodesPerRack, jobs, arrivalSpanMs, maxMaps, maxReduces, minTaskMs, maxTaskMs,
          seed, swim == null ? "synthetic" : "swim:" + swim.getFileName());
    }
  }

  /** One job of the generated trace. */
  static final class Job {
    final long submitMs;
    final long[] mapMs;
    final long[] reduceMs;

    Job(long submitMs, long[] mapMs, long[] reduceMs) {
      this.submitMs = submitMs;
      this.mapMs = mapMs;
      this.reduceMs = reduceMs;
    }
  }

  private SlsInput() {}

  /** Writes {@code nodes.json} and {@code trace.json} into {@code dir}; returns the jobs written. */
  public static List<Job> write(Params p, Path dir) throws IOException {
    Files.createDirectories(dir);
    List<Job> jobs = p.swim == null ? synthetic(p) : swim(p);
    try (Writer w = Files.newBufferedWriter(dir.resolve("nodes.json"), StandardCharsets.UTF_8)) {
      for (int rack = 0; rack * p.nodesPerRack < p.nodes; rack++) {
        w.write("{\"rack\":\"rack" + rack + "\",\"nodes\":[");
        for (int n = rack * p.nodesPerRack; n < Math.min(p.nodes, (rack + 1) * p.nodesPerRack); n++) {
          w.write((n == rack * p.nodesPerRack ? "" : ",") + "{\"node\":\"node" + n + "\"}");
        }
        w.write("]}\n");
      }
    }
    // Simulated hosts have no DNS entries, yet the RM resolves a node's name for every container token
    // (with the system resolver each miss can take seconds, stalling the RM's dispatcher): the runs point
    // the JVM at this file with -Djdk.net.hosts.file.
    try (Writer w = Files.newBufferedWriter(dir.resolve("hosts"), StandardCharsets.UTF_8)) {
      w.write("127.0.0.1 localhost " + localHostName() + "\n");
      for (int n = 0; n < p.nodes; n++) {
        w.write("127.0.0.1 node" + n + "\n");
      }
    }
    Random hosts = new Random(p.seed ^ 0x5157L);
    try (Writer w = Files.newBufferedWriter(dir.resolve("trace.json"), StandardCharsets.UTF_8)) {
      for (int i = 0; i < jobs.size(); i++) {
        Job job = jobs.get(i);
        long longestMap = max(job.mapMs);
        long end = job.submitMs + longestMap + max(job.reduceMs);
        w.write(String.format(Locale.ROOT, "{\"am.type\":\"mapreduce\",\"job.start.ms\":\"%d\",\"job.end.ms\":\"%d\","
            + "\"job.queue.name\":\"default\",\"job.id\":\"job_%04d\",\"job.user\":\"user%d\",\"job.tasks\":[",
            job.submitMs, end, i, i % 5));
        String sep = "";
        for (long ms : job.mapMs) {
          w.write(sep + task(hosts, p, ms, 20, "map"));
          sep = ",";
        }
        for (long ms : job.reduceMs) {
          w.write(sep + task(hosts, p, ms, 10, "reduce"));
        }
        w.write("]}\n");
      }
    }
    return jobs;
  }

  /** This machine's name: the RM resolves it too, so the hosts file must carry it. */
  private static String localHostName() {
    try {
      return java.net.InetAddress.getLocalHost().getHostName();
    } catch (java.net.UnknownHostException e) {
      String env = System.getenv("HOSTNAME");
      return env == null || env.isEmpty() ? "localhost.localdomain" : env;
    }
  }

  private static String task(Random hosts, Params p, long ms, int priority, String type) {
    int node = hosts.nextInt(p.nodes);
    return String.format(Locale.ROOT, "{\"container.host\":\"/rack%d/node%d\",\"container.duration.ms\":\"%d\","
        + "\"container.priority\":\"%d\",\"container.type\":\"%s\"}", node / p.nodesPerRack, node, ms, priority, type);
  }

  private static long max(long[] values) {
    long m = 0;
    for (long v : values) {
      m = Math.max(m, v);
    }
    return m;
  }

  /** The first {@code p.jobs} jobs of a SWIM TSV through the SWIM model (class docs). */
  static List<Job> swim(Params p) throws IOException {
    List<long[]> rows = new ArrayList<>();
    try (BufferedReader r = Files.newBufferedReader(p.swim, StandardCharsets.UTF_8)) {
      String line;
      int lineNo = 0;
      while ((line = r.readLine()) != null && rows.size() < p.jobs) {
        lineNo++;
        if (line.trim().isEmpty()) {
          continue;
        }
        String[] f = line.split("\t");
        if (f.length < 6) {
          throw new IOException(p.swim + " line " + lineNo + ": expected 6 tab-separated fields, got " + f.length);
        }
        try {
          rows.add(new long[] {Long.parseLong(f[1].trim()), Long.parseLong(f[3].trim()), Long.parseLong(f[4].trim()),
              Long.parseLong(f[5].trim())});
        } catch (NumberFormatException e) {
          throw new IOException(p.swim + " line " + lineNo + ": non-numeric field: " + e.getMessage(), e);
        }
      }
    }
    if (rows.isEmpty()) {
      throw new IOException(p.swim + ": no jobs");
    }
    long first = rows.get(0)[0];
    long last = rows.get(rows.size() - 1)[0];
    List<Job> jobs = new ArrayList<>();
    for (long[] row : rows) {
      long submit = last == first ? 0 : (row[0] - first) * p.arrivalSpanMs / (last - first);
      long input = Math.max(0, row[1]);
      long shuffle = Math.max(0, row[2]);
      long output = Math.max(0, row[3]);
      long maps = Math.max(1, ceilDiv(input, BLOCK));
      long reduces = 0;
      if (shuffle == 0) {
        maps = Math.max(maps, ceilDiv(output, BLOCK));
      } else {
        reduces = Math.max(1, ceilDiv(shuffle + output, BYTES_PER_REDUCE));
      }
      long mapBytes = (input + (shuffle == 0 ? output : 0)) / maps;
      long mapMs = clamp(p, 4_000 + mapBytes * 1000 / (16 * MIB));
      long reduceMs = reduces == 0 ? 0 : clamp(p, 4_000 + (shuffle + output) / reduces * 1000 / (8 * MIB));
      jobs.add(new Job(submit, filled((int) Math.min(maps, p.maxMaps), mapMs),
          filled((int) Math.min(reduces, p.maxReduces), reduceMs)));
    }
    return jobs;
  }

  /** Seeded synthetic jobs: evenly spaced arrivals over the span, 1..maxMaps maps, 0..maxReduces reduces. */
  static List<Job> synthetic(Params p) {
    Random r = new Random(p.seed);
    List<Job> jobs = new ArrayList<>();
    for (int i = 0; i < p.jobs; i++) {
      long submit = p.jobs == 1 ? 0 : (long) i * p.arrivalSpanMs / (p.jobs - 1);
      int maps = 1 + r.nextInt(p.maxMaps);
      int reduces = p.maxReduces <= 0 ? 0 : r.nextInt(p.maxReduces + 1);
      long[] mapMs = new long[maps];
      for (int m = 0; m < maps; m++) {
        mapMs[m] = p.minTaskMs + (long) (r.nextDouble() * (p.maxTaskMs - p.minTaskMs));
      }
      long[] reduceMs = new long[reduces];
      for (int m = 0; m < reduces; m++) {
        reduceMs[m] = p.minTaskMs + (long) (r.nextDouble() * (p.maxTaskMs - p.minTaskMs));
      }
      jobs.add(new Job(submit, mapMs, reduceMs));
    }
    return jobs;
  }

  private static long clamp(Params p, long ms) {
    return Math.max(p.minTaskMs, Math.min(p.maxTaskMs, ms));
  }

  private static long ceilDiv(long a, long b) {
    return (a + b - 1) / b;
  }

  private static long[] filled(int n, long value) {
    long[] out = new long[n];
    java.util.Arrays.fill(out, value);
    return out;
  }

  /** {@code SlsInput <out dir> [--key value]...}: writes the input and prints its size. */
  public static void main(String[] args) throws IOException {
    if (args.length < 1) {
      System.err.println("usage: SlsInput <out dir> [--swim FILE] [--nodes N] [--jobs N] [--seed S] ...");
      System.exit(2);
    }
    List<String> rest = new ArrayList<>(java.util.Arrays.asList(args).subList(1, args.length));
    Params p = Params.parse(rest);
    List<Job> jobs = write(p, java.nio.file.Paths.get(args[0]));
    long tasks = 0;
    for (Job j : jobs) {
      tasks += j.mapMs.length + j.reduceMs.length;
    }
    System.out.println("wrote " + jobs.size() + " jobs, " + tasks + " tasks, " + p.nodes + " nodes to " + args[0]);
  }
}
