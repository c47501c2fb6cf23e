package io.circumflex.it.yarn;

import io.circumflex.yarn.CircumflexScheduler;
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.SleepJob;
import org.apache.hadoop.mapreduce.TaskReport;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;

/**
 * A MiniMRYarnCluster (one NodeManager, in-process ResourceManager) running the Circumflex
 * scheduler, sized for a 2-core machine (4 concurrent tasks besides the AMs), plus a runner for concurrent MapReduce sleep jobs that
 * records each job's timeline. Shared by the integration tests.
 */
public final class MiniCircumflexCluster implements AutoCloseable {
  /** Container sizes (MB): every task is one slot (= minimum allocation); an AM is two. */
  static final int SLOT_MB = 256;
  static final int AM_MB = 512;
  /** Task slots left on the one NodeManager once every job's AM runs. */
  static final int TASK_SLOTS = 4;

  private final MiniMRYarnCluster cluster;

  private MiniCircumflexCluster(MiniMRYarnCluster cluster) {
    this.cluster = cluster;
  }

  /**
   * Starts a cluster whose scheduler gets {@code circumflexKeys}, with room for {@code jobs} AMs
   * plus {@link #TASK_SLOTS} tasks.
   */
  static MiniCircumflexCluster start(String name, Map<String, String> circumflexKeys, int jobs) {
    return start(name, circumflexKeys, jobs, 1);
  }

  /**
   * As {@link #start(String, Map, int)} with {@code nodeManagers} NodeManagers, each sized as the
   * one of the single-node cluster. With more than one, lost NodeManagers expire after 6 s, not 10 min.
   */
  static MiniCircumflexCluster start(String name, Map<String, String> circumflexKeys, int jobs, int nodeManagers) {
    MiniMRYarnCluster mr = new MiniMRYarnCluster(name, nodeManagers);
    mr.init(configuration(name, circumflexKeys, jobs, nodeManagers));
    mr.start();
    return new MiniCircumflexCluster(mr);
  }

