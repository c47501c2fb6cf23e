package io.circumflex.scan;

import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.Counter;
import org.apache.hadoop.mapreduce.InputSplit;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.RecordReader;
import org.apache.hadoop.mapreduce.StatusReporter;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.lib.map.WrappedMapper;
import org.apache.hadoop.mapreduce.task.MapContextImpl;
import org.apache.hadoop.util.ReflectionUtils;

/**
 * One rider job's map function running inside another task (a driver's C-map, or the rider's own
 * reduce when it re-computes a lost split): the rider's mapper class and configuration, a context
 * whose output goes to a {@link RiderOutput} and whose counters are the rider's own.
 */
final class Rider {
  private final Mapper<Object, Object, Object, Object> mapper;
  private final Mapper<Object, Object, Object, Object>.Context context;
  private final CurrentRecordReader reader = new CurrentRecordReader();
  final RiderOutput output;
  final String member;

  @SuppressWarnings("unchecked")
  Rider(Configuration riderConf, InputSplit split, String splitId, TaskAttemptID attempt, long bufferBytes,
      Runnable progress) throws IOException {
    this.member = riderConf.get(ScanKeys.MEMBER);
    String mapperClass = riderConf.get(ScanKeys.ORIG_MAPPER, Mapper.class.getName());
    try {
      this.mapper = (Mapper<Object, Object, Object, Object>)
          ReflectionUtils.newInstance(riderConf.getClassByName(mapperClass), riderConf);
    } catch (ClassNotFoundException e) {
      throw new IOException("mapper class " + mapperClass + " of rider " + member
          + " is not on this task's classpath: " + e.getMessage(), e);
    }
    this.output = new RiderOutput(riderConf, splitId, attempt.toString(), bufferBytes);
    CountingReporter reporter = new CountingReporter(output, progress);
    MapContextImpl<Object, Object, Object, Object> mc =
        new MapContextImpl<>(riderConf, attempt, reader, output, null, reporter, split);
    this.context = new WrappedMapper<Object, Object, Object, Object>().getMapContext(mc);
  }

  void setup() throws IOException, InterruptedException {
    MapperCalls.setup(mapper, context);
  }

  void map(Object key, Object value) throws IOException, InterruptedException {
    reader.key = key;
    reader.value = value;
    MapperCalls.map(mapper, key, value, context);
  }

  /** Runs the mapper's clean-up and commits its output for the split. */
  void finish() throws IOException, InterruptedException {
    MapperCalls.cleanup(mapper, context);
    output.commit();
  }

  /**
   * Reads a whole split with {@code reader} (already initialized) through this rider and commits.
   * Used when a rider re-computes a split no driver served.
   */
  void runAll(RecordReader<Object, Object> records) throws IOException, InterruptedException {
    setup();
    while (records.nextKeyValue()) {
      map(records.getCurrentKey(), records.getCurrentValue());
    }
    finish();
  }

  /** Counters of the rider (written beside its output), progress forwarded to the hosting task. */
  private static final class CountingReporter extends StatusReporter {
    private final RiderOutput output;
    private final Runnable progress;

    CountingReporter(RiderOutput output, Runnable progress) {
      this.output = output;
      this.progress = progress;
    }

    @Override
    public Counter getCounter(Enum<?> name) {
      return output.counters.findCounter(name);
    }

    @Override
    public Counter getCounter(String group, String name) {
      return output.counters.findCounter(group, name);
    }

    @Override
    public void progress() {
      progress.run();
    }

    @Override
    public float getProgress() {
      return 0;
    }

    @Override
    public void setStatus(String status) {}
  }
}
