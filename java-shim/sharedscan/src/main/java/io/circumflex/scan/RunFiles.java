package io.circumflex.scan;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.DataInputBuffer;
import org.apache.hadoop.io.WritableUtils;
import org.apache.hadoop.mapred.RawKeyValueIterator;
import org.apache.hadoop.util.Progress;

/**
 * The files a driver writes for a rider: per ridden split a directory {@code data/} holding sorted
 * runs, one file per (run, reduce partition), {@code run-<k>-part-<p>}, each a sequence of
 * (vint key length, key bytes, vint value length, value bytes) ended by a vint -1; and the rider's
 * map-side counters in {@code counters}. Keys and values are in the rider's own serialization, sorted
 * by the rider's own sort comparator, so a rider's reduce merges them with its shuffled map outputs
 * as they are.
 */
final class RunFiles {
  static final String DATA = "data";
  static final String COUNTERS = "counters";

  private RunFiles() {}

  static String runName(int run, int partition) {
    return "run-" + run + "-part-" + partition;
  }

  /** Readers of every run of reduce partition {@code partition} in a committed {@code data/} directory. */
  static List<RawKeyValueIterator> open(FileSystem fs, Path dataDir, int partition) throws IOException {
    String suffix = "-part-" + partition;
    FileStatus[] files = fs.listStatus(dataDir, p -> p.getName().startsWith("run-") && p.getName().endsWith(suffix));
    Arrays.sort(files);
    List<RawKeyValueIterator> out = new ArrayList<>();
    for (FileStatus f : files) {
      out.add(new Reader(new DataInputStream(new BufferedInputStream(fs.open(f.getPath()), 64 * 1024)), f.getPath()));
    }
    return out;
  }

  /** One run file as a {@link RawKeyValueIterator}. */
  static final class Reader implements RawKeyValueIterator {
    private final DataInputStream in;
    private final Path path;
    private final DataInputBuffer key = new DataInputBuffer();
    private final DataInputBuffer value = new DataInputBuffer();
    private byte[] keyBytes = new byte[64];
    private byte[] valueBytes = new byte[64];
    private final Progress progress = new Progress();

    Reader(DataInputStream in, Path path) {
      this.in = in;
      this.path = path;
    }

    @Override
    public DataInputBuffer getKey() {
      return key;
    }

    @Override
    public DataInputBuffer getValue() {
      return value;
    }

    @Override
    public boolean next() throws IOException {
      try {
        int kl = WritableUtils.readVInt(in);
        if (kl < 0) {
          return false;
        }
        keyBytes = fill(keyBytes, kl);
        int vl = WritableUtils.readVInt(in);
        if (vl < 0) {
          throw new IOException("run file " + path + " is corrupt: negative value length " + vl);
        }
        valueBytes = fill(valueBytes, vl);
        key.reset(keyBytes, 0, kl);
        value.reset(valueBytes, 0, vl);
        return true;
      } catch (EOFException e) {
        throw new IOException("run file " + path + " is truncated (no end marker)", e);
      }
    }

    private byte[] fill(byte[] buf, int len) throws IOException {
      byte[] b = buf.length >= len ? buf : new byte[Math.max(len, buf.length * 2)];
      in.readFully(b, 0, len);
      return b;
    }

    @Override
    public void close() throws IOException {
      in.close();
    }

    @Override
    public Progress getProgress() {
      return progress;
    }
  }
}
