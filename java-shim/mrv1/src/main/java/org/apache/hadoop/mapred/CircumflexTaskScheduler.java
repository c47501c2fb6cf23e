package org.apache.hadoop.mapred;

import io.circumflex.CircumflexConfigException;
import io.circumflex.CircumflexException;
import io.circumflex.CircumflexInternalException;
import io.circumflex.CircumflexInvalidJobException;
import io.circumflex.CircumflexRejectedException;
import io.circumflex.mrv1.ConfKeys;
import io.circumflex.mrv1.Mrv1Observability;
import io.circumflex.nativeapi.NativeEngine;
import io.circumflex.observe.EngineMetrics;
import io.circumflex.shim.EngineGuard;
import io.circumflex.shim.TaskBatch;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.net.Node;
import org.apache.hadoop.mapred.Tracked.Launched;
import org.apache.hadoop.mapred.Tracked.TrackedJob;
import org.apache.hadoop.mapred.Tracked.TrackedNode;

/**
 * Circumflex as the MRv1 (Hadoop 1.x) JobTracker's task scheduler: set
 * {@code mapred.jobtracker.taskScheduler=org.apache.hadoop.mapred.CircumflexTaskScheduler}.
 *
 * <p>It lives in {@code org.apache.hadoop.mapred} because {@code TaskScheduler},
 * {@code JobInProgressListener} and {@code EagerTaskInitializationListener} are package-private
 * there. It decides nothing itself: the native engine (Rust) owns every policy decision; this
 * class forwards events, asks the engine which jobs get a tracker's free slots, and obtains tasks
 * only through {@code JobInProgress.obtainNew*Task}, which keeps Hadoop's task bookkeeping intact.
 *
 * <p><b>Events forwarded.</b>
 * <ul>
 *   <li>Job submission: {@link #checkJobSubmission} submits the job's configuration keys to the
 *       engine, so admission control and malformed per-job values ({@code circumflex.job.*},
 *       {@code mapreduce.workflow.*}) reject the submission with the engine's message as an
 *       {@link IOException} that the submitter sees. Jobs reaching {@code jobAdded} without that
 *       check (recovery) are submitted there.
 *   <li>Initialisation: an {@link EagerTaskInitializationListener}, as in Hadoop's default scheduler.
 *   <li>Trackers: registered on their first heartbeat with their map and reduce slot counts
 *       (pool mode {@code split}); capacity changes are forwarded; trackers that disappear from
 *       {@code taskTrackers()} are removed (checked every {@value #NODE_SWEEP_MS} ms).
 *   <li>Task starts: reported when this class launches a task, with the locality level of the
 *       {@code obtainNew*} call that produced it; a heartbeat's starts cross JNI in one call
 *       ({@code TaskBatch}), as do its ends.
 *   <li>Task ends: derived at each heartbeat from the attempt's status in its
 *       {@code TaskInProgress} (terminal states SUCCEEDED, FAILED, KILLED and their UNCLEAN
 *       variants). A tracker reports a finished attempt in one heartbeat only, and that heartbeat may
 *       carry a setup or cleanup task instead of reaching {@code assignTasks}; the TIP keeps the final
 *       status, so polling it every heartbeat misses nothing. Duration is the attempt's finish minus
 *       start time as the tracker reported them.
 *   <li>Pending counts and reduce readiness ({@code JobInProgress.scheduleReduces()}, Hadoop's own
 *       slow-start test) are sent whenever they change; jobs not yet RUNNING report nothing pending.
 *   <li>Job end: when a heartbeat finds the job in a final state (see {@link Listener#jobUpdated}), or
 *       on {@code jobRemoved}.
 * </ul>
 *
 * <p><b>Failure policy.</b> The JobTracker must never crash because of the scheduler. An invalid
 * {@code circumflex.*} value at start-up stops {@link #start()} with a message naming the key (an
 * operator error, reported before any job runs, as the YARN shim does); an invalid value at
 * {@link #refresh()} keeps the running configuration. Every engine call goes through the shims'
 * one {@link EngineGuard}: a native failure switches to FIFO order (priority, then submission time),
 * logs {@code Circumflex fallback: <cause>} once per distinct error and shows the cause on the
 * page and in metrics; a successful {@link #refresh()} replays the trackers, jobs and running
 * attempts into a new engine and brings it back.
 *
 * <p><b>Threads.</b> Hadoop calls {@code assignTasks} under the JobTracker lock and listeners under
 * {@code synchronized(taskScheduler)}; every method here that touches scheduler state is
 * synchronized on this object. The timer thread calls {@code NativeEngine.tick}, which the native
 * side serializes, and carries out preemption decisions: it chooses the attempts under this object's
 * lock and calls {@code killTask} after releasing it (the JobTracker's lock comes first in Hadoop's
 * order, so the timer never holds ours while taking it).
 *
 * <p><b>Preemption</b> ({@code circumflex.preemption.*}, off by default): after each tick the engine's
 * decisions (victim job, phase, count, beneficiary) are carried out at once with
 * {@code taskTrackerManager.killTask(attempt, false)} on the victim's youngest running attempts of
 * that phase (MRv1 has no way to ask a job to give a slot back, so the grace period does not apply);
 * each kill is reported to the engine as preempted when the tracker reports the attempt KILLED, which
 * earmarks the freed slot for the beneficiary at that tracker's heartbeat.
 */
