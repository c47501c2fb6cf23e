package io.circumflex.scan;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.RawKeyValueIterator;
import org.apache.hadoop.mapred.Reporter;
import org.apache.hadoop.mapred.ShuffleConsumerPlugin;
import org.apache.hadoop.mapreduce.Counter;
import org.apache.hadoop.mapreduce.CounterGroup;
import org.apache.hadoop.mapreduce.Counters;
import org.apache.hadoop.mapreduce.InputFormat;
import org.apache.hadoop.mapreduce.RecordReader;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.apache.hadoop.mapreduce.task.reduce.Shuffle;

/**
 * The C-reducer's input, through MapReduce's shuffle plug-in point
 * ({@code mapreduce.job.reduce.shuffle.consumer.plugin.class}): the job's own shuffle (its C-maps'
 * outputs, fetched and merged by Hadoop's {@link Shuffle}) merged with the runs its drivers wrote
 * for it, one directory per ridden split.
 *
 * <p>Why files and not a fetch from the driver's map outputs: YARN's ShuffleHandler checks every
 * fetch against the <em>fetching</em> job's token secret, so a reduce of one job cannot fetch
 * another job's map outputs. A driver therefore writes its riders' partitioned, sorted outputs to the
 * scan directory and the rider reads them there.
 *
 * <p>Waiting and re-computation: while a split's output is not committed and its driver is still
 * attached to the scan, the reduce waits (reporting progress), at most
 * {@code circumflex.scan.driver.wait.ms}. Once the driver has left (its job ended, killed or failed,
 * without serving the split) or the wait runs out or ZooKeeper cannot be asked, the reduce
 * re-computes the split itself with the job's own input format and mapper, so output is never
 * silently dropped.
 */
public class SharedScanShuffle<K, V> implements ShuffleConsumerPlugin<K, V> {
  private static final Log LOG = LogFactory.getLog(SharedScanShuffle.class);
  private static final long POLL_MS = 500;
  /** Asking the cluster whether a driver's job ended costs RPCs: every 20th poll (10 s). */
  private static final int ENDED_CHECK_POLLS = 20;

  private final Shuffle<K, V> own = new Shuffle<>();
  private Context<K, V> context;

  @Override
  public void init(Context<K, V> context) {
    this.context = context;
    own.init(context);
  }

  @Override
  public RawKeyValueIterator run() throws IOException, InterruptedException {
    RawKeyValueIterator mine = own.run();
    JobConf conf = context.getJobConf();
    List<SplitRef> rides = SplitRef.decodeAll(conf.get(ScanKeys.RIDES));
    if (rides.isEmpty()) {
      return mine;
    }
    String[] drivers = conf.getTrimmedStrings(ScanKeys.RIDE_DRIVERS);
    if (drivers.length != rides.size()) {
      throw new IOException(ScanKeys.RIDE_DRIVERS + " names " + drivers.length + " drivers for " + rides.size()
          + " ridden splits; the job's configuration is corrupt");
    }
    int partition = context.getReduceId().getTaskID().getId();
    Reporter reporter = context.getReporter();
    List<RawKeyValueIterator> sources = new ArrayList<>();
    sources.add(mine);
    ScanRegistry zk = null;
    try {
      try {
        zk = ScanRegistry.connect(conf);
      } catch (IOException e) {
        LOG.error("shared scan: ZooKeeper unavailable to this reduce; splits not yet served are re-computed here", e);
      }
      for (int i = 0; i < rides.size(); i++) {
        SplitRef split = rides.get(i);
        Path data = RiderOutput.committed(conf, split.id());
        FileSystem fs = data.getFileSystem(conf);
        boolean recomputed = awaitOrRecompute(conf, zk, split, drivers[i], data, fs);
        sources.addAll(RunFiles.open(fs, data, partition));
        if (partition == 0) {
          if (!recomputed) {
            reporter.incrCounter(ScanCounter.SPLITS_RIDDEN, 1);
          }
          addCounters(fs, new Path(data, RunFiles.COUNTERS), reporter);
        }
      }
    } finally {
      if (zk != null) {
        zk.close();
      }
    }
    return new MergedIterator(sources, conf.getOutputKeyComparator(), mine.getProgress());
  }

  /** Waits for the driver's output of {@code split}; re-computes it when it will not come. */
  private boolean awaitOrRecompute(JobConf conf, ScanRegistry zk, SplitRef split, String driver, Path data,
      FileSystem fs) throws IOException, InterruptedException {
    String key = conf.get(ScanKeys.KEY);
    long deadline = System.currentTimeMillis()
        + conf.getLong(ScanKeys.DRIVER_WAIT_MS, ScanKeys.DRIVER_WAIT_MS_DEFAULT);
    int polls = 0;
    while (!fs.exists(data)) {
      String why = null;
      if (zk == null) {
        why = "ZooKeeper is unavailable";
      } else if (System.currentTimeMillis() > deadline) {
        why = "driver " + driver + " did not serve it within " + ScanKeys.DRIVER_WAIT_MS;
      } else {
        try {
          if (zk.memberConf(key, driver) == null) {
            why = "driver " + driver + " left the scan without serving it";
          } else if (++polls % ENDED_CHECK_POLLS == 0 && SharedScan.ended(conf, zk, driver)) {
            why = "driver " + driver + "'s job ended without serving it";
          }
        } catch (IOException e) {
          why = "ZooKeeper failed: " + e.getMessage();
        }
      }
      if (why != null) {
        // The driver may have committed just before leaving.
        if (fs.exists(data)) {
          return false;
        }
        LOG.warn("shared scan: re-computing split " + split + " (" + split.id() + "): " + why);
        recompute(conf, split);
        return true;
      }
      context.getReporter().progress();
      Thread.sleep(POLL_MS);
    }
    return false;
  }

  /** Runs this job's map function over {@code split} here and commits its output like a driver would. */
  @SuppressWarnings("unchecked")
  private void recompute(JobConf conf, SplitRef split) throws IOException, InterruptedException {
    TaskAttemptID attempt = context.getReduceId();
    ScanSplit fileSplit = split.toScanSplit();
    InputFormat<Object, Object> in = (InputFormat<Object, Object>) SharedScanInputFormat.original(conf);
    TaskAttemptContextImpl tac = new TaskAttemptContextImpl(conf, attempt);
    Reporter reporter = context.getReporter();
    long buffer = conf.getInt(ScanKeys.RIDER_BUFFER_MB, ScanKeys.RIDER_BUFFER_MB_DEFAULT) * 1024L * 1024L;
    Rider rider = new Rider(conf, fileSplit, split.id(), attempt, buffer, reporter::progress);
    try (RecordReader<Object, Object> records = in.createRecordReader(fileSplit, tac)) {
      records.initialize(fileSplit, tac);
      rider.runAll(records);
    }
    reporter.incrCounter(ScanCounter.SPLITS_RECOMPUTED, 1);
    reporter.incrCounter(ScanCounter.RECOMPUTED_SPLIT_BYTES, split.length());
  }

  /** Adds the map-side counters a driver recorded for this job on one split. */
  private static void addCounters(FileSystem fs, Path file, Reporter reporter) throws IOException {
    if (!fs.exists(file)) {
      return;
    }
    Counters counters = new Counters();
    try (FSDataInputStream in = fs.open(file)) {
      counters.readFields(in);
    }
    for (CounterGroup g : counters) {
      for (Counter c : g) {
        reporter.incrCounter(g.getName(), c.getName(), c.getValue());
      }
    }
  }

  @Override
  public void close() {
    own.close();
  }
}
