package io.circumflex.it.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import io.circumflex.it.yarn.MiniCircumflexCluster.JobSpec;
import java.io.File;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.mapreduce.Counters;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobCounter;
import org.apache.hadoop.mapreduce.TaskCompletionEvent;
import org.apache.hadoop.mapreduce.TaskReport;
import org.apache.hadoop.mapreduce.TaskType;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * Engine-decided preemption carried out by the YARN shim (issue 17, {@code docs/preemption.md}): a long
 * job holds every task slot of the one NodeManager with long maps; a short job arrives. With
 * preemption on (fair targets: 2 slots each), the engine asks 2 of the long job's youngest maps back
 * for the short job; the shim sends them to the long job's AM as a strict preemption set and, after
 * the grace period, kills them with the {@code PREEMPTED} exit status. The short job gets its slots
 * while no long map could have ended by itself, the killed attempts end KILLED (not FAILED, so they
 * do not count toward {@code mapreduce.map.maxattempts}, which the sleep job sets to 2), and both jobs
 * succeed with every map done. With preemption off the existing tests show today's behaviour, unchanged.
 *
 * <p>The long maps are held ({@link MiniCircumflexCluster#heldSleepJob}): each keeps its slot until the
 * test releases it, which it does only once the short job has ended (or after {@link #LONG_MAP_MS} by
 * itself, far beyond any wait of the test). So the short job can only have run on slots taken back by
 * preemption, on any machine load, and the test does not wait out a long sleep afterwards: the surviving
 * and re-run long maps end at the release. (They used to sleep a fixed 60 s, re-runs included, which
 * made each test about 100 s long.)
 *
 * <p>Both tests run on one cluster (started once: a mini cluster's start and stop cost half a minute
 * of {@code make test}), with the AM gate on. Each test waits until the cluster is empty, submits its
 * own pair of jobs, and reads the engine's counters as differences, so either order passes.
 */
public class PreemptionIT {
  /**
   * Most a held long map runs before it ends by itself, ms: far longer than the grace period plus a few
   * heartbeats, and than {@link #WAIT_MS}.
   */
  private static final long LONG_MAP_MS = 600_000;
  /** Generous bound on each wait of the tests (a loaded machine stretched an AM's start-up to 48 s). */
  private static final long WAIT_MS = 240_000;
  private static final long GRACE_MS = 3_000;

  private static MiniCircumflexCluster cluster;

  @BeforeClass
  public static void startCluster() {
    cluster = MiniCircumflexCluster.start("it-preempt", preemptionKeys(), 2);
  }

  @AfterClass
  public static void stopCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  public void aStarvedShortJobTakesSlotsFromALongJobWhoseMapsEndKilledNotFailed() throws Exception {
    cluster.awaitIdle(WAIT_MS);
    long preemptedBefore = Math.max(0, preempted(cluster.scheduler().statusJson()));
    File release = releaseFile("starved-short-job");
    // The submitter's estimate is what the engine weighs a kill against until a task finishes: a map
    // expected to run 5 minutes is worth taking back while it is young.
    Job longJob = cluster.heldSleepJob(new JobSpec("long", MiniCircumflexCluster.TASK_SLOTS, 0, LONG_MAP_MS),
        Collections.singletonMap("circumflex.job.map.ms", "300000"), release);
    long released;
    long allRunning;
    long shortSubmit;
    Job shortJob;
    try {
      longJob.submit();
      allRunning = awaitRunningMaps(longJob, MiniCircumflexCluster.TASK_SLOTS, WAIT_MS);
      shortJob = cluster.sleepJob(new JobSpec("short", 2, 0, 1_000),
          Collections.singletonMap("circumflex.job.map.ms", "1000"));
      shortSubmit = System.currentTimeMillis();
      shortJob.submit();
      assertTrue("the short job succeeds", MiniCircumflexCluster.awaitCompletion(shortJob, WAIT_MS));
    } finally {
      released = release(release);
    }
    long shortFirstMap = firstStart(shortJob);
    long shortDone = shortJob.getFinishTime();
    assertTrue("the long job succeeds", MiniCircumflexCluster.awaitCompletion(longJob, WAIT_MS));
    System.out.printf("long maps all running at %d; short submitted %d, first map %d, done %d; long maps released"
        + " %d; long done %d%n", allRunning, shortSubmit, shortFirstMap, shortDone, released, longJob.getFinishTime());

    // The short job got slots while every long map still held its slot and none could have ended by
    // itself: each long map ended only once released, after the short job had ended.
    assertTrue("the short job's first map started at " + shortFirstMap + ", before the long maps (all running at "
        + allRunning + ") could end by themselves", shortFirstMap < allRunning + LONG_MAP_MS - 5_000);
    assertTrue("the short job's first map (" + shortFirstMap + ") started before the long maps were released ("
        + released + ")", shortFirstMap < released);
    assertLongMapsEndedAfterRelease(longJob, released);
    assertTrue("the short job finished before the long one", shortDone < longJob.getFinishTime());

    // The preempted attempts ended KILLED, none FAILED; every map of both jobs succeeded.
    int killed = 0;
    for (TaskCompletionEvent e : longJob.getTaskCompletionEvents(0, 1000)) {
      assertFalse("no long-job attempt FAILED: " + e, e.getStatus() == TaskCompletionEvent.Status.FAILED
          || e.getStatus() == TaskCompletionEvent.Status.TIPFAILED);
      if (e.getStatus() == TaskCompletionEvent.Status.KILLED) {
        killed++;
      }
    }
    Counters counters = longJob.getCounters();
    long killedMaps = counters.findCounter(JobCounter.NUM_KILLED_MAPS).getValue();
    long failedMaps = counters.findCounter(JobCounter.NUM_FAILED_MAPS).getValue();
    System.out.printf("long job: %d KILLED completion events, NUM_KILLED_MAPS=%d, NUM_FAILED_MAPS=%d%n", killed,
        killedMaps, failedMaps);
    assertTrue("some long-job maps were preempted (KILLED): " + killedMaps, killedMaps >= 1);
    assertEquals("no long-job map attempt FAILED", 0, failedMaps);
    for (Job job : new Job[] {longJob, shortJob}) {
      for (TaskReport r : job.getTaskReports(TaskType.MAP)) {
        assertEquals(job.getJobName() + " map " + r.getTaskId() + " completed", 1.0f, r.getProgress(), 0.0f);
      }
    }

    // The engine heard kills, not failures, and shows them.
    String status = cluster.scheduler().statusJson();
    assertTrue("the engine counted the preempted tasks: " + status, preempted(status) > preemptedBefore);
    assertTrue("the status lists the recent kills: " + status, status.contains("\"recent\":[{"));
    assertEquals("nothing is left asked back", 0, cluster.scheduler().preemptionsInFlight());
    assertFalse("no fallback: " + cluster.scheduler().getFallbackCause(), cluster.scheduler().isFallbackActive());
  }

  /**
   * The AM side (docs/am-admission.md, "An admitted AM that fits nowhere is preempted for"): the long
   * job's AM and six maps fill the node's 2 048 MB, so the short job's AM (512 MB) fits nowhere. The
   * gate admits it, the shim reserves the node for it, and the engine takes two of the long job's
   * youngest maps back for it. The short job then runs and ends before the long job, whose killed maps
   * end KILLED and are re-run; both jobs succeed. Without preemption the short job's AM would wait for a
   * long map to end, which none does before the test releases them once the short job has ended: the
   * test would fail on its wait. (No bound on the short job's own times: its AM's JVM start-up is what
   * a loaded machine stretches, up to 48 s in one niced run.)
   */
  @Test
  public void anAmThatFitsNowhereIsStartedByPreemptingTheLongJobsMaps() throws Exception {
    cluster.awaitIdle(WAIT_MS);
    long preemptedBefore = Math.max(0, preempted(cluster.scheduler().statusJson()));
    File release = releaseFile("am-fits-nowhere");
    int longMaps = MiniCircumflexCluster.TASK_SLOTS + MiniCircumflexCluster.AM_MB / MiniCircumflexCluster.SLOT_MB;
    Job longJob = cluster.heldSleepJob(new JobSpec("long", longMaps, 0, LONG_MAP_MS),
        Collections.singletonMap("circumflex.job.map.ms", "300000"), release);
    long released;
    long allRunning;
    Job shortJob;
    try {
      longJob.submit();
      allRunning = awaitRunningMaps(longJob, longMaps, WAIT_MS);
      shortJob = cluster.sleepJob(new JobSpec("short", 1, 0, 1_000),
          Collections.singletonMap("circumflex.job.map.ms", "1000"));
      shortJob.submit();
      assertTrue("the short job succeeds", MiniCircumflexCluster.awaitCompletion(shortJob, WAIT_MS));
    } finally {
      released = release(release);
    }
    long shortDone = shortJob.getFinishTime();
    assertTrue("the long job succeeds", MiniCircumflexCluster.awaitCompletion(longJob, WAIT_MS));
    System.out.printf("long maps all running at %d; short job started %d, first map %d, done %d; long maps released"
        + " %d; long done %d%n", allRunning, shortJob.getStartTime(), firstStart(shortJob), shortDone, released,
        longJob.getFinishTime());

    // The short job's AM and map ran while every long map held its slot (each ended only once released).
    assertTrue("the short job's first map (" + firstStart(shortJob) + ") started before the long maps were released ("
        + released + ")", firstStart(shortJob) < released);
    assertLongMapsEndedAfterRelease(longJob, released);
    assertTrue("the short job (done at " + shortDone + ") finished before the long one (" + longJob.getFinishTime()
        + "), whose maps were all running at " + allRunning, shortDone < longJob.getFinishTime());
    Counters counters = longJob.getCounters();
    assertTrue("long-job maps were preempted for the AM (KILLED)",
        counters.findCounter(JobCounter.NUM_KILLED_MAPS).getValue() >= 1);
    assertEquals("no long-job map attempt FAILED", 0, counters.findCounter(JobCounter.NUM_FAILED_MAPS).getValue());
    for (TaskReport r : longJob.getTaskReports(TaskType.MAP)) {
      assertEquals("long map " + r.getTaskId() + " completed", 1.0f, r.getProgress(), 0.0f);
    }
    String status = cluster.scheduler().statusJson();
    assertTrue("the engine counted the preempted tasks: " + status, preempted(status) > preemptedBefore);
    assertEquals("nothing is left asked back", 0, cluster.scheduler().preemptionsInFlight());
    assertTrue("nothing waits for an AM at the end: " + status, status.contains("\"waiting\":[]"));
    assertFalse("no fallback: " + cluster.scheduler().getFallbackCause(), cluster.scheduler().isFallbackActive());
  }

  /**
   * Fair targets, 1 s epochs, preemption after 1 s of starvation with a {@link #GRACE_MS} grace, no cap, and the
   * engine's AM gate (the first test's short AM fits beside the long job; the second's fits nowhere).
   */
  private static Map<String, String> preemptionKeys() {
    Map<String, String> keys = new HashMap<>();
    keys.put("circumflex.am.admission.enabled", "true");
    keys.put("circumflex.policy", "fair");
    keys.put("circumflex.epoch.ms", "1000");
    keys.put("circumflex.preemption.enabled", "true");
    keys.put("circumflex.preemption.delay.ms", "1000");
    keys.put("circumflex.preemption.grace.ms", Long.toString(GRACE_MS));
    keys.put("circumflex.preemption.max.fraction", "1");
    return keys;
  }

  /** A fresh release file for the held maps of one test (none exists yet). */
  private static File releaseFile(String test) {
    File dir = new File(System.getProperty("circumflex.it.workdir", "build/it-work"), "it-preempt-release");
    dir.mkdirs();
    File f = new File(dir, test + "-" + System.nanoTime());
    assertFalse("a fresh release file " + f, f.exists());
    return f;
  }

  /** Releases the held maps (creates {@code release}); returns when (ms). */
  private static long release(File release) throws java.io.IOException {
    long at = System.currentTimeMillis();
    assertTrue("the release file " + release + " is created", release.createNewFile());
    return at;
  }

  /**
   * Every map of the held long job succeeded at or after {@code released}: none ended by itself while the
   * short job ran (the successful attempt of a map that was preempted is its re-run).
   */
  private static void assertLongMapsEndedAfterRelease(Job longJob, long released) throws Exception {
    for (TaskReport r : longJob.getTaskReports(TaskType.MAP)) {
      assertTrue("long map " + r.getTaskId() + " ended at " + r.getFinishTime() + ", not before the release at "
          + released, r.getFinishTime() >= released);
    }
  }

  /** Waits until {@code job} has {@code maps} maps running; returns when (ms). */
  private static long awaitRunningMaps(Job job, int maps, long timeoutMs) throws Exception {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (System.currentTimeMillis() < deadline) {
      int running = 0;
      for (TaskReport r : job.getTaskReports(TaskType.MAP)) {
        if (r.getCurrentStatus() == org.apache.hadoop.mapred.TIPStatus.RUNNING) {
          running++;
        }
      }
      if (running >= maps) {
        return System.currentTimeMillis();
      }
      Thread.sleep(500);
    }
    throw new AssertionError("the long job never ran " + maps + " maps at once");
  }

  private static long firstStart(Job job) throws Exception {
    long first = Long.MAX_VALUE;
    for (TaskReport r : job.getTaskReports(TaskType.MAP)) {
      first = Math.min(first, r.getStartTime());
    }
    return first;
  }

  /** {@code stats.preempted_tasks} of the status JSON. */
  private static long preempted(String status) {
    String key = "\"preempted_tasks\":";
    int at = status.indexOf(key);
    if (at < 0) {
      return -1;
    }
    int end = at + key.length();
    while (end < status.length() && Character.isDigit(status.charAt(end))) {
      end++;
    }
    return Long.parseLong(status.substring(at + key.length(), end));
  }
}