public class CircumflexTaskScheduler extends TaskScheduler {
  private static final Log LOG = LogFactory.getLog(CircumflexTaskScheduler.class);

  /** Period of the planning timer in ms ({@code NativeEngine.tick}; the engine decides whether an epoch passed). */
  public static final String TICK_MS_KEY = "circumflex.mrv1.tick.ms";
  /** Default {@link #TICK_MS_KEY}. */
  public static final long DEFAULT_TICK_MS = 200;
  /** How often lost trackers are looked for, in ms. */
  static final long NODE_SWEEP_MS = 5000;
  /** Capacity of the node-update answer: the engine writes at most 1024 choices. */
  private static final int MAX_CHOICES = 1024;
  /** Preemption decisions read per native call (more are kept natively and read by the next call). */
  private static final int MAX_PREEMPTION_DECISIONS = 64;
  private final int[] preemptionDecisions = new int[MAX_PREEMPTION_DECISIONS * NativeEngine.PREEMPTION_STRIDE];

  private final Listener listener = new Listener();
  /** The current engine and the failure regime (FIFO fallback, recovery on refresh). */
  private final EngineGuard guard = new EngineGuard(LOG);
  /** Metrics2 values the shim measures itself (node-update time, refreshes, fallbacks). */
  private final EngineMetrics observed = guard.metrics();
  private final Mrv1Observability.Target metricsTarget = new Mrv1Observability.Target() {
    @Override
    public NativeEngine currentEngine() {
      return guard.engine();
    }

    @Override
    public EngineMetrics metrics() {
      return observed;
    }
  };
  private final int[] choices = new int[MAX_CHOICES * NativeEngine.CHOICE_STRIDE];
  /** A heartbeat's task ends and starts, sent in one native call each ({@link TaskBatch}). */
  private final TaskBatch events = new TaskBatch();
  /** The plan's job ids for {@link #getJobs}, grown when the plan outgrows it. */
  private int[] planIds = new int[256];

  /** Jobs known to the scheduler and not yet final, in submission order. */
  private final Map<JobID, TrackedJob> jobs = new LinkedHashMap<JobID, TrackedJob>();
  private final Map<Integer, TrackedJob> jobsByEngineId = new HashMap<Integer, TrackedJob>();
  /** Trackers by tracker name. */
  private final Map<String, TrackedNode> nodes = new HashMap<String, TrackedNode>();
  /** Attempts launched by this scheduler and not yet seen to end. */
  private final Map<TaskAttemptID, Launched> launched = new LinkedHashMap<TaskAttemptID, Launched>();

  private EagerTaskInitializationListener eagerInit;
  private ScheduledExecutorService timer;
  private long lastNodeSweep;

  /** Public no-argument constructor, as {@code ReflectionUtils.newInstance} requires. */
  public CircumflexTaskScheduler() {}

  @Override
  public synchronized void setConf(Configuration conf) {
    super.setConf(conf);
    eagerInit = new EagerTaskInitializationListener(conf);
  }

  @Override
  public synchronized void start() throws IOException {
    super.start();
    try {
      NativeEngine.setLogLevel(conf.get(ConfKeys.NATIVE_LOG, "warn"));
      guard.start(createEngine(conf));
      LOG.info("Circumflex scheduler started: native library " + NativeEngine.init(null)
          + ", configuration " + ConfKeys.schedulerKeys(resolved(conf)));
    } catch (CircumflexConfigException e) {
      // An operator error, the same on every try: refuse to start (as the YARN shim does) rather
      // than run a policy nobody asked for.
      throw new IOException("Circumflex configuration invalid, JobTracker not started: " + e.getMessage(), e);
    } catch (CircumflexException | LinkageError e) {
      guard.fallBack("start", e, null);
    }
    Mrv1Observability.attach(metricsTarget);
    registerServlet();
    taskTrackerManager.addJobInProgressListener(listener);
    eagerInit.setTaskTrackerManager(taskTrackerManager);
    eagerInit.start();
    taskTrackerManager.addJobInProgressListener(eagerInit);
    long tickMs = Math.max(10, conf.getLong(TICK_MS_KEY, DEFAULT_TICK_MS));
    timer = Executors.newSingleThreadScheduledExecutor(new ThreadFactory() {
      @Override
      public Thread newThread(Runnable r) {
        Thread t = new Thread(r, "circumflex-tick");
        t.setDaemon(true);
        return t;
      }
    });
    timer.scheduleWithFixedDelay(new Runnable() {
      @Override
      public void run() {
        tick();
      }
    }, tickMs, tickMs, TimeUnit.MILLISECONDS);
  }

