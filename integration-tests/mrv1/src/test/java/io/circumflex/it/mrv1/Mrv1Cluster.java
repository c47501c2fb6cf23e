package io.circumflex.it.mrv1;

import java.io.Closeable;
import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.examples.SleepJob;
import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.NullWritable;
import org.apache.hadoop.mapred.CircumflexTaskScheduler;
import org.apache.hadoop.mapred.JobClient;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.JobID;
import org.apache.hadoop.mapred.JobInProgress;
import org.apache.hadoop.mapred.JobStatus;
import org.apache.hadoop.mapred.JobTracker;
import org.apache.hadoop.mapred.MiniMRCluster;
import org.apache.hadoop.mapred.OutputCollector;
import org.apache.hadoop.mapred.Reporter;
import org.apache.hadoop.mapred.RunningJob;
import org.apache.hadoop.mapred.SchedulerAccess;
import org.apache.hadoop.mapred.TaskReport;

/**
 * A Hadoop 1.2.1 MiniMRCluster (in-process JobTracker and TaskTrackers on the local file system)
 * whose JobTracker runs {@link CircumflexTaskScheduler}, plus helpers to submit SleepJobs and read
 * their times back from the JobTracker.
 *
 * <p>Set-up it needs (see docs/mrv1.md): {@code hadoop.log.dir} (JobHistory fails without it), the
 * working directory (MiniMRCluster writes {@code build/test/mapred/local} relative to it), the
 * child JVM options for JDK 17, and {@code java.class.path} covering Hadoop, since task JVMs are
 * started with the TaskTracker's class path.
 */
public final class Mrv1Cluster implements Closeable {
  /** JVM options of task JVMs (set by the Gradle build; a plain heap cap otherwise). */
  public static final String CHILD_OPTS = System.getProperty("circumflex.it.childopts", "-Xmx200m");

  static {
    String cp = System.getProperty("circumflex.it.classpath");
    if (cp != null && !cp.isEmpty()) {
      System.setProperty("java.class.path", cp);
    }
    if (System.getProperty("hadoop.log.dir") == null) {
      File logs = new File(System.getProperty("circumflex.it.workdir", "build/it-work"), "logs");
      System.setProperty("hadoop.log.dir", logs.getAbsolutePath());
    }
    new File(System.getProperty("hadoop.log.dir")).mkdirs();
  }

  private final MiniMRCluster cluster;

  /**
   * Starts {@code trackers} TaskTrackers with {@code mapSlots} map and {@code reduceSlots} reduce
   * slots each; {@code schedulerConf} goes into the JobTracker's configuration (the
   * {@code circumflex.*} keys). A null policy keeps Hadoop's default scheduler.
   */
  public Mrv1Cluster(int trackers, int mapSlots, int reduceSlots, Map<String, String> schedulerConf)
      throws IOException {
    JobConf conf = new JobConf();
    if (schedulerConf != null) {
      conf.set("mapred.jobtracker.taskScheduler", CircumflexTaskScheduler.class.getName());
      for (Map.Entry<String, String> e : schedulerConf.entrySet()) {
        conf.set(e.getKey(), e.getValue());
      }
    }
    conf.set("mapred.job.tracker.persist.jobstatus.active", "false");
    conf.set("mapred.child.java.opts", CHILD_OPTS);
    conf.setInt("mapred.tasktracker.map.tasks.maximum", mapSlots);
    conf.setInt("mapred.tasktracker.reduce.tasks.maximum", reduceSlots);
    // Finish jobs promptly and keep completed ones visible for the assertions.
    conf.setBoolean("mapreduce.tasktracker.outofband.heartbeat", true);
    cluster = new MiniMRCluster(trackers, "file:///", 1, null, null, conf);
  }

  /** The in-process JobTracker. */
  public JobTracker jobTracker() {
    return cluster.getJobTrackerRunner().getJobTracker();
  }

  /** Stops TaskTracker {@code index} (0-based) and its task JVMs, as a lost machine would. */
  public void stopTaskTracker(int index) {
    cluster.stopTaskTracker(index);
  }

  /**
   * Stops the JobTracker and starts a new one on the same ports with job recovery on
   * ({@code mapred.jobtracker.restart.recover}); the TaskTrackers reconnect to it. Returns once the
   * new JobTracker is RUNNING.
   */
  public void restartJobTrackerWithRecovery() {
    cluster.stopJobTracker();
    cluster.getJobTrackerConf().setBoolean("mapred.jobtracker.restart.recover", true);
    cluster.startJobTracker();
  }

