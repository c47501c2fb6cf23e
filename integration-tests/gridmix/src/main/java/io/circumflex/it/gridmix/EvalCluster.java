package io.circumflex.it.gridmix;

import io.circumflex.yarn.CircumflexScheduler;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler;

/**
 * One embedded MiniMRYarnCluster (one NodeManager) under a named scheduler, sized like the project's
 * other mini-cluster runs ({@code MiniCircumflexCluster}): containers of 256 MB (one slot), AMs of
 * 512 MB, and node memory for every job's AM plus a number of task slots ({@value #DEFAULT_TASK_SLOTS}
 * unless {@code --task-slots} says otherwise), so no scheduler can deadlock on AMs and all of them see the
 * same node.
 *
 * <p>Schedulers ({@link #SCHEDULERS}), each configured as its users run it when response time matters:
 * {@code circumflex-<policy>} runs the Circumflex shim with that policy, the engine's preemption on and
 * the engine's AM admission on (its default share, half the pool) ({@code circumflex-flex} with
 * {@code circumflex.objective=avg_response_time});
 * {@code hadoop-fair} is Hadoop's FairScheduler (one queue, fair sharing between applications, several
 * containers per heartbeat, its default AM share of 0.5, and preemption on: an application below half its
 * fair share for 3 s, the engine's own delay, takes containers back after the stock 15 s grace);
 * {@code hadoop-capacity} is the CapacityScheduler (the default queue, FIFO between applications, its
 * default AM limit of 10% of the queue). The node has room for every job's AM plus the task slots, so
 * no scheduler can deadlock on AMs; a scheduler that keeps fewer AMs alive has that memory for tasks
 * (the AM caps are part of what is compared, docs/evaluation.md).
 */
final class EvalCluster implements AutoCloseable {
  static final int SLOT_MB = 256;
  static final int AM_MB = 512;
  static final int DEFAULT_TASK_SLOTS = 4;
  /** Starvation time before a preemption, for the FairScheduler and the Circumflex engine alike (s). */
  static final int PREEMPTION_DELAY_S = 3;
  /** The default comparison, the headline pair (FairScheduler, FLEX) first. */
  static final List<String> SCHEDULERS = Arrays.asList("hadoop-fair", "circumflex-flex", "hadoop-capacity",
      "circumflex-fair", "circumflex-fifo");

  private final MiniMRYarnCluster cluster;
  final String scheduler;

  private EvalCluster(MiniMRYarnCluster cluster, String scheduler) {
    this.cluster = cluster;
    this.scheduler = scheduler;
  }

  /**
   * Starts a cluster named {@code name} under {@code scheduler} with room for {@code jobs} AMs and
   * {@code taskSlots} task containers.
   */
  static EvalCluster start(String name, String scheduler, int jobs, int taskSlots, File work) throws IOException {
    return start(name, scheduler, jobs, taskSlots, work, Collections.emptyMap());
  }

