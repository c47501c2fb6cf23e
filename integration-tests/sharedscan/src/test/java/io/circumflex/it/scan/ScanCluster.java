package io.circumflex.it.scan;

import io.circumflex.yarn.CircumflexScheduler;
import java.io.File;
import org.apache.curator.test.TestingServer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;

/**
 * HDFS (one DataNode), YARN MapReduce (one NodeManager, the Circumflex scheduler with the
 * {@code circumflex} policy) and an in-process ZooKeeper, sized for a 2-core machine: room for
 * {@code jobs} MapReduce AMs plus {@code slots} task containers.
 */
final class ScanCluster implements AutoCloseable {
  static final int SLOT_MB = 256;
  static final int AM_MB = 512;

  final TestingServer zk;
  final MiniDFSCluster dfs;
  final MiniMRYarnCluster mr;

  private ScanCluster(TestingServer zk, MiniDFSCluster dfs, MiniMRYarnCluster mr) {
    this.zk = zk;
    this.dfs = dfs;
    this.mr = mr;
  }

  static ScanCluster start(String name, int jobs, int slots, String policy) throws Exception {
    File work = ScanJobs.workDir(name);
    System.setProperty("test.build.data", new File(work, "data").getAbsolutePath());
    System.setProperty("hadoop.tmp.dir", new File(work, "tmp").getAbsolutePath());
    TestingServer zk = new TestingServer(true);
    Configuration conf = new YarnConfiguration();
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, new File(work, "dfs").getAbsolutePath());
    MiniDFSCluster dfs = new MiniDFSCluster.Builder(conf).numDataNodes(1).format(true).build();
    dfs.waitActive();
    conf.set("fs.defaultFS", dfs.getFileSystem().getUri().toString());
    int nmMb = jobs * AM_MB + slots * SLOT_MB;
    conf.setClass(YarnConfiguration.RM_SCHEDULER, CircumflexScheduler.class, ResourceScheduler.class);
    conf.set("circumflex.policy", policy);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, SLOT_MB);
    conf.setInt(YarnConfiguration.NM_PMEM_MB, nmMb);
    conf.setInt("yarn.minicluster.yarn.nodemanager.resource.memory-mb", nmMb);
    conf.setLong(YarnConfiguration.RM_NM_HEARTBEAT_INTERVAL_MS, 200);
    conf.setFloat(YarnConfiguration.NM_MAX_PER_DISK_UTILIZATION_PERCENTAGE, 99.9f);
    conf.setInt("yarn.app.mapreduce.am.resource.mb", AM_MB);
    conf.set("yarn.app.mapreduce.am.command-opts", "-Xmx320m -XX:TieredStopAtLevel=1 -Xshare:auto");
    conf.setInt("yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms", 200);
    conf.setInt("mapreduce.map.memory.mb", SLOT_MB);
    conf.setInt("mapreduce.reduce.memory.mb", SLOT_MB);
    conf.set("mapreduce.map.java.opts", "-Xmx160m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC");
    conf.set("mapreduce.reduce.java.opts", "-Xmx160m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC");
    conf.setBoolean("mapreduce.map.speculative", false);
    conf.setBoolean("mapreduce.reduce.speculative", false);
    conf.setFloat("mapreduce.job.reduce.slowstart.completedmaps", 1.0f);
    conf.setInt("mapreduce.task.io.sort.mb", 16);
    conf.set("circumflex.scan.zk.quorum", zk.getConnectString());
    MiniMRYarnCluster mr = new MiniMRYarnCluster(name, 1);
    mr.init(conf);
    mr.start();
    return new ScanCluster(zk, dfs, mr);
  }

  /** A client configuration for jobs on this cluster. */
  Configuration conf() {
    return new Configuration(mr.getConfig());
  }

  FileSystem fs() throws java.io.IOException {
    return dfs.getFileSystem();
  }

  @Override
  public void close() throws Exception {
    try {
      mr.stop();
    } finally {
      try {
        dfs.shutdown();
      } finally {
        zk.close();
      }
    }
  }
}
