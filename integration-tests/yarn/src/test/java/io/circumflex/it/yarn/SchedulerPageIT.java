package io.circumflex.it.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import io.circumflex.it.yarn.MiniCircumflexCluster.JobSpec;
import io.circumflex.yarn.WebProbe;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
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

      String page = WebProbe.get(web + "/cluster/scheduler", "text/html");
      assertTrue(page, page.matches("(?s).*<title>\\s*Circumflex Scheduler\\s*</title>.*"));
      assertTrue(page, page.contains("id=\"circumflex-jobs\""));
      assertTrue(page, page.contains("<tr><th>Policy</th><td>fair</td></tr>"));
      assertTrue("the running job is listed: " + page, page.contains(JOB_NAME));
      assertTrue("the flow is drawn: " + page, page.contains("extract &rarr; load"));

      String rest = WebProbe.get(web + "/ws/v1/cluster/scheduler", "application/json");
      assertTrue(rest, rest.startsWith("{\"scheduler\":{\"schedulerInfo\":{\"type\":\"circumflexScheduler\""));
      assertTrue(rest, rest.contains("\"policy\":\"fair\""));
      assertTrue(rest, rest.contains("\"name\":\"" + JOB_NAME + "\""));

      WebProbe.jmxAtLeast("NodeUpdates", 1);
      WebProbe.jmxAtLeast("NodeUpdateNanos", 1);
      assertEquals(1, WebProbe.jmxAtLeast("JobsAdmitted", 1));
      long plans = WebProbe.jmxAtLeast("Plans", 1);
      WebProbe.jmxAtLeast("Plans", plans + 1);

      WebProbe.headlessBrowser(web + "/cluster/scheduler", "<tr class=\"job active\">.*" + JOB_NAME);

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
      assertTrue(WebProbe.get(web + "/ws/v1/cluster/scheduler", "application/json").contains("\"policy\":\"fair\""));
      refreshed.set("circumflex.policy", "fifo");
      cluster.scheduler().reinitialize(refreshed, cluster.resourceManager().getRMContext());
      assertTrue(WebProbe.get(web + "/ws/v1/cluster/scheduler", "application/json").contains("\"policy\":\"fifo\""));
      assertEquals(1, WebProbe.jmxAtLeast("Refreshes", 1));
      assertEquals(1, WebProbe.jmxAtLeast("RefreshesRejected", 1));

      assertTrue("the job survives the refresh", job.waitForCompletion(false));
      assertFalse(cluster.scheduler().getFallbackCause(), cluster.scheduler().isFallbackActive());
    }
  }
}