  /**
   * Adds {@code /scheduler} to the JobTracker's web server, as the contrib FairScheduler does
   * ({@link CircumflexSchedulerServlet}). Skipped when the manager is not a JobTracker (unit tests).
   */
  private void registerServlet() {
    if (taskTrackerManager instanceof JobTracker && ((JobTracker) taskTrackerManager).infoServer != null) {
      org.apache.hadoop.http.HttpServer http = ((JobTracker) taskTrackerManager).infoServer;
      http.setAttribute(CircumflexSchedulerServlet.ATTRIBUTE, this);
      http.addServlet("circumflex-scheduler", "/scheduler", CircumflexSchedulerServlet.class);
    }
  }

  /** The engine's status as an HTML fragment for the {@code /scheduler} page, or null in fallback. */
  public String getEngineStatusHtml() {
    return guard.call("statusHtml", e -> e.statusHtml(System.currentTimeMillis()), null);
  }

  /** The metrics2 values now (for tests; the metrics system reads the same through its source). */
  public List<EngineMetrics.Metric> readMetrics() {
    return observed.read(guard.engine());
  }

  @Override
  public synchronized void terminate() throws IOException {
    Mrv1Observability.detach(metricsTarget);
    if (timer != null) {
      timer.shutdownNow();
    }
    if (taskTrackerManager != null) {
      taskTrackerManager.removeJobInProgressListener(listener);
      taskTrackerManager.removeJobInProgressListener(eagerInit);
    }
    eagerInit.terminate();
    guard.stop();
    super.terminate();
  }

  /** Whether the native engine is in use (false in FIFO fallback). For tests and the UI. */
  public boolean isEngineActive() {
    return guard.isActive();
  }

  /** Why the scheduler is in FIFO fallback, or null when the engine is active. */
  public String getFallbackReason() {
    return guard.fallbackCause();
  }

  /** The engine's status JSON (policy, counters, nodes, jobs), or null in fallback. */
  public String getEngineStatusJson() {
    return guard.call("statusJson", e -> e.statusJson(System.currentTimeMillis()), null);
  }

  // ----- admission --------------------------------------------------------------------------

  @Override
  public synchronized void checkJobSubmission(JobInProgress job) throws IOException {
    track(job, submissionTime(job, System.currentTimeMillis()));
  }

  /**
   * When {@code job} was submitted, for the engine (its relative deadlines and waiting times count
   * from it). Normally {@code usual} (now at the submission check, the job's start time when it
   * arrives through {@code jobAdded}). A job the JobTracker recovered after a restart is a new
   * {@code JobInProgress} whose start time is the recovery's, so the downtime would push its deadline
   * back; its submission is the modification time of the {@code job.xml} that the client wrote into
   * the job's submit directory just before submitting (Hadoop keeps that directory for recovery). If
   * that file cannot be read, {@code usual}.
   */
  private long submissionTime(JobInProgress job, long usual) {
    if (!isRecovered(job) || job.jobFile == null) {
      return usual;
    }
    try {
      org.apache.hadoop.fs.Path file = new org.apache.hadoop.fs.Path(job.jobFile);
      long written = file.getFileSystem(job.getJobConf()).getFileStatus(file).getModificationTime();
      return written > 0 && written < usual ? written : usual;
    } catch (IOException | RuntimeException e) {
      LOG.warn("Circumflex: no original submission time for recovered job " + job.getJobID() + " ("
          + e.getMessage() + "); counting from its recovery");
      return usual;
    }
  }

  /**
   * Whether this JobTracker recovered {@code job} rather than accepted it: job ids carry the
   * identifier of the JobTracker that issued them, and a recovered job keeps its old one. (Hadoop
   * 1.2.1's {@code JobInProgress.hasRestarted()} cannot tell: {@code submitJob} always passes a
   * restart count of 0.)
   */
  private boolean isRecovered(JobInProgress job) {
    if (!(taskTrackerManager instanceof JobTracker)) {
      return false;
    }
    String issuer = ((JobTracker) taskTrackerManager).getTrackerIdentifier();
    return issuer != null && !issuer.equals(job.getJobID().getJtIdentifier());
  }

