package io.circumflex.it.gridmix;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.tools.rumen.JobTraceReader;
import org.apache.hadoop.tools.rumen.LoggedJob;
import org.apache.hadoop.tools.rumen.LoggedTask;
import org.apache.hadoop.tools.rumen.LoggedTaskAttempt;
import org.apache.hadoop.tools.rumen.Pre21JobHistoryConstants;

/**
 * What each job of a Rumen trace asks Gridmix to sleep, read with Rumen's own parser, in file order
 * (the order Gridmix numbers its jobs). A map sleeps for its successful attempt's runtime; a reduce
 * for its merge plus reduce time (from {@code shuffleFinished} to the end), as Gridmix's SleepJob
 * does. The report derives each job's ideal time from these sums and maxima.
 */
final class TraceJobs {
  private TraceJobs() {}

  /** One trace job's sleep demands (ms) and submission time (ms since the first job). */
  static final class Job {
    String id;
    int maps;
    int reduces;
    long mapMsMax;
    long mapMsSum;
    long reduceMsMax;
    long reduceMsSum;
    long submitMs;
  }

  static List<Job> read(File trace, Configuration conf) throws IOException {
    List<Job> jobs = new ArrayList<>();
    long firstSubmit = -1;
    try (JobTraceReader reader = new JobTraceReader(new Path("file://" + trace.getAbsolutePath()), conf)) {
      for (LoggedJob lj = reader.getNext(); lj != null; lj = reader.getNext()) {
        Job j = new Job();
        j.id = String.valueOf(lj.getJobID());
        if (firstSubmit < 0) {
          firstSubmit = lj.getSubmitTime();
        }
        j.submitMs = lj.getSubmitTime() - firstSubmit;
        for (LoggedTask t : lj.getMapTasks()) {
          long ms = sleepMs(t, false);
          j.maps++;
          j.mapMsSum += ms;
          j.mapMsMax = Math.max(j.mapMsMax, ms);
        }
        for (LoggedTask t : lj.getReduceTasks()) {
          long ms = sleepMs(t, true);
          j.reduces++;
          j.reduceMsSum += ms;
          j.reduceMsMax = Math.max(j.reduceMsMax, ms);
        }
        jobs.add(j);
      }
    }
    if (jobs.isEmpty()) {
      throw new IOException("no jobs in Rumen trace " + trace);
    }
    return jobs;
  }

  private static long sleepMs(LoggedTask task, boolean reduce) throws IOException {
    for (LoggedTaskAttempt a : task.getAttempts()) {
      if (a.getResult() == Pre21JobHistoryConstants.Values.SUCCESS) {
        long from = reduce && a.getShuffleFinished() > 0 ? a.getShuffleFinished() : a.getStartTime();
        return Math.max(0, a.getFinishTime() - from);
      }
    }
    throw new IOException("task " + task.getTaskID() + " has no successful attempt");
  }
}
