package io.circumflex.sls;

import io.circumflex.yarn.CircumflexScheduler;
import java.io.IOException;
import java.io.Writer;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
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
    /** Containers the scheduler allocated over the run (AMs and tasks; the root queue's aggregate). */
    long containers;
    String fallback;
    Map<String, double[]> timers;
  }

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
    Files.createDirectories(out);
    long start = System.currentTimeMillis();
    SLSRunner sls = new SLSRunner(conf);
    SlsJsonAMRunner.install(sls, conf);
    sls.run(new String[] {"-tracetype", "SLS", "-tracelocation", trace.toString(), "-output", out.toString(), "-nodes",
        nodes.toString()});
    Outcome o = new Outcome();
    o.apps = sls.getRemainingApps();
    long deadline = start + timeoutMs;
    while (sls.getRemainingApps() > 0 && System.currentTimeMillis() < deadline) {
      Thread.sleep(200);
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
    b.append("  \"containers_allocated\": ").append(o.containers).append(",\n");
    b.append("  \"fallback\": ").append(o.fallback == null ? "null" : "\"" + o.fallback.replace("\"", "'") + "\"")
        .append(",\n");
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
