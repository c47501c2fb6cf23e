package io.circumflex.scan;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import org.apache.hadoop.fs.Path;

/**
 * One input split of a dataset as the scan bookkeeping sees it: file, byte range, preferred hosts.
 * Its {@link #id()} depends on file and range only, so every job whose input format cuts the dataset
 * the same way names the split the same way; a job that cuts differently simply finds no split to
 * ride and drives its own.
 */
public final class SplitRef {
  private final String path;
  private final long start;
  private final long length;
  private final String[] hosts;

  public SplitRef(String path, long start, long length, String[] hosts) {
    this.path = Objects.requireNonNull(path, "path");
    this.start = start;
    this.length = length;
    this.hosts = hosts == null ? new String[0] : hosts.clone();
  }

  public String path() {
    return path;
  }

  public long start() {
    return start;
  }

  public long length() {
    return length;
  }

  public String[] hosts() {
    return hosts.clone();
  }

  /** A ZooKeeper-node and file-name safe id, stable across jobs: a digest of path and range. */
  public String id() {
    return "s-" + ScanKeys.digest(path + "\n" + start + "\n" + length, 12);
  }

  /** The split as a {@link ScanSplit} (a {@code FileSplit}) for a task. */
  ScanSplit toScanSplit() {
    return new ScanSplit(new Path(path), start, length, hosts, false);
  }

  private static final Base64.Encoder ENC = Base64.getUrlEncoder().withoutPadding();
  private static final Base64.Decoder DEC = Base64.getUrlDecoder();

  private static String b64(String s) {
    return ENC.encodeToString(s.getBytes(StandardCharsets.UTF_8));
  }

  private static String unb64(String s) {
    return new String(DEC.decode(s), StandardCharsets.UTF_8);
  }

  /** {@code path:start:length:hosts}, path and hosts base64url so no separator can occur in them. */
  String encode() {
    return b64(path) + ":" + start + ":" + length + ":" + b64(String.join("\n", hosts));
  }

  static SplitRef decode(String s) {
    String[] f = s.split(":", -1);
    if (f.length != 4) {
      throw new IllegalArgumentException("split reference '" + s
          + "' has " + f.length + " fields; expected path:start:length:hosts");
    }
    try {
      String hostList = unb64(f[3]);
      String[] hosts = hostList.isEmpty() ? new String[0] : hostList.split("\n");
      return new SplitRef(unb64(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2]), hosts);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("split reference '" + s + "' is malformed: " + e.getMessage(), e);
    }
  }

  static String encodeAll(List<SplitRef> splits) {
    List<String> parts = new ArrayList<>(splits.size());
    for (SplitRef s : splits) {
      parts.add(s.encode());
    }
    return String.join(",", parts);
  }

  static List<SplitRef> decodeAll(String s) {
    List<SplitRef> out = new ArrayList<>();
    if (s == null || s.isEmpty()) {
      return out;
    }
    for (String part : s.split(",")) {
      out.add(decode(part));
    }
    return out;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof SplitRef)) {
      return false;
    }
    SplitRef other = (SplitRef) o;
    return path.equals(other.path) && start == other.start && length == other.length;
  }

  @Override
  public int hashCode() {
    return Objects.hash(path, start, length);
  }

  @Override
  public String toString() {
    return path + "[" + start + "+" + length + "]";
  }
}
