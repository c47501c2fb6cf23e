package io.circumflex.it.mrv1;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.mapred.JobInProgress;
import org.apache.hadoop.mapred.RunningJob;
import org.apache.hadoop.mapred.TaskCompletionEvent;
import org.apache.hadoop.mapred.TaskReport;
import org.junit.ClassRule;
import org.junit.Test;

/**
 * Engine-decided preemption carried out by the MRv1 shim (issue 17, {@code docs/preemption.md}): a
 * long job holds all 4 map slots of the 2 trackers with long maps; a short job arrives. With
 * preemption on (fair targets: 2 map slots each), the engine decides to take 2 of the long job's
 * youngest maps back; the shim kills them at once with {@code killTask(attempt, false)}. The short
 * job gets map slots long before any long map could have ended by itself, the killed attempts end
 * KILLED (not FAILED: the job's failure count is untouched), and both jobs succeed with every map
 * done. With preemption off the existing tests show today's behaviour, unchanged.
 *
 * <p>The long maps are held ({@link Mrv1Cluster#submitHeldSleep}): each keeps its slot until the test
 * releases it, which it does only once the short job has ended (or after {@link #LONG_MAP_MS} by itself,
 * far beyond any wait of the test). So the short job can only have run on slots taken back by preemption,
 * and the test does not wait out a long sleep afterwards (the maps used to sleep a fixed 60 s, re-runs
 * included).
 */
public class PreemptionIT {
  /** Most a held long map runs before it ends by itself, ms: far beyond {@link #WAIT_MS}. */
  private static final long LONG_MAP_MS = 600_000;
  /** Generous bound on each wait of the test. */
  private static final long WAIT_MS = 240_000;
  /**
   * Most time from the short job's submission to its first map: the preemption delay (1 s), the grace
   * (10 s), two epochs and the tracker heartbeats that carry the kill out and the KILLED status back (the
   * mini cluster's trackers heartbeat every few seconds, out of band on a task's end).
   */
  private static final long PROMPT_MS = 20_000;

  private static Map<String, String> keys() {
    Map<String, String> keys = new HashMap<String, String>();
    keys.put("circumflex.policy", "fair");
    keys.put("circumflex.epoch.ms", "1000");
    keys.put("circumflex.preemption.enabled", "true");
    keys.put("circumflex.preemption.delay.ms", "1000");
    // MRv1 kills at once, but the kill reaches the engine only after two heartbeats of the tracker (the
    // kill action out, the KILLED status back); the engine keeps a decision in flight, and so earmarks
    // the freed slot for the short job, for grace + 2 epochs + delay: a 10 s grace covers them.
    keys.put("circumflex.preemption.grace.ms", "10000");
    keys.put("circumflex.preemption.max.fraction", "1");
    return keys;
  }

  @ClassRule
  public static final Mrv1Cluster.PerClass CLUSTER = new Mrv1Cluster.PerClass(keys());

