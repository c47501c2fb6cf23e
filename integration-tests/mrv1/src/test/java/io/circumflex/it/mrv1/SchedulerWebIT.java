package io.circumflex.it.mrv1;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import org.apache.commons.configuration.SubsetConfiguration;
import org.apache.hadoop.mapred.JobInProgress;
import org.apache.hadoop.mapred.RunningJob;
import org.apache.hadoop.mapred.tools.MRAdmin;
import org.apache.hadoop.metrics2.Metric;
import org.apache.hadoop.metrics2.MetricsRecord;
import org.apache.hadoop.metrics2.MetricsSink;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.junit.Test;

/**
 * The MRv1 scheduler's observability and refresh on a real Hadoop 1.2.1 JobTracker (MiniMRCluster,
 * issue 11), while a SleepJob runs:
 * <ul>
 *   <li>the {@code /scheduler} servlet the shim adds to the JobTracker's info server (as the contrib
 *       FairScheduler does), fetched over HTTP: policy, epoch, and the job's row with target and
 *       actual slots; {@code ?format=json} answers the status document;
 *   <li>the metrics2 source: with a {@code hadoop-metrics2.properties} naming a file sink (as an
 *       operator configures one), the {@code scheduler} context's {@code CircumflexScheduler} record
 *       reaches the file; a sink registered by the test receives the same record with its values;
 *       and the JobTracker's own {@code /jmx} servlet lists them under {@code service=JobTracker};
 *   <li>{@code hadoop mradmin -refreshQueues} (the real {@link MRAdmin} tool over RPC, which calls
 *       {@code JobTracker.refreshQueues} and so the scheduler's {@code refresh()}): after the operator
 *       writes an unknown policy into {@code mapred-site.xml} the command fails, the running policy
 *       stays and {@code RefreshesRejected} counts it; a valid file switches the policy and epoch.
 * </ul>
 *
 * <p>How the test plays the operator editing {@code mapred-site.xml}: {@code refresh()} reads a new
 * {@code JobConf}, whose site file Hadoop looks up through the thread context class loader. The test
 * starts the cluster with a context class loader that also searches an (initially empty) directory,
 * so every JobTracker thread, the RPC handlers included, inherits it; writing {@code mapred-site.xml}
 * there (atomically: other threads load configurations meanwhile) is what editing the file is on a
 * real cluster.
 */
public class SchedulerWebIT {
  private static final Pattern JOB_ROW = Pattern.compile(
      "<td>(job_[0-9_]+)</td><td>([^<]*)</td><td>(\\w+)</td><td>(\\d+) / (\\d+)</td><td>(\\d+) / (\\d+)</td>");