  /**
   * Registers {@code job} with the engine (once). Rejections and malformed per-job values become
   * an IOException carrying the engine's message; engine failures fall back and accept the job.
   */
  private TrackedJob track(JobInProgress job, long now) throws IOException {
    JobID id = job.getJobID();
    TrackedJob tracked = jobs.get(id);
    if (tracked != null) {
      return tracked;
    }
    tracked = new TrackedJob(job, now);
    NativeEngine e = guard.engine();
    if (e != null) {
      try {
        tracked.engineId = e.submitJob(jobKeys(job), now);
      } catch (CircumflexRejectedException ex) {
        throw new IOException("Circumflex rejected job " + id + ": " + ex.getMessage(), ex);
      } catch (CircumflexInvalidJobException ex) {
        throw new IOException("Circumflex cannot schedule job " + id + ", invalid configuration: "
            + ex.getMessage(), ex);
      } catch (CircumflexInternalException | LinkageError ex) {
        guard.fallBack("submitJob", ex, e);
      } catch (CircumflexException ex) {
        guard.warnOnce("submitJob:" + ex.getMessage(), "Circumflex did not see job " + id + ": " + ex.getMessage());
      }
    }
    jobs.put(id, tracked);
    if (tracked.engineId >= 0) {
      jobsByEngineId.put(tracked.engineId, tracked);
    }
    return tracked;
  }

  private static Map<String, String> jobKeys(JobInProgress job) {
    return ConfKeys.jobKeys(resolved(job.getJobConf()), job.getJobID().toString());
  }

  // ----- heartbeat --------------------------------------------------------------------------

  @Override
  public synchronized List<Task> assignTasks(org.apache.hadoop.mapreduce.server.jobtracker.TaskTracker taskTracker)
      throws IOException {
    if (taskTrackerManager.isInSafeMode()) {
      return null;
    }
    long now = System.currentTimeMillis();
    TaskTrackerStatus tts = taskTracker.getStatus();
    syncJobs(now);
    sweepNodes(now);
    int freeMap = Math.max(0, tts.getMaxMapSlots() - tts.countOccupiedMapSlots());
    int freeReduce = Math.max(0, tts.getMaxReduceSlots() - tts.countOccupiedReduceSlots());
    TrackedNode node = syncNode(tts);
    if (freeMap == 0 && freeReduce == 0) {
      return null;
    }
    ClusterStatus cluster = taskTrackerManager.getClusterStatus();
    int clusterSize = cluster.getTaskTrackers();
    int uniqueHosts = taskTrackerManager.getNumberOfUniqueHosts();
    NativeEngine e = guard.engine();
    if (e != null && node != null && node.engineId >= 0) {
      // The engine is called directly (not through a guard lambda) so the heartbeat allocates no call
      // object; the guard still decides what a failure means. A refused heartbeat is answered in FIFO.
      long started = System.nanoTime();
      try {
        int n = e.nodeUpdate(node.engineId, freeMap, freeReduce, now, choices);
        observed.nodeUpdateTimed(System.nanoTime() - started);
        return assignFromEngine(n, node, tts, freeMap, freeReduce, clusterSize, uniqueHosts, now);
      } catch (CircumflexException | IllegalArgumentException | LinkageError ex) {
        guard.failed("nodeUpdate", ex, e);
      }
    }
    return CircumflexFifoFallback.assign(jobs.values(), tts, freeMap, freeReduce, clusterSize, uniqueHosts);
  }

  private List<Task> assignFromEngine(int n, TrackedNode node, TaskTrackerStatus tts, int freeMap,
      int freeReduce, int clusterSize, int uniqueHosts, long now) throws IOException {
    List<Task> assigned = new ArrayList<Task>();
    int[] free = {freeMap, freeReduce};
    for (int c = 0; c < n && (free[0] > 0 || free[1] > 0); c++) {
      int base = c * NativeEngine.CHOICE_STRIDE;
      TrackedJob job = jobsByEngineId.get(choices[base]);
      int phase = choices[base + 1];
      int count = choices[base + 2];
      int allowed = choices[base + 3];
      if (job == null || (phase != NativeEngine.MAP && phase != NativeEngine.REDUCE)
          || job.jip.getStatus().getRunState() != JobStatus.RUNNING) {
        continue;
      }
      TaskType type = phase == NativeEngine.MAP ? TaskType.MAP : TaskType.REDUCE;
      int slotsPerTask = Math.max(1, job.jip.getNumSlotsPerTask(type));
      for (int i = 0; i < count && free[phase] >= slotsPerTask; i++) {
        Task task;
        int locality;
        if (phase == NativeEngine.MAP) {
          task = job.jip.obtainNewNodeLocalMapTask(tts, clusterSize, uniqueHosts);
          locality = NativeEngine.NODE_LOCAL;
          if (task == null && allowed >= NativeEngine.RACK_LOCAL) {
            task = job.jip.obtainNewNodeOrRackLocalMapTask(tts, clusterSize, uniqueHosts);
            locality = NativeEngine.RACK_LOCAL;
          }
          if (task == null && allowed >= NativeEngine.ANY) {
            task = job.jip.obtainNewMapTask(tts, clusterSize, uniqueHosts);
            locality = NativeEngine.ANY;
          }
        } else {
          task = job.jip.obtainNewReduceTask(tts, clusterSize, uniqueHosts);
          locality = NativeEngine.ANY;
        }
        if (task == null) {
          break;
        }
        assigned.add(task);
        free[phase] -= Math.max(1, task.getNumSlotsRequired());
        launched.put(task.getTaskID(), new Launched(job, phase, node, locality, now));
        reportStarted(job, phase, node, locality, now);
      }
    }
    events.flush(guard);
    return assigned;
  }

