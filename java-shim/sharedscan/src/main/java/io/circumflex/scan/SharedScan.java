package io.circumflex.scan;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.IOUtils;
import org.apache.hadoop.mapreduce.InputFormat;
import org.apache.hadoop.mapreduce.InputSplit;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.lib.input.FileSplit;
import org.apache.hadoop.util.ReflectionUtils;

/**
 * The client library: {@code SharedScan.submit(job)} instead of {@code job.submit()}.
 *
 * <p>It computes the job's splits with its own input format, joins the running scan of its dataset
 * in ZooKeeper ({@link ScanRegistry#attach}: rides the splits an older job has not scanned yet,
 * drives the rest), and submits the job with one C-map per driver split ({@link SharedScanMapper},
 * {@link SharedScanInputFormat}), the shuffle consumer that merges what drivers wrote for it
 * ({@link SharedScanShuffle}) and an output format whose committer leaves the scan when the job ends
 * ({@link SharedScanOutputFormat}). The job's results are those of the same job submitted alone.
 *
 * <p>A job runs unshared (plain {@code job.submit()}, a log line says why) when it has no reduces,
 * when its splits are not file splits, when it already sets its own shuffle consumer, when no
 * ZooKeeper quorum is configured, or when ZooKeeper is unreachable: sharing is an optimization and
 * never a reason for a job to fail.
 */
public final class SharedScan {
  private static final Log LOG = LogFactory.getLog(SharedScan.class);
  private static final String SLOWSTART = "mapreduce.job.reduce.slowstart.completedmaps";

  private SharedScan() {}

  /**
   * Submits {@code job} sharing its dataset's scan. Returns the attachment (which splits it drives and
   * rides) or {@code null} when the job was submitted unshared.
   */
  public static ScanRegistry.Attachment submit(Job job) throws IOException, InterruptedException, ClassNotFoundException {
    Configuration conf = job.getConfiguration();
    String unshared = unsharedReason(job);
    List<SplitRef> splits = null;
    if (unshared == null) {
      splits = fileSplits(job);
      if (splits == null) {
        unshared = "its input format " + job.getInputFormatClass().getName() + " does not produce file splits";
      }
    }
    if (unshared != null) {
      LOG.info("shared scan: job '" + job.getJobName() + "' runs unshared: " + unshared);
      job.submit();
      return null;
    }
    ScanRegistry zk;
    try {
      zk = ScanRegistry.connect(conf);
    } catch (IOException e) {
      LOG.error("shared scan: job '" + job.getJobName() + "' runs unshared: " + e.getMessage());
      job.submit();
      return null;
    }
    try {
      return attachAndSubmit(job, zk, splits);
    } finally {
      zk.close();
    }
  }

  private static ScanRegistry.Attachment attachAndSubmit(Job job, ScanRegistry zk, List<SplitRef> splits)
      throws IOException, InterruptedException, ClassNotFoundException {
    Configuration conf = job.getConfiguration();
    String key = ScanKeys.scanKey(conf, job.getInputFormatClass().getName());
    Path root = scanRoot(conf);
    conf.set(ScanKeys.SCAN_DIR, root.toString());
    conf.set(ScanKeys.KEY, key);
    conf.set(ScanKeys.ORIG_MAPPER, job.getMapperClass().getName());
    conf.set(ScanKeys.ORIG_INPUT_FORMAT, job.getInputFormatClass().getName());
    conf.set(ScanKeys.ORIG_OUTPUT_FORMAT, job.getOutputFormatClass().getName());
    // The member id names the configuration file, and the file must exist before any driver can
    // see the member in a split's list: register, write, then attach.
    Path confDir = new Path(new Path(root, key), "conf");
    String member = zk.register(key, confDir.toString() + "/pending");
    conf.set(ScanKeys.MEMBER, member);
    Path confFile = new Path(confDir, member + ".xml");
    FileSystem fs = confFile.getFileSystem(conf);
    try (FSDataOutputStream out = fs.create(confFile, true)) {
      ownSettings(conf).writeXml(out);
    }
    ScanRegistry.Attachment a;
    try {
      zk.setConfPath(key, member, confFile.toString());
      reapEnded(conf, zk);
      a = zk.attach(key, member, splits);
    } catch (IOException e) {
      zk.detach(key, member);
      fs.delete(confFile, false);
      LOG.error("shared scan: job '" + job.getJobName() + "' runs unshared: " + e.getMessage());
      restoreUnshared(job);
      job.submit();
      return null;
    }
    List<SplitRef> rides = new ArrayList<>();
    List<String> drivers = new ArrayList<>();
    for (Map.Entry<SplitRef, String> e : a.rides.entrySet()) {
      rides.add(e.getKey());
      drivers.add(e.getValue());
    }
    conf.set(ScanKeys.DRIVES, SplitRef.encodeAll(a.drives));
    conf.set(ScanKeys.RIDES, SplitRef.encodeAll(rides));
    conf.set(ScanKeys.RIDE_DRIVERS, String.join(",", drivers));
    job.setMapperClass(SharedScanMapper.class);
    job.setInputFormatClass(SharedScanInputFormat.class);
    job.setOutputFormatClass(SharedScanOutputFormat.class);
    conf.set(ScanKeys.SHUFFLE_PLUGIN, SharedScanShuffle.class.getName());
    if (!a.rides.isEmpty() && conf.get(SLOWSTART) == null) {
      // A rider's reduce waits for its drivers' C-maps; started early (MapReduce's default is after 5%
      // of its own maps) it would hold a container the drivers may need.
      conf.setFloat(SLOWSTART, 1.0f);
    }
    try {
      job.submit();
    } catch (IOException | InterruptedException | ClassNotFoundException | RuntimeException e) {
      // Not submitted: nobody will drive our splits, and nobody must ride on them.
      cleanup(conf, zk);
      throw e;
    }
    // Submitted: from here on nothing may throw, or the caller would take a running job for a failed
    // submission. The job's AM records the id again when it sets the job up (SharedScanOutputFormat).
    recordJobId(zk, key, member, job.getJobID().toString());
    LOG.info("shared scan: job " + job.getJobID() + " ('" + job.getJobName() + "') is member " + member
        + " of scan " + key + ": drives " + a.drives.size() + " splits, rides " + a.rides.size());
    return a;
  }

