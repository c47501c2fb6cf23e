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