  private void reportStarted(TrackedJob job, int phase, TrackedNode node, int locality, long now) {
    if (job.engineId < 0 || node.engineId < 0) {
      return;
    }
    // The engine adjusts its pending count on every task event; resend Hadoop's at the next heartbeat.
    job.sentPendingMap = -1;
    job.sentPendingReduce = -1;
    events.started(guard, job.engineId, phase, node.engineId, locality, now);
  }

  /**
   * Brings the engine up to date with every tracked job: attempts that ended, pending counts,
   * reduce readiness, and jobs that reached a final state.
   */
  private void syncJobs(long now) {
    for (Iterator<Map.Entry<TaskAttemptID, Launched>> it = launched.entrySet().iterator(); it.hasNext();) {
      Map.Entry<TaskAttemptID, Launched> entry = it.next();
      Launched l = entry.getValue();
      TaskStatus status = attemptStatus(l.job.jip, entry.getKey());
      boolean jobOver = isFinal(l.job.jip);
      if (status == null ? !jobOver : !isTerminal(status.getRunState())) {
        continue;
      }
      it.remove();
      boolean success = status != null && status.getRunState() == TaskStatus.State.SUCCEEDED;
      long duration = status != null && status.getFinishTime() > 0 && status.getStartTime() > 0
          ? status.getFinishTime() - status.getStartTime()
          : now - l.launchedAt;
      if (l.job.engineId >= 0 && l.node.engineId >= 0 && !l.job.finished) {
        l.job.sentPendingMap = -1;
        l.job.sentPendingReduce = -1;
        if (l.preempted && !success) {
          // Killed for a preemption: re-queued by the engine, its slot earmarked for the beneficiary.
          events.preempted(l.job.engineId, l.phase, l.node.engineId, Math.max(0, duration), now);
        } else {
          events.finished(l.job.engineId, l.phase, l.node.engineId, Math.max(0, duration), success, now);
        }
      }
    }
    // The heartbeat's task ends in one native call, before anything else reaches the engine.
    events.flush(guard);
    for (Iterator<TrackedJob> it = jobs.values().iterator(); it.hasNext();) {
      TrackedJob job = it.next();
      if (isFinal(job.jip)) {
        finishJob(job, now);
        it.remove();
        jobsByEngineId.remove(job.engineId);
        continue;
      }
      if (!guard.isActive() || job.engineId < 0) {
        continue;
      }
      boolean running = job.jip.getStatus().getRunState() == JobStatus.RUNNING;
      int pendingMap = running ? job.jip.pendingMaps() : 0;
      int pendingReduce = running ? job.jip.pendingReduces() : 0;
      boolean ready = running && job.jip.scheduleReduces();
      guard.run("setPending", eng -> {
        if (pendingMap != job.sentPendingMap) {
          eng.setPending(job.engineId, NativeEngine.MAP, pendingMap);
          job.sentPendingMap = pendingMap;
        }
        if (pendingReduce != job.sentPendingReduce) {
          eng.setPending(job.engineId, NativeEngine.REDUCE, pendingReduce);
          job.sentPendingReduce = pendingReduce;
        }
        if (job.sentReady == null || ready != job.sentReady) {
          eng.setReducesReady(job.engineId, ready);
          job.sentReady = ready;
        }
      });
    }
  }

  private static TaskStatus attemptStatus(JobInProgress jip, TaskAttemptID attempt) {
    TaskInProgress tip = jip.getTaskInProgress(attempt.getTaskID());
    return tip == null ? null : tip.getTaskStatus(attempt);
  }

  static boolean isTerminal(TaskStatus.State state) {
    switch (state) {
      case SUCCEEDED:
      case FAILED:
      case KILLED:
      case FAILED_UNCLEAN:
      case KILLED_UNCLEAN:
        return true;
      default:
        return false;
    }
  }

  private static boolean isFinal(JobInProgress jip) {
    int state = jip.getStatus().getRunState();
    return state == JobStatus.SUCCEEDED || state == JobStatus.FAILED || state == JobStatus.KILLED;
  }

