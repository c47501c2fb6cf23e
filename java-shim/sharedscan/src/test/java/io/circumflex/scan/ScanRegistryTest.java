package io.circumflex.scan;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.hadoop.conf.Configuration;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/** The split bookkeeping against a real (in-process) ZooKeeper: riders, drivers, cut-off, clean-up. */
public class ScanRegistryTest {
  private TestingServer server;
  private Configuration conf;
  private ScanRegistry zk;
  private static final String KEY = "k1";

  @Before
  public void start() throws Exception {
    server = new TestingServer(true);
    conf = new Configuration(false);
    conf.set(ScanKeys.ZK_QUORUM, server.getConnectString());
    zk = ScanRegistry.connect(conf);
  }

  @After
  public void stop() throws Exception {
    zk.close();
    server.close();
  }

  private static List<SplitRef> splits(int n) {
    List<SplitRef> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(new SplitRef("hdfs://nn/data/f", i * 100L, 100, new String[] {"h" + i}));
    }
    return out;
  }

  private String join(List<SplitRef> splits) throws IOException {
    String m = zk.register(KEY, "/conf");
    ScanRegistry.Attachment a = zk.attach(KEY, m, splits);
    assertEquals(m, a.member);
    return m;
  }

  @Test
  public void firstJobDrivesEverySplitLaterJobsRideThem() throws IOException {
    List<SplitRef> s = splits(4);
    String a = zk.register(KEY, "/a");
    ScanRegistry.Attachment first = zk.attach(KEY, a, s);
    assertEquals(s, first.drives);
    assertTrue(first.rides.isEmpty());
    String b = zk.register(KEY, "/b");
    ScanRegistry.Attachment second = zk.attach(KEY, b, s);
    assertTrue(second.drives.isEmpty());
    assertEquals(s, new ArrayList<>(second.rides.keySet()));
    for (String driver : second.rides.values()) {
      assertEquals(a, driver);
    }
    assertTrue("members are numbered in arrival order", a.compareTo(b) < 0);
    assertEquals(Arrays.asList(a, b), zk.openSplits(KEY).get(s.get(0).id()));
  }

  @Test
  public void aMemberIdIsNeverGivenTwiceEvenAfterTheScansNodesAreRemoved() throws Exception {
    String a = join(splits(2));
    zk.detach(KEY, a);
    // What ZooKeeper's container reaper does once the scan's last member has left.
    try (CuratorFramework raw = CuratorFrameworkFactory.newClient(server.getConnectString(), new RetryOneTime(100))) {
      raw.start();
      if (raw.checkExists().forPath(ScanKeys.ZK_ROOT_DEFAULT + "/" + KEY) != null) {
        raw.delete().deletingChildrenIfNeeded().forPath(ScanKeys.ZK_ROOT_DEFAULT + "/" + KEY);
      }
    }
    String b = join(splits(2));
    assertNotEquals("a new incarnation of the scan must not reuse " + a, a, b);
    assertTrue("ids still grow in arrival order", a.compareTo(b) < 0);
    // A late clean-up of the finished member leaves the new one registered.
    zk.detach(KEY, a);
    zk.setJobId(KEY, b, "job_1_0001");
    assertEquals(Collections.singletonList(b), zk.members(KEY));
  }

  @Test
  public void aJobIdThatCannotBeRecordedIsReportedNotThrown() throws IOException {
    String m = join(splits(1));
    assertTrue(SharedScan.recordJobId(zk, KEY, m, "job_1_0001"));
    assertEquals("job_1_0001", zk.memberJobId(KEY, m));
    // The AM's second record, through its own connection, is idempotent.
    Configuration am = new Configuration(conf);
    am.set(ScanKeys.KEY, KEY);
    am.set(ScanKeys.MEMBER, m);
    assertTrue(SharedScan.recordJobId(am, "job_1_0001"));
    assertEquals("job_1_0001", zk.memberJobId(KEY, m));
    // A member that is gone (here: detached) cannot take an id; the submitted job must not fail for it.
    zk.detach(KEY, m);
    assertFalse(SharedScan.recordJobId(zk, KEY, m, "job_1_0002"));
    assertFalse(SharedScan.recordJobId(am, "job_1_0002"));
  }

  @Test
  public void claimIsTheCutOffAndSurvivesARerun() throws IOException {
    List<SplitRef> s = splits(3);
    String a = join(s);
    String b = join(s);
    // A's C-map of split 0 starts: B rides it, and the open split node is gone.
    assertEquals(Collections.singletonList(b), zk.claim(KEY, a, s.get(0).id()));
    assertEquals(2, zk.openSplits(KEY).size());
    // C arrives after the cut-off: it must drive split 0 itself (a new lap) and rides 1 and 2 on A.
    String c = zk.register(KEY, "/c");
    ScanRegistry.Attachment third = zk.attach(KEY, c, s);
    assertEquals(Collections.singletonList(s.get(0)), third.drives);
    assertEquals(Arrays.asList(s.get(1), s.get(2)), new ArrayList<>(third.rides.keySet()));
    // A re-run of A's C-map serves exactly the riders frozen at the first claim: not C.
    assertEquals(Collections.singletonList(b), zk.claim(KEY, a, s.get(0).id()));
    // Split 1 is claimed with both riders.
    assertEquals(Arrays.asList(b, c), zk.claim(KEY, a, s.get(1).id()));
    // C's own claim of split 0 has no riders.
    assertEquals(Collections.emptyList(), zk.claim(KEY, c, s.get(0).id()));
  }

  @Test
  public void claimOfASplitDrivenByAnotherJobServesNobody() throws IOException {
    List<SplitRef> s = splits(1);
    String a = join(s);
    String b = join(s);
    assertEquals(Collections.emptyList(), zk.claim(KEY, b, s.get(0).id()));
    assertEquals("B's attempt must not cut A's split off", 1, zk.openSplits(KEY).size());
    assertEquals(Collections.singletonList(b), zk.claim(KEY, a, s.get(0).id()));
  }

  @Test
  public void detachLeavesRidesDropsUndrivenSplitsAndCleansUp() throws IOException {
    List<SplitRef> s = splits(2);
    String a = join(s);
    String b = join(s);
    zk.claim(KEY, a, s.get(0).id());
    // B is killed: it leaves split 1's list; A still drives split 1.
    zk.detach(KEY, b);
    assertNull(zk.memberConf(KEY, b));
    assertEquals(Collections.singletonList(a), zk.openSplits(KEY).get(s.get(1).id()));
    String c = join(s);
    // A ends without having scanned split 1 (killed): the split is dropped, C's reduce re-computes it.
    zk.detach(KEY, a);
    // Left open: split 0, which C drives itself (it arrived after A's cut-off).
    assertEquals(Collections.singletonMap(s.get(0).id(), Collections.singletonList(c)), zk.openSplits(KEY));
    assertNotEquals(null, zk.memberConf(KEY, c));
    zk.detach(KEY, c);
    zk.detach(KEY, c);
    assertTrue(zk.members(KEY).isEmpty());
    assertTrue(zk.openSplits(KEY).isEmpty());
  }

  @Test
  public void concurrentClientsAndClaimsNeverLoseARider() throws Exception {
    List<SplitRef> s = splits(6);
    String a = join(s);
    java.util.Map<String, ScanRegistry.Attachment> attached = new java.util.concurrent.ConcurrentHashMap<>();
    List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      threads.add(new Thread(() -> {
        try (ScanRegistry own = ScanRegistry.connect(conf)) {
          String m = own.register(KEY, "/x");
          attached.put(m, own.attach(KEY, m, s));
        } catch (Throwable e) {
          errors.add(e);
        }
      }));
    }
    for (Thread t : threads) {
      t.start();
    }
    List<List<String>> frozen = new ArrayList<>();
    for (SplitRef split : s) {
      frozen.add(zk.claim(KEY, a, split.id()));
    }
    for (Thread t : threads) {
      t.join();
    }
    assertTrue(errors.toString(), errors.isEmpty());
    assertEquals(4, attached.size());
    // A client rides a split on A exactly when A's C-map froze it into that split's list: a client
    // racing the cut-off is never told it rides while the driver does not serve it, nor the reverse.
    for (java.util.Map.Entry<String, ScanRegistry.Attachment> e : attached.entrySet()) {
      for (int i = 0; i < s.size(); i++) {
        boolean ridesOnA = a.equals(e.getValue().rides.get(s.get(i)));
        assertEquals(e.getKey() + " on split " + i, ridesOnA, frozen.get(i).contains(e.getKey()));
        assertEquals(1, (e.getValue().rides.containsKey(s.get(i)) ? 1 : 0) + (e.getValue().drives.contains(s.get(i)) ? 1 : 0));
      }
    }
  }

  @Test
  public void unreachableQuorumIsAClearError() {
    Configuration bad = new Configuration(false);
    bad.set(ScanKeys.ZK_QUORUM, "127.0.0.1:1");
    bad.setInt(ScanKeys.ZK_TIMEOUT_MS, 500);
    try {
      ScanRegistry.connect(bad).close();
      fail("connected to a closed port");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("127.0.0.1:1") && e.getMessage().contains(ScanKeys.ZK_QUORUM));
    }
    try {
      ScanRegistry.connect(new Configuration(false)).close();
      fail("connected without a quorum");
    } catch (IOException e) {
      assertTrue(e.getMessage(), e.getMessage().contains(ScanKeys.ZK_QUORUM));
    }
  }

  @Test
  public void splitRefsRoundTripAndIdsDependOnRangeOnly() {
    SplitRef a = new SplitRef("hdfs://nn/a b,c:d", 5, 7, new String[] {"h1", "h2"});
    SplitRef back = SplitRef.decodeAll(SplitRef.encodeAll(Arrays.asList(a, a))).get(1);
    assertEquals(a, back);
    assertEquals(Arrays.asList("h1", "h2"), Arrays.asList(back.hosts()));
    assertEquals(a.id(), new SplitRef("hdfs://nn/a b,c:d", 5, 7, null).id());
    assertNotEquals(a.id(), new SplitRef("hdfs://nn/a b,c:d", 5, 8, null).id());
    try {
      SplitRef.decode("abc:1");
      fail();
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage().contains("abc:1"));
    }
  }

  @Test
  public void scanKeySeparatesInputFormatsOfTheSameDataset() {
    Configuration c = new Configuration(false);
    c.set("mapreduce.input.fileinputformat.inputdir", "/b,/a");
    String text = ScanKeys.scanKey(c, "org.apache.hadoop.mapreduce.lib.input.TextInputFormat");
    assertNotEquals(text, ScanKeys.scanKey(c, "org.apache.hadoop.mapreduce.lib.input.KeyValueTextInputFormat"));
    Configuration same = new Configuration(false);
    same.set("mapreduce.input.fileinputformat.inputdir", "/a,/b");
    assertEquals(text, ScanKeys.scanKey(same, "org.apache.hadoop.mapreduce.lib.input.TextInputFormat"));
    same.set(ScanKeys.DATASET, "logs");
    assertEquals("logs", ScanKeys.dataset(same));
  }
}
