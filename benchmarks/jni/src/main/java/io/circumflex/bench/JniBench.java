package io.circumflex.bench;

import io.circumflex.nativeapi.NativeEngine;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The JNI micro-benchmark ({@code make jni-bench}): the cost of one node-update round trip, Java to
 * the native engine and back, as the YARN shim makes it on every NODE_UPDATE.
 *
 * <p>Set-up per case, all through the public {@link NativeEngine} API the shim uses: an engine with
 * the policy under test and {@code circumflex.pool.mode=shared} (as the YARN shim sets it),
 * {@value #NODES} nodes of {@value #SLOTS_PER_NODE} slots, then N applications submitted with their
 * map and reduce counts and a per-task duration hint, each with pending map tasks set, and one
 * {@code tick} so the plan covers them all. The timed call is {@code nodeUpdate(node, free, 0, now,
 * out)} with a preallocated {@code out}, cycling over the nodes. Nothing is launched, so the state
 * (and the answer) is the same on every call: this is the steady-state cost of reading the plan.
 *
 * <p>Baseline: {@code nativeEmpty}, an exported native method with the same signature that returns
 * at once, timed in the same JVM, interleaved in rounds with the real call so both see the same
 * JIT and machine state. Every call is timed on its own with {@link System#nanoTime()}; the
 * figures include the timer's own cost (about 20-30 ns here), equally for both calls.
 *
 * <p>Second case, a heartbeat's task events: {@value #EVENTS} task starts and {@value #EVENTS} task
 * ends on one node (a full node turning over), sent the way the shims used to (one native call per
 * event, {@code taskStarted}/{@code taskFinished}) and the way they do now (one {@code tasksStarted}
 * and one {@code tasksFinished} with caller-owned arrays). The ends report failures, which put the
 * tasks back to pending, so every round leaves the engine as it found it and both ways do the same
 * engine work; the difference is the crossings. Timed per heartbeat, interleaved in rounds.
 *
 * <p>Arguments: {@code --apps 1000,10000 --policies flex,fair,fifo --calls 200000 --warmup 50000}.
 */
public final class JniBench {
  static final int NODES = 100;
  static final int SLOTS_PER_NODE = 8;
  /** Task starts (and as many ends) per heartbeat in the events case: one full node. */
  static final int EVENTS = SLOTS_PER_NODE;
  private static final int ROUNDS = 10;

  private JniBench() {}

  /** Same signature as {@code NativeEngine.nativeNodeUpdate}; returns 0 at once (rust-core/src/ffi/jni.rs). */
  private static native int nativeEmpty(long handle, int node, int freeMap, int freeReduce, long now, int[] out);

  public static void main(String[] args) {
    List<Integer> apps = Arrays.asList(1000, 10000);
    List<String> policies = Arrays.asList("flex", "fair", "fifo");
    int calls = 200_000;
    int warmup = 50_000;
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--apps":
          apps = new ArrayList<>();
          for (String s : args[i + 1].split(",")) {
            apps.add(Integer.parseInt(s.trim()));
          }
          break;
        case "--policies":
          policies = Arrays.asList(args[i + 1].split(","));
          break;
        case "--calls":
          calls = Integer.parseInt(args[i + 1]);
          break;
        case "--warmup":
          warmup = Integer.parseInt(args[i + 1]);
          break;
        default:
          throw new IllegalArgumentException("unknown option " + args[i]
              + ": expected --apps, --policies, --calls or --warmup");
      }
    }
    String version = NativeEngine.init("warn");
    System.out.printf(Locale.ROOT, "circumflex %s, %s %s, %s %s; %d nodes x %d slots, %d timed calls each%n",
        version, System.getProperty("java.vm.name"), System.getProperty("java.version"),
        System.getProperty("os.name"), System.getProperty("os.arch"), NODES, SLOTS_PER_NODE, calls);
    System.out.printf(Locale.ROOT, "%-6s %7s %-12s %9s %9s %9s %9s %8s%n", "policy", "apps", "call",
        "median_ns", "p90_ns", "p99_ns", "mean_ns", "choices");
    for (String policy : policies) {
      for (int n : apps) {
        run(policy, n, calls, warmup);
      }
    }
  }

  private static void run(String policy, int apps, int calls, int warmup) {
    Map<String, String> config = new HashMap<>();
    config.put("circumflex.policy", policy);
    config.put("circumflex.pool.mode", "shared");
    config.put("circumflex.replan.on.events", "false");
    try (NativeEngine engine = NativeEngine.create(config)) {
      int[] nodes = new int[NODES];
      for (int i = 0; i < NODES; i++) {
        nodes[i] = engine.addNode("host" + i, "/rack" + (i / 20), SLOTS_PER_NODE, 0);
      }
      long now = 1_000_000L;
      int eventJob = -1;
      for (int j = 0; j < apps; j++) {
        // A spread of sizes (1 to 64 maps, some with reduces) and task lengths, deterministic.
        int maps = 1 + (j * 37) % 64;
        int reduces = j % 3 == 0 ? 1 + j % 4 : 0;
        Map<String, String> jobConf = new HashMap<>();
        jobConf.put("mapreduce.job.name", "bench-" + j);
        jobConf.put("mapreduce.job.maps", Integer.toString(maps));
        jobConf.put("mapreduce.job.reduces", Integer.toString(reduces));
        jobConf.put("circumflex.job.map.ms", Integer.toString(1000 + (j * 7919) % 60_000));
        jobConf.put("circumflex.job.reduce.ms", Integer.toString(2000 + (j * 104_729) % 90_000));
        int job = engine.submitJob(jobConf, now + j);
        engine.setReducesReady(job, true);
        engine.setPending(job, NativeEngine.MAP, maps);
        engine.setPending(job, NativeEngine.REDUCE, 0);
        if (eventJob < 0 && maps >= EVENTS) {
          eventJob = job;
        }
      }
      now += apps + 10_000;
      if (!engine.tick(now)) {
        throw new IllegalStateException("the engine did not plan after " + apps + " submissions");
      }
      int[] out = new int[NativeEngine.CHOICE_STRIDE * 64];
      // The empty call ignores its handle; NativeEngine keeps the real one private.
      long handle = 0L;
      int choices = engine.nodeUpdate(nodes[0], SLOTS_PER_NODE, 0, now, out);
      if (choices <= 0) {
        throw new IllegalStateException(policy + " with " + apps + " pending apps offered nothing to a free node");
      }
      long sink = 0;
      for (int i = 0; i < warmup; i++) {
        sink += engine.nodeUpdate(nodes[i % NODES], SLOTS_PER_NODE, 0, now, out);
        sink += nativeEmpty(handle, nodes[i % NODES], SLOTS_PER_NODE, 0, now, out);
      }
      long[] real = new long[calls];
      long[] empty = new long[calls];
      int perRound = calls / ROUNDS;
      for (int r = 0; r < ROUNDS; r++) {
        int from = r * perRound;
        int to = r == ROUNDS - 1 ? calls : from + perRound;
        for (int i = from; i < to; i++) {
          int node = nodes[i % NODES];
          long t0 = System.nanoTime();
          sink += engine.nodeUpdate(node, SLOTS_PER_NODE, 0, now, out);
          real[i] = System.nanoTime() - t0;
        }
        for (int i = from; i < to; i++) {
          int node = nodes[i % NODES];
          long t0 = System.nanoTime();
          sink += nativeEmpty(handle, node, SLOTS_PER_NODE, 0, now, out);
          empty[i] = System.nanoTime() - t0;
        }
      }
      print(policy, apps, "nodeUpdate", real, choices);
      print(policy, apps, "empty-jni", empty, 0);
      sink += heartbeatEvents(engine, policy, apps, eventJob, nodes[0], now, calls / 10, warmup / 10);
      if (sink == Long.MIN_VALUE) {
        System.out.println(sink);
      }
    }
  }

  /**
   * Times one heartbeat's {@value #EVENTS} starts and {@value #EVENTS} ends of {@code job} on {@code node},
   * per event against batched; prints both and their ratio of medians.
   */
  private static long heartbeatEvents(NativeEngine engine, String policy, int apps, int job, int node, long now,
      int heartbeats, int warmup) {
    int[] started = new int[EVENTS * NativeEngine.STARTED_STRIDE];
    long[] finished = new long[EVENTS * NativeEngine.FINISHED_STRIDE];
    for (int i = 0; i < EVENTS; i++) {
      int s = i * NativeEngine.STARTED_STRIDE;
      started[s] = job;
      started[s + 1] = NativeEngine.MAP;
      started[s + 2] = node;
      started[s + 3] = NativeEngine.ANY;
      int f = i * NativeEngine.FINISHED_STRIDE;
      finished[f] = job;
      finished[f + 1] = NativeEngine.MAP;
      finished[f + 2] = node;
      finished[f + 3] = 1000;
      finished[f + 4] = 0;
      finished[f + 5] = now;
    }
    long sink = 0;
    for (int i = 0; i < warmup; i++) {
      sink += perEvent(engine, job, node, now) + engine.tasksStarted(started, EVENTS, now)
          + engine.tasksFinished(finished, EVENTS);
    }
    long[] single = new long[heartbeats];
    long[] batched = new long[heartbeats];
    int perRound = heartbeats / ROUNDS;
    for (int r = 0; r < ROUNDS; r++) {
      int from = r * perRound;
      int to = r == ROUNDS - 1 ? heartbeats : from + perRound;
      for (int i = from; i < to; i++) {
        long t0 = System.nanoTime();
        sink += perEvent(engine, job, node, now);
        single[i] = System.nanoTime() - t0;
      }
      for (int i = from; i < to; i++) {
        long t0 = System.nanoTime();
        sink += engine.tasksStarted(started, EVENTS, now) + engine.tasksFinished(finished, EVENTS);
        batched[i] = System.nanoTime() - t0;
      }
    }
    print(policy, apps, "events/call", single, 2 * EVENTS);
    print(policy, apps, "events/batch", batched, 2 * EVENTS);
    long[] a = single.clone();
    long[] b = batched.clone();
    Arrays.sort(a);
    Arrays.sort(b);
    System.out.printf(Locale.ROOT, "%-6s %7d %-12s %9.2f%n", policy, apps, "batch/call",
        (double) percentile(b, 0.50) / Math.max(1, percentile(a, 0.50)));
    return sink;
  }

  /** The old way: one native call per task event. */
  private static int perEvent(NativeEngine engine, int job, int node, long now) {
    for (int i = 0; i < EVENTS; i++) {
      engine.taskStarted(job, NativeEngine.MAP, node, NativeEngine.ANY, now);
    }
    for (int i = 0; i < EVENTS; i++) {
      engine.taskFinished(job, NativeEngine.MAP, node, 1000, false, now);
    }
    return EVENTS;
  }

  private static void print(String policy, int apps, String call, long[] ns, int choices) {
    long[] sorted = ns.clone();
    Arrays.sort(sorted);
    double mean = 0;
    for (long v : sorted) {
      mean += v;
    }
    mean /= sorted.length;
    System.out.printf(Locale.ROOT, "%-6s %7d %-12s %9d %9d %9d %9.0f %8d%n", policy, apps, call,
        percentile(sorted, 0.50), percentile(sorted, 0.90), percentile(sorted, 0.99), mean, choices);
  }

  /** Nearest-rank percentile of sorted values. */
  static long percentile(long[] sorted, double q) {
    int rank = (int) Math.ceil(q * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
  }
}
