package io.circumflex.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.Collections;
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

      String page = WebProbe.get(web + "/cluster/scheduler", "text/html");
      assertTrue(page, page.matches("(?s).*<title>\\s*Circumflex Scheduler\\s*</title>.*"));
      assertTrue(page, page.contains("<tr><th>Policy</th><td>fair</td></tr>"));
      assertTrue("the job is a row, its name escaped: " + page, page.contains("page-demo &lt;etl&gt;"));
      assertTrue(page, page.contains(app.toString()));

      String rest = WebProbe.get(web + "/ws/v1/cluster/scheduler", "application/json");
      assertTrue(rest, rest.startsWith("{\"scheduler\":{\"schedulerInfo\":{\"type\":\"circumflexScheduler\""));
      assertTrue(rest, rest.contains("\"policy\":\"fair\"") && rest.contains(app.toString()));

      assertEquals(1, WebProbe.jmxAtLeast("JobsAdmitted", 1));
      WebProbe.jmxAtLeast("Plans", 1);

      WebProbe.headlessBrowser(web + "/cluster/scheduler", "<tr class=\"job active\"><td>0</td><td>" + app + "</td>");
    } finally {
      rm.stop();
    }
  }
}
