package io.circumflex.mrv1;

import io.circumflex.nativeapi.CommonsLoggingSink;
import io.circumflex.nativeapi.NativeEngine;
import io.circumflex.nativeapi.NativeLog;
import io.circumflex.observe.EngineMetrics;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.metrics2.MetricsBuilder;
import org.apache.hadoop.metrics2.MetricsException;
import org.apache.hadoop.metrics2.MetricsRecordBuilder;
import org.apache.hadoop.metrics2.MetricsSource;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;

/**
 * Observability plumbing of the MRv1 shim: the metrics2 source ({@code CircumflexScheduler}, in JMX
 * as {@code Hadoop:service=JobTracker,name=CircumflexScheduler} once the JobTracker's metrics2 system has
 * started, which in Hadoop 1.2.1 needs a {@code hadoop-metrics2.properties}; see SchedulerWebIT)
 * and the native log forwarded to commons-logging (log4j in the JobTracker).
 *
 * <p>Hadoop 1.2.1's metrics system cannot unregister a source, so the source is registered once per
 * JVM and reads whichever scheduler {@link #attach}ed last (a JobTracker has one; tests start several).
 */
public final class Mrv1Observability {
  private static final Log LOG = LogFactory.getLog(Mrv1Observability.class);

  /** What the source reads: the current engine (null in fallback) and the shim's own counters. */
  public interface Target {
    NativeEngine currentEngine();

    EngineMetrics metrics();
  }

  private static final AtomicReference<Target> CURRENT = new AtomicReference<Target>();
  private static boolean registered;

  private Mrv1Observability() {}

  /** Makes {@code target} the one the metrics source reads; registers the source on first use. */
  public static synchronized void attach(Target target) {
    CURRENT.set(target);
    if (!registered) {
      try {
        DefaultMetricsSystem.INSTANCE.register(EngineMetrics.SOURCE_NAME, EngineMetrics.SOURCE_DESCRIPTION,
            new Source());
        registered = true;
      } catch (MetricsException e) {
        LOG.warn("Circumflex metrics not published: " + e.getMessage());
      }
    }
  }

  /** Stops reporting {@code target} (the source then reports nothing until the next attach). */
  public static void detach(Target target) {
    CURRENT.compareAndSet(target, null);
  }

  /** The metrics source; public so Hadoop's metrics system can reflect on it. */
  public static final class Source implements MetricsSource {
    @Override
    public void getMetrics(MetricsBuilder builder, boolean all) {
      Target target = CURRENT.get();
      if (target == null) {
        return;
      }
      MetricsRecordBuilder record = builder.addRecord(EngineMetrics.SOURCE_NAME).setContext("scheduler");
      for (EngineMetrics.Metric m : target.metrics().read(target.currentEngine())) {
        if (m.counter) {
          record.addCounter(m.name, m.description, m.value);
        } else {
          record.addGauge(m.name, m.description, m.value);
        }
      }
    }
  }

  /** Forwards buffered native log records to commons-logging under {@code circumflex.native.*}. */
  public static int drainNativeLog() {
    try {
      return NativeLog.drainTo(CommonsLoggingSink.INSTANCE);
    } catch (RuntimeException | LinkageError e) {
      LOG.debug("cannot drain the native log", e);
      return 0;
    }
  }
}
