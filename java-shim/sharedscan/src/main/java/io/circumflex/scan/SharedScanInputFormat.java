package io.circumflex.scan;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.InputFormat;
import org.apache.hadoop.mapreduce.InputSplit;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.RecordReader;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.util.ReflectionUtils;

/**
 * The input format of a shared-scan job: one C-map per driver split (decided at attachment, kept in
 * the job's configuration), or a single no-op map when the job drives nothing. Records come from the
 * job's original input format.
 */
public class SharedScanInputFormat extends InputFormat<Object, Object> {
  @Override
  public List<InputSplit> getSplits(JobContext context) throws IOException {
    Configuration conf = context.getConfiguration();
    List<InputSplit> out = new ArrayList<>();
    for (SplitRef s : SplitRef.decodeAll(conf.get(ScanKeys.DRIVES))) {
      out.add(s.toScanSplit());
    }
    if (out.isEmpty()) {
      out.add(new ScanSplit(SharedScan.scanRoot(conf), 0, 0, new String[0], true));
    }
    return out;
  }

  @Override
  @SuppressWarnings("unchecked")
  public RecordReader<Object, Object> createRecordReader(InputSplit split, TaskAttemptContext context)
      throws IOException, InterruptedException {
    if (split instanceof ScanSplit && ((ScanSplit) split).isNoop()) {
      return new CurrentRecordReader();
    }
    return (RecordReader<Object, Object>) original(context.getConfiguration()).createRecordReader(split, context);
  }

  /** The job's own input format. */
  static InputFormat<?, ?> original(Configuration conf) throws IOException {
    String name = conf.get(ScanKeys.ORIG_INPUT_FORMAT);
    if (name == null) {
      throw new IOException(ScanKeys.ORIG_INPUT_FORMAT + " is unset: the job was not submitted through SharedScan");
    }
    try {
      return (InputFormat<?, ?>) ReflectionUtils.newInstance(conf.getClassByName(name), conf);
    } catch (ClassNotFoundException e) {
      throw new IOException("input format class " + name + " (" + ScanKeys.ORIG_INPUT_FORMAT + ") not found", e);
    }
  }
}