  /**
   * Records {@code jobId} as the Hadoop job of {@code member} ({@link #ended} reads it to remove a
   * member whose job ended before its AM could leave the scan). Best effort: returns whether it was
   * recorded and logs why not; a job without a recorded id is cleaned up by its own committer, and only
   * one killed before its AM ran stays in ZooKeeper until removed by hand.
   */
  static boolean recordJobId(ScanRegistry zk, String key, String member, String jobId) {
    try {
      zk.setJobId(key, member, jobId);
      return true;
    } catch (IOException e) {
      LOG.warn("shared scan: could not record job " + jobId + " for member " + member + " of scan " + key
          + " (if the job is killed before its AM starts, the member stays until removed by hand): " + e.getMessage());
      return false;
    }
  }

  /** {@link #recordJobId(ScanRegistry, String, String, String)} from the job's AM, with its own connection. */
  static boolean recordJobId(Configuration conf, String jobId) {
    try (ScanRegistry zk = ScanRegistry.connect(conf)) {
      return recordJobId(zk, conf.get(ScanKeys.KEY), conf.get(ScanKeys.MEMBER), jobId);
    } catch (IOException e) {
      LOG.warn("shared scan: could not record job " + jobId + " for member " + conf.get(ScanKeys.MEMBER) + ": "
          + e.getMessage());
      return false;
    }
  }

  /** Why {@code job} cannot share a scan, or {@code null} if it can. */
  private static String unsharedReason(Job job) {
    Configuration conf = job.getConfiguration();
    if (job.getNumReduceTasks() == 0) {
      return "it has no reduces (a map-only job's output is its map output; riding needs a reduce to merge into)";
    }
    String plugin = conf.get(ScanKeys.SHUFFLE_PLUGIN);
    if (plugin != null && !plugin.equals(SharedScanShuffle.class.getName())
        && !plugin.equals("org.apache.hadoop.mapreduce.task.reduce.Shuffle")) {
      return "it sets its own shuffle consumer " + ScanKeys.SHUFFLE_PLUGIN + "=" + plugin;
    }
    if (conf.get(ScanKeys.MEMBER) != null) {
      return "it was already submitted through SharedScan";
    }
    return null;
  }

  private static void restoreUnshared(Job job) {
    Configuration conf = job.getConfiguration();
    for (String k : new String[] {ScanKeys.KEY, ScanKeys.MEMBER, ScanKeys.ORIG_MAPPER, ScanKeys.ORIG_INPUT_FORMAT,
        ScanKeys.ORIG_OUTPUT_FORMAT}) {
      conf.unset(k);
    }
  }

  /** The job's splits as {@link SplitRef}s, or {@code null} if any is not a {@link FileSplit}. */
  private static List<SplitRef> fileSplits(Job job) throws IOException, InterruptedException, ClassNotFoundException {
    InputFormat<?, ?> in = ReflectionUtils.newInstance(job.getInputFormatClass(), job.getConfiguration());
    List<SplitRef> out = new ArrayList<>();
    for (InputSplit s : in.getSplits(job)) {
      if (!(s instanceof FileSplit)) {
        return null;
      }
      FileSplit f = (FileSplit) s;
      out.add(new SplitRef(f.getPath().toString(), f.getStart(), f.getLength(), f.getLocations()));
    }
    return out;
  }

  /** The scan directory, qualified with the file system it lives on. */
  static Path scanRoot(Configuration conf) {
    Path p = new Path(conf.get(ScanKeys.SCAN_DIR, ScanKeys.SCAN_DIR_DEFAULT));
    try {
      return p.getFileSystem(conf).makeQualified(p);
    } catch (IOException e) {
      // Unqualified, it resolves against the default file system wherever it is used.
      return p;
    }
  }

