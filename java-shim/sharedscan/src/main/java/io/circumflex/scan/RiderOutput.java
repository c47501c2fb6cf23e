package io.circumflex.scan;

import java.io.DataOutputStream;
import java.io.IOException;
import java.util.Arrays;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.DataOutputBuffer;
import org.apache.hadoop.io.RawComparator;
import org.apache.hadoop.io.WritableUtils;
import org.apache.hadoop.io.serializer.SerializationFactory;
import org.apache.hadoop.io.serializer.Serializer;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapreduce.Counters;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.Partitioner;
import org.apache.hadoop.mapreduce.RecordWriter;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.task.JobContextImpl;
import org.apache.hadoop.util.ReflectionUtils;

/**
 * The map output of one rider job for one split, produced on the driver's side: records are
 * serialized with the rider's serializers, partitioned by the rider's partitioner over the rider's
 * reduce count, buffered, sorted by the rider's sort comparator and written as runs
 * ({@link RunFiles}) into a task-attempt directory; {@link #commit} renames that directory into place
 * atomically, so a rider's reduce sees all of a split's output or none of it, and a killed attempt
 * leaves nothing a reader could mistake for output.
 *
 * <p>No combiner runs here: a combiner may not change a job's result (MapReduce's contract), so the
 * rider's reduce output is the same; only the bytes its reduce reads grow.
 */
final class RiderOutput extends RecordWriter<Object, Object> {
  private final FileSystem fs;
  private final Path splitDir;
  private final Path tmp;
  private final int partitions;
  private final Partitioner<Object, Object> partitioner;
  private final RawComparator<Object> comparator;
  private final Serializer<Object> keySer;
  private final Serializer<Object> valSer;
  private final DataOutputBuffer data = new DataOutputBuffer();
  private final long limit;
  /** Per record: partition, key start, key length, value length. */
  private int[] meta = new int[4 * 1024];
  private int records;
  private int runs;
  private long recordsTotal;
  final Counters counters = new Counters();

  /**
   * Output of rider {@code riderConf} for split {@code splitId}, under
   * {@link SharedScan#riderDir}, written by task attempt {@code attempt}, holding at most about
   * {@code limitBytes} in memory before it writes a sorted run.
   */
  @SuppressWarnings("unchecked")
  RiderOutput(Configuration riderConf, String splitId, String attempt, long limitBytes) throws IOException {
    Path dir = SharedScan.riderDir(riderConf, riderConf.get(ScanKeys.MEMBER));
    this.fs = dir.getFileSystem(riderConf);
    this.splitDir = new Path(dir, splitId);
    this.tmp = new Path(splitDir, "_" + attempt);
    this.partitions = riderConf.getInt(MRJobConfig.NUM_REDUCES, 1);
    JobContextImpl job = new JobContextImpl(riderConf, null);
    try {
      this.partitioner = (Partitioner<Object, Object>) ReflectionUtils.newInstance(job.getPartitionerClass(), riderConf);
    } catch (ClassNotFoundException e) {
      throw new IOException("rider partitioner class not found: " + e.getMessage(), e);
    }
    JobConf jc = new JobConf(riderConf);
    this.comparator = (RawComparator<Object>) jc.getOutputKeyComparator();
    SerializationFactory sf = new SerializationFactory(riderConf);
    this.keySer = (Serializer<Object>) sf.getSerializer(jc.getMapOutputKeyClass());
    this.valSer = (Serializer<Object>) sf.getSerializer(jc.getMapOutputValueClass());
    this.keySer.open(data);
    this.valSer.open(data);
    this.limit = Math.max(limitBytes, 64 * 1024);
    fs.delete(tmp, true);
  }

  /** The committed directory of a rider's output for a split (what its reduce reads). */
  static Path committed(Configuration riderConf, String splitId) {
    return new Path(new Path(SharedScan.riderDir(riderConf, riderConf.get(ScanKeys.MEMBER)), splitId), RunFiles.DATA);
  }

