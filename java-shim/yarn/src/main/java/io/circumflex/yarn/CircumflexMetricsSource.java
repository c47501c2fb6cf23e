package io.circumflex.yarn;

import io.circumflex.observe.EngineMetrics;
import org.apache.hadoop.metrics2.MetricsCollector;
import org.apache.hadoop.metrics2.MetricsRecordBuilder;
import org.apache.hadoop.metrics2.MetricsSource;
import org.apache.hadoop.metrics2.lib.Interns;

/**
 * The scheduler's metrics2 source in the ResourceManager ({@code Hadoop:service=ResourceManager,
 * name=CircumflexScheduler} in JMX): copies {@link EngineMetrics#read} into the record on every
 * snapshot, so values are as fresh as the poll.
 */
final class CircumflexMetricsSource implements MetricsSource {
  private final CircumflexScheduler scheduler;

  CircumflexMetricsSource(CircumflexScheduler scheduler) {
    this.scheduler = scheduler;
  }

  @Override
  public void getMetrics(MetricsCollector collector, boolean all) {
    MetricsRecordBuilder record = collector.addRecord(EngineMetrics.SOURCE_NAME).setContext("scheduler");
    for (EngineMetrics.Metric m : scheduler.readMetrics()) {
      if (m.counter) {
        record.addCounter(Interns.info(m.name, m.description), m.value);
      } else {
        record.addGauge(Interns.info(m.name, m.description), m.value);
      }
    }
  }
}
