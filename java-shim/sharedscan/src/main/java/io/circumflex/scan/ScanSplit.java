package io.circumflex.scan;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.lib.input.FileSplit;

/**
 * The split of one C-map task: a driver split of the dataset, or the single no-op split of a job
 * that drives nothing (it still needs one map so that its reduces start, appendix C.3).
 *
 * <p>It is a {@link FileSplit} so the map task's own bookkeeping (file input bytes read, locality)
 * works unchanged and the original input format's record reader accepts it.
 */
public class ScanSplit extends FileSplit {
  private boolean noop;

  /** For deserialization. */
  public ScanSplit() {}

  ScanSplit(Path file, long start, long length, String[] hosts, boolean noop) {
    super(file, start, length, hosts);
    this.noop = noop;
  }

  /** True for the placeholder map of a job that drives no split. */
  public boolean isNoop() {
    return noop;
  }

  SplitRef ref() {
    return new SplitRef(getPath().toString(), getStart(), getLength(), null);
  }

  @Override
  public void write(DataOutput out) throws IOException {
    super.write(out);
    out.writeBoolean(noop);
  }

  @Override
  public void readFields(DataInput in) throws IOException {
    super.readFields(in);
    noop = in.readBoolean();
  }
}
