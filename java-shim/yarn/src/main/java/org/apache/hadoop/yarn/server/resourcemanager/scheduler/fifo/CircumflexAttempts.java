package org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo;

import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ActiveUsersManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Queue;

/**
 * The one Circumflex class in Hadoop's FIFO package: {@code FifoAppAttempt}'s constructor is
 * package-private, and {@code FifoAppAttempt.allocate} is exactly the container bookkeeping the
 * Circumflex scheduler needs (hadoop-apis.md 2.6, option A). A split package is legal on the
 * ResourceManager's class path. Nothing else lives here.
 */
public final class CircumflexAttempts {
  private CircumflexAttempts() {}

  /** A new attempt, as FifoScheduler builds it. */
  public static FifoAppAttempt newAttempt(ApplicationAttemptId attemptId, String user, Queue queue,
      ActiveUsersManager usersManager, RMContext rmContext) {
    return new FifoAppAttempt(attemptId, user, queue, usersManager, rmContext);
  }
}
