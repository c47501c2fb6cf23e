package io.circumflex.it.scan;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import io.circumflex.it.scan.ScanJobs.Kind;
import io.circumflex.scan.ScanCounter;
import io.circumflex.scan.ScanRegistry;
import io.circumflex.scan.SharedScan;
import java.util.EnumMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.Counters;
import org.apache.hadoop.mapreduce.FileSystemCounter;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobCounter;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormatCounter;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * Three different jobs (word count, grep count, per-key sum) over one HDFS dataset, submitted through
 * {@link SharedScan} at staggered times on a MiniDFSCluster + MiniMRYarnCluster + ZooKeeper: the
 * second rides the whole of the first's scan, the third arrives after the first's scan has started,
 * drives the splits already scanned and rides the rest. Each job's output must be byte-identical to
 * the same job run unshared, and the dataset bytes read by the three together at most half of what
 * the three unshared runs read. The second scenario kills the first job's C-map in the middle of the
 * split it serves both riders from, and kills a fourth job (a rider) while it is attached.
 */
public class SharedScanIT {
  private static final int SPLITS = 6;
  private static ScanCluster cluster;
  private static Path input;
  private static long splitBytes;
  private static final Map<Kind, byte[]> ALONE = new EnumMap<>(Kind.class);
  private static final Map<Kind, Long> ALONE_SUM_RECORDS = new EnumMap<>(Kind.class);
  private static long aloneBytes;
  private static long aloneHdfsBytes;

  @BeforeClass
  public static void start() throws Exception {
    cluster = ScanCluster.start("sharedscan-it", 3, "circumflex");
    FileSystem fs = cluster.fs();
    input = new Path("/data/lines.txt");
    long size = ScanJobs.generate(fs, input, 12000, 19);
    splitBytes = (size + SPLITS - 1) / SPLITS;
    // The three jobs unshared (plain submit), concurrently: the reference outputs and bytes.
    Map<Kind, Job> jobs = new EnumMap<>(Kind.class);
    for (Kind k : Kind.values()) {
      Job j = ScanJobs.job(cluster.conf(), k, input, new Path("/out/alone/" + k), splitBytes);
      j.submit();
      jobs.put(k, j);
    }
    for (Map.Entry<Kind, Job> e : jobs.entrySet()) {
      assertTrue("unshared " + e.getKey() + " succeeded", e.getValue().waitForCompletion(false));
      Counters c = e.getValue().getCounters();
      aloneBytes += c.findCounter(FileInputFormatCounter.BYTES_READ).getValue();
      aloneHdfsBytes += hdfsBytesRead(c);
      ALONE_SUM_RECORDS.put(e.getKey(), c.findCounter("it", "SUM_RECORDS").getValue());
      ALONE.put(e.getKey(), ScanJobs.output(fs, new Path("/out/alone/" + e.getKey())));
      assertTrue(e.getKey() + " produced output", ALONE.get(e.getKey()).length > 0);
    }
    // Each unshared job reads the whole dataset, and a little more: line readers read past a split's
    // end to finish its last line, and read in buffers.
    assertTrue("unshared bytes " + aloneBytes + " >= 3 x " + size, aloneBytes >= 3 * size);
  }

  @AfterClass
  public static void stop() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  public void threeStaggeredJobsShareOneScan() throws Exception {
    scenario("shared", false);
  }

  @Test
  public void cMapKilledMidSplitIsRerunAndEveryJobStaysCorrect() throws Exception {
    scenario("killed", true);
  }