  private void finishJob(TrackedJob job, long now) {
    if (job.finished) {
      return;
    }
    events.flush(guard);
    job.finished = true;
    if (job.engineId >= 0) {
      guard.run("finishJob", eng -> eng.finishJob(job.engineId, now));
    }
  }

  /** Registers the tracker on first sight and forwards slot changes; null only if it has no name. */
  private TrackedNode syncNode(TaskTrackerStatus tts) {
    String name = tts.getTrackerName();
    if (name == null) {
      return null;
    }
    TrackedNode node = nodes.get(name);
    if (node == null) {
      node = new TrackedNode(name, tts.getHost(), rackOf(tts.getHost()));
      nodes.put(name, node);
    }
    int maps = tts.getMaxMapSlots();
    int reduces = tts.getMaxReduceSlots();
    TrackedNode n = node;
    guard.run("addNode", eng -> {
      if (n.engineId < 0) {
        n.engineId = eng.addNode(n.host, n.rack, maps, reduces);
      } else if (maps != n.mapSlots || reduces != n.reduceSlots) {
        eng.setNodeCapacity(n.engineId, maps, reduces);
      }
      n.mapSlots = maps;
      n.reduceSlots = reduces;
    });
    return node;
  }

  private String rackOf(String host) {
    if (taskTrackerManager instanceof JobTracker) {
      Node n = ((JobTracker) taskTrackerManager).getNode(host);
      if (n != null && n.getNetworkLocation() != null) {
        return n.getNetworkLocation();
      }
    }
    return "/default-rack";
  }

  /** Removes trackers the JobTracker no longer lists (lost or decommissioned). */
  private void sweepNodes(long now) {
    if (now - lastNodeSweep < NODE_SWEEP_MS) {
      return;
    }
    lastNodeSweep = now;
    Set<String> alive = new HashSet<String>();
    for (TaskTrackerStatus s : taskTrackerManager.taskTrackers()) {
      alive.add(s.getTrackerName());
    }
    for (Iterator<TrackedNode> it = nodes.values().iterator(); it.hasNext();) {
      TrackedNode node = it.next();
      if (alive.contains(node.trackerName)) {
        continue;
      }
      it.remove();
      if (node.engineId >= 0) {
        guard.run("removeNode", eng -> eng.removeNode(node.engineId, now));
      }
    }
  }

  // ----- queries ----------------------------------------------------------------------------

  /**
   * Jobs of {@code queueName} in the engine's plan order; jobs the plan does not list (not yet
   * submitted to the engine, or in fallback) follow in FIFO order.
   */
  @Override
  public synchronized Collection<JobInProgress> getJobs(String queueName) {
    List<JobInProgress> ordered = new ArrayList<JobInProgress>();
    Set<JobID> added = new HashSet<JobID>();
    int n = guard.call("planOrder", eng -> eng.planOrder(planIds), 0);
    if (n > planIds.length) {
      planIds = new int[Math.max(n, 2 * planIds.length)];
      n = guard.call("planOrder", eng -> eng.planOrder(planIds), 0);
    }
    for (int i = 0; i < Math.min(n, planIds.length); i++) {
      TrackedJob t = jobsByEngineId.get(planIds[i]);
      if (t != null && added.add(t.jip.getJobID())) {
        ordered.add(t.jip);
      }
    }
    for (JobInProgress jip : CircumflexFifoFallback.order(jobs.values())) {
      if (added.add(jip.getJobID())) {
        ordered.add(jip);
      }
    }
    if (queueName != null) {
      for (Iterator<JobInProgress> it = ordered.iterator(); it.hasNext();) {
        if (!queueName.equals(it.next().getProfile().getQueueName())) {
          it.remove();
        }
      }
    }
    return ordered;
  }

  // ----- configuration ----------------------------------------------------------------------

