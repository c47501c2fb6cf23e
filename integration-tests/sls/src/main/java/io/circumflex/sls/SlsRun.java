package io.circumflex.sls;

import io.circumflex.yarn.CircumflexScheduler;
import java.io.IOException;
import java.io.Writer;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeys;
import org.apache.hadoop.security.SecurityUtil;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.monitor.capacity.ProportionalCapacityPreemptionPolicy;
import org.apache.hadoop.yarn.sls.RMRunner;
import org.apache.hadoop.yarn.sls.SLSRunner;
import org.apache.hadoop.yarn.sls.SlsJsonAMRunner;
import org.apache.hadoop.yarn.sls.scheduler.SchedulerMetrics;
import org.apache.hadoop.yarn.sls.scheduler.SchedulerWrapper;
import org.apache.hadoop.yarn.sls.scheduler.SlsMetricsAccess;

/**
 * One SLS simulation in this JVM: starts {@link SLSRunner} in-process on an SLS trace and topology
 * with one scheduler, waits until every application has finished (or a time limit passes), then
 * writes {@code summary.json} beside SLS's own outputs ({@code realtimetrack.json},
 * {@code jobruntime.csv}, {@code metrics/}): the scheduler, wall time, applications finished and the
 * statistics of SLS's own per-operation timers ({@link SlsMetricsAccess#timers}) and of the harness's
 * busy/idle heartbeat timer ({@link HeartbeatCost}, entries {@code own.NODE_UPDATE*}).
 *
 * <p>SLS keeps static state (its task runner), so a JVM runs one simulation; {@link SlsCompare}
 * starts one JVM per scheduler.
 *
 * <p>Schedulers: {@code fair} and {@code capacity} (SLS's own timed wrappers of Hadoop's FairScheduler
 * and CapacityScheduler, through {@link SlsFairScheduler} and {@link SlsCapacityScheduler}), or
 * {@code circumflex:<policy>} ({@link SlsCircumflexScheduler}
 * with {@code circumflex.policy=<policy>}).
 */
public final class SlsRun {
  /** Outcome of a run, as written to {@code summary.json}. */
  static final class Outcome {
    boolean finished;
    int apps;
    int remaining;
    long wallMs;
    /** Of {@link #wallMs}: until SLS had started the RM, registered every NM and started its runner. */
    long startupMs;
    /** Containers the scheduler allocated over the run (AMs and tasks; the root queue's aggregate). */
    long containers;
    String fallback;
    Map<String, double[]> timers;
    /** What the run cost this JVM ({@link Resources}); null when not measured (tests). */
    Resources resources;
  }

  /**
   * What a run cost the machine, measured in its JVM: where a size does not fit, these say why. CPU is the
   * whole JVM's (start-up included); the per-thread split covers the threads alive at the end, grouped by
   * name with digits folded ({@code pool-N-thread-N}), so the time of threads that ended and of the JVM's own
   * GC and compiler threads is only in the total.
   */
  static final class Resources {
    long cpuMs;
    long heapUsedPeakMb;
    long heapMaxMb;
    long gcCount;
    long gcMs;
    double loadAverage;
    final Map<String, Long> threadCpuMs = new LinkedHashMap<>();

    /** Heap used now, for the peak (sampled while the run waits; a sampled peak, not the exact one). */
    void sampleHeap() {
      heapUsedPeakMb = Math.max(heapUsedPeakMb, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() >> 20);
    }