  private void scenario(String name, boolean killMidSplit) throws Exception {
    FileSystem fs = cluster.fs();
    Configuration base = cluster.conf();
    Path pauseDir = new Path("/pause/" + name);
    Map<Kind, Job> jobs = new EnumMap<>(Kind.class);
    Map<Kind, ScanRegistry.Attachment> att = new EnumMap<>(Kind.class);

    Job a = ScanJobs.job(base, Kind.WORDCOUNT, input, new Path("/out/" + name + "/" + Kind.WORDCOUNT), splitBytes);
    // One C-map at a time: the scan is still under way when the third job arrives, and the third job
    // drives few splits (one, or two if its attachment outlasts a C-map), so the byte bound below
    // holds by construction rather than by timing (with two at a time it drove up to three).
    a.getConfiguration().setInt("mapreduce.job.running.map.limit", 1);
    if (killMidSplit) {
      a.getConfiguration().set("it.pause.dir", pauseDir.toString());
    }
    att.put(Kind.WORDCOUNT, SharedScan.submit(a));
    jobs.put(Kind.WORDCOUNT, a);
    assertNotNull("ZooKeeper is up: the job shares", att.get(Kind.WORDCOUNT));
    assertEquals("the first job on a fresh scan drives every split", SPLITS, att.get(Kind.WORDCOUNT).drives.size());
    String key = a.getConfiguration().get("circumflex.scan.internal.key");

    Thread.sleep(300);
    Job b = ScanJobs.job(base, Kind.GREP, input, new Path("/out/" + name + "/" + Kind.GREP), splitBytes);
    att.put(Kind.GREP, SharedScan.submit(b));
    jobs.put(Kind.GREP, b);
    assertEquals("the second job arrives before any C-map started: it rides everything", SPLITS,
        att.get(Kind.GREP).rides.size());

    Job d = null;
    if (killMidSplit) {
      // A fourth job rides too and is killed while attached: the others must not notice.
      d = ScanJobs.job(base, Kind.GREP, input, new Path("/out/" + name + "/killed-rider"), splitBytes);
      d.getConfiguration().set("it.grep.pattern", "w2[0-9]");
      assertEquals(SPLITS, SharedScan.submit(d).rides.size());
    }

    try (ScanRegistry zk = ScanRegistry.connect(base)) {
      long deadline = System.currentTimeMillis() + 180_000;
      while (zk.openSplits(key).size() == SPLITS) {
        assertTrue("the first job's scan never started", System.currentTimeMillis() < deadline);
        Thread.sleep(50);
      }
    }
    Job c = ScanJobs.job(base, Kind.SUM, input, new Path("/out/" + name + "/" + Kind.SUM), splitBytes);
    att.put(Kind.SUM, SharedScan.submit(c));
    jobs.put(Kind.SUM, c);
    ScanRegistry.Attachment third = att.get(Kind.SUM);
    assertTrue("the third job drives the splits already scanned: " + third.drives.size(), third.drives.size() >= 1);
    assertTrue("and rides the rest: " + third.rides.size(), third.rides.size() >= 1);

    if (killMidSplit) {
      long deadline = System.currentTimeMillis() + 180_000;
      FileStatus[] markers;
      while ((markers = fs.exists(pauseDir) ? fs.listStatus(pauseDir) : new FileStatus[0]).length == 0) {
        assertTrue("the first split's C-map never reached its middle", System.currentTimeMillis() < deadline);
        Thread.sleep(100);
      }
      a.killTask(TaskAttemptID.forName(markers[0].getPath().getName()));
      d.killJob();
      while (!d.isComplete()) {
        Thread.sleep(200);
      }
      assertEquals(JobStatus.State.KILLED, d.getJobState());
    }

    long sharedBytes = 0;
    long hdfsBytes = 0;
    for (Kind k : Kind.values()) {
      Job j = jobs.get(k);
      assertTrue(name + ": " + k + " succeeded", j.waitForCompletion(false));
      Counters counters = j.getCounters();
      long datasetBytes = counters.findCounter(FileInputFormatCounter.BYTES_READ).getValue()
          + counters.findCounter(ScanCounter.RECOMPUTED_SPLIT_BYTES).getValue();
      sharedBytes += datasetBytes;
      hdfsBytes += hdfsBytesRead(counters);
      assertArrayEquals(name + ": " + k + " output is byte-identical to the job run unshared", ALONE.get(k),
          ScanJobs.output(fs, new Path("/out/" + name + "/" + k)));
      assertEquals(name + ": " + k + " user counters include the map work drivers did for it",
          ALONE_SUM_RECORDS.get(k).longValue(), counters.findCounter("it", "SUM_RECORDS").getValue());
      System.out.printf("%s %s: drives %d rides %d, dataset bytes %d, ridden %d, recomputed %d%n", name, k,
          att.get(k).drives.size(), att.get(k).rides.size(), datasetBytes,
          counters.findCounter(ScanCounter.SPLITS_RIDDEN).getValue(),
          counters.findCounter(ScanCounter.SPLITS_RECOMPUTED).getValue());
    }
    System.out.printf("%s: dataset bytes read shared %d vs unshared %d (%.2fx); all HDFS bytes read, shared %d"
        + " (dataset, riders' intermediate files, configurations) vs unshared %d%n", name, sharedBytes, aloneBytes,
        (double) sharedBytes / aloneBytes, hdfsBytes, aloneHdfsBytes);
    assertTrue(name + ": shared dataset bytes " + sharedBytes + " <= 0.5 x unshared " + aloneBytes,
        2 * sharedBytes <= aloneBytes);
    if (killMidSplit) {
      assertTrue("the paused C-map attempt was killed and re-run",
          a.getCounters().findCounter(JobCounter.NUM_KILLED_MAPS).getValue() >= 1);
    }
    // Every job left the scan: no members, no open splits, no rider files.
    try (ScanRegistry zk = ScanRegistry.connect(base)) {
      assertTrue(name + ": members left " + zk.members(key), zk.members(key).isEmpty());
      assertTrue(name + ": open splits left " + zk.openSplits(key), zk.openSplits(key).isEmpty());
    }
    Path out = new Path("/tmp/circumflex-scan/" + key + "/out");
    assertFalse(name + ": rider files left", fs.exists(out) && fs.listStatus(out).length > 0);
  }

  private static long hdfsBytesRead(Counters c) {
    return c.getGroup(FileSystemCounter.class.getName()).findCounter("HDFS_BYTES_READ").getValue();
  }
}
