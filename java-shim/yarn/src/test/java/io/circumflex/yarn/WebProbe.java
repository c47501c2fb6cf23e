package io.circumflex.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * Looks at a running ResourceManager from outside: HTTP GETs, the scheduler's metrics2 source in JMX,
 * and the scheduler page in headless chromium. Shared by SchedulerWebTest and the YARN integration tests.
 */
public final class WebProbe {
  private WebProbe() {}

  /** GETs {@code url} with {@code accept}; fails unless the answer is 200. */
  public static String get(String url, String accept) throws IOException {
    HttpURLConnection c = (HttpURLConnection) new URL(url).openConnection();
    c.setRequestProperty("Accept", accept);
    c.setConnectTimeout(10_000);
    c.setReadTimeout(30_000);
    int code = c.getResponseCode();
    InputStream in = code < 400 ? c.getInputStream() : c.getErrorStream();
    String body = in == null ? "" : read(in);
    assertEquals("GET " + url + ": " + body, 200, code);
    return body;
  }

  private static String read(InputStream in) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] buf = new byte[8192];
    for (int n; (n = in.read(buf)) > 0; ) {
      out.write(buf, 0, n);
    }
    in.close();
    return new String(out.toByteArray(), StandardCharsets.UTF_8);
  }

  /**
   * An attribute of the {@code CircumflexScheduler} metrics2 source, read through JMX. Test JVMs that
   * start several ResourceManagers run metrics2 in mini-cluster mode, which numbers repeated source
   * names ({@code CircumflexScheduler-1}, ...) and may keep stale ones: the largest value is the live one.
   */
  public static long jmx(String attribute) throws Exception {
    MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    Set<ObjectName> names = server.queryNames(new ObjectName("Hadoop:*"), null);
    long best = Long.MIN_VALUE;
    for (ObjectName name : names) {
      if (String.valueOf(name.getKeyProperty("name")).startsWith("CircumflexScheduler")) {
        best = Math.max(best, ((Number) server.getAttribute(name, attribute)).longValue());
      }
    }
    assertFalse("the metrics2 source is published in JMX: " + names, best == Long.MIN_VALUE);
    return best;
  }

  /**
   * Waits (up to 30 s) until {@link #jmx} of {@code attribute} reaches {@code atLeast} and returns it:
   * metrics2 serves JMX from a cache refreshed about every 10 s, so a fresh value can lag the scheduler.
   */
  public static long jmxAtLeast(String attribute, long atLeast) throws Exception {
    long until = System.currentTimeMillis() + 30_000;
    long value = jmx(attribute);
    while (value < atLeast && System.currentTimeMillis() < until) {
      Thread.sleep(500);
      value = jmx(attribute);
    }
    assertTrue(attribute + " = " + value + " in JMX, expected at least " + atLeast, value >= atLeast);
    return value;
  }

  /**
   * When the system property {@code circumflex.ui.chromium} names a chromium binary: loads {@code url}
   * headless, asserts that the DOM chromium built has the summary and jobs tables and matches {@code
   * jobRowRegex}, and writes a screenshot to {@code circumflex.ui.screenshot}. Returns whether it ran.
   */
  public static boolean headlessBrowser(String url, String jobRowRegex) throws Exception {
    String chromium = System.getProperty("circumflex.ui.chromium", "");
    if (chromium.isEmpty()) {
      return false;
    }
    String dom = runChromium(chromium, "--dump-dom", url);
    assertTrue(dom, dom.contains("id=\"circumflex-summary\""));
    assertTrue(dom, dom.contains("id=\"circumflex-jobs\""));
    assertTrue("the job is a row in the DOM: " + dom, dom.matches("(?s).*" + jobRowRegex + ".*"));
    File file = new File(System.getProperty("circumflex.ui.screenshot", "build/scheduler-page.png")).getAbsoluteFile();
    file.getParentFile().mkdirs();
    runChromium(chromium, "--screenshot=" + file.getPath(), "--window-size=1400,900", url);
    assertTrue("screenshot written: " + file, file.length() > 10_000);
    System.out.println("chromium: DOM " + dom.length() + " chars, screenshot " + file + " (" + file.length() + " bytes)");
    return true;
  }

  private static String runChromium(String chromium, String... args) throws Exception {
    String[] command = new String[args.length + 5];
    command[0] = chromium;
    command[1] = "--headless";
    command[2] = "--no-sandbox";
    command[3] = "--disable-gpu";
    command[4] = "--virtual-time-budget=5000";
    System.arraycopy(args, 0, command, 5, args.length);
    Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    String out = read(p.getInputStream());
    assertTrue("chromium finished within 120 s", p.waitFor(120, TimeUnit.SECONDS));
    assertEquals("chromium exit status", 0, p.exitValue());
    return out;
  }
}