  /**
   * As {@link #start(String, String, int, int, File)}, with {@code circumflexKeys} set on top of the
   * evaluation's own keys when {@code scheduler} is a Circumflex one (the harness's --circumflex-keys).
   */
  static EvalCluster start(String name, String scheduler, int jobs, int taskSlots, File work,
      Map<String, String> circumflexKeys) throws IOException {
    Configuration conf = new YarnConfiguration();
    schedulerKeys(conf, scheduler, new File(work, name + "-scheduler"));
    if (scheduler.startsWith("circumflex-")) {
      circumflexKeys.forEach(conf::set);
    }
    final int nmMb = jobs * AM_MB + taskSlots * SLOT_MB;
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, SLOT_MB);
    conf.setInt(YarnConfiguration.NM_PMEM_MB, nmMb);
    conf.setInt("yarn.minicluster.yarn.nodemanager.resource.memory-mb", nmMb);
    // Memory is the one binding resource, as in the Circumflex shim's slots: with the default 8 vcores
    // the FairScheduler (which checks vcores when fitting) would stop at 8 containers on this node.
    conf.setInt(YarnConfiguration.NM_VCORES, 256);
    conf.setLong(YarnConfiguration.RM_NM_HEARTBEAT_INTERVAL_MS, 200);
    // The shared build disk hovers near the NodeManager's default 90% limit (free space counts, not
    // this run's use); once it crossed, the only node was UNHEALTHY for two minutes and every job queued.
    conf.setFloat("yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage", 100.0f);
    conf.setInt("yarn.app.mapreduce.am.resource.mb", AM_MB);
    conf.set("yarn.app.mapreduce.am.command-opts", "-Xmx320m -XX:TieredStopAtLevel=1 -Xshare:auto");
    conf.setInt("yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms", 200);
    for (String phase : new String[] {"map", "reduce"}) {
      conf.setInt("mapreduce." + phase + ".memory.mb", SLOT_MB);
      conf.set("mapreduce." + phase + ".java.opts", "-Xmx160m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC");
      conf.setBoolean("mapreduce." + phase + ".speculative", false);
    }
    conf.setFloat("mapreduce.job.reduce.slowstart.completedmaps", 1.0f);
    conf.setInt("mapreduce.task.io.sort.mb", 16);
    // Completed applications stay listed by the RM, which is where the per-job times are read.
    conf.setInt(YarnConfiguration.RM_MAX_COMPLETED_APPLICATIONS, 10_000);
    // A fresh directory per run: job history left by an earlier run would leak into a recorded trace.
    GridmixEval.deleteTree(new File(work, name).toPath());
    GridmixEval.deleteTree(new File(work, name + "-tmp").toPath());
    System.setProperty("test.build.data", new File(work, name).getAbsolutePath());
    System.setProperty("hadoop.tmp.dir", new File(work, name + "-tmp").getAbsolutePath());
    MiniMRYarnCluster mr = new MiniMRYarnCluster(name, 1);
    mr.init(conf);
    mr.start();
    return new EvalCluster(mr, scheduler);
  }

  private static void schedulerKeys(Configuration conf, String scheduler, File dir) throws IOException {
    if (scheduler.startsWith("circumflex-")) {
      String policy = scheduler.substring("circumflex-".length());
      conf.setClass(YarnConfiguration.RM_SCHEDULER, CircumflexScheduler.class, ResourceScheduler.class);
      conf.set("circumflex.policy", policy);
      conf.set("circumflex.epoch.ms", "1000");
      conf.set("circumflex.preemption.enabled", "true");
      conf.set("circumflex.preemption.delay.ms", String.valueOf(PREEMPTION_DELAY_S * 1000));
      // The engine decides when each AM starts (plan order, half the pool at most: docs/am-admission.md).
      conf.set("circumflex.am.admission.enabled", "true");
      if (policy.equals("flex")) {
        conf.set("circumflex.objective", "avg_response_time");
      }
    } else if (scheduler.equals("hadoop-fair")) {
      conf.setClass(YarnConfiguration.RM_SCHEDULER, FairScheduler.class, ResourceScheduler.class);
      Files.createDirectories(dir.toPath());
      File alloc = new File(dir, "fair-scheduler.xml");
      String xml = "<?xml version=\"1.0\"?>\n<allocations>\n"
          + "  <defaultQueueSchedulingPolicy>fair</defaultQueueSchedulingPolicy>\n"
          // Preemption needs a starvation timeout (the default, Long.MAX_VALUE, never preempts): the
          // Circumflex engine's delay (circumflex.preemption.delay.ms). Threshold and grace are stock.
          + "  <defaultFairSharePreemptionTimeout>" + PREEMPTION_DELAY_S + "</defaultFairSharePreemptionTimeout>\n"
          + "</allocations>\n";
      Files.write(alloc.toPath(), xml.getBytes(StandardCharsets.UTF_8));
      conf.set("yarn.scheduler.fair.allocation.file", alloc.getAbsolutePath());
      conf.setBoolean("yarn.scheduler.fair.assignmultiple", true);
      // The FairScheduler rounds every request up to its increment (1024 MB by default): 512 MB AMs and
      // 256 MB tasks became 1024 MB each, four AMs filled the node and no task ever fitted (the stall in
      // docs/evaluation.md). One slot is the increment here, as for the other schedulers.
      conf.setInt("yarn.resource-types.memory-mb.increment-allocation", SLOT_MB);
      conf.setInt("yarn.scheduler.increment-allocation-mb", SLOT_MB);
      conf.setBoolean("yarn.scheduler.fair.user-as-default-queue", false);
      conf.setBoolean("yarn.scheduler.fair.preemption", true);
    } else if (scheduler.equals("hadoop-capacity")) {
      conf.setClass(YarnConfiguration.RM_SCHEDULER, CapacityScheduler.class, ResourceScheduler.class);
    } else {
      throw new IllegalArgumentException("unknown scheduler " + scheduler
          + ": expected circumflex-<policy> or one of " + SCHEDULERS);
    }
  }

  /** The running cluster's configuration (clients start from it). */
  Configuration config() {
    return cluster.getConfig();
  }

  /** Whether the Circumflex shim fell back to its built-in FIFO (a native failure); false for Hadoop's. */
  String fallbackCause() {
    ResourceScheduler s = cluster.getResourceManager().getResourceScheduler();
    if (s instanceof CircumflexScheduler && ((CircumflexScheduler) s).isFallbackActive()) {
      return String.valueOf(((CircumflexScheduler) s).getFallbackCause());
    }
    return null;
  }

  @Override
  public void close() {
    cluster.stop();
  }
}
