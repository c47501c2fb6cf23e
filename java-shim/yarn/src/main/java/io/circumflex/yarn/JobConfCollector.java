package io.circumflex.yarn;

import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.LocalResource;

/**
 * Collects a YARN application's per-job settings as a string map for the native engine, which
 * maps and validates them ({@code config::job_spec_from_conf}). This class only collects.
 *
 * <p>Routes, in increasing precedence:
 * <ol>
 *   <li>what the ResourceManager knows: the application id ({@code mapreduce.job.id}), name and
 *       user;</li>
 *   <li>application tags of the form {@code circumflex.job.<key>=<value>} (for non-MapReduce
 *       applications; YARN lower-cases tags, which is harmless for these keys);</li>
 *   <li>the MapReduce job configuration: {@code job.xml}, which the MapReduce client lists among
 *       the AM container's local resources. The RM reads it from the staging directory once, at
 *       submission. Only {@code mapreduce.*}, {@code mapred.*} and {@code circumflex.job.*} keys are
 *       forwarded.</li>
 * </ol>
 * When {@code job.xml} cannot be read the job still runs with what the other routes gave; the
 * caller logs the cause.
 */
final class JobConfCollector {
  /** Local resource name under which the MapReduce client ships the job configuration. */
  static final String JOB_XML = "job.xml";

  private JobConfCollector() {}

  /** Keys from the RM's own view of the application and from its tags. */
  static Map<String, String> fromApplication(String appId, String name, String user, Iterable<String> tags) {
    Map<String, String> conf = new TreeMap<>();
    conf.put("mapreduce.job.id", appId);
    if (name != null) {
      conf.put("mapreduce.job.name", name);
    }
    if (user != null) {
      conf.put("mapreduce.job.user.name", user);
    }
    if (tags != null) {
      for (String tag : tags) {
        int eq = tag.indexOf('=');
        if (eq > 0 && tag.startsWith("circumflex.job.")) {
          conf.put(tag.substring(0, eq).trim(), tag.substring(eq + 1).trim());
        }
      }
    }
    return conf;
  }

  /**
   * Adds the forwarded keys of the application's {@code job.xml} to {@code conf}. Returns false
   * when the application ships no {@code job.xml} (not a MapReduce job).
   */
  static boolean addJobXml(ApplicationSubmissionContext context, Configuration fsConf, Map<String, String> conf)
      throws IOException {
    ContainerLaunchContext am = context == null ? null : context.getAMContainerSpec();
    LocalResource jobXml = am == null || am.getLocalResources() == null ? null : am.getLocalResources().get(JOB_XML);
    if (jobXml == null || jobXml.getResource() == null) {
      return false;
    }
    Path path;
    try {
      path = jobXml.getResource().toPath();
    } catch (java.net.URISyntaxException e) {
      throw new IOException("bad job.xml URL " + jobXml.getResource() + ": " + e.getMessage(), e);
    }
    Configuration job = new Configuration(false);
    FileSystem fs = path.getFileSystem(fsConf);
    try (InputStream in = fs.open(path)) {
      job.addResource(in, path.toString());
      // Force parsing while the stream is open.
      job.size();
    }
    for (Map.Entry<String, String> e : job) {
      String key = e.getKey();
      if (key.startsWith("mapreduce.") || key.startsWith("mapred.") || key.startsWith("circumflex.job.")) {
        conf.put(key, e.getValue());
      }
    }
    return true;
  }
}