  @Override
  public void write(Object key, Object value) throws IOException {
    int partition = partitions <= 1 ? 0 : partitioner.getPartition(key, value, partitions);
    if (partition < 0 || partition >= partitions) {
      throw new IOException("rider partitioner returned partition " + partition + " for key " + key
          + "; expected 0.." + (partitions - 1));
    }
    int keyStart = data.getLength();
    keySer.serialize(key);
    int valStart = data.getLength();
    valSer.serialize(value);
    int end = data.getLength();
    if (4 * records + 4 > meta.length) {
      meta = Arrays.copyOf(meta, meta.length * 2);
    }
    int m = 4 * records;
    meta[m] = partition;
    meta[m + 1] = keyStart;
    meta[m + 2] = valStart - keyStart;
    meta[m + 3] = end - valStart;
    records++;
    recordsTotal++;
    // Bytes held per record besides its data: 4 ints of metadata, 2 ints of sort index.
    if (data.getLength() + 24L * records >= limit) {
      spill();
    }
  }

  long records() {
    return recordsTotal;
  }

  /** Sorts the buffered records by (partition, key) and writes one run file per non-empty partition. */
  private void spill() throws IOException {
    if (records == 0) {
      return;
    }
    int[] order = new int[records];
    for (int i = 0; i < records; i++) {
      order[i] = i;
    }
    final byte[] buf = data.getData();
    // Stable: equal keys keep map order, as in one map task's sorted output.
    IntMergeSort.sort(order, (a, b) -> {
      int pa = meta[4 * a];
      int pb = meta[4 * b];
      if (pa != pb) {
        return Integer.compare(pa, pb);
      }
      return comparator.compare(buf, meta[4 * a + 1], meta[4 * a + 2], buf, meta[4 * b + 1], meta[4 * b + 2]);
    });
    int i = 0;
    while (i < records) {
      int partition = meta[4 * order[i]];
      // One replica: a lost run file is re-computed by the rider's reduce (SharedScanShuffle).
      Path run = new Path(tmp, RunFiles.runName(runs, partition));
      try (FSDataOutputStream raw = fs.create(run, true, 64 * 1024, (short) 1, fs.getDefaultBlockSize(run));
           DataOutputStream out = new DataOutputStream(new java.io.BufferedOutputStream(raw, 64 * 1024))) {
        for (; i < records && meta[4 * order[i]] == partition; i++) {
          int m = 4 * order[i];
          WritableUtils.writeVInt(out, meta[m + 2]);
          out.write(buf, meta[m + 1], meta[m + 2]);
          WritableUtils.writeVInt(out, meta[m + 3]);
          out.write(buf, meta[m + 1] + meta[m + 2], meta[m + 3]);
        }
        WritableUtils.writeVInt(out, -1);
      }
    }
    runs++;
    records = 0;
    data.reset();
  }

  @Override
  public void close(TaskAttemptContext context) throws IOException {
    spill();
  }

  /**
   * Writes the last run and the counters and moves the attempt's directory to {@code data/}. If an
   * earlier attempt already committed (same input, same functions, same output), this attempt's copy
   * is discarded.
   */
  void commit() throws IOException {
    spill();
    fs.mkdirs(tmp);
    try (FSDataOutputStream out = fs.create(new Path(tmp, RunFiles.COUNTERS), true)) {
      counters.write(out);
    }
    Path target = new Path(splitDir, RunFiles.DATA);
    if (fs.exists(target) || !fs.rename(tmp, target)) {
      fs.delete(tmp, true);
    }
  }

  /** Deletes this split's output whatever attempt committed it (its rider has left the scan). */
  void discard() throws IOException {
    fs.delete(splitDir, true);
  }

  /** Drops what this attempt wrote (the rider failed on this split; its reduce re-computes it). */
  void abandon() {
    try {
      fs.delete(tmp, true);
    } catch (IOException e) {
      // Only an uncommitted attempt directory is left behind; the job's clean-up removes the tree.
    }
  }
}
