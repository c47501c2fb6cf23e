package io.circumflex.yarn;

import io.circumflex.CircumflexInvalidJobException;
import io.circumflex.CircumflexRejectedException;
import java.io.IOException;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.CircumflexAttempts;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoAppAttempt;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applications and their attempts, as FifoScheduler keeps them (one queue, applications in id order),
 * plus what the engine needs of them: each application's per-job settings
 * ({@link JobConfCollector}: {@code job.xml} and tags) at submission, where a malformed value or an
 * admission refusal rejects the application with the engine's message, and again when a refresh
 * replays the cluster into a new engine ({@link #jobConfs}, {@link #submitTimes}).
 *
 * <p>Called under the scheduler's lock.
 */
final class ApplicationLifecycle {
  private static final Logger LOG = LoggerFactory.getLogger(ApplicationLifecycle.class);

  private final CircumflexScheduler scheduler;
  private final CircumflexQueue queue;
  private final EngineBridge bridge;
  private final AmPlacement amPlacement;
  private final Supplier<Configuration> conf;
  /** Job-configuration read failures already logged (once per exception class). */
  private final Set<String> reportedErrors = Collections.newSetFromMap(new ConcurrentHashMap<String, Boolean>());

  ApplicationLifecycle(CircumflexScheduler scheduler, CircumflexQueue queue, EngineBridge bridge,
      AmPlacement amPlacement, Supplier<Configuration> conf) {
    this.scheduler = scheduler;
    this.queue = queue;
    this.bridge = bridge;
    this.amPlacement = amPlacement;
    this.conf = conf;
  }

  private Map<ApplicationId, SchedulerApplication<FifoAppAttempt>> applications() {
    return scheduler.applicationMap();
  }

  /** {@code APP_ADDED}: the engine admits (or rejects) the application, YARN accepts it. */
  void addApplication(ApplicationId appId, String user, boolean recovering, boolean unmanagedAM) {
    RMContext rmContext = scheduler.rmContext();
    if (bridge.engineActive()) {
      Map<String, String> jobConf = collectJobConf(appId, user);
      LOG.debug("submitting {} to the engine with {} keys (maps {}, reduces {})", appId, jobConf.size(),
          jobConf.get("mapreduce.job.maps"), jobConf.get("mapreduce.job.reduces"));
      try {
        bridge.submit(appId, jobConf, System.currentTimeMillis());
      } catch (CircumflexRejectedException | CircumflexInvalidJobException e) {
        LOG.info("Circumflex rejected application {}: {}", appId, e.getMessage());
        rmContext.getDispatcher().getEventHandler()
            .handle(new RMAppEvent(appId, RMAppEventType.APP_REJECTED, e.getMessage()));
        return;
      }
    }
    SchedulerApplication<FifoAppAttempt> application = new SchedulerApplication<>(queue, user, unmanagedAM);
    applications().put(appId, application);
    queue.getMetrics().submitApp(user, unmanagedAM);
    LOG.info("Accepted application {} from user {} ({} applications)", appId, user, applications().size());
    if (!recovering) {
      rmContext.getDispatcher().getEventHandler().handle(new RMAppEvent(appId, RMAppEventType.APP_ACCEPTED));
    }
  }

  /** {@code APP_REMOVED}. */
  void doneApplication(ApplicationId appId, RMAppState finalState) {
    bridge.finish(appId);
    SchedulerApplication<FifoAppAttempt> application = applications().get(appId);
    if (application == null) {
      return;
    }
    queue.getAbstractUsersManager().deactivateApplication(application.getUser(), appId);
    application.stop(finalState);
    applications().remove(appId);
  }

  /** {@code APP_ATTEMPT_ADDED}. */
  void addApplicationAttempt(ApplicationAttemptId attemptId, boolean transferState, boolean recovering) {
    SchedulerApplication<FifoAppAttempt> application = applications().get(attemptId.getApplicationId());
    if (application == null) {
      LOG.warn("attempt {} of an unknown (rejected?) application; ignored", attemptId);
      return;
    }
    RMContext rmContext = scheduler.rmContext();
    FifoAppAttempt attempt = CircumflexAttempts.newAttempt(attemptId, application.getUser(), queue,
        queue.getAbstractUsersManager(), rmContext);
    if (transferState) {
      attempt.transferStateFromPreviousAttempt(application.getCurrentAppAttempt());
    }
    application.setCurrentAppAttempt(attempt);
    queue.getMetrics().submitAppAttempt(application.getUser(), application.isUnmanagedAM());
    if (!recovering) {
      rmContext.getDispatcher().getEventHandler()
          .handle(new RMAppAttemptEvent(attemptId, RMAppAttemptEventType.ATTEMPT_ADDED));
    }
  }

  /** {@code APP_ATTEMPT_REMOVED}: its containers end (unless kept across attempts), its AM reservation too. */
  void doneApplicationAttempt(ApplicationAttemptId attemptId, RMAppAttemptState finalState, boolean keepContainers) {
    FifoAppAttempt attempt = scheduler.getApplicationAttempt(attemptId);
    if (attempt == null) {
      LOG.warn("unknown application attempt {} finished", attemptId);
      return;
    }
    for (RMContainer container : attempt.getLiveContainers()) {
      if (keepContainers && container.getState().equals(RMContainerState.RUNNING)) {
        continue;
      }
      scheduler.completedContainer(container,
          SchedulerUtils.createAbnormalContainerStatus(container.getContainerId(),
              SchedulerUtils.COMPLETED_APPLICATION),
          RMContainerEventType.KILL);
    }
    attempt.stop(finalState);
    amPlacement.attemptEnded(attemptId);
  }

  /** Per-job settings of every live application, for a replay into a new engine. */
  Map<ApplicationId, Map<String, String>> jobConfs() {
    Map<ApplicationId, Map<String, String>> confs = new HashMap<>();
    for (Map.Entry<ApplicationId, SchedulerApplication<FifoAppAttempt>> app : applications().entrySet()) {
      confs.put(app.getKey(), collectJobConf(app.getKey(), app.getValue().getUser()));
    }
    return confs;
  }

  /** Submission time of every live application the RM still knows, for a replay into a new engine. */
  Map<ApplicationId, Long> submitTimes() {
    Map<ApplicationId, Long> submitted = new HashMap<>();
    for (ApplicationId appId : applications().keySet()) {
      RMApp rmApp = rmApp(appId);
      if (rmApp != null) {
        submitted.put(appId, rmApp.getSubmitTime());
      }
    }
    return submitted;
  }

  private RMApp rmApp(ApplicationId appId) {
    RMContext rmContext = scheduler.rmContext();
    return rmContext.getRMApps() == null ? null : rmContext.getRMApps().get(appId);
  }

  private Map<String, String> collectJobConf(ApplicationId appId, String user) {
    RMApp app = rmApp(appId);
    Map<String, String> jobConf = JobConfCollector.fromApplication(appId.toString(),
        app == null ? null : app.getName(), user, app == null ? null : app.getApplicationTags());
    if (app != null) {
      try {
        Configuration current = conf.get();
        JobConfCollector.addJobXml(app.getApplicationSubmissionContext(),
            current != null ? current : new Configuration(), jobConf);
      } catch (IOException | RuntimeException e) {
        String message = "cannot read " + JobConfCollector.JOB_XML + " of " + appId + ": " + e;
        if (reportedErrors.add("job.xml: " + e.getClass().getName())) {
          LOG.warn("Circumflex: {}; the job runs with default settings", message);
        }
      }
    }
    return jobConf;
  }
}