  /**
   * Whether the Hadoop job of {@code member} has ended (succeeded, failed, killed, or unknown to the
   * cluster) while its member node is still there: a job killed before its MapReduce AM ran never
   * calls its committer, so it cannot leave the scan itself. {@code false} while it runs, while it is
   * still being submitted (no job id yet), and when the cluster cannot be asked.
   */
  static boolean ended(Configuration conf, ScanRegistry zk, String member) {
    try {
      String id = zk.memberJobId(conf.get(ScanKeys.KEY), member);
      if (id == null) {
        return false;
      }
      org.apache.hadoop.mapreduce.Cluster cluster = new org.apache.hadoop.mapreduce.Cluster(conf);
      try {
        Job job = cluster.getJob(org.apache.hadoop.mapreduce.JobID.forName(id));
        return job == null || job.isComplete();
      } finally {
        cluster.close();
      }
    } catch (IOException | InterruptedException | IllegalArgumentException e) {
      LOG.warn("shared scan: cannot tell whether member " + member + "'s job has ended: " + e);
      return false;
    }
  }

  /**
   * Removes every other member of the scan whose job has ended without leaving (see {@link #ended});
   * returns how many. Clients call it before attaching, so such members are not ridden on.
   */
  static int reapEnded(Configuration conf, ScanRegistry zk) throws IOException {
    int reaped = 0;
    for (String m : zk.members(conf.get(ScanKeys.KEY))) {
      if (!m.equals(conf.get(ScanKeys.MEMBER)) && ended(conf, zk, m)) {
        LOG.warn("shared scan: member " + m + " of scan " + conf.get(ScanKeys.KEY) + " ended without leaving; removed");
        leave(conf, zk, m);
        reaped++;
      }
    }
    return reaped;
  }

  /** Where drivers write a member's map outputs: {@code <scan dir>/<scan key>/out/<member>}. */
  static Path riderDir(Configuration conf, String member) {
    return new Path(new Path(new Path(scanRoot(conf), conf.get(ScanKeys.KEY)), "out"), member);
  }

  /**
   * The settings of {@code conf} that differ from a default configuration ({@code *-default.xml} and
   * the site files): what a member's configuration file holds. A full job configuration is some
   * 100 KB, and every C-map serving the member reads it; the defaults are the cluster's anyway.
   */
  static Configuration ownSettings(Configuration conf) {
    Configuration defaults = new Configuration();
    Configuration own = new Configuration(false);
    for (Map.Entry<String, String> e : conf) {
      String d = defaults.getRaw(e.getKey());
      if (d == null || !d.equals(e.getValue())) {
        own.set(e.getKey(), e.getValue());
      }
    }
    return own;
  }

  /**
   * Reads a member's configuration (its own settings, written at its submission, over this host's
   * defaults) from its file system.
   */
  static Configuration loadMemberConf(Configuration conf, String path) throws IOException {
    Path p = new Path(path);
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    try (InputStream in = p.getFileSystem(conf).open(p)) {
      IOUtils.copyBytes(in, buf, 64 * 1024, false);
    }
    Configuration rc = new Configuration();
    rc.addResource(new ByteArrayInputStream(buf.toByteArray()), path);
    if (rc.get(ScanKeys.MEMBER) == null) {
      throw new IOException("configuration " + path + " is not a shared-scan member's (no " + ScanKeys.MEMBER + ")");
    }
    return rc;
  }

  /**
   * A job of the scan ended (committed, failed or killed): leave the scan in ZooKeeper and delete the
   * member's files. Never throws: clean-up failing must not fail the job; it is logged.
   */
  static void cleanup(Configuration conf) {
    try (ScanRegistry zk = ScanRegistry.connect(conf)) {
      cleanup(conf, zk);
    } catch (IOException e) {
      LOG.error("shared scan: could not leave scan " + conf.get(ScanKeys.KEY) + " as " + conf.get(ScanKeys.MEMBER)
          + "; its ZooKeeper nodes stay until removed by hand", e);
    }
  }

  private static void cleanup(Configuration conf, ScanRegistry zk) {
    leave(conf, zk, conf.get(ScanKeys.MEMBER));
  }

  /**
   * Removes {@code member} of the scan named by {@code conf}'s scan key from ZooKeeper, then its files
   * (in that order: a driver that finds the member gone after committing for it deletes what it
   * wrote, {@link SharedScanMapper}).
   */
  static void leave(Configuration conf, ScanRegistry zk, String member) {
    String key = conf.get(ScanKeys.KEY);
    try {
      zk.detach(key, member);
    } catch (IOException e) {
      LOG.error("shared scan: could not leave scan " + key + " as " + member, e);
    }
    try {
      Path scan = new Path(scanRoot(conf), key);
      FileSystem fs = scan.getFileSystem(conf);
      fs.delete(riderDir(conf, member), true);
      fs.delete(new Path(new Path(scan, "conf"), member + ".xml"), false);
    } catch (IOException e) {
      LOG.warn("shared scan: could not delete the files of member " + member + " of scan " + key, e);
    }
  }
}
