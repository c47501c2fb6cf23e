package org.apache.hadoop.mapred;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The smallest {@link TaskTrackerManager} a scheduler can start against: real trackers' statuses,
 * listener registration, no jobs. Enough to test start-up, refresh and tracker bookkeeping without
 * a JobTracker; job scheduling itself is covered by the MiniMRCluster integration tests.
 */
class FakeTaskTrackerManager implements TaskTrackerManager {
  final List<TaskTrackerStatus> trackers = new ArrayList<TaskTrackerStatus>();
  final List<JobInProgressListener> listeners = new ArrayList<JobInProgressListener>();

  @Override
  public Collection<TaskTrackerStatus> taskTrackers() {
    return new ArrayList<TaskTrackerStatus>(trackers);
  }

  @Override
  public int getNumberOfUniqueHosts() {
    return trackers.size();
  }

  @Override
  public ClusterStatus getClusterStatus() {
    int maps = 0;
    int reduces = 0;
    for (TaskTrackerStatus t : trackers) {
      maps += t.getMaxMapSlots();
      reduces += t.getMaxReduceSlots();
    }
    return new ClusterStatus(trackers.size(), 0, 0, 0, 0, 0, maps, reduces, JobTracker.State.RUNNING);
  }

  @Override
  public void addJobInProgressListener(JobInProgressListener listener) {
    listeners.add(listener);
  }

  @Override
  public void removeJobInProgressListener(JobInProgressListener listener) {
    listeners.remove(listener);
  }

  @Override
  public QueueManager getQueueManager() {
    return null;
  }

  @Override
  public int getNextHeartbeatInterval() {
    return 300;
  }

  @Override
  public void killJob(JobID jobid) {}

  @Override
  public JobInProgress getJob(JobID jobid) {
    return null;
  }

  @Override
  public boolean killTask(TaskAttemptID taskid, boolean shouldFail) {
    return false;
  }

  @Override
  public void initJob(JobInProgress job) {}

  @Override
  public void failJob(JobInProgress job) {}

  @Override
  public boolean isInSafeMode() {
    return false;
  }
}