  /** The Circumflex scheduler (null if another scheduler runs). */
  public CircumflexTaskScheduler scheduler() {
    return SchedulerAccess.circumflex(jobTracker());
  }

  /** A job configuration for this cluster: child JVM options, JVM reuse within a job. */
  public JobConf jobConf() {
    JobConf jc = cluster.createJobConf();
    jc.set("mapred.child.java.opts", CHILD_OPTS);
    // One JVM per job and tracker instead of one per task: JVM start-up dominates on 2 cores.
    jc.setNumTasksToExecutePerJvm(-1);
    return jc;
  }

  /** Submits a SleepJob without waiting; {@code extra} keys go into its configuration. */
  public RunningJob submitSleep(String name, int maps, int reduces, long mapMs, long reduceMs,
      Map<String, String> extra) throws IOException {
    SleepJob sleep = new SleepJob();
    sleep.setConf(jobConf());
    JobConf jc = sleep.setupJobConf(maps, reduces, mapMs, 1, reduceMs, 1);
    jc.setJobName(name);
    if (extra != null) {
      for (Map.Entry<String, String> e : extra.entrySet()) {
        jc.set(e.getKey(), e.getValue());
      }
    }
    return new JobClient(jc).submitJob(jc);
  }

  /** Job key: the file whose existence releases the maps of a {@link #submitHeldSleep held sleep job}. */
  public static final String RELEASE_KEY = "circumflex.it.release.file";

  /**
   * As {@link #submitSleep} with maps only, but each map holds its slot until the file {@code release}
   * exists (the test creates it), or ends by itself {@code mapMs} after it started, whichever comes first.
   */
  public RunningJob submitHeldSleep(String name, int maps, long mapMs, Map<String, String> extra, File release)
      throws IOException {
    SleepJob sleep = new SleepJob();
    sleep.setConf(jobConf());
    JobConf jc = sleep.setupJobConf(maps, 0, mapMs, 1, 0, 1);
    jc.setJobName(name);
    jc.setMapperClass(HeldSleep.class);
    jc.set(RELEASE_KEY, release.getAbsolutePath());
    if (extra != null) {
      for (Map.Entry<String, String> e : extra.entrySet()) {
        jc.set(e.getKey(), e.getValue());
      }
    }
    return new JobClient(jc).submitJob(jc);
  }

  /**
   * The map of a held sleep job: sleeps until the {@link #RELEASE_KEY} file exists or the job's map sleep
   * time has passed since the map started, reporting progress meanwhile (so the task never times out).
   */
  public static final class HeldSleep extends SleepJob {
    private File release;
    private long capMs;
    private boolean held;

    @Override
    public void configure(JobConf job) {
      super.configure(job);
      release = new File(job.get(RELEASE_KEY));
      capMs = job.getLong("sleep.job.map.sleep.time", 0);
    }

    @Override
    public void map(IntWritable key, IntWritable value, OutputCollector<IntWritable, NullWritable> out,
        Reporter reporter) throws IOException {
      if (held) {
        return;
      }
      held = true;
      long until = System.currentTimeMillis() + capMs;
      reporter.setStatus("held until " + release + " exists");
      try {
        long now = System.currentTimeMillis();
        while (now < until && !release.exists()) {
          Thread.sleep(Math.min(100, until - now));
          now = System.currentTimeMillis();
          reporter.progress();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while held", e);
      }
    }
  }

  /**
   * Submits {@code count} identical SleepJobs named {@code prefix-i}, each once the previous one is
   * RUNNING: a job's setup task runs in its own JVM first, and setup tasks of jobs submitted
   * together finish in any order, so this makes the submission order the order in which jobs can
   * take map slots.
   */
  public List<RunningJob> submitInSequence(String prefix, int count, int maps, int reduces, long mapMs,
      long reduceMs) throws IOException, InterruptedException {
    List<RunningJob> jobs = new ArrayList<RunningJob>();
    for (int i = 0; i < count; i++) {
      RunningJob job = submitSleep(prefix + "-" + i, maps, reduces, mapMs, reduceMs, null);
      jobs.add(job);
      awaitRunning(job);
    }
    return jobs;
  }

