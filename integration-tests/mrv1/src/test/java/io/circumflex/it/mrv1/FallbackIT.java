package io.circumflex.it.mrv1;

import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.util.Collections;
import org.apache.hadoop.mapred.RunningJob;
import org.junit.Test;

/**
 * A native failure never takes the JobTracker down: the {@code test-panic} policy (built only into
 * the test library) panics when it plans with an active job; the scheduler logs it, switches to
 * FIFO, and the job still runs to success.
 */
public class FallbackIT {
  @Test
  public void nativePanicFallsBackToFifoAndJobsStillSucceed() throws Exception {
    Mrv1Cluster cluster = new Mrv1Cluster(1, 2, 1, Collections.singletonMap("circumflex.policy", "test-panic"));
    try {
      assertTrue("starts on the engine: " + cluster.scheduler().getFallbackReason(),
          cluster.scheduler().isEngineActive());
      RunningJob job = cluster.submitSleep("after-panic", 2, 1, 200, 200, null);
      Mrv1Cluster.await(job);
      assertTrue("the job runs under the FIFO fallback", job.isSuccessful());
      assertFalse(cluster.scheduler().isEngineActive());
      String reason = cluster.scheduler().getFallbackReason();
      assertTrue(reason, reason.contains("test-panic"));
    } finally {
      cluster.close();
    }
  }
}