  @Test
  public void schedulerPageMetricsAndRefreshOnARunningJobTracker() throws Exception {
    File confDir = new File(System.getProperty("circumflex.it.workdir", "build/it-work"), "operator-conf");
    confDir.mkdirs();
    File site = new File(confDir, "mapred-site.xml");
    Files.deleteIfExists(site.toPath());
    // Hadoop 1.2.1 starts the JobTracker's metrics system only when it finds this file (the release
    // tarball ships one in conf/); an operator's file sink writes the scheduler's record to disk.
    File metricsOut = new File(confDir, "jobtracker-metrics.out");
    Files.deleteIfExists(metricsOut.toPath());
    String metricsConf = "*.period=1\n"
        + "jobtracker.sink.file.class=org.apache.hadoop.metrics2.sink.FileSink\n"
        + "jobtracker.sink.file.filename=" + metricsOut.getAbsolutePath() + "\n";
    Files.write(new File(confDir, "hadoop-metrics2.properties").toPath(), metricsConf.getBytes(StandardCharsets.UTF_8));
    ClassLoader original = Thread.currentThread().getContextClassLoader();
    Thread.currentThread().setContextClassLoader(new URLClassLoader(new URL[] {confDir.toURI().toURL()}, original));

    Map<String, String> conf = new HashMap<String, String>();
    conf.put("circumflex.policy", "fair");
    conf.put("circumflex.epoch.ms", "1000");
    Mrv1Cluster cluster = new Mrv1Cluster(2, 2, 1, conf);
    CollectingSink sink = new CollectingSink();
    try {
      DefaultMetricsSystem.INSTANCE.register("circumflex-it-sink", "collects the records of this test", sink);
      int port = cluster.jobTracker().getInfoPort();
      assertTrue("the JobTracker's info server listens: " + port, port > 0);
      String base = "http://127.0.0.1:" + port;
      System.out.println("web: JobTracker info server at " + base);

      RunningJob job = cluster.submitSleep("web-page", 8, 1, 3000, 500, null);
      String id = job.getID().toString();
      cluster.awaitRunning(job);
      JobInProgress jip = cluster.jobTracker().getJob(job.getID());
      long deadline = System.currentTimeMillis() + 60000;
      while (jip.runningMaps() < 2 && !job.isComplete() && System.currentTimeMillis() < deadline) {
        Thread.sleep(100);
      }
      assertTrue("maps run: " + jip.runningMaps(), jip.runningMaps() >= 2);

      // The page, while the job's maps run.
      String page = awaitPage(base + "/scheduler", id);
      System.out.println("web: /scheduler while running:\n" + summaryAndJobs(page));
      assertTrue(page, page.contains("<title>Circumflex Scheduler</title>"));
      assertTrue("policy shown: " + page, page.contains("<tr><th>Policy</th><td>fair</td></tr>"));
      assertTrue("epoch shown: " + page, page.contains("<tr><th>Epoch</th><td>1000 ms</td></tr>"));
      int[] row = jobRow(page, id);
      assertEquals("the job is active on the page", "active", statusOf(page, id));
      assertTrue("target map slots within the cluster's 4: " + row[0], row[0] >= 1 && row[0] <= 4);
      assertTrue("actual (running) map slots shown: " + row[2], row[2] >= 1 && row[2] <= 4);
      String json = httpGet(base + "/scheduler?format=json");
      assertTrue("the JSON status names the policy: " + json, json.contains("\"policy\":\"fair\""));
      assertTrue("the JSON status lists the job: " + json, json.contains("\"external_id\":\"" + id + "\""));

      // mradmin -refreshQueues with a bad policy: refused, old policy kept, counted.
      writeSite(site, "lottery", 1500);
      int bad = refreshQueues(cluster);
      assertNotEquals("mradmin -refreshQueues fails on an unknown policy", 0, bad);
      page = httpGet(base + "/scheduler");
      assertTrue("the running policy is kept: " + page, page.contains("<tr><th>Policy</th><td>fair</td></tr>"));
      assertTrue("and its epoch: " + page, page.contains("<tr><th>Epoch</th><td>1000 ms</td></tr>"));
      assertTrue("the engine stays in charge", cluster.scheduler().isEngineActive());

      // A valid file: the policy and the epoch change in place, the job stays on the page.
      writeSite(site, "fifo", 1500);
      assertEquals("mradmin -refreshQueues applies a valid file", 0, refreshQueues(cluster));
      page = httpGet(base + "/scheduler");
      System.out.println("web: /scheduler after the refresh:\n" + summaryAndJobs(page));
      assertTrue("the new policy is shown: " + page, page.contains("<tr><th>Policy</th><td>fifo</td></tr>"));
      assertTrue("the new epoch is shown: " + page, page.contains("<tr><th>Epoch</th><td>1500 ms</td></tr>"));
      assertNotNull("the job is still listed after the refresh", jobRow(page, id));
      Files.deleteIfExists(site.toPath());

      // Metrics: the scheduler's record through the JobTracker's metrics system, and its JMX view.
      // The newest record published after both refreshes (earlier ones may still be in flight).
      Map<String, Number> record = sink.await("scheduler", "CircumflexScheduler", 30000,
          values -> values.containsKey("Refreshes") && values.get("Refreshes").longValue() >= 1);
      System.out.println("metrics: scheduler.CircumflexScheduler " + record);
      assertTrue("jobs admitted: " + record, record.get("JobsAdmitted").longValue() >= 1);
      assertTrue("plans computed: " + record, record.get("Plans").longValue() >= 1);
      assertTrue("heartbeats answered: " + record, record.get("NodeUpdates").longValue() >= 1);
      assertTrue("node-update time measured: " + record, record.get("NodeUpdateNanos").longValue() > 0);
      assertEquals("one refresh applied: " + record, 1L, record.get("Refreshes").longValue());
      assertEquals("one refresh refused: " + record, 1L, record.get("RefreshesRejected").longValue());
      String fileLine = awaitLine(metricsOut, " scheduler.CircumflexScheduler: ", 30000);
      System.out.println("metrics: the operator's file sink wrote " + fileLine);
      assertTrue("the file sink got the scheduler's values: " + fileLine,
          fileLine.contains("JobsAdmitted=1") && fileLine.contains("NodeUpdates="));
      String jmx = httpGet(base + "/jmx?qry=*:name=CircumflexScheduler,*");
      System.out.println("metrics: /jmx " + jmx.replaceAll("\\s+", " "));
      assertTrue("JMX bean under the JobTracker's service: " + jmx, jmx.contains("service=JobTracker"));
      assertTrue("JMX attributes: " + jmx, jmx.contains("\"JobsAdmitted\"")
          && Pattern.compile("\"RefreshesRejected\"\\s*:\\s*1\\b").matcher(jmx).find());

      Mrv1Cluster.await(job);
      assertTrue("the job succeeds across both refreshes", job.isSuccessful());
      long ended = System.currentTimeMillis() + 30000;
      String finalPage = httpGet(base + "/scheduler");
      while (!"finished".equals(statusOf(finalPage, id)) && System.currentTimeMillis() < ended) {
        Thread.sleep(200);
        finalPage = httpGet(base + "/scheduler");
      }
      assertEquals("the page shows the job finished", "finished", statusOf(finalPage, id));
      assertTrue("jobs finished counted: " + finalPage,
          finalPage.contains("<tr><th>Jobs finished</th><td>1</td></tr>"));
    } finally {
      Thread.currentThread().setContextClassLoader(original);
      Files.deleteIfExists(site.toPath());
      cluster.close();
      Files.deleteIfExists(metricsOut.toPath());
    }
  }