  /** Waits for every job, asserting each succeeded, and returns their times in the same order. */
  public List<JobTimes> awaitSuccess(List<RunningJob> jobs) throws IOException, InterruptedException {
    List<JobTimes> times = new ArrayList<JobTimes>();
    for (RunningJob job : jobs) {
      await(job);
      if (!job.isSuccessful()) {
        throw new AssertionError(job.getID() + " did not succeed");
      }
      times.add(times(job.getID()));
    }
    System.out.println("job times (JobTracker ms): " + times);
    return times;
  }

  /** Blocks until {@code job} completes, polling every 200 ms. */
  public static void await(RunningJob job) throws IOException, InterruptedException {
    while (!job.isComplete()) {
      Thread.sleep(200);
    }
  }

  /**
   * Blocks until {@code job} is RUNNING (its setup task done, so it can take map slots) or complete.
   */
  public void awaitRunning(RunningJob job) throws InterruptedException {
    while (true) {
      int state = jobTracker().getJob(job.getID()).getStatus().getRunState();
      if (state != JobStatus.PREP) {
        return;
      }
      Thread.sleep(50);
    }
  }

  /** Times of a job as the JobTracker recorded them, in JobTracker ms. */
  public JobTimes times(JobID id) throws IOException {
    JobInProgress jip = jobTracker().getJob(id);
    long firstStart = Long.MAX_VALUE;
    long lastFinish = 0;
    long lastMapFinish = 0;
    long firstMapStart = Long.MAX_VALUE;
    long lastMapStart = 0;
    for (TaskReport r : jobTracker().getMapTaskReports(id)) {
      firstMapStart = Math.min(firstMapStart, r.getStartTime());
      lastMapStart = Math.max(lastMapStart, r.getStartTime());
      lastMapFinish = Math.max(lastMapFinish, r.getFinishTime());
    }
    firstStart = firstMapStart;
    lastFinish = lastMapFinish;
    for (TaskReport r : jobTracker().getReduceTaskReports(id)) {
      firstStart = Math.min(firstStart, r.getStartTime());
      lastFinish = Math.max(lastFinish, r.getFinishTime());
    }
    return new JobTimes(id.toString(), jip.getStartTime(), firstStart, lastFinish, jip.getFinishTime(),
        firstMapStart, lastMapStart, lastMapFinish);
  }

  @Override
  public void close() {
    cluster.shutdown();
  }

  /** A JUnit class rule: one cluster (2 trackers x 2 map + 1 reduce slots) per test class under a policy. */
  public static final class PerClass extends org.junit.rules.ExternalResource {
    private final Map<String, String> schedulerConf;
    private Mrv1Cluster cluster;

    /** A cluster whose scheduler gets {@code schedulerConf} ({@code circumflex.*} keys). */
    public PerClass(Map<String, String> schedulerConf) {
      this.schedulerConf = schedulerConf;
    }

    @Override
    protected void before() throws IOException {
      cluster = new Mrv1Cluster(2, 2, 1, schedulerConf);
    }

    @Override
    protected void after() {
      if (cluster != null) {
        cluster.close();
      }
    }

    /** The running cluster. */
    public Mrv1Cluster get() {
      return cluster;
    }
  }

  /** A job's recorded times. */
  public static final class JobTimes {
    public final String id;
    /** Submission. */
    public final long submit;
    /** First task start (map or reduce). */
    public final long firstTaskStart;
    /** Last task finish. */
    public final long lastTaskFinish;
    /** Job finish (after its cleanup task). */
    public final long finish;
    public final long firstMapStart;
    public final long lastMapStart;
    public final long lastMapFinish;

    JobTimes(String id, long submit, long firstTaskStart, long lastTaskFinish, long finish, long firstMapStart,
        long lastMapStart, long lastMapFinish) {
      this.id = id;
      this.submit = submit;
      this.firstTaskStart = firstTaskStart;
      this.lastTaskFinish = lastTaskFinish;
      this.finish = finish;
      this.firstMapStart = firstMapStart;
      this.lastMapStart = lastMapStart;
      this.lastMapFinish = lastMapFinish;
    }

    /** Response time: finish minus submission. */
    public long responseMs() {
      return finish - submit;
    }

    @Override
    public String toString() {
      return id + "[submit=" + submit + " tasks=" + firstTaskStart + ".." + lastTaskFinish + " maps="
          + firstMapStart + "/" + lastMapStart + ".." + lastMapFinish + " finish=" + finish + "]";
    }
  }
}