  /**
   * Re-reads {@code mapred-site.xml} ({@code mradmin -refreshQueues}). The new configuration is
   * validated by building a new engine and replaying the current trackers, jobs and running
   * attempts into it; on any error the old engine and configuration stay and the error is thrown.
   */
  @Override
  public synchronized void refresh() throws IOException {
    Configuration fresh = reloadConfiguration();
    if (guard.isActive()) {
      reconfigure(fresh);
      return;
    }
    NativeEngine candidate;
    try {
      candidate = createEngine(fresh);
    } catch (CircumflexException | LinkageError ex) {
      throw new IOException("Circumflex configuration rejected, keeping the previous one: " + ex.getMessage(), ex);
    }
    Map<TrackedNode, Integer> nodeIds = new HashMap<TrackedNode, Integer>();
    Map<TrackedJob, Integer> jobIds = new HashMap<TrackedJob, Integer>();
    long now = System.currentTimeMillis();
    try {
      for (TrackedNode node : nodes.values()) {
        nodeIds.put(node, candidate.addNode(node.host, node.rack, node.mapSlots, node.reduceSlots));
      }
      for (TrackedJob job : jobs.values()) {
        if (job.finished) {
          continue;
        }
        jobIds.put(job, candidate.submitJob(jobKeys(job.jip), Math.min(job.submittedAt, now)));
      }
      for (Launched l : launched.values()) {
        Integer j = jobIds.get(l.job);
        Integer n = nodeIds.get(l.node);
        if (j != null && n != null) {
          candidate.taskStarted(j, l.phase, n, l.locality, l.launchedAt);
        }
      }
    } catch (CircumflexException | LinkageError ex) {
      candidate.close();
      throw new IOException("Circumflex configuration rejected while replaying the current jobs, keeping the "
          + "previous one: " + ex.getMessage(), ex);
    }
    jobsByEngineId.clear();
    for (TrackedJob job : jobs.values()) {
      Integer id = jobIds.get(job);
      job.engineId = id == null ? -1 : id;
      job.sentPendingMap = -1;
      job.sentPendingReduce = -1;
      job.sentReady = null;
      if (id != null) {
        jobsByEngineId.put(id, job);
      }
    }
    for (TrackedNode node : nodes.values()) {
      node.engineId = nodeIds.get(node);
    }
    guard.recover(candidate);
    // Pending counts and readiness follow at the next heartbeat (sent* were reset above); calling
    // into jobs here, outside the JobTracker's lock, could deadlock against job events.
    LOG.info("Circumflex configuration refreshed: " + ConfKeys.schedulerKeys(resolved(fresh)));
  }

  /**
   * Refresh of a running engine: the new policy and parameters are applied in place through the
   * engine's reconfigure (jobs, trackers and running attempts stay, everything is re-planned). A bad
   * configuration is refused with the engine's message and the old policy keeps running.
   */
  private void reconfigure(Configuration fresh) throws IOException {
    NativeEngine current = guard.engine();
    try {
      NativeEngine.setLogLevel(fresh.get(ConfKeys.NATIVE_LOG, "warn"));
      current.reconfigure(ConfKeys.schedulerKeys(resolved(fresh)), System.currentTimeMillis());
      observed.refreshed(true);
    } catch (CircumflexConfigException ex) {
      observed.refreshed(false);
      throw new IOException("Circumflex configuration rejected, keeping the previous one: " + ex.getMessage(), ex);
    } catch (CircumflexInternalException | LinkageError ex) {
      guard.fallBack("refresh", ex, current);
      throw new IOException("Circumflex engine failed during refresh; FIFO until the next refresh: "
          + ex.getMessage(), ex);
    } finally {
      Mrv1Observability.drainNativeLog();
    }
    LOG.info("Circumflex configuration refreshed: " + ConfKeys.schedulerKeys(resolved(fresh)));
  }

  /** The configuration {@link #refresh()} applies: {@code mapred-site.xml} read anew. Tests override it. */
  protected Configuration reloadConfiguration() {
    return new JobConf();
  }

  private static NativeEngine createEngine(Configuration c) {
    return NativeEngine.create(ConfKeys.schedulerKeys(resolved(c)));
  }

  /** The configuration's entries with values resolved by Hadoop (variables expanded). */
  static List<Map.Entry<String, String>> resolved(Configuration c) {
    List<Map.Entry<String, String>> out = new ArrayList<Map.Entry<String, String>>();
    for (Map.Entry<String, String> e : c) {
      String value = c.get(e.getKey());
      out.add(new java.util.AbstractMap.SimpleImmutableEntry<String, String>(e.getKey(),
          value == null ? e.getValue() : value));
    }
    return out;
  }

  // ----- timer and failures -----------------------------------------------------------------

  /**
   * The timer thread's call: re-plan if due, then carry out the engine's preemption decisions. An
   * exception must not escape, or the executor stops ticking.
   */
  void tick() {
    try {
      long now = System.currentTimeMillis();
      guard.run("tick", e -> e.tick(now));
      // Chosen under this scheduler's lock, killed outside it: killTask takes the JobTracker's lock,
      // which Hadoop always takes before the scheduler's (assignTasks), never after.
      for (TaskAttemptID attempt : choosePreemptions(now)) {
        killForPreemption(attempt);
      }
      Mrv1Observability.drainNativeLog();
    } catch (RuntimeException ex) {
      guard.warnOnce("tick:" + ex, "Circumflex tick failed: " + ex);
    }
  }

