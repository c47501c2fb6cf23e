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
import java.net.ServerSocket;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.api.protocolrecords.GetNewApplicationRequest;
import org.apache.hadoop.yarn.api.protocolrecords.SubmitApplicationRequest;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.junit.Test;

/**
 * The scheduler page, the REST answer and the metrics2 source of a started ResourceManager (no
 * NodeManagers: the submitted application waits for its AM, which is enough to be a job on the page).
 * With the system property {@code circumflex.ui.chromium} the page is also loaded in headless chromium;
 * the DOM chromium built is asserted on and a screenshot goes to {@code circumflex.ui.screenshot}.
 */
public class SchedulerWebTest {
  private static final String APP_NAME = "page-demo <etl>";

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private static String get(String url, String accept) throws IOException {
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

  private static long jmx(String attribute) throws Exception {
    MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    Set<ObjectName> names = server.queryNames(new ObjectName("Hadoop:*,name=CircumflexScheduler"), null);
    assertFalse("the metrics2 source is published in JMX", names.isEmpty());
    return ((Number) server.getAttribute(names.iterator().next(), attribute)).longValue();
  }

  @Test
  public void pageRestAndMetricsOfAStartedResourceManager() throws Exception {
    DefaultMetricsSystem.setMiniClusterMode(true);
    YarnConfiguration conf = new YarnConfiguration();
    conf.setClass(YarnConfiguration.RM_SCHEDULER, CircumflexScheduler.class, ResourceScheduler.class);
    conf.set("circumflex.policy", "fair");
    int webPort = freePort();
    conf.set(YarnConfiguration.RM_WEBAPP_ADDRESS, "localhost:" + webPort);
    for (String key : new String[] {YarnConfiguration.RM_ADDRESS, YarnConfiguration.RM_SCHEDULER_ADDRESS,
        YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS, YarnConfiguration.RM_ADMIN_ADDRESS}) {
      conf.set(key, "localhost:0");
    }
    ResourceManager rm = new ResourceManager();
    try {
      rm.init(conf);
      rm.start();
      String web = "http://localhost:" + webPort;
      ApplicationId app = rm.getClientRMService()
          .getNewApplication(GetNewApplicationRequest.newInstance()).getApplicationId();
      ApplicationSubmissionContext context = ApplicationSubmissionContext.newInstance(app, APP_NAME, "default",
          null, ContainerLaunchContext.newInstance(Collections.emptyMap(), Collections.emptyMap(),
              Collections.singletonList("sleep 1"), null, null, null), false, false, 1, Resource.newInstance(512, 1),
          "MAPREDUCE");
      rm.getClientRMService().submitApplication(SubmitApplicationRequest.newInstance(context));
      CircumflexScheduler scheduler = (CircumflexScheduler) rm.getResourceScheduler();
      long until = System.currentTimeMillis() + 30_000;
      while (!scheduler.statusJson().contains(app.toString())) {
        assertTrue("the application reaches the engine: " + scheduler.statusJson(), System.currentTimeMillis() < until);
        Thread.sleep(100);
      }

      String page = get(web + "/cluster/scheduler", "text/html");
      assertTrue(page, page.matches("(?s).*<title>\\s*Circumflex Scheduler\\s*</title>.*"));
      assertTrue(page, page.contains("<tr><th>Policy</th><td>fair</td></tr>"));
      assertTrue("the job is a row, its name escaped: " + page, page.contains("page-demo &lt;etl&gt;"));
      assertTrue(page, page.contains(app.toString()));

      String rest = get(web + "/ws/v1/cluster/scheduler", "application/json");
      assertTrue(rest, rest.startsWith("{\"scheduler\":{\"schedulerInfo\":{\"type\":\"circumflexScheduler\""));
      assertTrue(rest, rest.contains("\"policy\":\"fair\"") && rest.contains(app.toString()));

      assertEquals(1, jmx("JobsAdmitted"));
      long plans = jmx("Plans");
      assertTrue(plans >= 1);

      String chromium = System.getProperty("circumflex.ui.chromium", "");
      if (!chromium.isEmpty()) {
        headlessBrowser(chromium, web + "/cluster/scheduler", app.toString());
      }
    } finally {
      rm.stop();
    }
  }

  private static void headlessBrowser(String chromium, String url, String appId) throws Exception {
    String dom = runChromium(chromium, "--dump-dom", url);
    assertTrue(dom, dom.contains("id=\"circumflex-summary\""));
    assertTrue(dom, dom.contains("id=\"circumflex-jobs\""));
    assertTrue("the job is an active row in the DOM: " + dom,
        dom.matches("(?s).*<tr class=\"job active\"><td>0</td><td>" + appId + "</td>.*"));
    File file = new File(System.getProperty("circumflex.ui.screenshot", "build/scheduler-page.png")).getAbsoluteFile();
    file.getParentFile().mkdirs();
    runChromium(chromium, "--screenshot=" + file.getPath(), "--window-size=1400,900", url);
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