  /**
   * The configuration {@link #start(String, Map, int, int)} starts its cluster with (it also points
   * {@code test.build.data} and {@code hadoop.tmp.dir} under {@code circumflex.it.workdir}). Public for
   * the shared-scan integration test, which adds HDFS and ZooKeeper to the same YARN set-up.
   */
  public static Configuration configuration(String name, Map<String, String> circumflexKeys, int jobs,
      int nodeManagers) {
    final int nmMb = jobs * AM_MB + TASK_SLOTS * SLOT_MB;
    Configuration conf = new YarnConfiguration();
    conf.setClass(YarnConfiguration.RM_SCHEDULER, CircumflexScheduler.class, ResourceScheduler.class);
    for (Map.Entry<String, String> e : circumflexKeys.entrySet()) {
      conf.set(e.getKey(), e.getValue());
    }
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, SLOT_MB);
    conf.setInt(YarnConfiguration.NM_PMEM_MB, nmMb);
    conf.setInt("yarn.minicluster.yarn.nodemanager.resource.memory-mb", nmMb);
    conf.setLong(YarnConfiguration.RM_NM_HEARTBEAT_INTERVAL_MS, 200);
    // The NodeManager calls a disk more than 90% used "failed" and the node unhealthy, and then no job
    // ever runs: on a shared build disk that is a matter of what else is on it (it happened at 90.1%).
    conf.setFloat(YarnConfiguration.NM_MAX_PER_DISK_UTILIZATION_PERCENTAGE, 99.9f);
    conf.setInt("yarn.app.mapreduce.am.resource.mb", AM_MB);
    conf.set("yarn.app.mapreduce.am.command-opts", "-Xmx320m -XX:TieredStopAtLevel=1 -Xshare:auto");
    conf.setInt("yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms", 200);
    conf.setInt("mapreduce.map.memory.mb", SLOT_MB);
    conf.setInt("mapreduce.reduce.memory.mb", SLOT_MB);
    conf.set("mapreduce.map.java.opts", "-Xmx160m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC");
    conf.set("mapreduce.reduce.java.opts", "-Xmx160m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC");
    conf.setBoolean("mapreduce.map.speculative", false);
    conf.setBoolean("mapreduce.reduce.speculative", false);
    conf.setFloat("mapreduce.job.reduce.slowstart.completedmaps", 1.0f);
    // Jobs with reduces allocate the map-side sort buffer (100 MB by default) in a 160 MB task heap.
    conf.setInt("mapreduce.task.io.sort.mb", 16);
    String work = System.getProperty("circumflex.it.workdir");
    if (work != null) {
      System.setProperty("test.build.data", new File(work, name).getAbsolutePath());
      System.setProperty("hadoop.tmp.dir", new File(work, name + "-tmp").getAbsolutePath());
    }
    if (nodeManagers > 1) {
      // Node-loss tests: a stopped NodeManager that did not unregister expires in seconds, not 10 min.
      conf.setInt(YarnConfiguration.RM_NM_EXPIRY_INTERVAL_MS, 6000);
      // An AM that launches a container on a NodeManager just stopped retries the connection for 3 min
      // by default (yarn.client.nodemanager-connect.max-wait-ms, NMProxy's retry policy) before the attempt
      // fails and is re-run: the likely reason the node-loss test took 235 s in one CI run and 72 s in the
      // next. 10 s is still many heartbeats, and the outcome (the attempt re-run elsewhere) is the same.
      conf.setLong(YarnConfiguration.CLIENT_NM_CONNECT_MAX_WAIT_MS, 10_000);
      conf.setLong(YarnConfiguration.CLIENT_NM_CONNECT_RETRY_INTERVAL_MS, 1_000);
    }
    return conf;
  }

  /** The underlying mini cluster (NodeManagers, ResourceManager, configuration). */
  MiniMRYarnCluster yarn() {
    return cluster;
  }

  /** The scheduler inside the cluster's ResourceManager. */
  CircumflexScheduler scheduler() {
    return (CircumflexScheduler) cluster.getResourceManager().getResourceScheduler();
  }

  /** One job of a workload: name, maps, reduces, task sleep time, extra job keys. */
  static final class JobSpec {
    final String name;
    final int maps;
    final int reduces;
    final long taskMs;

    JobSpec(String name, int maps, int reduces, long taskMs) {
      this.name = name;
      this.maps = maps;
      this.reduces = reduces;
      this.taskMs = taskMs;
    }
  }

  /** What happened to one job, in wall-clock ms. */
  static final class JobResult {
    final String name;
    final boolean success;
    final long submitMs;
    final long finishMs;
    final long firstTaskStartMs;
    final long lastTaskFinishMs;

    JobResult(String name, boolean success, long submitMs, long finishMs, long firstTaskStartMs,
        long lastTaskFinishMs) {
      this.name = name;
      this.success = success;
      this.submitMs = submitMs;
      this.finishMs = finishMs;
      this.firstTaskStartMs = firstTaskStartMs;
      this.lastTaskFinishMs = lastTaskFinishMs;
    }

    long responseMs() {
      return finishMs - submitMs;
    }

    @Override
    public String toString() {
      return String.format("%s ok=%s submit=%d tasks=[%d, %d] finish=%d", name, success, submitMs,
          firstTaskStartMs, lastTaskFinishMs, finishMs);
    }
  }

  /** A sleep job for {@code spec} on this cluster, with {@code jobKeys} added to its configuration. */
  Job sleepJob(JobSpec spec, Map<String, String> jobKeys) throws Exception {
    Configuration conf = new Configuration(cluster.getConfig());
    for (Map.Entry<String, String> e : jobKeys.entrySet()) {
      conf.set(e.getKey(), e.getValue());
    }
    SleepJob sleep = new SleepJob();
    sleep.setConf(conf);
    Job job = sleep.createJob(spec.maps, spec.reduces, spec.taskMs, 1, spec.taskMs, 1);
    job.setJobName(spec.name);
    job.setMaxMapAttempts(2);
    return job;
  }

  /**
   * Submits the jobs {@code staggerMs} apart (in list order) without waiting, then waits for all.
   */
  List<JobResult> run(List<JobSpec> specs, long staggerMs) throws Exception {
    List<Job> jobs = new ArrayList<>();
    List<Long> submitted = new ArrayList<>();
    for (JobSpec spec : specs) {
      Job job = sleepJob(spec, java.util.Collections.<String, String>emptyMap());
      submitted.add(System.currentTimeMillis());
      job.submit();
      jobs.add(job);
      Thread.sleep(staggerMs);
    }
    List<JobResult> results = new ArrayList<>();
    for (int i = 0; i < jobs.size(); i++) {
      Job job = jobs.get(i);
      boolean ok = job.waitForCompletion(false);
      long first = Long.MAX_VALUE;
      long last = 0;
      for (TaskType type : new TaskType[] {TaskType.MAP, TaskType.REDUCE}) {
        for (TaskReport report : job.getTaskReports(type)) {
          first = Math.min(first, report.getStartTime());
          last = Math.max(last, report.getFinishTime());
        }
      }
      results.add(new JobResult(specs.get(i).name, ok, submitted.get(i), job.getFinishTime(), first, last));
    }
    return results;
  }

  /**
   * The ResourceManager's web address, {@code http://host:port}, with the RM's web app made the one
   * that answers there.
   *
   * <p>Every YARN web app in this JVM (ResourceManager "cluster", JobHistoryServer "jobhistory",
   * NodeManager "node") installs its Guice filter in Jetty by class name ({@code WebApps.Builder}),
   * so Jetty builds a {@code GuiceFilter} with the no-argument constructor, which dispatches through
   * Guice's one static {@code FilterPipeline}; each web app's injector overwrites that static, and the
   * NodeManager's is created last. Requests to the RM's port therefore went through the NodeManager's
   * routes, found no {@code /cluster/scheduler}, fell through to Jetty's default servlet and got a
   * 404. Pointing the static pipeline back at the pipeline of the RM's own injector (held by the
   * {@code GuiceFilter} instance its {@code WebApp} keeps) makes the RM's page and REST answer; the
   * tests use no other web app of the mini cluster.
   */
  String webAddress() {
    serveResourceManagerWebApp();
    return org.apache.hadoop.yarn.webapp.util.WebAppUtils.getRMWebAppURLWithScheme(
        cluster.getResourceManager().getConfig());
  }

  private void serveResourceManagerWebApp() {
    try {
      Object webApp = field(org.apache.hadoop.yarn.server.resourcemanager.ResourceManager.class, "webApp")
          .get(cluster.getResourceManager());
      Object filter = field(org.apache.hadoop.yarn.webapp.WebApp.class, "guiceFilter").get(webApp);
      Object pipeline = field(com.google.inject.servlet.GuiceFilter.class, "injectedPipeline").get(filter);
      if (pipeline == null) {
        throw new IllegalStateException("the RM web app's GuiceFilter has no pipeline of its own");
      }
      field(com.google.inject.servlet.GuiceFilter.class, "pipeline").set(null, pipeline);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot make the ResourceManager's web app answer", e);
    }
  }

  private static java.lang.reflect.Field field(Class<?> owner, String name) throws NoSuchFieldException {
    java.lang.reflect.Field f = owner.getDeclaredField(name);
    f.setAccessible(true);
    return f;
  }

  /** The in-process ResourceManager. */
  org.apache.hadoop.yarn.server.resourcemanager.ResourceManager resourceManager() {
    return cluster.getResourceManager();
  }

  @Override
  public void close() {
    cluster.stop();
  }
}