  @Test
  public void aStarvedShortJobTakesMapSlotsFromALongJobWhoseMapsEndKilledNotFailed() throws Exception {
    Mrv1Cluster cluster = CLUSTER.get();
    File dir = new File(System.getProperty("circumflex.it.workdir", "build/it-work"), "it-preempt-release");
    dir.mkdirs();
    File release = new File(dir, "starved-short-job-" + System.nanoTime());
    // The submitter's estimate is what the engine weighs a kill against until a task finishes.
    RunningJob longJob = cluster.submitHeldSleep("long", 4, LONG_MAP_MS,
        java.util.Collections.singletonMap("circumflex.job.map.ms", "300000"), release);
    long allRunning;
    RunningJob shortJob;
    long released;
    try {
      allRunning = awaitRunningMaps(cluster, longJob, 4, WAIT_MS);
      shortJob = cluster.submitSleep("short", 2, 0, 1_000, 0,
          java.util.Collections.singletonMap("circumflex.job.map.ms", "1000"));
      await(shortJob, WAIT_MS);
    } finally {
      released = System.currentTimeMillis();
      assertTrue("the release file " + release + " is created", release.createNewFile());
    }
    assertTrue("the short job succeeds", shortJob.isSuccessful());
    Mrv1Cluster.JobTimes shortTimes = cluster.times(shortJob.getID());
    await(longJob, WAIT_MS);
    assertTrue("the long job succeeds", longJob.isSuccessful());
    Mrv1Cluster.JobTimes longTimes = cluster.times(longJob.getID());
    System.out.println("long maps all running at " + allRunning + "; short " + shortTimes + "; long maps released "
        + released + "; long " + longTimes);

    assertTrue("the short job's first map started at " + shortTimes.firstMapStart + ", before the long maps (all "
        + "running at " + allRunning + ") could end by themselves",
        shortTimes.firstMapStart < allRunning + LONG_MAP_MS - 5_000);
    // Every long map ended only once released, after the short job had ended: none ended by itself
    // while the short job ran, so the short job's slots were taken back by preemption.
    for (TaskReport r : cluster.jobTracker().getMapTaskReports(longJob.getID())) {
      assertTrue("long map " + r.getTaskID() + " ended at " + r.getFinishTime() + ", not before the release at "
          + released, r.getFinishTime() >= released);
    }
    assertTrue("the short job finished before the long one", shortTimes.finish < longTimes.finish);

    int killed = 0;
    int failed = 0;
    for (TaskCompletionEvent e : longJob.getTaskCompletionEvents(0)) {
      if (e.getTaskStatus() == TaskCompletionEvent.Status.KILLED) {
        killed++;
      } else if (e.getTaskStatus() == TaskCompletionEvent.Status.FAILED
          || e.getTaskStatus() == TaskCompletionEvent.Status.TIPFAILED) {
        failed++;
      }
    }
    long failedMaps = longJob.getCounters().getCounter(JobInProgress.Counter.NUM_FAILED_MAPS);
    System.out.println("long job: " + killed + " KILLED and " + failed + " FAILED completion events, NUM_FAILED_MAPS="
        + failedMaps);
    assertTrue("some long-job maps were preempted (KILLED)", killed >= 1);
    // Prompt hand-over: the freed slots go to the short job, so one round of kills (its deficit: fair
    // share 2) is all it takes. Before the engine kept earmarks for a heartbeat with a free slot in their
    // pool, they often went back to the long job (8 kills in 4 rounds seen: the tracker reports the
    // KILLED attempt while its map slot still runs the task cleanup; an_earmark_waits_for_a_free_slot_in_
    // its_pool), or once the earmark lapsed while a loaded tracker still ran the killed attempt's clean-up
    // (2 and 4 rounds in CI; an_earmark_outlives_a_slow_clean_up_while_its_node_reports_the_pool_full).
    // With the fixes: 2 kills, the short job's first map 8-12 s after its submission.
    assertTrue("one round of kills, not " + killed + " (the freed slots went back to the long job)", killed <= 2);
    long handOver = shortTimes.firstMapStart - shortTimes.submit;
    assertTrue("the short job's first map came " + handOver + " ms after its submission: more than the preemption "
        + "delay (1 s) + grace (10 s) + a few tracker heartbeats", handOver < PROMPT_MS);
    assertEquals("no long-job map attempt FAILED", 0, failed);
    assertEquals("the job's failure count is untouched", 0, failedMaps);
    for (RunningJob job : new RunningJob[] {longJob, shortJob}) {
      for (TaskReport r : cluster.jobTracker().getMapTaskReports(job.getID())) {
        assertEquals(job.getJobName() + " map " + r.getTaskID() + " completed", 1.0f, r.getProgress(), 0.0f);
      }
    }

    String status = cluster.scheduler().getEngineStatusJson();
    assertTrue("the engine counted the kills as preempted tasks: " + status,
        status.matches("(?s).*\"preempted_tasks\":[1-9].*"));
    assertTrue("the status lists the recent kills: " + status, status.contains("\"recent\":[{"));
    assertTrue("the engine stayed in charge: " + cluster.scheduler().getFallbackReason(),
        cluster.scheduler().isEngineActive());
  }

  /** Waits for {@code job} to complete, polling every 200 ms; fails after {@code timeoutMs}. */
  private static void await(RunningJob job, long timeoutMs) throws Exception {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (!job.isComplete()) {
      if (System.currentTimeMillis() > deadline) {
        throw new AssertionError(job.getJobName() + " did not complete within " + timeoutMs + " ms");
      }
      Thread.sleep(200);
    }
  }

  /** Waits until {@code job} has {@code maps} maps running; returns when (JobTracker clock, ms). */
  private static long awaitRunningMaps(Mrv1Cluster cluster, RunningJob job, int maps, long timeoutMs)
      throws Exception {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (System.currentTimeMillis() < deadline) {
      int running = 0;
      for (TaskReport r : cluster.jobTracker().getMapTaskReports(job.getID())) {
        if (r.getCurrentStatus() == org.apache.hadoop.mapred.TIPStatus.RUNNING) {
          running++;
        }
      }
      if (running >= maps) {
        return System.currentTimeMillis();
      }
      Thread.sleep(200);
    }
    throw new AssertionError("the long job never ran " + maps + " maps at once");
  }
}
