package io.circumflex.it.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import io.circumflex.it.yarn.MiniCircumflexCluster.JobSpec;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.Job;
import org.junit.Test;

/**
 * The scheduler seen from outside a running ResourceManager: its web page ({@code /cluster/scheduler}),
 * its REST answer ({@code /ws/v1/cluster/scheduler}, 404 for custom schedulers without Circumflex's
 * resource), its metrics2 source in JMX, and a refresh, all while a job runs. With the system property
 * {@code circumflex.ui.chromium} (set by {@code make ui-test}) it also loads the page in headless
 * chromium, asserts on the DOM chromium built and writes a screenshot to {@code circumflex.ui.screenshot}.
 */
public class SchedulerPageIT {
  private static final String JOB_NAME = "page-demo";

  private static Map<String, String> keys() {
    Map<String, String> keys = new HashMap<>();
    keys.put("circumflex.policy", "fair");
    keys.put("circumflex.epoch.ms", "1000");
    keys.put("circumflex.yarn.native.log", "info");
    return keys;
  }

  private static Map<String, String> flowKeys() {
    Map<String, String> keys = new HashMap<>();
    keys.put("mapreduce.workflow.id", "nightly-etl");
    keys.put("mapreduce.workflow.node.name", "extract");
    keys.put("mapreduce.workflow.adjacency.extract", "load");
    return keys;
  }

  private static String get(String url, String accept) throws IOException {
    HttpURLConnection c = (HttpURLConnection) new URL(url).openConnection();
    c.setRequestProperty("Accept", accept);
    c.setConnectTimeout(10_000);
    c.setReadTimeout(30_000);
    int code = c.getResponseCode();
    InputStream in = code < 400 ? c.getInputStream() : c.getErrorStream();
    String body = in == null ? "" : read(in);
    if (code != 200) {
      throw new IOException("GET " + url + ": HTTP " + code + ": " + body);
    }
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

  private static long jmx(String attribute) throws Exception {
    MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    Set<ObjectName> names = server.queryNames(new ObjectName("Hadoop:*,name=CircumflexScheduler"), null);
    assertFalse("the metrics2 source is published in JMX", names.isEmpty());
    return ((Number) server.getAttribute(names.iterator().next(), attribute)).longValue();
  }

  @Test
  public void pageRestMetricsAndRefreshWhileAJobRuns() throws Exception {
    try (MiniCircumflexCluster cluster = MiniCircumflexCluster.start("it-page", keys(), 1)) {
      String web = cluster.webAddress();
      System.out.println("ResourceManager web app: " + web);
      Job job = cluster.sleepJob(new JobSpec(JOB_NAME, 3, 0, 8000), flowKeys());
      job.submit();
      long until = System.currentTimeMillis() + 90_000;
      while (!cluster.scheduler().statusJson().matches("(?s).*\"running\":\\[[1-9].*")) {
        assertTrue("no task started within 90 s: " + cluster.scheduler().statusJson(),
            System.currentTimeMillis() < until);
        Thread.sleep(200);
      }

      String page = get(web + "/cluster/scheduler", "text/html");
      assertTrue(page, page.matches("(?s).*<title>\\s*Circumflex Scheduler\\s*</title>.*"));
      assertTrue(page, page.contains("id=\"circumflex-jobs\""));
      assertTrue(page, page.contains("<tr><th>Policy</th><td>fair</td></tr>"));
      assertTrue("the running job is listed: " + page, page.contains(JOB_NAME));
      assertTrue("the flow is drawn: " + page, page.contains("extract &rarr; load"));

      String rest = get(web + "/ws/v1/cluster/scheduler", "application/json");
      assertTrue(rest, rest.startsWith("{\"scheduler\":{\"schedulerInfo\":{\"type\":\"circumflexScheduler\""));
      assertTrue(rest, rest.contains("\"policy\":\"fair\""));
      assertTrue(rest, rest.contains("\"name\":\"" + JOB_NAME + "\""));

      assertTrue("node updates move", jmx("NodeUpdates") > 0);
      assertTrue("node-update time moves", jmx("NodeUpdateNanos") > 0);
      assertEquals(1, jmx("JobsAdmitted"));
      long plans = jmx("Plans");
      Thread.sleep(1500);
      assertTrue("plans move with epochs", jmx("Plans") > plans);

      String chromium = System.getProperty("circumflex.ui.chromium", "");
      if (!chromium.isEmpty()) {
        headlessBrowser(chromium, web + "/cluster/scheduler");
      }

      // The refresh rmadmin -refreshQueues triggers (AdminService calls reinitialize): a bad policy is
      // refused and the running one kept, then a good one is applied while the job runs.
      Configuration refreshed = new Configuration(cluster.resourceManager().getConfig());
      refreshed.set("circumflex.policy", "lottery");
      try {
        cluster.scheduler().reinitialize(refreshed, cluster.resourceManager().getRMContext());
        fail("a refresh to an unknown policy must be refused");
      } catch (IOException expected) {
        assertTrue(expected.getMessage(), expected.getMessage().contains("lottery"));
      }
      assertTrue(get(web + "/ws/v1/cluster/scheduler", "application/json").contains("\"policy\":\"fair\""));
      refreshed.set("circumflex.policy", "fifo");
      cluster.scheduler().reinitialize(refreshed, cluster.resourceManager().getRMContext());
      assertTrue(get(web + "/ws/v1/cluster/scheduler", "application/json").contains("\"policy\":\"fifo\""));
      assertEquals(1, jmx("Refreshes"));
      assertEquals(1, jmx("RefreshesRejected"));

      assertTrue("the job survives the refresh", job.waitForCompletion(false));
      assertFalse(cluster.scheduler().getFallbackCause(), cluster.scheduler().isFallbackActive());
    }
  }

  /** Loads the page in headless chromium: the DOM it built must hold the tables; keeps a screenshot. */
  private static void headlessBrowser(String chromium, String url) throws Exception {
    String dom = runChromium(chromium, "--dump-dom", url);
    assertTrue(dom, dom.contains("id=\"circumflex-summary\""));
    assertTrue(dom, dom.contains("id=\"circumflex-jobs\""));
    assertTrue("the running job is a row: " + dom, dom.matches("(?s).*<tr class=\"job active\">.*" + JOB_NAME + ".*"));
    String shot = System.getProperty("circumflex.ui.screenshot", "build/scheduler-page.png");
    File file = new File(shot).getAbsoluteFile();
    file.getParentFile().mkdirs();
    runChromium(chromium, "--screenshot=" + file.getPath(), "--window-size=1400,1100", url);
    assertTrue("screenshot written: " + file, file.length() > 10_000);
    System.out.println("chromium: DOM " + dom.length() + " chars, screenshot " + file + " (" + file.length() + " bytes)");
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
