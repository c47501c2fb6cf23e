package io.circumflex.sls;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * {@code make sls}: one invocation that writes a deterministic SLS input ({@link SlsInput}), runs SLS
 * on it once per scheduler (each in its own JVM, one after the other: {@link SlsRun}), and writes the
 * comparison report ({@link SlsReport}) with SLS's per-operation timers, the NODE_UPDATE cost ratios
 * and job runtimes.
 *
 * <p>Options (all {@code --key value}): {@code --out DIR} (report; default {@code results/sls}),
 * {@code --work DIR} (SLS's raw outputs and logs; default a build directory), {@code --schedulers}
 * (comma-separated; default {@code circumflex:fifo,circumflex:fair,circumflex:flex,fair,capacity}),
 * {@code --timeout-s N} per run, {@code --command TEXT} (recorded in {@code COMMAND}), {@code --heap SIZE}
 * (the SLS JVMs' {@code -Xmx}; default the 2g of the Gradle task), {@code --timer-window N} (SLS's timer
 * window; default {@link #defaultTimerWindow}), {@code --jfr true}
 * (profile each run with Java Flight Recorder and write {@code profile-<scheduler>.txt} beside the report,
 * the top frames under the NODE_UPDATE handling, {@link JfrTop}), and every
 * {@link SlsInput.Params} option. The child JVMs get the options in system property
 * {@code circumflex.sls.jvmargs} (space-separated) and this JVM's class path.
 */
public final class SlsCompare {
  static final String DEFAULT_SCHEDULERS = "circumflex:fifo,circumflex:fair,circumflex:flex,fair,capacity";
  /** The frame that encloses every scheduler's NODE_UPDATE handling in the SLS wrappers. */
  static final String PROFILE_ROOT = "HeartbeatCost.timeNodeUpdate";

  private SlsCompare() {}

  /** Runs the comparison; returns the number of runs that did not finish every application. */
  public static int run(List<String> args) throws IOException, InterruptedException {
    Path out = Paths.get("results/sls");
    Path work = Paths.get("build/sls-work");
    String schedulers = DEFAULT_SCHEDULERS;
    long timeoutS = 1200;
    String command = "";
    boolean jfr = false;
    String heap = null;
    int timerWindow = 0;
    List<String> inputArgs = new ArrayList<>();
    if (args.size() % 2 != 0) {
      throw new IllegalArgumentException("options come in --key value pairs, got " + args);
    }
    for (int i = 0; i < args.size(); i += 2) {
      String key = args.get(i);
      String value = args.get(i + 1);
      switch (key) {
        case "--out": out = Paths.get(value); break;
        case "--work": work = Paths.get(value); break;
        case "--schedulers": schedulers = value; break;
        case "--timeout-s": timeoutS = Long.parseLong(value); break;
        case "--command": command = value; break;
        case "--jfr": jfr = Boolean.parseBoolean(value); break;
        case "--heap": heap = heapSize(value); break;
        case "--timer-window": timerWindow = Integer.parseInt(value); break;
        default: inputArgs.add(key); inputArgs.add(value);
      }
    }
    SlsInput.Params params = SlsInput.Params.parse(inputArgs);
    if (timerWindow <= 0) {
      timerWindow = defaultTimerWindow(params.nodes);
    }
    List<String> childArgs = new ArrayList<>();
    if (heap != null) {
      childArgs.add("-Xmx" + heap); // after circumflex.sls.jvmargs' -Xmx2g, so this one counts
    }
    childArgs.add("-D" + SlsRun.TIMER_WINDOW_PROPERTY + "=" + timerWindow);
    Path input = work.resolve("input");
    List<SlsInput.Job> jobs = SlsInput.write(params, input);
    System.out.println("SLS input: " + params + " -> " + jobs.size() + " jobs; SLS JVM options " + childArgs);
    Files.createDirectories(out);
    List<String> names = Arrays.asList(schedulers.split(","));
    int failed = 0;
    for (String scheduler : names) {
      Path runDir = work.resolve(dirName(scheduler));
      deleteTree(runDir);
      Files.createDirectories(runDir);
      Path recording = jfr ? runDir.resolve("profile.jfr").toAbsolutePath() : null;
      int rc = runChild(scheduler, input, runDir, timeoutS, recording, childArgs);
      if (rc != 0) {
        failed++;
        System.out.println(scheduler + ": run exited with " + rc + " (see " + runDir.resolve("run.log") + ")");
      }
      Path keep = out.resolve(dirName(scheduler));
      Files.createDirectories(keep);
      for (String f : new String[] {"summary.json", "jobruntime.csv"}) {
        if (Files.exists(runDir.resolve(f))) {
          Files.copy(runDir.resolve(f), keep.resolve(f), StandardCopyOption.REPLACE_EXISTING);
        }
      }
      Path sampled = runDir.resolve("metrics").resolve("sampler.scheduler.operation.handle.NODE_UPDATE.timecost.csv");
      if (Files.exists(sampled)) {
        Files.copy(sampled, keep.resolve("sampler.handle.NODE_UPDATE.timecost.csv"), StandardCopyOption.REPLACE_EXISTING);
      }
      if (recording != null && Files.exists(recording)) {
        Path summary = out.resolve("profile-" + dirName(scheduler) + ".txt");
        try (PrintStream profile = new PrintStream(Files.newOutputStream(summary), true, StandardCharsets.UTF_8)) {
          JfrTop.summarize(recording, PROFILE_ROOT, 40, profile);
        }
        System.out.println("  profile: " + summary);
      }
    }
    Files.write(out.resolve("COMMAND"), (command.isEmpty() ? "make sls" : command).concat("\n")
        .getBytes(StandardCharsets.UTF_8));
    SlsReport.write(out, names, params, jobs);
    System.out.println("report: " + out.resolve("report.md"));
    return failed;
  }

  static String dirName(String scheduler) {
    return scheduler.replace(':', '-');
  }

  /**
   * The SLS timer window when {@code --timer-window} is not given: room for about 300 s of NODE_UPDATEs
   * (one per NM per second), at least the 300,000 of {@code sls-runner.xml}, so the statistics read at the
   * end cover (nearly) the whole run at any size. SLS allocates 8 bytes per slot for each of its ~26 timers
   * up front (about 190 MB at 3,000 NMs).
   */
  static int defaultTimerWindow(int nodes) {
    return (int) Math.min(Integer.MAX_VALUE, Math.max(300_000L, 300L * nodes));
  }

  /** A JVM heap size as {@code -Xmx} takes it ({@code 6g}, {@code 4096m}); anything else is an error. */
  static String heapSize(String value) {
    if (!value.matches("[1-9][0-9]*[kKmMgG]?")) {
      throw new IllegalArgumentException("--heap takes a JVM heap size such as 6g or 4096m, got '" + value + "'");
    }
    return value;
  }

  private static int runChild(String scheduler, Path input, Path runDir, long timeoutS, Path recording,
      List<String> childArgs) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    String jvmArgs = System.getProperty("circumflex.sls.jvmargs", "").trim();
    if (!jvmArgs.isEmpty()) {
      cmd.addAll(Arrays.asList(jvmArgs.split("\\s+")));
    }
    cmd.addAll(childArgs);
    if (recording != null) {
      // 1 ms Java sampling (JDK 17's "max" method profiling); the recording is written when the JVM exits.
      cmd.add("-XX:StartFlightRecording=filename=" + recording + ",settings=profile,method-profiling=max");
    }
    cmd.add("-Djdk.net.hosts.file=" + input.resolve("hosts").toAbsolutePath());
    cmd.addAll(Arrays.asList("-cp", System.getProperty("java.class.path"), SlsRun.class.getName(), scheduler,
        input.resolve("trace.json").toString(), input.resolve("nodes.json").toString(), runDir.toString(),
        Long.toString(timeoutS)));
    System.out.println(String.format(Locale.ROOT, "running SLS under %s (log: %s)", scheduler, runDir.resolve("run.log")));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(runDir.resolve("run.log").toFile())
        .start();
    int rc = p.waitFor();
    List<String> log = Files.readAllLines(runDir.resolve("run.log"), StandardCharsets.UTF_8);
    for (String line : log) {
      if (line.startsWith(scheduler + ": ")) {
        System.out.println("  " + line);
      }
    }
    return rc;
  }

  private static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (java.util.stream.Stream<Path> paths = Files.walk(dir)) {
      paths.sorted((a, b) -> b.compareTo(a)).map(Path::toFile).forEach(File::delete);
    }
  }

  /** Entry point of {@code make sls}; exits non-zero when a run did not finish. */
  public static void main(String[] args) throws Exception {
    int failed = run(Arrays.asList(args));
    System.exit(failed == 0 ? 0 : 1);
  }
}
