package io.circumflex.it.scan;

import io.circumflex.it.yarn.MiniCircumflexCluster;
import java.io.File;
import java.util.Collections;
import org.apache.curator.test.TestingServer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;

/**
 * HDFS (one DataNode), YARN MapReduce (one NodeManager, the Circumflex scheduler with a given
 * policy, sized as {@link MiniCircumflexCluster}: room for {@code jobs} MapReduce AMs plus 4 task
 * containers) and an in-process ZooKeeper.
 */
final class ScanCluster implements AutoCloseable {
  final TestingServer zk;
  final MiniDFSCluster dfs;
  final MiniMRYarnCluster mr;

  private ScanCluster(TestingServer zk, MiniDFSCluster dfs, MiniMRYarnCluster mr) {
    this.zk = zk;
    this.dfs = dfs;
    this.mr = mr;
  }

  static ScanCluster start(String name, int jobs, String policy) throws Exception {
    // The YARN side is the one every YARN integration test uses (4 task containers besides the AMs).
    Configuration conf = MiniCircumflexCluster.configuration(name, Collections.singletonMap("circumflex.policy", policy),
        jobs, 1);
    TestingServer zk = new TestingServer(true);
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, new File(ScanJobs.workDir(name), "dfs").getAbsolutePath());
    MiniDFSCluster dfs = new MiniDFSCluster.Builder(conf).numDataNodes(1).format(true).build();
    dfs.waitActive();
    conf.set("fs.defaultFS", dfs.getFileSystem().getUri().toString());
    conf.set("circumflex.scan.zk.quorum", zk.getConnectString());
    MiniMRYarnCluster mr = new MiniMRYarnCluster(name, 1);
    mr.init(conf);
    mr.start();
    return new ScanCluster(zk, dfs, mr);
  }

  /**
   * Switches the scheduler's policy as {@code yarn rmadmin -refreshQueues} would (the ResourceManager's
   * configuration with {@code circumflex.policy} replaced); fails if the scheduler refuses it.
   */
  void setPolicy(String policy) throws java.io.IOException {
    org.apache.hadoop.yarn.server.resourcemanager.ResourceManager rm = mr.getResourceManager();
    Configuration refreshed = new Configuration(rm.getConfig());
    refreshed.set("circumflex.policy", policy);
    rm.getResourceScheduler().reinitialize(refreshed, rm.getRMContext());
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
