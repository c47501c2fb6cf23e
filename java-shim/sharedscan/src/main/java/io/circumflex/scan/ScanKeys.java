package io.circumflex.scan;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.hadoop.conf.Configuration;

/**
 * The configuration keys of shared scans, and the one derived name every participant agrees on: the
 * scan key of a dataset.
 *
 * <p>User keys ({@code circumflex.scan.zk.*}, {@code circumflex.scan.dir}, ...) are read from the job's
 * configuration; internal keys ({@code circumflex.scan.internal.*}) are written by {@link SharedScan}
 * at submission and read by the job's tasks.
 */
public final class ScanKeys {
  private ScanKeys() {}

  /** ZooKeeper connect string; when unset, Hadoop's own {@code hadoop.zk.address} is used. */
  public static final String ZK_QUORUM = "circumflex.scan.zk.quorum";
  /** Hadoop's ZooKeeper address key (the ResourceManager's), the fallback for {@link #ZK_QUORUM}. */
  public static final String HADOOP_ZK_ADDRESS = "hadoop.zk.address";
  /** ZooKeeper root of all scans. */
  public static final String ZK_ROOT = "circumflex.scan.zk.root";
  public static final String ZK_ROOT_DEFAULT = "/circumflex/scans";
  /** How long a client or task waits for ZooKeeper before it gives up (ms). */
  public static final String ZK_TIMEOUT_MS = "circumflex.scan.zk.timeout.ms";
  public static final int ZK_TIMEOUT_MS_DEFAULT = 5000;
  /**
   * Directory (on the default file system unless qualified) for the configurations of attached jobs
   * and the map outputs a driver writes for its riders.
   */
  public static final String SCAN_DIR = "circumflex.scan.dir";
  public static final String SCAN_DIR_DEFAULT = "/tmp/circumflex-scan";
  /** Memory (MB) a C-mapper buffers for all its riders together (split evenly) before they write sorted runs. */
  public static final String RIDER_BUFFER_MB = "circumflex.scan.rider.buffer.mb";
  public static final int RIDER_BUFFER_MB_DEFAULT = 16;
  /**
   * How long (ms) a rider's reduce waits for a driver whose job is still attached before it
   * re-computes the split itself.
   */
  public static final String DRIVER_WAIT_MS = "circumflex.scan.driver.wait.ms";
  public static final long DRIVER_WAIT_MS_DEFAULT = 30L * 60 * 1000;
  /** The dataset name (shared with the scheduler's planning, ARCHITECTURE.md "Shared scans"). */
  public static final String DATASET = "circumflex.job.dataset";
  /** MapReduce's shuffle consumer plug-in key. */
  public static final String SHUFFLE_PLUGIN = "mapreduce.job.reduce.shuffle.consumer.plugin.class";

  static final String INTERNAL = "circumflex.scan.internal.";
  /** The scan key ({@link #scanKey}) of the job's dataset. */
  static final String KEY = INTERNAL + "key";
  /** The job's member id in its scan (ZooKeeper sequential node name). */
  static final String MEMBER = INTERNAL + "member";
  /** {@link SplitRef#encodeAll} of the splits the job drives. */
  static final String DRIVES = INTERNAL + "drives";
  /** {@link SplitRef#encodeAll} of the splits the job rides. */
  static final String RIDES = INTERNAL + "rides";
  /** The drivers of the ridden splits, in the order of {@link #RIDES}. */
  static final String RIDE_DRIVERS = INTERNAL + "ride.drivers";
  static final String ORIG_MAPPER = INTERNAL + "orig.mapper";
  static final String ORIG_INPUT_FORMAT = INTERNAL + "orig.inputformat";
  static final String ORIG_OUTPUT_FORMAT = INTERNAL + "orig.outputformat";

  /**
   * The scan key of a job: a digest of its dataset and of what decides how its records are read
   * (the input format class and the text record delimiter). Jobs share a scan only when both agree,
   * because a rider's map function is fed the records the driver's reader produced.
   */
  public static String scanKey(Configuration conf, String inputFormatClass) {
    String dataset = dataset(conf);
    String material = dataset + "\n" + inputFormatClass + "\n"
        + conf.get("textinputformat.record.delimiter", "");
    return digest(material, 16);
  }

  /**
   * {@code circumflex.job.dataset}, or the sorted input paths when it is unset (the rule the
   * scheduler's planning uses).
   */
  public static String dataset(Configuration conf) {
    String named = conf.getTrimmed(DATASET, "");
    if (!named.isEmpty()) {
      return named;
    }
    List<String> paths = new ArrayList<>(Arrays.asList(
        conf.getTrimmedStrings("mapreduce.input.fileinputformat.inputdir")));
    java.util.Collections.sort(paths);
    return String.join(",", paths);
  }

  /** The first {@code bytes} bytes of SHA-256 of {@code s}, in hex. */
  static String digest(String s, int bytes) {
    try {
      byte[] d = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
      StringBuilder out = new StringBuilder(bytes * 2);
      for (int i = 0; i < bytes; i++) {
        out.append(String.format("%02x", d[i] & 0xff));
      }
      return out.toString();
    } catch (NoSuchAlgorithmException e) {
      // Every Java platform must provide SHA-256 (java.security.MessageDigest's contract).
      throw new IllegalStateException("SHA-256 unavailable", e);
    }
  }
}
