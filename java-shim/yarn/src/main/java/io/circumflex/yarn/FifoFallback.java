package io.circumflex.yarn;

import io.circumflex.nativeapi.NativeEngine;
import java.util.Collection;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerAppUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoAppAttempt;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What schedules while the engine is not in charge ({@code io.circumflex.shim.EngineGuard}): every
 * application in id order (YARN's FifoScheduler order), every ask, as much as fits, at any locality.
 * Counts what it placed so tests and operators can see the fallback working. Called under the
 * scheduler's lock.
 */
final class FifoFallback implements AskMatcher.Placement {
  private static final Logger LOG = LoggerFactory.getLogger(FifoFallback.class);

  private final AskMatcher matcher;
  private long allocations;

  FifoFallback(AskMatcher matcher) {
    this.matcher = matcher;
  }

  /** Fills {@code node} from {@code applications} (in id order). */
  void assign(FiCaSchedulerNode node, Collection<SchedulerApplication<FifoAppAttempt>> applications) {
    for (SchedulerApplication<FifoAppAttempt> app : applications) {
      FifoAppAttempt attempt = app.getCurrentAppAttempt();
      if (attempt == null) {
        continue;
      }
      synchronized (attempt) {
        if (attempt.isStopped() || SchedulerAppUtils.isPlaceBlacklisted(attempt, node, LOG)) {
          continue;
        }
        for (SchedulerRequestKey key : attempt.getSchedulerKeys()) {
          matcher.assign(node, attempt, key, Integer.MAX_VALUE, NativeEngine.ANY, this);
        }
      }
      if (!matcher.fits(node)) {
        return;
      }
    }
  }

  @Override
  public void placed(RMContainer container, FiCaSchedulerNode node, SchedulerRequestKey key, int locality) {
    allocations++;
  }

  /** Containers placed by the fallback so far. */
  long allocations() {
    return allocations;
  }
}
