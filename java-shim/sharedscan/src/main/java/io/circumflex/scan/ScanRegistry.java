package io.circumflex.scan;

import java.io.Closeable;
import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryNTimes;
import org.apache.hadoop.conf.Configuration;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * The ZooKeeper bookkeeping of shared scans (the paper's appendix C.2/C.3, adapted).
 *
 * <p>Layout under {@code <root>/<scan key>} (a container node, removed by ZooKeeper once empty):
 * <ul>
 *   <li>{@code lock}: the per-dataset Curator {@link InterProcessMutex} that serializes clients
 *       attaching to the scan;</li>
 *   <li>{@code splits/<split id>}: an open split, not yet scanned; its data is the member list, the
 *       first member being the driver that will scan it and the rest the riders;</li>
 *   <li>{@code members/m-<seq>}: one per attached job (sequence = arrival order, numbered by
 *       {@code <root>/member-ids}, a persistent node, so an id is never reused under one root); data: the
 *       path of its configuration and, once submitted, its Hadoop job id;</li>
 *   <li>{@code members/m-<seq>/claims/<split id>}: the member list frozen when this driver's C-map
 *       claimed the split, kept so a re-run of the C-map serves exactly the same riders.</li>
 * </ul>
 *
 * <p>The cut-off: a C-map claims its split by one ZooKeeper transaction that deletes the open split
 * node at the version it read and creates the claim; a client attaching concurrently updates the
 * split node at the version it read, so exactly one of the two wins and the loser retries. After a
 * claim the split node is gone, and a later client creates a new one and drives the split itself
 * (the next lap of the cyclic scan). Unlike the paper, the claim is not a plain read-and-delete:
 * the frozen list must survive the C-map's own failure.
 */
public final class ScanRegistry implements Closeable {
  private static final int MAX_RETRIES = 50;
  /** The persistent node under the root whose sequence numbers the member ids (see register). */
  static final String MEMBER_IDS = "member-ids";

  private final CuratorFramework zk;
  private final String root;
  private final int timeoutMs;

  private ScanRegistry(CuratorFramework zk, String root, int timeoutMs) {
    this.zk = zk;
    this.root = root;
    this.timeoutMs = timeoutMs;
  }

  /**
   * Connects to the quorum named by {@code circumflex.scan.zk.quorum} (else {@code hadoop.zk.address}).
   *
   * @throws IOException naming the key and the quorum when none is configured or it cannot be
   *     reached within {@code circumflex.scan.zk.timeout.ms}
   */
  public static ScanRegistry connect(Configuration conf) throws IOException {
    String quorum = conf.getTrimmed(ScanKeys.ZK_QUORUM, conf.getTrimmed(ScanKeys.HADOOP_ZK_ADDRESS, ""));
    if (quorum.isEmpty()) {
      throw new IOException("no ZooKeeper quorum for shared scans: set " + ScanKeys.ZK_QUORUM
          + " (or " + ScanKeys.HADOOP_ZK_ADDRESS + ") to host:port[,host:port...]");
    }
    int timeout = conf.getInt(ScanKeys.ZK_TIMEOUT_MS, ScanKeys.ZK_TIMEOUT_MS_DEFAULT);
    if (timeout <= 0) {
      throw new IOException(ScanKeys.ZK_TIMEOUT_MS + "=" + timeout + " is not allowed; expected a positive number of ms");
    }
    String root = conf.getTrimmed(ScanKeys.ZK_ROOT, ScanKeys.ZK_ROOT_DEFAULT);
    if (!root.startsWith("/") || root.endsWith("/")) {
      throw new IOException(ScanKeys.ZK_ROOT + "='" + root + "' is not allowed; expected an absolute ZooKeeper path without a trailing '/'");
    }
    CuratorFramework zk = CuratorFrameworkFactory.builder()
        .connectString(quorum)
        .sessionTimeoutMs(Math.max(timeout * 4, 10000))
        .connectionTimeoutMs(timeout)
        .retryPolicy(new RetryNTimes(3, Math.max(timeout / 10, 100)))
        .build();
    zk.start();
    boolean connected;
    try {
      connected = zk.blockUntilConnected(timeout, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      connected = false;
    }
    if (!connected) {
      zk.close();
      throw new IOException("ZooKeeper quorum '" + quorum + "' (" + ScanKeys.ZK_QUORUM
          + ") unreachable within " + timeout + " ms (" + ScanKeys.ZK_TIMEOUT_MS + ")");
    }
    return new ScanRegistry(zk, root, timeout);
  }

  /** What a job got when it attached: the splits it drives and, per ridden split, its driver. */
  public static final class Attachment {
    public final String member;
    public final List<SplitRef> drives;
    /** Ridden split -> member id of its driver, in the order of the job's splits. */
    public final Map<SplitRef, String> rides;

    Attachment(String member, List<SplitRef> drives, Map<SplitRef, String> rides) {
      this.member = member;
      this.drives = Collections.unmodifiableList(drives);
      this.rides = Collections.unmodifiableMap(rides);
    }
  }

  private String scan(String key) {
    return root + "/" + key;
  }

  private String splitNode(String key, String splitId) {
    return scan(key) + "/splits/" + splitId;
  }

  private String memberNode(String key, String member) {
    return scan(key) + "/members/" + member;
  }

  /**
   * Registers a new member of scan {@code key} (before it attaches), whose configuration will be at
   * {@code confPath}; returns its member id. Members are numbered in arrival order.
   */
  public String register(String key, String confPath) throws IOException {
    try {
      ensureContainer(scan(key));
      ensureContainer(scan(key) + "/members");
      Properties p = new Properties();
      p.setProperty("conf", confPath);
      // The id's number comes from a persistent counter beside the scans, not from the members
      // container: ZooKeeper removes that container once a scan's last member has left, and a new one
      // numbers from 0 again, so a finished job's late clean-up, keyed by its member id, could remove a
      // new member given the same id (seen in SharedScanIT). A sequential node's number grows with its
      // parent's child changes, which never go back, so an id is never given twice under one root.
      String ticket = zk.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT_SEQUENTIAL)
          .forPath(root + "/" + MEMBER_IDS + "/m-");
      String member = ticket.substring(ticket.lastIndexOf('/') + 1);
      zk.delete().forPath(ticket);
      String path = scan(key) + "/members/" + member;
      zk.create().forPath(path, props(p));
      zk.create().forPath(path + "/claims");
      return member;
    } catch (Exception e) {
      throw io("register a member of scan " + key, e);
    }
  }

  /**
   * Attaches member {@code member} to every split of {@code splits}: under the scan's lock, in one
   * ZooKeeper transaction, it appends itself to each open split (a rider split) and opens the
   * others with itself as driver.
   */
  public Attachment attach(String key, String member, List<SplitRef> splits) throws IOException {
    InterProcessMutex lock = new InterProcessMutex(zk, scan(key) + "/lock");
    acquire(lock, key);
    try {
      for (int attempt = 0; ; attempt++) {
        ensureContainer(scan(key) + "/splits");
        List<CuratorOp> ops = new ArrayList<>();
        List<SplitRef> drives = new ArrayList<>();
        Map<SplitRef, String> rides = new LinkedHashMap<>();
        for (SplitRef split : splits) {
          String node = splitNode(key, split.id());
          Stat stat = new Stat();
          List<String> members = null;
          try {
            members = members(zk.getData().storingStatIn(stat).forPath(node));
          } catch (KeeperException.NoNodeException absent) {
            members = null;
          }
          if (members == null || members.isEmpty()) {
            ops.add(zk.transactionOp().create().forPath(node, bytes(member)));
            drives.add(split);
          } else {
            List<String> next = new ArrayList<>(members);
            next.add(member);
            ops.add(zk.transactionOp().setData().withVersion(stat.getVersion())
                .forPath(node, bytes(String.join(",", next))));
            rides.put(split, members.get(0));
          }
        }
        try {
          if (!ops.isEmpty()) {
            zk.transaction().forOperations(ops);
          }
          return new Attachment(member, drives, rides);
        } catch (KeeperException.BadVersionException | KeeperException.NoNodeException
            | KeeperException.NodeExistsException raced) {
          // A C-map claimed (or a container reaper removed) a node between our read and write: re-read.
          if (attempt >= MAX_RETRIES) {
            throw io("attach " + member + " to scan " + key + " after " + attempt + " conflicting updates", raced);
          }
        }
      }
    } catch (IOException e) {
      throw e;
    } catch (Exception e) {
      throw io("attach " + member + " to scan " + key, e);
    } finally {
      release(lock);
    }
  }

  /** Records the Hadoop job id of a submitted member (for operators and the status of the scan). */
  public void setJobId(String key, String member, String jobId) throws IOException {
    setProperty(key, member, "job", jobId);
  }

  /** Records where a member's configuration file is (read by the drivers that serve it). */
  public void setConfPath(String key, String member, String path) throws IOException {
    setProperty(key, member, "conf", path);
  }

  private void setProperty(String key, String member, String name, String value) throws IOException {
    try {
      Properties p = memberProps(key, member);
      if (p == null) {
        throw new IOException("member " + member + " of scan " + key + " is not registered");
      }
      p.setProperty(name, value);
      zk.setData().forPath(memberNode(key, member), props(p));
    } catch (IOException e) {
      throw e;
    } catch (Exception e) {
      throw io("record " + name + "=" + value + " for member " + member + " of scan " + key, e);
    }
  }

  /**
   * The configuration path of a member, or {@code null} if the member has left the scan (its job
   * ended and cleaned up, or never existed).
   */
  public String memberConf(String key, String member) throws IOException {
    try {
      Properties p = memberProps(key, member);
      return p == null ? null : p.getProperty("conf");
    } catch (Exception e) {
      throw io("read member " + member + " of scan " + key, e);
    }
  }

  /**
   * The Hadoop job id of a member, or {@code null} if it has none yet (being submitted) or has left.
   */
  public String memberJobId(String key, String member) throws IOException {
    try {
      Properties p = memberProps(key, member);
      return p == null ? null : p.getProperty("job");
    } catch (Exception e) {
      throw io("read member " + member + " of scan " + key, e);
    }
  }

  /**
   * The cut-off: driver {@code member} claims split {@code splitId} and gets the riders frozen at
   * that moment (never itself). A re-run of the same C-map gets the same list. Returns an empty list
   * when ZooKeeper knows no open split of this driver by that id (nothing to serve).
   */
  public List<String> claim(String key, String member, String splitId) throws IOException {
    String claimNode = memberNode(key, member) + "/claims/" + splitId;
    try {
      for (int attempt = 0; attempt <= MAX_RETRIES; attempt++) {
        try {
          return riders(zk.getData().forPath(claimNode), member);
        } catch (KeeperException.NoNodeException notYet) {
          // First attempt of this C-map: claim below.
        }
        String node = splitNode(key, splitId);
        Stat stat = new Stat();
        List<String> members;
        try {
          members = members(zk.getData().storingStatIn(stat).forPath(node));
        } catch (KeeperException.NoNodeException gone) {
          return Collections.emptyList();
        }
        if (members.isEmpty() || !members.get(0).equals(member)) {
          // The open split belongs to another driver (a later lap of the scan): not ours to serve.
          return Collections.emptyList();
        }
        try {
          zk.transaction().forOperations(Arrays.asList(
              zk.transactionOp().delete().withVersion(stat.getVersion()).forPath(node),
              zk.transactionOp().create().forPath(claimNode, bytes(String.join(",", members)))));
          return riders(bytes(String.join(",", members)), member);
        } catch (KeeperException.BadVersionException | KeeperException.NodeExistsException
            | KeeperException.NoNodeException raced) {
          // A client attached meanwhile, or another attempt of this C-map claimed first: re-read.
        }
      }
      throw new IOException("claim of split " + splitId + " in scan " + key + " by " + member
          + " kept conflicting after " + MAX_RETRIES + " attempts");
    } catch (IOException e) {
      throw e;
    } catch (Exception e) {
      throw io("claim split " + splitId + " of scan " + key + " for " + member, e);
    }
  }

  /**
   * Removes a member whose job ended (committed or aborted): under the scan's lock it leaves every
   * open split it rides, drops every open split it was to drive (its riders then re-compute those,
   * a later job drives them afresh), and deletes its member node with its claims. Idempotent.
   */
  public void detach(String key, String member) throws IOException {
    InterProcessMutex lock = new InterProcessMutex(zk, scan(key) + "/lock");
    acquire(lock, key);
    try {
      String splits = scan(key) + "/splits";
      List<String> children;
      try {
        children = zk.getChildren().forPath(splits);
      } catch (KeeperException.NoNodeException none) {
        children = Collections.emptyList();
      }
      for (String child : children) {
        String node = splits + "/" + child;
        for (int attempt = 0; attempt <= MAX_RETRIES; attempt++) {
          Stat stat = new Stat();
          List<String> members;
          try {
            members = members(zk.getData().storingStatIn(stat).forPath(node));
          } catch (KeeperException.NoNodeException gone) {
            break;
          }
          if (!members.contains(member)) {
            break;
          }
          try {
            if (members.get(0).equals(member)) {
              zk.delete().withVersion(stat.getVersion()).forPath(node);
            } else {
              List<String> next = new ArrayList<>(members);
              next.remove(member);
              zk.setData().withVersion(stat.getVersion()).forPath(node, bytes(String.join(",", next)));
            }
            break;
          } catch (KeeperException.BadVersionException | KeeperException.NoNodeException raced) {
            // A C-map claimed the split meanwhile: re-read.
          }
        }
      }
      try {
        zk.delete().deletingChildrenIfNeeded().forPath(memberNode(key, member));
      } catch (KeeperException.NoNodeException gone) {
        // Already detached.
      }
    } catch (Exception e) {
      throw io("detach " + member + " from scan " + key, e);
    } finally {
      release(lock);
    }
  }

  /** Open (not yet claimed) split ids of a scan, each with its member list; for status and tests. */
  public Map<String, List<String>> openSplits(String key) throws IOException {
    Map<String, List<String>> out = new LinkedHashMap<>();
    try {
      List<String> children = zk.getChildren().forPath(scan(key) + "/splits");
      Collections.sort(children);
      for (String child : children) {
        try {
          out.put(child, members(zk.getData().forPath(scan(key) + "/splits/" + child)));
        } catch (KeeperException.NoNodeException claimed) {
          // Claimed between listing and reading.
        }
      }
    } catch (KeeperException.NoNodeException none) {
      return out;
    } catch (Exception e) {
      throw io("list the open splits of scan " + key, e);
    }
    return out;
  }

  /** Member ids attached to a scan, in arrival order; for status and tests. */
  public List<String> members(String key) throws IOException {
    try {
      List<String> children = zk.getChildren().forPath(scan(key) + "/members");
      Collections.sort(children);
      return children;
    } catch (KeeperException.NoNodeException none) {
      return Collections.emptyList();
    } catch (Exception e) {
      throw io("list the members of scan " + key, e);
    }
  }

  @Override
  public void close() {
    zk.close();
  }

  private Properties memberProps(String key, String member) throws Exception {
    try {
      Properties p = new Properties();
      p.load(new StringReader(new String(zk.getData().forPath(memberNode(key, member)), StandardCharsets.UTF_8)));
      return p;
    } catch (KeeperException.NoNodeException gone) {
      return null;
    }
  }

  private void ensureContainer(String path) throws Exception {
    try {
      zk.createContainers(path);
    } catch (KeeperException.NodeExistsException exists) {
      // Created concurrently.
    }
  }

  private void acquire(InterProcessMutex lock, String key) throws IOException {
    try {
      if (!lock.acquire(timeoutMs * 4L, TimeUnit.MILLISECONDS)) {
        throw new IOException("lock of scan " + key + " not acquired within " + (timeoutMs * 4L) + " ms");
      }
    } catch (IOException e) {
      throw e;
    } catch (Exception e) {
      throw io("lock scan " + key, e);
    }
  }

  private static void release(InterProcessMutex lock) {
    try {
      lock.release();
    } catch (Exception e) {
      // The lock node is ephemeral: it goes with the session even if this release fails.
    }
  }

  private static List<String> riders(byte[] data, String member) {
    List<String> list = new ArrayList<>(members(data));
    list.remove(member);
    return list;
  }

  private static List<String> members(byte[] data) {
    String s = new String(data, StandardCharsets.UTF_8).trim();
    if (s.isEmpty()) {
      return Collections.emptyList();
    }
    return Arrays.asList(s.split(","));
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] props(Properties p) throws IOException {
    StringWriter w = new StringWriter();
    p.store(w, null);
    return bytes(w.toString());
  }

  private static IOException io(String what, Exception e) {
    return new IOException("shared scan: could not " + what + ": " + e, e);
  }
}
