package io.circumflex.nativeapi;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.Test;

/** Extraction of the library shipped in the jar, including concurrent extraction. */
public class NativeLoaderTest {

  @Test
  public void platformMatchesTheBuildsResourceLayout() {
    assertTrue(NativeLoader.resourcePath(),
        NativeLoader.resourcePath().matches("/io/circumflex/native/[a-z0-9]+/[a-z0-9_]+/.*circumflex.*"));
    assertNotNull("the jar resources carry the library for this platform",
        NativeLoader.class.getResource(NativeLoader.resourcePath()));
  }

  /** Two JVMs start at once with an empty java.library.path: both extract (or reuse) and load. */
  @Test
  public void twoJvmsLoadTheLibraryFromTheJarAtOnce() throws Exception {
    File tmp = Files.createTempDirectory("cfx-jvms").toFile();
    String java = new File(System.getProperty("java.home"), "bin/java").getPath();
    List<Process> processes = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      ProcessBuilder pb = new ProcessBuilder(java, "-Djava.library.path=" + new File(tmp, "empty"),
          "-Djava.io.tmpdir=" + tmp, "-cp", System.getProperty("java.class.path"),
          LoadFromJarMain.class.getName());
      pb.redirectErrorStream(true);
      processes.add(pb.start());
    }
    for (Process p : processes) {
      String out = new String(readAll(p.getInputStream()), "UTF-8");
      assertEquals(out, 0, p.waitFor());
      assertTrue(out, out.contains("loaded ") && out.contains(new File(tmp, "circumflex-native").getPath()));
    }
  }

  private static byte[] readAll(java.io.InputStream in) throws java.io.IOException {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    byte[] buf = new byte[8192];
    int n;
    while ((n = in.read(buf)) > 0) {
      out.write(buf, 0, n);
    }
    return out.toByteArray();
  }

  @Test
  public void missingResourceExtractsNothing() throws Exception {
    File dir = Files.createTempDirectory("cfx-missing").toFile();
    assertNull(NativeLoader.extract("/io/circumflex/native/none/none/libnothing.so", dir));
  }

  @Test
  public void concurrentExtractionYieldsOneCompleteFile() throws Exception {
    final File dir = Files.createTempDirectory("cfx-extract").toFile();
    final String resource = NativeLoader.resourcePath();
    final long expected = NativeLoader.class.getResource(resource).openConnection().getContentLengthLong();
    final int threads = 6;
    final CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<Future<File>> results = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      results.add(pool.submit(new Callable<File>() {
        @Override
        public File call() throws Exception {
          start.await();
          return NativeLoader.extract(resource, dir);
        }
      }));
    }
    start.countDown();
    File first = null;
    for (Future<File> f : results) {
      File got = f.get();
      assertEquals(expected, got.length());
      if (first == null) {
        first = got;
      }
      assertEquals(first, got);
    }
    pool.shutdown();
    File[] libs = dir.listFiles((d, name) -> !name.endsWith(".lck"));
    assertEquals("no partial files are left behind", 1, libs.length);
  }
}