  /**
   * Asks the engine for preemption decisions ({@code circumflex.preemption.*}, {@code docs/preemption.md})
   * and chooses, for each, the victim job's youngest running attempts of that phase (latest start as the
   * tracker reported it), marking them preempted. Nothing while preemption is off (the engine decides
   * nothing) or in fallback.
   */
  synchronized List<TaskAttemptID> choosePreemptions(long now) {
    NativeEngine engine = guard.engine();
    List<TaskAttemptID> chosen = new ArrayList<TaskAttemptID>();
    if (engine == null) {
      return chosen;
    }
    events.flush(guard);
    int written;
    do {
      try {
        written = engine.preemptions(now, preemptionDecisions);
      } catch (CircumflexException | IllegalArgumentException | LinkageError e) {
        guard.failed("preemptions", e, engine);
        return chosen;
      }
      for (int i = 0; i < written; i++) {
        int base = i * NativeEngine.PREEMPTION_STRIDE;
        TrackedJob victim = jobsByEngineId.get(preemptionDecisions[base]);
        if (victim != null) {
          youngestRunning(victim, preemptionDecisions[base + 1], preemptionDecisions[base + 2], chosen);
        }
      }
    } while (written == MAX_PREEMPTION_DECISIONS);
    return chosen;
  }

  /** Adds up to {@code count} of {@code job}'s youngest running {@code phase} attempts to {@code out}, marked. */
  private void youngestRunning(TrackedJob job, int phase, int count, List<TaskAttemptID> out) {
    List<Map.Entry<TaskAttemptID, Long>> running = new ArrayList<Map.Entry<TaskAttemptID, Long>>();
    for (Map.Entry<TaskAttemptID, Launched> e : launched.entrySet()) {
      Launched l = e.getValue();
      if (l.job != job || l.phase != phase || l.preempted) {
        continue;
      }
      TaskStatus status = attemptStatus(job.jip, e.getKey());
      if (status == null || isTerminal(status.getRunState())) {
        continue;
      }
      long start = status.getStartTime() > 0 ? status.getStartTime() : l.launchedAt;
      running.add(new java.util.AbstractMap.SimpleEntry<TaskAttemptID, Long>(e.getKey(), start));
    }
    java.util.Collections.sort(running, new java.util.Comparator<Map.Entry<TaskAttemptID, Long>>() {
      @Override
      public int compare(Map.Entry<TaskAttemptID, Long> a, Map.Entry<TaskAttemptID, Long> b) {
        return Long.compare(b.getValue(), a.getValue());
      }
    });
    for (int i = 0; i < running.size() && i < count; i++) {
      TaskAttemptID id = running.get(i).getKey();
      launched.get(id).preempted = true;
      out.add(id);
    }
  }

  /**
   * Kills {@code attempt} for a preemption with {@code killTask(attempt, false)}: KILLED, not FAILED, so
   * the job's failure count is untouched and the task runs again. Its end reaches the engine as
   * preempted at the heartbeat that reports it ({@link #syncJobs}).
   */
  private void killForPreemption(TaskAttemptID attempt) {
    boolean killed;
    try {
      killed = taskTrackerManager.killTask(attempt, false);
    } catch (IOException | RuntimeException e) {
      guard.warnOnce("killTask:" + e.getClass().getName(), "Circumflex preemption: cannot kill " + attempt + ": " + e);
      killed = false;
    }
    if (killed) {
      LOG.info("Circumflex preemption: killed " + attempt + " (KILLED, not FAILED; it runs again)");
    } else {
      synchronized (this) {
        Launched l = launched.get(attempt);
        if (l != null) {
          l.preempted = false; // not killed (it ended meanwhile): its end is an ordinary one
        }
      }
    }
  }

  // ----- listener and bookkeeping -----------------------------------------------------------

  /** Job lifecycle events from the JobTracker (called under {@code synchronized(taskScheduler)}). */
  private final class Listener extends JobInProgressListener {
    @Override
    public void jobAdded(JobInProgress job) throws IOException {
      synchronized (CircumflexTaskScheduler.this) {
        track(job, submissionTime(job, job.getStartTime() > 0 ? job.getStartTime() : System.currentTimeMillis()));
      }
    }

    @Override
    public void jobRemoved(JobInProgress job) {
      synchronized (CircumflexTaskScheduler.this) {
        TrackedJob t = jobs.remove(job.getJobID());
        if (t != null) {
          finishJob(t, System.currentTimeMillis());
          jobsByEngineId.remove(t.engineId);
        }
      }
    }

    /**
     * Deliberately does nothing. Hadoop raises this event from inside {@code JobInProgress}
     * (holding the job's lock, not always the JobTracker's), so taking the scheduler's lock here
     * could deadlock against {@code assignTasks}, which holds the scheduler's lock while calling into
     * jobs. Final states are picked up by {@code syncJobs} at the next heartbeat (300 ms on a small
     * cluster); priority changes are not forwarded because the engine has no priority update.
     */
    @Override
    public void jobUpdated(JobChangeEvent event) {}
  }
}
