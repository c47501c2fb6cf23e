package io.circumflex.scan;

import org.apache.hadoop.mapreduce.InputSplit;
import org.apache.hadoop.mapreduce.RecordReader;
import org.apache.hadoop.mapreduce.TaskAttemptContext;

/**
 * A record reader that only holds the current record someone else read, and never advances itself.
 * A rider's map context reads the C-mapper's shared record through it; with no record set it is the
 * empty input of a no-op map.
 */
final class CurrentRecordReader extends RecordReader<Object, Object> {
  Object key;
  Object value;

  @Override
  public void initialize(InputSplit split, TaskAttemptContext context) {}

  @Override
  public boolean nextKeyValue() {
    // The C-mapper drives iteration; a rider's mapper that would call nextKeyValue() itself (a run()
    // override) is driven through map() instead (MapperCalls).
    return false;
  }

  @Override
  public Object getCurrentKey() {
    return key;
  }

  @Override
  public Object getCurrentValue() {
    return value;
  }

  @Override
  public float getProgress() {
    return 0;
  }

  @Override
  public void close() {}
}
