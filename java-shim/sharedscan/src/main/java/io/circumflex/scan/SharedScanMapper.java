package io.circumflex.scan;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.InputSplit;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.util.ReflectionUtils;

/**
 * The C-mapper (appendix C.3): claims its split in ZooKeeper (the cut-off after which no job can
 * ride it), reads the split once, and calls the map function of the job itself and of every rider
 * frozen at the claim, each with its own configuration, counters, partitioner and sort order. The
 * job's own output goes through MapReduce's normal map output; each rider's goes to files the
 * rider's reduce merges in ({@link RiderOutput}, {@link SharedScanShuffle}).
 *
 * <p>A rider's failure (class not on the classpath, an exception from its mapper) never fails the
 * driver: the rider is dropped from this split and its reduce re-computes the split. A re-run of
 * this task (after a kill or a lost node) gets the same frozen rider list and rewrites their output;
 * whichever attempt commits first is kept.
 */
public class SharedScanMapper extends Mapper<Object, Object, Object, Object> {
  private static final Log LOG = LogFactory.getLog(SharedScanMapper.class);

  @Override
  @SuppressWarnings("unchecked")
  public void run(Context context) throws IOException, InterruptedException {
    Configuration conf = context.getConfiguration();
    InputSplit split = context.getInputSplit();
    if (split instanceof ScanSplit && ((ScanSplit) split).isNoop()) {
      return;
    }
    String name = conf.get(ScanKeys.ORIG_MAPPER, Mapper.class.getName());
    Mapper<Object, Object, Object, Object> own;
    try {
      own = (Mapper<Object, Object, Object, Object>) ReflectionUtils.newInstance(conf.getClassByName(name), conf);
    } catch (ClassNotFoundException e) {
      throw new IOException("mapper class " + name + " (" + ScanKeys.ORIG_MAPPER + ") not found", e);
    }
    List<Rider> riders = split instanceof ScanSplit ? riders(conf, (ScanSplit) split, context) : new ArrayList<>();
    if (riders.isEmpty()) {
      own.run(context);
      return;
    }
    MapperCalls.setup(own, context);
    for (Iterator<Rider> it = riders.iterator(); it.hasNext(); ) {
      Rider r = it.next();
      try {
        r.setup();
      } catch (Exception e) {
        drop(r, it, "setup", e, context);
      }
    }
    while (context.nextKeyValue()) {
      Object key = context.getCurrentKey();
      Object value = context.getCurrentValue();
      MapperCalls.map(own, key, value, context);
      for (Iterator<Rider> it = riders.iterator(); it.hasNext(); ) {
        Rider r = it.next();
        try {
          r.map(key, value);
        } catch (Exception e) {
          drop(r, it, "map", e, context);
        }
      }
    }
    MapperCalls.cleanup(own, context);
    for (Iterator<Rider> it = riders.iterator(); it.hasNext(); ) {
      Rider r = it.next();
      try {
        r.finish();
        context.getCounter(ScanCounter.RIDERS_SERVED).increment(1);
      } catch (Exception e) {
        drop(r, it, "clean-up/commit", e, context);
      }
    }
    discardLeft(conf, riders);
  }

  /**
   * A rider whose job ended while this split was being scanned has already deleted its files; what
   * was committed for it afterwards would stay forever. Its member node is removed before its files
   * are, so checking after the commit leaves nothing behind in either order.
   */
  private static void discardLeft(Configuration conf, List<Rider> riders) {
    try (ScanRegistry zk = ScanRegistry.connect(conf)) {
      for (Rider r : riders) {
        if (zk.memberConf(conf.get(ScanKeys.KEY), r.member) == null) {
          LOG.info("shared scan: rider " + r.member + " left during the scan; its output for this split is deleted");
          r.output.discard();
        }
      }
    } catch (IOException e) {
      LOG.warn("shared scan: could not check whether riders left; a left rider's output may stay in the scan directory", e);
    }
  }

  private static void drop(Rider r, Iterator<Rider> it, String stage, Exception e, Context context) {
    LOG.warn("shared scan: rider " + r.member + " failed in " + stage + "; dropped from this split, its reduce re-computes it", e);
    r.output.abandon();
    it.remove();
    context.getCounter(ScanCounter.RIDERS_DROPPED).increment(1);
  }

  /** Claims the split and opens the frozen riders that are still attached. */
  private static List<Rider> riders(Configuration conf, ScanSplit split, Context context) {
    List<Rider> out = new ArrayList<>();
    String key = conf.get(ScanKeys.KEY);
    String me = conf.get(ScanKeys.MEMBER);
    String splitId = split.ref().id();
    List<String> members;
    try (ScanRegistry zk = ScanRegistry.connect(conf)) {
      members = zk.claim(key, me, splitId);
      // The riders share one buffer budget: this task's heap was sized for one job, not for many.
      long budget = conf.getInt(ScanKeys.RIDER_BUFFER_MB, ScanKeys.RIDER_BUFFER_MB_DEFAULT) * 1024L * 1024L;
      long each = budget / Math.max(1, members.size());
      for (String m : members) {
        String path = zk.memberConf(key, m);
        if (path == null) {
          LOG.info("shared scan: rider " + m + " of split " + splitId + " has left (its job ended); not served");
          continue;
        }
        if (SharedScan.ended(conf, zk, m)) {
          LOG.warn("shared scan: rider " + m + " of split " + splitId + " ended without leaving the scan; removed, not served");
          SharedScan.leave(conf, zk, m);
          continue;
        }
        try {
          Configuration rc = SharedScan.loadMemberConf(conf, path);
          out.add(new Rider(rc, split, splitId, context.getTaskAttemptID(), each, context::progress));
        } catch (IOException | RuntimeException e) {
          LOG.warn("shared scan: rider " + m + " of split " + splitId + " cannot run here; its reduce re-computes the split", e);
          context.getCounter(ScanCounter.RIDERS_DROPPED).increment(1);
        }
      }
    } catch (IOException e) {
      LOG.error("shared scan: cannot claim split " + splitId + " of scan " + key + " as " + me
          + "; scanning for this job only, riders re-compute the split once this job ends", e);
    }
    return out;
  }
}
