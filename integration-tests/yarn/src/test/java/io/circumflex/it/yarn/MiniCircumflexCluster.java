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
  private final int nodeManagers;

  private MiniCircumflexCluster(MiniMRYarnCluster cluster, int nodeManagers) {
    this.cluster = cluster;
    this.nodeManagers = nodeManagers;
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
    return new MiniCircumflexCluster(mr, nodeManagers);
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
    // Job.waitForCompletion(false) polls the job's state every 5 s by default: up to 5 s of idle waiting
    // per waited job, which adds up over the tests' sequential waits. A status call every 200 ms is cheap.
    conf.setInt("mapreduce.client.completion.pollinterval", 200);
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

  /**
   * Applies {@code circumflexKeys} to the running scheduler as {@code yarn rmadmin -refreshQueues} would
   * (the ResourceManager's configuration with these keys set); fails if the scheduler refuses them.
   */
  void reconfigure(Map<String, String> circumflexKeys) throws java.io.IOException {
    org.apache.hadoop.yarn.server.resourcemanager.ResourceManager rm = cluster.getResourceManager();
    Configuration refreshed = new Configuration(rm.getConfig());
    for (Map.Entry<String, String> e : circumflexKeys.entrySet()) {
      refreshed.set(e.getKey(), e.getValue());
    }
    rm.getResourceScheduler().reinitialize(refreshed, rm.getRMContext());
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

  /** Job key: the file whose existence releases the maps of a {@link #heldSleepJob held sleep job}. */
  static final String RELEASE_KEY = "circumflex.it.release.file";

  /**
   * As {@link #sleepJob}, but each map holds its slot until the file {@code release} exists (the test
   * creates it), or ends by itself {@code spec.taskMs} after it started, whichever comes first. A test
   * that needs a map that "cannot end by itself before X" gets one for any X the test controls, and need
   * not wait out a long sleep once its proof is made.
   */
  Job heldSleepJob(JobSpec spec, Map<String, String> jobKeys, File release) throws Exception {
    Job job = sleepJob(spec, jobKeys);
    job.getConfiguration().set(RELEASE_KEY, release.getAbsolutePath());
    job.setMapperClass(HeldMapper.class);
    return job;
  }

  /**
   * The map of a held sleep job: sleeps until the {@link #RELEASE_KEY} file exists or the job's map
   * sleep time has passed since the map started, reporting progress meanwhile (so the task never times out).
   */
  public static final class HeldMapper
      extends org.apache.hadoop.mapreduce.Mapper<org.apache.hadoop.io.IntWritable, org.apache.hadoop.io.IntWritable,
          org.apache.hadoop.io.IntWritable, org.apache.hadoop.io.NullWritable> {
    private boolean held;

    @Override
    protected void map(org.apache.hadoop.io.IntWritable key, org.apache.hadoop.io.IntWritable value, Context context)
        throws java.io.IOException, InterruptedException {
      if (held) {
        return;
      }
      held = true;
      File release = new File(context.getConfiguration().get(RELEASE_KEY));
      long until = System.currentTimeMillis() + context.getConfiguration().getLong(SleepJob.MAP_SLEEP_TIME, 0);
      context.setStatus("held until " + release + " exists");
      long now = System.currentTimeMillis();
      while (now < until && !release.exists()) {
        Thread.sleep(Math.min(100, until - now));
        context.progress();
        now = System.currentTimeMillis();
      }
    }
  }

  /**
   * Waits until no container is allocated on any node (every AM of an earlier test has exited: an MR AM
   * lingers about 5 s after its job ends), so a test on a shared cluster starts on an empty one.
   */
  void awaitIdle(long timeoutMs) throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (true) {
      long allocatedMb = 0;
      for (int i = 0; i < nodeManagers; i++) {
        org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode node =
            scheduler().getSchedulerNode(cluster.getNodeManager(i).getNMContext().getNodeId());
        if (node != null) {
          allocatedMb += node.getAllocatedResource().getMemorySize();
        }
      }
      if (allocatedMb == 0) {
        return;
      }
      if (System.currentTimeMillis() > deadline) {
        throw new AssertionError("the cluster still has " + allocatedMb + " MB allocated after " + timeoutMs + " ms");
      }
      Thread.sleep(200);
    }
  }

  /**
   * Waits for {@code job} to complete, polling every 200 ms; fails after {@code timeoutMs}. Returns
   * whether it succeeded.
   */
  static boolean awaitCompletion(Job job, long timeoutMs) throws Exception {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (!job.isComplete()) {
      if (System.currentTimeMillis() > deadline) {
        throw new AssertionError(job.getJobName() + " did not complete within " + timeoutMs + " ms");
      }
      Thread.sleep(200);
    }
    return job.isSuccessful();
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