    /** Reads the totals at the end of the run. */
    void finish() {
      sampleHeap();
      heapMaxMb = Runtime.getRuntime().maxMemory() >> 20;
      java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
      loadAverage = os.getSystemLoadAverage();
      if (os instanceof com.sun.management.OperatingSystemMXBean) {
        cpuMs = ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime() / 1_000_000;
      }
      for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
        gcCount += Math.max(0, gc.getCollectionCount());
        gcMs += Math.max(0, gc.getCollectionTime());
      }
      ThreadMXBean threads = ManagementFactory.getThreadMXBean();
      Map<String, Long> groups = new HashMap<>();
      for (ThreadInfo t : threads.getThreadInfo(threads.getAllThreadIds())) {
        long ns = t == null ? -1 : threads.getThreadCpuTime(t.getThreadId());
        if (ns > 0) {
          groups.merge(threadGroup(t.getThreadName()), ns / 1_000_000, Long::sum);
        }
      }
      List<Map.Entry<String, Long>> sorted = new ArrayList<>(groups.entrySet());
      sorted.sort((a, b) -> Long.compare(b.getValue(), a.getValue()));
      long rest = 0;
      for (int i = 0; i < sorted.size(); i++) {
        if (i < TOP_THREAD_GROUPS) {
          threadCpuMs.put(sorted.get(i).getKey(), sorted.get(i).getValue());
        } else {
          rest += sorted.get(i).getValue();
        }
      }
      if (rest > 0) {
        threadCpuMs.put("(other live threads)", rest);
      }
    }
  }

  /** Thread groups kept by name in {@code summary.json}; the rest are summed. */
  static final int TOP_THREAD_GROUPS = 8;

  /** A thread's group: its name with every run of digits replaced by {@code N}. */
  static String threadGroup(String name) {
    return name.replaceAll("[0-9]+", "N");
  }

  /**
   * System property ({@code -D}) that overrides {@code yarn.sls.metrics.timer.window.size} of
   * {@code sls-runner.xml} for this JVM's run ({@link SlsCompare} sets it from {@code --timer-window}).
   */
  static final String TIMER_WINDOW_PROPERTY = "circumflex.sls.timer.window";

  private SlsRun() {}

  /** Runs one simulation; {@code timeoutMs} bounds the wait for the applications. */
  static Outcome run(String scheduler, Path trace, Path nodes, Path out, long timeoutMs) throws Exception {
    Configuration conf = new Configuration();
    if ("fair".equals(scheduler)) {
      conf.set(YarnConfiguration.RM_SCHEDULER, SlsFairScheduler.class.getName());
      // SLS refuses applications whose queue the allocation file does not declare (the classpath resource).
      conf.set("yarn.scheduler.fair.allocation.file", "fair-scheduler.xml");
    } else if ("capacity".equals(scheduler)) {
      conf.set(YarnConfiguration.RM_SCHEDULER, SlsCapacityScheduler.class.getName());
      // What SLS's RMRunner sets when it swaps in its own wrapper for exactly CapacityScheduler.
      conf.setBoolean(YarnConfiguration.RM_SCHEDULER_ENABLE_MONITORS, true);
      conf.set(YarnConfiguration.RM_SCHEDULER_MONITOR_POLICIES, ProportionalCapacityPreemptionPolicy.class.getName());
    } else if (scheduler.startsWith("circumflex:") && scheduler.length() > "circumflex:".length()) {
      conf.set(YarnConfiguration.RM_SCHEDULER, SlsCircumflexScheduler.class.getName());
      conf.set("circumflex.policy", scheduler.substring("circumflex:".length()));
    } else {
      throw new IllegalArgumentException("scheduler '" + scheduler + "': expected fair, capacity or circumflex:<policy>");
    }
    // Simulated nodes (node0, node1, ...) have no DNS entries; with the default (use_ip=true) the RM
    // resolves every NM host to build container and NM tokens, fails, and no AM container ever launches.
    conf.setBoolean(CommonConfigurationKeys.HADOOP_SECURITY_TOKEN_SERVICE_USE_IP, false);
    SecurityUtil.setConfiguration(conf);
    String window = System.getProperty(TIMER_WINDOW_PROPERTY);
    if (window != null) {
      // A value set on the Configuration outranks sls-runner.xml, which SLSRunner adds as a resource.
      conf.setInt("yarn.sls.metrics.timer.window.size", Integer.parseInt(window.trim()));
    }
    Files.createDirectories(out);
    Resources resources = new Resources();
    long start = System.currentTimeMillis();
    SLSRunner sls = new SLSRunner(conf);
    SlsJsonAMRunner.install(sls, conf);
    sls.run(new String[] {"-tracetype", "SLS", "-tracelocation", trace.toString(), "-output", out.toString(), "-nodes",
        nodes.toString()});
    Outcome o = new Outcome();
    o.startupMs = System.currentTimeMillis() - start;
    o.apps = sls.getRemainingApps();
    long deadline = start + timeoutMs;
    while (sls.getRemainingApps() > 0 && System.currentTimeMillis() < deadline) {
      Thread.sleep(200);
      resources.sampleHeap();
    }
    o.wallMs = System.currentTimeMillis() - start;
    o.remaining = sls.getRemainingApps();
    o.finished = o.apps > 0 && o.remaining == 0;
    ResourceScheduler rs = resourceManager(sls).getResourceScheduler();
    SchedulerMetrics metrics = ((SchedulerWrapper) rs).getSchedulerMetrics();
    o.timers = SlsMetricsAccess.timers(metrics);
    o.containers = rs.getRootQueueMetrics() == null ? 0 : rs.getRootQueueMetrics().getAggregateAllocatedContainers();
    if (rs instanceof HeartbeatCost.Source) {
      o.timers.putAll(((HeartbeatCost.Source) rs).heartbeatCost().stats());
    }
    if (rs instanceof CircumflexScheduler) {
      o.fallback = ((CircumflexScheduler) rs).getFallbackCause();
    }
    resources.finish();
    o.resources = resources;
    writeSummary(out.resolve("summary.json"), scheduler, o);
    sls.stop();
    return o;
  }

  /** SLS keeps its ResourceManager in a private field; the harness reads it to reach the scheduler's timers. */
  private static ResourceManager resourceManager(SLSRunner sls) throws ReflectiveOperationException {
    Field f = SLSRunner.class.getDeclaredField("rmRunner");
    f.setAccessible(true);
    return ((RMRunner) f.get(sls)).getRm();
  }

  static void writeSummary(Path file, String scheduler, Outcome o) throws IOException {
    StringBuilder b = new StringBuilder();
    b.append("{\n  \"scheduler\": \"").append(scheduler).append("\",\n");
    b.append("  \"finished\": ").append(o.finished).append(",\n");
    b.append("  \"apps\": ").append(o.apps).append(",\n");
    b.append("  \"remaining\": ").append(o.remaining).append(",\n");
    b.append("  \"wall_ms\": ").append(o.wallMs).append(",\n");
    b.append("  \"startup_ms\": ").append(o.startupMs).append(",\n");
    b.append("  \"containers_allocated\": ").append(o.containers).append(",\n");
    b.append("  \"fallback\": ").append(o.fallback == null ? "null" : "\"" + o.fallback.replace("\"", "'") + "\"")
        .append(",\n");
    if (o.resources != null) {
      Resources r = o.resources;
      b.append(String.format(Locale.ROOT, "  \"resources\": {\"cpu_ms\": %d, \"heap_used_peak_mb\": %d, "
          + "\"heap_max_mb\": %d, \"gc_count\": %d, \"gc_ms\": %d, \"load_average\": %.2f, \"thread_cpu_ms\": {",
          r.cpuMs, r.heapUsedPeakMb, r.heapMaxMb, r.gcCount, r.gcMs, r.loadAverage));
      String tsep = "";
      for (Map.Entry<String, Long> e : r.threadCpuMs.entrySet()) {
        b.append(tsep).append('"').append(e.getKey().replace("\\", "\\\\").replace("\"", "\\\""))
            .append("\": ").append(e.getValue());
        tsep = ", ";
      }
      b.append("}},\n");
    }
    b.append("  \"timers\": {");
    String sep = "\n";
    for (Map.Entry<String, double[]> e : o.timers.entrySet()) {
      b.append(sep).append("    \"").append(e.getKey()).append("\": {");
      double[] v = e.getValue();
      for (int i = 0; i < v.length; i++) {
        b.append(i == 0 ? "" : ", ").append('"').append(SlsMetricsAccess.COLUMNS[i]).append("\": ")
            .append(String.format(Locale.ROOT, "%.3f", v[i]));
      }
      b.append('}');
      sep = ",\n";
    }
    b.append("\n  }\n}\n");
    try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      w.write(b.toString());
    }
  }

  /** {@code SlsRun <scheduler> <trace.json> <nodes.json> <out dir> <timeout s>}; exits 0 when all apps finished. */
  public static void main(String[] args) throws Exception {
    if (args.length != 5) {
      System.err.println("usage: SlsRun <fair|capacity|circumflex:POLICY> <trace.json> <nodes.json> <out dir> <timeout s>");
      System.exit(2);
    }
    Outcome o;
    try {
      o = run(args[0], Paths.get(args[1]), Paths.get(args[2]), Paths.get(args[3]), Long.parseLong(args[4]) * 1000);
    } catch (Exception | LinkageError e) {
      // SLS's RM and runner threads are not daemons: without the exit a failed start hangs the JVM.
      System.err.println("SLS run of " + args[0] + " failed: " + e);
      e.printStackTrace();
      System.exit(1);
      return;
    }
    System.out.println(String.format(Locale.ROOT, "%s: %d/%d applications finished in %.1f s%s", args[0],
        o.apps - o.remaining, o.apps, o.wallMs / 1000.0, o.fallback == null ? "" : " (FALLBACK: " + o.fallback + ")"));
    // SLS leaves non-daemon threads behind (its task runner, the RM's services).
    System.exit(o.finished && o.fallback == null ? 0 : 1);
  }
}
