package io.circumflex.scan;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapred.RawKeyValueIterator;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.util.Progress;
import org.junit.Test;

/** A rider's output on the local file system: partitioned, sorted runs, committed once, merged back. */
public class RunFilesTest {
  private static Configuration riderConf(File dir, int reduces) {
    Configuration c = new Configuration(false);
    c.set(ScanKeys.SCAN_DIR, dir.toURI().toString());
    c.set(ScanKeys.KEY, "k");
    c.set(ScanKeys.MEMBER, "m-1");
    c.setInt(MRJobConfig.NUM_REDUCES, reduces);
    c.setClass(MRJobConfig.MAP_OUTPUT_KEY_CLASS, Text.class, Object.class);
    c.setClass(MRJobConfig.MAP_OUTPUT_VALUE_CLASS, IntWritable.class, Object.class);
    c.set("io.serializations", "org.apache.hadoop.io.serializer.WritableSerialization");
    return c;
  }

  @Test
  public void runsArePartitionedSortedAndMergeBackToEveryRecord() throws Exception {
    File dir = Files.createTempDirectory("runfiles").toFile();
    Configuration c = riderConf(dir, 3);
    FileSystem fs = FileSystem.getLocal(c);
    RiderOutput out = new RiderOutput(c, "s-1", "attempt_1", 16L << 20);
    Random rnd = new Random(7);
    List<String> written = new ArrayList<>();
    for (int i = 0; i < 5000; i++) {
      String k = "w" + rnd.nextInt(300);
      written.add(k);
      out.write(new Text(k), new IntWritable(1));
    }
    out.commit();
    Path data = RiderOutput.committed(c, "s-1");
    assertTrue(fs.exists(data));
    int total = 0;
    for (int p = 0; p < 3; p++) {
      List<RawKeyValueIterator> runs = RunFiles.open(fs, data, p);
      MergedIterator it = new MergedIterator(runs, new org.apache.hadoop.mapred.JobConf(c).getOutputKeyComparator(), new Progress());
      String prev = null;
      while (it.next()) {
        Text k = new Text();
        k.readFields(new DataInputStream(new ByteArrayInputStream(it.getKey().getData(), it.getKey().getPosition(),
            it.getKey().getLength() - it.getKey().getPosition())));
        assertEquals("hash partitioning", p, (k.hashCode() & Integer.MAX_VALUE) % 3);
        if (prev != null) {
          assertTrue(prev + " <= " + k, prev.compareTo(k.toString()) <= 0);
        }
        prev = k.toString();
        total++;
      }
      it.close();
    }
    assertEquals(written.size(), total);
  }

  @Test
  public void smallBufferSpillsSeveralRunsThatStillMerge() throws Exception {
    File dir = Files.createTempDirectory("runfiles").toFile();
    Configuration c = riderConf(dir, 1);
    FileSystem fs = FileSystem.getLocal(c);
    RiderOutput out = new RiderOutput(c, "s-2", "attempt_1", 1L << 20);
    StringBuilder big = new StringBuilder();
    for (int i = 0; i < 1000; i++) {
      big.append('x');
    }
    for (int i = 0; i < 3000; i++) {
      out.write(new Text((2999 - i) + big.toString()), new IntWritable(i));
    }
    out.commit();
    Path data = RiderOutput.committed(c, "s-2");
    List<RawKeyValueIterator> runs = RunFiles.open(fs, data, 0);
    assertTrue("3 MB of output in a 1 MB buffer makes several runs: " + runs.size(), runs.size() >= 2);
    MergedIterator it = new MergedIterator(runs, new org.apache.hadoop.mapred.JobConf(c).getOutputKeyComparator(), new Progress());
    int n = 0;
    while (it.next()) {
      n++;
    }
    assertEquals(3000, n);
  }

  @Test
  public void aSecondCommitOfTheSameSplitKeepsTheFirst() throws Exception {
    File dir = Files.createTempDirectory("runfiles").toFile();
    Configuration c = riderConf(dir, 1);
    FileSystem fs = FileSystem.getLocal(c);
    RiderOutput first = new RiderOutput(c, "s-3", "attempt_1", 16L << 20);
    first.write(new Text("a"), new IntWritable(1));
    RiderOutput killed = new RiderOutput(c, "s-3", "attempt_0", 16L << 20);
    killed.write(new Text("a"), new IntWritable(1));
    killed.abandon();
    assertFalse("an abandoned attempt commits nothing", fs.exists(RiderOutput.committed(c, "s-3")));
    first.commit();
    RiderOutput rerun = new RiderOutput(c, "s-3", "attempt_2", 16L << 20);
    rerun.write(new Text("a"), new IntWritable(1));
    rerun.write(new Text("b"), new IntWritable(1));
    rerun.commit();
    List<RawKeyValueIterator> runs = RunFiles.open(fs, RiderOutput.committed(c, "s-3"), 0);
    int n = 0;
    for (RawKeyValueIterator r : runs) {
      while (r.next()) {
        n++;
      }
      r.close();
    }
    assertEquals(1, n);
    assertEquals(1, fs.listStatus(new Path(RiderOutput.committed(c, "s-3").getParent().toString())).length);
  }

  @Test
  public void mergeSortIsStableAndSorts() {
    java.util.Random rnd = new java.util.Random(3);
    int[] keys = new int[1001];
    int[] idx = new int[keys.length];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = rnd.nextInt(50);
      idx[i] = i;
    }
    IntMergeSort.sort(idx, (a, b) -> Integer.compare(keys[a], keys[b]));
    for (int i = 1; i < idx.length; i++) {
      assertTrue(keys[idx[i - 1]] < keys[idx[i]] || (keys[idx[i - 1]] == keys[idx[i]] && idx[i - 1] < idx[i]));
    }
  }

  @Test(expected = IOException.class)
  public void truncatedRunIsAnError() throws Exception {
    File f = File.createTempFile("run", "");
    Files.write(f.toPath(), new byte[] {3, 'a'});
    new RunFiles.Reader(new DataInputStream(Files.newInputStream(f.toPath())), new Path(f.toURI())).next();
  }
}