  /** {@code hadoop mradmin -refreshQueues} against the cluster's JobTracker; returns its exit code. */
  private static int refreshQueues(Mrv1Cluster cluster) throws Exception {
    PrintStream err = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(captured, true, "UTF-8"));
    int code;
    try {
      code = new MRAdmin(cluster.jobConf()).run(new String[] {"-refreshQueues"});
    } finally {
      System.setErr(err);
    }
    String message = new String(captured.toByteArray(), StandardCharsets.UTF_8);
    System.out.println("refresh: mradmin -refreshQueues exit " + code + (message.isEmpty() ? "" : ": "
        + message.split("\n")[0]));
    if (code != 0) {
      assertTrue("the refusal names the key and value: " + message,
          message.contains("circumflex.policy") && message.contains("lottery"));
    }
    return code;
  }

  /** The last line of {@code file} that contains {@code marker}, waiting for one up to {@code timeoutMs}. */
  private static String awaitLine(File file, String marker, long timeoutMs) throws IOException, InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (true) {
      if (file.isFile()) {
        List<String> lines = Files.readAllLines(file.toPath(), StandardCharsets.UTF_8);
        for (int i = lines.size() - 1; i >= 0; i--) {
          if (lines.get(i).contains(marker)) {
            return lines.get(i);
          }
        }
      }
      if (System.currentTimeMillis() > deadline) {
        throw new AssertionError("no line with '" + marker + "' in " + file + " after " + timeoutMs + " ms");
      }
      DefaultMetricsSystem.INSTANCE.publishMetricsNow();
      Thread.sleep(250);
    }
  }

  /** The operator's {@code mapred-site.xml}, replaced atomically. */
  private static void writeSite(File site, String policy, long epochMs) throws IOException {
    String xml = "<?xml version=\"1.0\"?>\n<configuration>\n"
        + "<property><name>circumflex.policy</name><value>" + policy + "</value></property>\n"
        + "<property><name>circumflex.epoch.ms</name><value>" + epochMs + "</value></property>\n"
        + "</configuration>\n";
    File tmp = new File(site.getParentFile(), site.getName() + ".tmp");
    Files.write(tmp.toPath(), xml.getBytes(StandardCharsets.UTF_8));
    Files.move(tmp.toPath(), site.toPath(), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  /** Fetches the page until it lists {@code jobId} (the engine learns of a job at submission). */
  private static String awaitPage(String url, String jobId) throws IOException, InterruptedException {
    long deadline = System.currentTimeMillis() + 20000;
    String page = httpGet(url);
    while (jobRow(page, jobId) == null && System.currentTimeMillis() < deadline) {
      Thread.sleep(200);
      page = httpGet(url);
    }
    return page;
  }

  /** Target map, target reduce, actual map, actual reduce slots of the job's row, or null. */
  private static int[] jobRow(String page, String jobId) {
    Matcher m = JOB_ROW.matcher(page);
    while (m.find()) {
      if (m.group(1).equals(jobId)) {
        return new int[] {Integer.parseInt(m.group(4)), Integer.parseInt(m.group(5)), Integer.parseInt(m.group(6)),
            Integer.parseInt(m.group(7))};
      }
    }
    return null;
  }

  private static String statusOf(String page, String jobId) {
    Matcher m = JOB_ROW.matcher(page);
    while (m.find()) {
      if (m.group(1).equals(jobId)) {
        return m.group(3);
      }
    }
    return null;
  }

  private static String summaryAndJobs(String page) {
    int from = page.indexOf("<table id=\"circumflex-summary\"");
    int to = page.indexOf("<h3>Admission decisions</h3>");
    return from >= 0 && to > from ? page.substring(from, to) : page;
  }

  private static String httpGet(String url) throws IOException {
    HttpURLConnection c = (HttpURLConnection) new URL(url).openConnection();
    c.setConnectTimeout(10000);
    c.setReadTimeout(30000);
    int code = c.getResponseCode();
    InputStream in = code >= 400 ? c.getErrorStream() : c.getInputStream();
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    if (in != null) {
      byte[] buf = new byte[8192];
      for (int n; (n = in.read(buf)) > 0;) {
        body.write(buf, 0, n);
      }
      in.close();
    }
    String text = new String(body.toByteArray(), StandardCharsets.UTF_8);
    assertEquals("GET " + url + ": " + text, 200, code);
    return text;
  }

  /**
   * A metrics2 sink that keeps what it is given: how an operator's FileSink or Ganglia sink would see
   * the scheduler's record, read back here instead of from a file.
   */
  public static final class CollectingSink implements MetricsSink {
    private final List<MetricsRecord> records = new ArrayList<MetricsRecord>();

    @Override
    public void init(SubsetConfiguration conf) {}

    @Override
    public synchronized void putMetrics(MetricsRecord record) {
      records.add(record);
    }

    @Override
    public void flush() {}

    /**
     * Publishes now and waits until the newest record of {@code context}.{@code name} satisfies
     * {@code until}; returns its values by name.
     */
    Map<String, Number> await(String context, String name, long timeoutMs, Predicate<Map<String, Number>> until)
        throws InterruptedException {
      Map<String, Number> newest = null;
      long deadline = System.currentTimeMillis() + timeoutMs;
      while (System.currentTimeMillis() < deadline) {
        DefaultMetricsSystem.INSTANCE.publishMetricsNow();
        synchronized (this) {
          for (int i = records.size() - 1; i >= 0; i--) {
            MetricsRecord r = records.get(i);
            if (context.equals(r.context()) && name.equals(r.name())) {
              Map<String, Number> values = new HashMap<String, Number>();
              for (Metric m : r.metrics()) {
                values.put(m.name(), m.value());
              }
              newest = values;
              if (until.test(values)) {
                return values;
              }
              break;
            }
          }
        }
        Thread.sleep(250);
      }
      throw new AssertionError("no wanted " + context + "." + name + " record reached the sink in " + timeoutMs
          + " ms; the newest: " + newest);
    }
  }
}
