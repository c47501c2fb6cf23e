package io.circumflex.nativeapi;

import io.circumflex.CircumflexInternalException;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Locale;

/**
 * Loads the Circumflex native library once per JVM (class loader).
 *
 * <p>Order: {@code System.loadLibrary("circumflex")} from {@code java.library.path}; then the jar
 * resource {@code /io/circumflex/native/<os>/<arch>/libcircumflex.so} (os: linux, darwin,
 * windows; arch: x86_64, aarch64), extracted to {@code <java.io.tmpdir>/circumflex-native/}.
 *
 * <p>Extraction is safe when two JVMs start at once: the file name carries the content's SHA-256,
 * so different builds never collide; the writer holds an exclusive lock on a companion {@code .lck}
 * file while it copies to a temporary name and renames atomically; a second JVM waits on the lock
 * and then finds the complete file. Nothing is deleted on exit, because another JVM may be using
 * the same file; the content hash makes reuse safe.
 *
 * <p>State machine: NOT_LOADED, LOADING, LOADED, FAILED. A failure is kept and every later
 * {@link #load()} rethrows it with the full story (what was tried and why each failed), so the
 * first and the hundredth caller see the same clear message, and no caller sees a bare
 * {@code UnsatisfiedLinkError} or {@code NoClassDefFoundError}.
 */
public final class NativeLoader {
  /** Library base name, as in {@code System.loadLibrary}. */
  public static final String LIBRARY = "circumflex";

  /** System property that, when set to a file, loads exactly that library (tests, operators). */
  public static final String PATH_PROPERTY = "circumflex.native.path";

  /** Loader states. */
  public enum State {
    NOT_LOADED,
    LOADING,
    LOADED,
    FAILED
  }

  private static final Object EXTRACT_MONITOR = new Object();

  private static State state = State.NOT_LOADED;
  private static CircumflexInternalException failure;
  private static String source;

  private NativeLoader() {}

  /** The current state. */
  public static synchronized State state() {
    return state;
  }

  /** Where the library came from once loaded (a path or "java.library.path"), else null. */
  public static synchronized String source() {
    return source;
  }

  /**
   * Loads the library if needed. Returns at once when already loaded; rethrows the kept failure
   * when a previous attempt failed.
   *
   * @throws CircumflexInternalException when the library cannot be loaded, naming every route tried
   */
  public static synchronized void load() {
    switch (state) {
      case LOADED:
        return;
      case FAILED:
        throw failure;
      case LOADING:
        // Re-entrant call from a static initializer during loading: a bug, say so.
        throw new CircumflexInternalException("NativeLoader.load() re-entered while loading");
      default:
        break;
    }
    state = State.LOADING;
    StringBuilder story = new StringBuilder();
    try {
      source = tryLoad(story);
      state = State.LOADED;
    } catch (Throwable t) {
      failure = new CircumflexInternalException("cannot load the Circumflex native library for "
          + platform() + ": " + story + t, t);
      state = State.FAILED;
      throw failure;
    }
  }

  private static String tryLoad(StringBuilder story) throws IOException {
    String explicit = System.getProperty(PATH_PROPERTY);
    if (explicit != null && !explicit.isEmpty()) {
      System.load(new File(explicit).getAbsolutePath());
      return explicit;
    }
    try {
      System.loadLibrary(LIBRARY);
      return "java.library.path";
    } catch (UnsatisfiedLinkError e) {
      story.append("not in java.library.path (").append(e.getMessage()).append("); ");
    }
    String resource = resourcePath();
    File extracted = extract(resource, new File(System.getProperty("java.io.tmpdir"), "circumflex-native"));
    if (extracted == null) {
      throw new IOException("jar resource " + resource + " not found (is the shim jar built for "
          + platform() + "?)");
    }
    System.load(extracted.getAbsolutePath());
    return extracted.getAbsolutePath();
  }

  /** The jar resource path for this platform. */
  public static String resourcePath() {
    return "/io/circumflex/native/" + platform() + "/" + mapLibraryName();
  }

  /** {@code <os>/<arch>}, normalized the same way as the Gradle build. */
  public static String platform() {
    return os() + "/" + arch();
  }

  static String os() {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    if (os.contains("linux")) {
      return "linux";
    }
    if (os.contains("mac") || os.contains("darwin")) {
      return "darwin";
    }
    if (os.contains("windows")) {
      return "windows";
    }
    return os.replaceAll("[^a-z0-9]", "");
  }

  static String arch() {
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    if (arch.equals("amd64") || arch.equals("x86_64")) {
      return "x86_64";
    }
    if (arch.equals("aarch64") || arch.equals("arm64")) {
      return "aarch64";
    }
    return arch.replaceAll("[^a-z0-9_]", "");
  }

  static String mapLibraryName() {
    return System.mapLibraryName(LIBRARY);
  }

  /**
   * Extracts {@code resource} into {@code dir} under a content-addressed name, safely against
   * concurrent extraction by other threads or JVMs. Returns the file, or null when the resource
   * is absent. Visible for tests.
   */
  static File extract(String resource, File dir) throws IOException {
    byte[] bytes;
    try (InputStream in = NativeLoader.class.getResourceAsStream(resource)) {
      if (in == null) {
        return null;
      }
      bytes = readAll(in);
    }
    if (!dir.isDirectory() && !dir.mkdirs() && !dir.isDirectory()) {
      throw new IOException("cannot create " + dir);
    }
    String name = mapLibraryName();
    int dot = name.lastIndexOf('.');
    String hashed = name.substring(0, dot) + "-" + sha256(bytes).substring(0, 16) + name.substring(dot);
    File target = new File(dir, hashed);
    File lock = new File(dir, hashed + ".lck");
    // File locks are held per JVM, so threads of this JVM also queue on a monitor.
    synchronized (EXTRACT_MONITOR) {
      return extractLocked(bytes, dir, hashed, target, lock);
    }
  }

  private static File extractLocked(byte[] bytes, File dir, String hashed, File target, File lock)
      throws IOException {
    try (RandomAccessFile raf = new RandomAccessFile(lock, "rw");
        FileChannel channel = raf.getChannel();
        FileLock held = channel.lock()) {
      if (target.isFile() && target.length() == bytes.length) {
        return target;
      }
      File tmp = File.createTempFile(hashed, ".part", dir);
      try {
        Files.write(tmp.toPath(), bytes);
        Files.move(tmp.toPath(), target.toPath(), StandardCopyOption.REPLACE_EXISTING,
            StandardCopyOption.ATOMIC_MOVE);
      } finally {
        Files.deleteIfExists(tmp.toPath());
      }
      return target;
    }
  }

  private static byte[] readAll(InputStream in) throws IOException {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(1 << 20);
    byte[] buf = new byte[1 << 16];
    int n;
    while ((n = in.read(buf)) > 0) {
      out.write(buf, 0, n);
    }
    return out.toByteArray();
  }

  private static String sha256(byte[] bytes) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(bytes);
      StringBuilder hex = new StringBuilder();
      for (byte b : digest) {
        hex.append(String.format("%02x", b & 0xff));
      }
      return hex.toString();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required by every Java platform", e);
    }
  }
}
