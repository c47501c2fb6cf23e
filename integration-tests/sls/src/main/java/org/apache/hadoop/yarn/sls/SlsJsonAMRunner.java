package org.apache.hadoop.yarn.sls;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.sls.appmaster.AMSimulator;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.sls.scheduler.TaskRunner;

/**
 * Reads SLS-format job traces for hadoop-sls 3.4.2, whose own reader fails on every job: it binds each
 * job object to {@code Map<String, String>}, and Jackson refuses the {@code job.tasks} array ("Cannot
 * deserialize value of type String from Array value"), so every application is dropped and the run
 * simulates nothing. (The Rumen reader of the same release is no way out: it passes a baseline of 0 to
 * every job, so every job's submit time becomes 0.)
 *
 * <p>This runner parses the same format into plain maps (scalars as strings, {@code job.tasks} as a list
 * of string maps: the shape SLS's {@link AMDefinitionFactory#createFromSlsTrace} reads) and hands each
 * job to AMRunner's own {@code startAMs}. Everything downstream (the AM and NM simulators, the RM, the
 * metrics) is SLS's, unchanged. It lives in SLS's package to set the package-private application count.
 *
 * <p>It also closes a race in SLS 3.4.2 that aborts runs ({@link #getAMSimulator}).
 */
public class SlsJsonAMRunner extends AMRunner {
  private final SLSRunner sls;
  private String[] traces = new String[0];

  private SlsJsonAMRunner(TaskRunner runner, SLSRunner sls) {
    super(runner, sls);
    this.sls = sls;
  }

  /**
   * Replaces the AMRunner of a freshly constructed {@link SLSRunner} (before {@code run}) with this
   * reader. {@code conf} is the configuration the runner was constructed with.
   */
  public static void install(SLSRunner sls, Configuration conf) throws ReflectiveOperationException {
    Field taskRunner = SLSRunner.class.getDeclaredField("runner");
    taskRunner.setAccessible(true);
    SlsJsonAMRunner reader = new SlsJsonAMRunner((TaskRunner) taskRunner.get(null), sls);
    reader.init(conf);
    Field amRunner = SLSRunner.class.getDeclaredField("amRunner");
    amRunner.setAccessible(true);
    amRunner.set(sls, reader);
  }

  @Override
  public void setInputTraces(String[] inputTraces) {
    super.setInputTraces(inputTraces);
    this.traces = inputTraces.clone();
  }

  @Override
  public void startAM() throws YarnException, IOException {
    Method startAMs;
    try {
      startAMs = AMRunner.class.getDeclaredMethod("startAMs", AMDefinition.class);
      startAMs.setAccessible(true);
    } catch (NoSuchMethodException e) {
      throw new YarnException("this hadoop-sls has no AMRunner.startAMs(AMDefinition); the harness needs 3.4.x", e);
    }
    ObjectMapper mapper = new ObjectMapper();
    for (String trace : traces) {
      try (Reader in = new InputStreamReader(Files.newInputStream(Paths.get(trace)), StandardCharsets.UTF_8)) {
        Iterator<Map<String, Object>> jobs = mapper.readValues(new JsonFactory().createParser(in),
            mapper.getTypeFactory().constructMapType(Map.class, String.class, Object.class));
        int index = 0;
        while (jobs.hasNext()) {
          Map<String, Object> json = jobs.next();
          index++;
          if (!json.containsKey("job.tasks")) {
            continue; // the optional {"num.nodes": ..., "num.racks": ...} header
          }
          try {
            startAMs.invoke(this, AMDefinitionFactory.createFromSlsTrace(asSlsJob(json), sls));
          } catch (IllegalAccessException | InvocationTargetException | RuntimeException e) {
            Throwable cause = e instanceof InvocationTargetException ? e.getCause() : e;
            throw new YarnException(trace + ": job " + index + " (" + json.get("job.id") + ") cannot start: " + cause,
                cause);
          }
        }
      }
    }
    remainingApps = getAmMap().size();
  }

  /** The job as SLS's definition builders expect it: every scalar a string, tasks a list of string maps. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  static Map<String, String> asSlsJob(Map<String, Object> json) throws YarnException {
    Map job = new LinkedHashMap<String, Object>();
    for (Map.Entry<String, Object> e : json.entrySet()) {
      if ("job.tasks".equals(e.getKey())) {
        if (!(e.getValue() instanceof List)) {
          throw new YarnException("job.tasks must be an array, got " + e.getValue());
        }
        List<Map<String, String>> tasks = new ArrayList<>();
        for (Object task : (List<Object>) e.getValue()) {
          if (!(task instanceof Map)) {
            throw new YarnException("each of job.tasks must be an object, got " + task);
          }
          Map<String, String> t = new LinkedHashMap<>();
          for (Map.Entry<String, Object> f : ((Map<String, Object>) task).entrySet()) {
            t.put(f.getKey(), String.valueOf(f.getValue()));
          }
          tasks.add(t);
        }
        job.put(e.getKey(), tasks);
      } else {
        job.put(e.getKey(), e.getValue() == null ? null : String.valueOf(e.getValue()));
      }
    }
    return (Map<String, String>) job;
  }

  /**
   * The simulator of an application, also before SLS has indexed it. An {@code AMSimulator} submits its
   * application and only then files itself under the application id; on a busy machine the RM can
   * allocate and launch the AM container in between, and SLS's {@code MockAMLauncher} then finds no
   * simulator, throws "Didn't find any AMSimulator for applicationId=..." on the RM's dispatcher thread
   * and the RM stops (seen under CapacityScheduler at 1,000 NMs). The simulator already knows its
   * application id before submitting (SLS sets it from {@code getNewApplication}), so it is found by a
   * scan of the submitted simulators; the dispatcher's event queue orders that write before this read.
   */
  @Override
  public AMSimulator getAMSimulator(ApplicationId appId) {
    AMSimulator indexed = super.getAMSimulator(appId);
    if (indexed != null || appId == null) {
      return indexed;
    }
    for (AMSimulator candidate : getAmMap().values()) {
      if (appId.equals(candidate.getApplicationId())) {
        return candidate;
      }
    }
    return null;
  }
}
