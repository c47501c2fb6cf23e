package io.circumflex.sls;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Writes {@code report.md}, {@code node-update.svg} and {@code job-runtimes.svg} from the per-scheduler
 * {@code summary.json} (SLS's own timers, read at the end of each run) and {@code jobruntime.csv}
 * (SLS's job start and end times) under the report folder.
 *
 * <p>The headline figure is Circumflex's per-NODE_UPDATE handling cost as a ratio to FairScheduler's and
 * CapacityScheduler's: the mean of SLS's {@code handle.NODE_UPDATE} timer (the whole
 * {@code scheduler.handle(NODE_UPDATE)} call, as SLS times it for every scheduler) over the run. The mean
 * is the ratio's basis because it is what the RM's single event thread pays per heartbeat; p50 and p99
 * are reported beside it.
 */
final class SlsReport {
  private static final String[] COLORS = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"};

  /** One scheduler's results. */
  static final class Result {
    final String scheduler;
    final JsonNode summary;
    /** Job runtimes in ms (simulated end - simulated start), in file order. */
    final List<Long> runtimesMs = new ArrayList<>();
    long makespanMs;

    Result(String scheduler, JsonNode summary) {
      this.scheduler = scheduler;
      this.summary = summary;
    }

    double timer(String name, String column) {
      JsonNode t = summary == null ? null : summary.path("timers").get(name);
      return t == null || !t.has(column) ? Double.NaN : t.get(column).asDouble();
    }

    boolean finished() {
      return summary != null && summary.path("finished").asBoolean(false) && summary.path("fallback").isNull();
    }
  }

  private SlsReport() {}

  /**
   * The harness's own heartbeat timer ({@link HeartbeatCost}): NODE_UPDATE cost split into busy heartbeats
   * (room on the node and pending demand: a placement to decide) and idle ones, per scheduler, and the
   * busy and idle ratios of each Circumflex policy to FairScheduler and CapacityScheduler. Like for like
   * where SLS's single mean is not: a run that lasts longer times more idle heartbeats.
   */
  static void appendBusyIdle(StringBuilder md, List<Result> results, Result fair, Result cap) {
    md.append("\n## NODE_UPDATE cost, busy and idle heartbeats\n\n");
    md.append("The harness's own timer around the same call SLS times (`HeartbeatCost`, every call of the run): "
        + "a heartbeat is *busy* when, just before it, the node had room for a minimum allocation and the cluster "
        + "had pending demand; otherwise *idle*. Microseconds.\n\n");
    md.append("| scheduler | busy calls | busy mean | busy p50 | busy p99 | idle calls | idle mean | idle p50 "
        + "| all mean |\n");
    md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (Result r : results) {
      md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |%n", r.scheduler,
          count(r.timer(BUSY, "count")), num(r.timer(BUSY, "mean_us")), num(r.timer(BUSY, "p50_us")),
          num(r.timer(BUSY, "p99_us")), count(r.timer(IDLE, "count")), num(r.timer(IDLE, "mean_us")),
          num(r.timer(IDLE, "p50_us")), num(r.timer(ALL, "mean_us"))));
    }
    md.append("\nNODE_UPDATE time per container placed (the sum of all heartbeats' time over the containers the "
        + "scheduler allocated in the run, AMs included): a scheduler that places one container per heartbeat and "
        + "one that fills the node are compared per unit of work.\n\n");
    md.append("| scheduler | containers | NODE_UPDATE time (s) | us per container |\n|---|---:|---:|---:|\n");
    for (Result r : results) {
      md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s |%n", r.scheduler, count(containers(r)),
          num(totalUs(r) / 1e6), num(perContainerUs(r))));
    }
    md.append("\nRatios of the means (target for the headline: at most 0.5):\n\n");
    md.append("| Circumflex policy | busy / Fair | busy / Capacity | idle / Fair | idle / Capacity "
        + "| all / Fair | all / Capacity | per container / Fair | per container / Capacity |\n");
    md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (Result r : results) {
      if (!r.scheduler.startsWith("circumflex:")) {
        continue;
      }
      md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |%n", r.scheduler,
          ratio(meanRatio(r, fair, BUSY)), ratio(meanRatio(r, cap, BUSY)), ratio(meanRatio(r, fair, IDLE)),
          ratio(meanRatio(r, cap, IDLE)), ratio(meanRatio(r, fair, ALL)), ratio(meanRatio(r, cap, ALL)),
          ratio(fair == null ? Double.NaN : perContainerUs(r) / perContainerUs(fair)),
          ratio(cap == null ? Double.NaN : perContainerUs(r) / perContainerUs(cap))));
    }
  }

  static final String ALL = "own.NODE_UPDATE";
  static final String BUSY = "own.NODE_UPDATE.busy";
  static final String IDLE = "own.NODE_UPDATE.idle";

  private static double containers(Result r) {
    return r.summary == null || !r.summary.has("containers_allocated") ? Double.NaN
        : r.summary.path("containers_allocated").asDouble();
  }

  /** The sum of every heartbeat's handling time over the run (harness timer), microseconds. */
  private static double totalUs(Result r) {
    return r.timer(ALL, "mean_us") * r.timer(ALL, "count");
  }

  private static double perContainerUs(Result r) {
    double n = containers(r);
    return n > 0 ? totalUs(r) / n : Double.NaN;
  }

  private static double meanRatio(Result mine, Result other, String timer) {
    return other == null ? Double.NaN : mine.timer(timer, "mean_us") / other.timer(timer, "mean_us");
  }

  /**
   * What each run cost its JVM (summary.json {@code resources}, written by {@link SlsRun.Resources}): wall
   * time and start-up, CPU and cores used, sampled heap peak, GC, the load average at the end, and CPU by
   * thread group. Where a size does not fit the machine, this is the measured reason.
   */
  static void appendResources(StringBuilder md, List<Result> results) {
    List<String> groups = new ArrayList<>();
    boolean any = false;
    for (Result r : results) {
      JsonNode res = r.summary == null ? null : r.summary.get("resources");
      if (res == null) {
        continue;
      }
      any = true;
      Iterator<String> it = res.path("thread_cpu_ms").fieldNames();
      while (it.hasNext()) {
        String g = it.next();
        if (!groups.contains(g)) {
          groups.add(g);
        }
      }
    }
    if (!any) {
      return;
    }
    md.append("\n## What each run cost the machine\n\n");
    md.append("Measured in each SLS JVM: wall time from start to the last application (start-up: until SLS had "
        + "started the RM, registered every NM and started its runner), the JVM's CPU time (start-up included) and "
        + "CPU / wall (cores used, of 2), heap used (peak of 200 ms samples after start-up) against the maximum, "
        + "garbage collection, and the 1-minute load average at the end.\n\n");
    md.append("| scheduler | wall (s) | start-up (s) | CPU (s) | cores used | heap peak (MB) | heap max (MB) "
        + "| GCs | GC (s) | load avg |\n");
    md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (Result r : results) {
      JsonNode res = r.summary == null ? null : r.summary.get("resources");
      if (res == null) {
        md.append("| ").append(r.scheduler).append(" | n/a | n/a | n/a | n/a | n/a | n/a | n/a | n/a | n/a |\n");
        continue;
      }
      double wall = r.summary.path("wall_ms").asDouble() / 1000;
      double cpu = res.path("cpu_ms").asDouble() / 1000;
      md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%n", r.scheduler,
          num(wall), num(r.summary.path("startup_ms").asDouble() / 1000), num(cpu),
          num(wall > 0 ? cpu / wall : Double.NaN), count(res.path("heap_used_peak_mb").asDouble()),
          count(res.path("heap_max_mb").asDouble()), count(res.path("gc_count").asDouble()),
          num(res.path("gc_ms").asDouble() / 1000), num(res.path("load_average").asDouble())));
    }
    md.append("\nCPU by thread group (s; threads alive at the end, digits folded to N; threads that ended and the "
        + "JVM's GC and compiler threads are only in the total above):\n\n");
    appendSchedulerHeader(md, "thread group", results);
    for (String g : groups) {
      md.append("| ").append(g.replace("|", "\\|")).append(" |");
      for (Result r : results) {
        JsonNode v = r.summary == null ? null : r.summary.path("resources").path("thread_cpu_ms").get(g);
        md.append(' ').append(v == null ? "" : num(v.asDouble() / 1000)).append(" |");
      }
      md.append('\n');
    }
  }

  /** A table header with one right-aligned column per scheduler after {@code first}. */
  private static void appendSchedulerHeader(StringBuilder md, String first, List<Result> results) {
    md.append("| ").append(first).append(" |");
    for (Result r : results) {
      md.append(' ').append(r.scheduler).append(" |");
    }
    md.append("\n|---|");
    for (int i = 0; i < results.size(); i++) {
      md.append("---:|");
    }
    md.append('\n');
  }

  static void write(Path out, List<String> schedulers, SlsInput.Params params, List<SlsInput.Job> jobs)
      throws IOException {
    List<Result> results = new ArrayList<>();
    ObjectMapper mapper = new ObjectMapper();
    for (String s : schedulers) {
      Path dir = out.resolve(SlsCompare.dirName(s));
      Path summary = dir.resolve("summary.json");
      Result r = new Result(s, Files.exists(summary) ? mapper.readTree(summary.toFile()) : null);
      readRuntimes(dir.resolve("jobruntime.csv"), r);
      results.add(r);
    }
    long tasks = 0;
    for (SlsInput.Job j : jobs) {
      tasks += j.mapMs.length + j.reduceMs.length;
    }
    StringBuilder md = new StringBuilder();
    md.append("# SLS: scheduler cost and job runtimes at scale\n\n");
    md.append("Generated by `make sls` (exact command in `COMMAND`); how it works: `docs/sls.md`.\n\n");
    md.append(String.format(Locale.ROOT, "Input: %d simulated node managers, %d applications, %d tasks (%s). "
        + "hadoop-sls 3.4.2, in-process RM, one JVM per scheduler, run one after the other on the same input.%n%n",
        params.nodes, jobs.size(), tasks, params));
    md.append("## Per-NODE_UPDATE handling cost: Circumflex / Hadoop\n\n");
    md.append("Ratio of the mean of SLS's `handle.NODE_UPDATE` timer (target: at most 0.5).\n\n");
    md.append("| Circumflex policy | NODE_UPDATE mean (us) | / FairScheduler | / CapacityScheduler | target <= 0.5 |\n");
    md.append("|---|---:|---:|---:|---|\n");
    Result fair = find(results, "fair");
    Result cap = find(results, "capacity");
    for (Result r : results) {
      if (!r.scheduler.startsWith("circumflex:")) {
        continue;
      }
      double mine = r.timer("handle.NODE_UPDATE", "mean_us");
      double toFair = fair == null ? Double.NaN : mine / fair.timer("handle.NODE_UPDATE", "mean_us");
      double toCap = cap == null ? Double.NaN : mine / cap.timer("handle.NODE_UPDATE", "mean_us");
      boolean met = toFair <= 0.5 && toCap <= 0.5;
      md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s |%n", r.scheduler, num(mine), ratio(toFair),
          ratio(toCap), Double.isNaN(toFair) || Double.isNaN(toCap) ? "n/a" : met ? "met" : "missed"));
    }
    appendBusyIdle(md, results, fair, cap);
    md.append("\n## SLS's per-operation timers\n\n");
    md.append("From SLS's `SchedulerMetrics` timers (calls: the whole run; statistics: over the timer window, "
        + "`yarn.sls.metrics.timer.window.size` last calls; microseconds).\n\n");
    md.append("| scheduler | apps done | wall (s) | NODE_UPDATE calls | mean | p50 | p90 | p99 | max "
        + "| handle (all) mean | allocate calls | allocate mean | allocate p99 |\n");
    md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (Result r : results) {
      String apps = r.summary == null ? "no result"
          : (r.summary.path("apps").asInt() - r.summary.path("remaining").asInt()) + "/" + r.summary.path("apps").asInt()
              + (r.summary.path("fallback").isNull() ? "" : " FALLBACK");
      md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%n",
          r.scheduler, apps, r.summary == null ? "" : num(r.summary.path("wall_ms").asDouble() / 1000),
          count(r.timer("handle.NODE_UPDATE", "count")), num(r.timer("handle.NODE_UPDATE", "mean_us")),
          num(r.timer("handle.NODE_UPDATE", "p50_us")), num(r.timer("handle.NODE_UPDATE", "p90_us")),
          num(r.timer("handle.NODE_UPDATE", "p99_us")), num(r.timer("handle.NODE_UPDATE", "max_us")),
          num(r.timer("handle", "mean_us")), count(r.timer("allocate", "count")), num(r.timer("allocate", "mean_us")),
          num(r.timer("allocate", "p99_us"))));
    }
    md.append("\nEvery event type SLS timed (mean us, calls):\n\n");
    List<String> events = eventNames(results);
    appendSchedulerHeader(md, "event", results);
    for (String e : events) {
      md.append("| ").append(e).append(" |");
      for (Result r : results) {
        md.append(' ').append(num(r.timer(e, "mean_us"))).append(" (").append(count(r.timer(e, "count"))).append(") |");
      }
      md.append('\n');
    }
    md.append("\n![NODE_UPDATE cost](node-update.svg)\n");
    appendResources(md, results);
    md.append('\n');
    md.append("## Job runtimes\n\n");
    md.append("From SLS's `jobruntime.csv`: simulated end - simulated start of each application (s).\n\n");
    md.append("| scheduler | jobs | mean | p50 | p90 | max | makespan |\n|---|---:|---:|---:|---:|---:|---:|\n");
    for (Result r : results) {
      double[] s = sortedSeconds(r.runtimesMs);
      md.append(String.format(Locale.ROOT, "| %s | %d | %s | %s | %s | %s | %s |%n", r.scheduler, s.length,
          num(mean(s)), num(pct(s, 0.5)), num(pct(s, 0.9)), num(s.length == 0 ? Double.NaN : s[s.length - 1]),
          num(r.makespanMs / 1000.0)));
    }
    md.append("\n![Job runtimes](job-runtimes.svg)\n\n");
    md.append("Raw per-scheduler files beside this report: `summary.json` (timers), `jobruntime.csv` (SLS), "
        + "`sampler.handle.NODE_UPDATE.timecost.csv` (SLS's once-a-second samples of the NODE_UPDATE timer's mean, ns); "
        + "with `--jfr true`, `profile-<scheduler>.txt` beside this report (JFR top frames under the NODE_UPDATE "
        + "handling).\n");
    Files.write(out.resolve("report.md"), md.toString().getBytes(StandardCharsets.UTF_8));
    Files.write(out.resolve("node-update.svg"), nodeUpdateSvg(results).getBytes(StandardCharsets.UTF_8));
    Files.write(out.resolve("job-runtimes.svg"), runtimeCdfSvg(results).getBytes(StandardCharsets.UTF_8));
  }

  static void readRuntimes(Path csv, Result r) throws IOException {
    if (!Files.exists(csv)) {
      return;
    }
    long first = Long.MAX_VALUE;
    long last = Long.MIN_VALUE;
    for (String line : Files.readAllLines(csv, StandardCharsets.UTF_8)) {
      String[] f = line.split(",");
      if (f.length < 5 || f[0].equals("JobID")) {
        continue;
      }
      try {
        long start = Long.parseLong(f[3].trim());
        long end = Long.parseLong(f[4].trim());
        r.runtimesMs.add(end - start);
        first = Math.min(first, start);
        last = Math.max(last, end);
      } catch (NumberFormatException e) {
        throw new IOException(csv + ": bad line '" + line + "'", e);
      }
    }
    r.makespanMs = r.runtimesMs.isEmpty() ? 0 : last - first;
  }

  private static Result find(List<Result> results, String name) {
    for (Result r : results) {
      if (r.scheduler.equals(name) && r.summary != null) {
        return r;
      }
    }
    return null;
  }

  private static List<String> eventNames(List<Result> results) {
    Map<String, Boolean> names = new LinkedHashMap<>();
    for (Result r : results) {
      if (r.summary == null) {
        continue;
      }
      Iterator<String> it = r.summary.path("timers").fieldNames();
      while (it.hasNext()) {
        String n = it.next();
        if (n.startsWith("handle.")) {
          names.put(n, true);
        }
      }
    }
    return new ArrayList<>(names.keySet());
  }

  static double[] sortedSeconds(List<Long> ms) {
    double[] s = new double[ms.size()];
    for (int i = 0; i < s.length; i++) {
      s[i] = ms.get(i) / 1000.0;
    }
    Arrays.sort(s);
    return s;
  }

  static double mean(double[] s) {
    if (s.length == 0) {
      return Double.NaN;
    }
    double sum = 0;
    for (double v : s) {
      sum += v;
    }
    return sum / s.length;
  }

  /** Nearest-rank percentile of sorted values. */
  static double pct(double[] s, double q) {
    if (s.length == 0) {
      return Double.NaN;
    }
    int rank = (int) Math.ceil(q * s.length);
    return s[Math.max(0, Math.min(s.length - 1, rank - 1))];
  }

  private static String num(double v) {
    if (Double.isNaN(v)) {
      return "n/a";
    }
    return String.format(Locale.ROOT, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
  }

  private static String ratio(double v) {
    return Double.isNaN(v) || Double.isInfinite(v) ? "n/a" : String.format(Locale.ROOT, "%.2fx", v);
  }

  private static String count(double v) {
    return Double.isNaN(v) ? "0" : String.format(Locale.ROOT, "%.0f", v);
  }

  private static String esc(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
  }

  /** Grouped bars: NODE_UPDATE mean, p50 and p99 per scheduler (microseconds, linear axis). */
  static String nodeUpdateSvg(List<Result> results) {
    String[] cols = {"mean_us", "p50_us", "p99_us"};
    String[] labels = {"mean", "p50", "p99"};
    int w = 760;
    int h = 380;
    int left = 70;
    int bottom = 60;
    int top = 40;
    double max = 0;
    for (Result r : results) {
      for (String c : cols) {
        double v = r.timer("handle.NODE_UPDATE", c);
        if (!Double.isNaN(v)) {
          max = Math.max(max, v);
        }
      }
    }
    max = niceCeil(max);
    StringBuilder b = header(w, h, "SLS handle(NODE_UPDATE) cost per scheduler (microseconds)");
    axisY(b, left, top, w - 20, h - bottom, max, "us");
    double groupW = (w - left - 20.0) / Math.max(1, results.size());
    double barW = groupW * 0.8 / cols.length;
    for (int g = 0; g < results.size(); g++) {
      Result r = results.get(g);
      double x0 = left + g * groupW + groupW * 0.1;
      for (int c = 0; c < cols.length; c++) {
        double v = r.timer("handle.NODE_UPDATE", cols[c]);
        if (Double.isNaN(v) || max <= 0) {
          continue;
        }
        double bh = (h - bottom - top) * v / max;
        b.append(String.format(Locale.ROOT, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s'/>%n",
            x0 + c * barW, h - bottom - bh, barW * 0.95, bh, COLORS[c]));
      }
      b.append(String.format(Locale.ROOT, "<text x='%.1f' y='%d' font-size='12' text-anchor='middle'>%s</text>%n",
          x0 + groupW * 0.4, h - bottom + 18, esc(r.scheduler)));
    }
    legend(b, labels, w - 150, top + 5);
    return b.append("</svg>\n").toString();
  }

  /** Empirical CDF of job runtimes per scheduler. */
  static String runtimeCdfSvg(List<Result> results) {
    int w = 760;
    int h = 420;
    int left = 70;
    int bottom = 50;
    int top = 40;
    int right = 20;
    double max = 0;
    for (Result r : results) {
      for (long ms : r.runtimesMs) {
        max = Math.max(max, ms / 1000.0);
      }
    }
    max = niceCeil(max);
    StringBuilder b = header(w, h, "Job runtime CDF (s): SLS jobruntime.csv");
    axisY(b, left, top, w - right, h - bottom, 1.0, "");
    for (int i = 0; i <= 5; i++) {
      double x = left + (w - left - right) * i / 5.0;
      b.append(String.format(Locale.ROOT, "<text x='%.1f' y='%d' font-size='11' text-anchor='middle'>%s</text>%n", x,
          h - bottom + 16, num(max * i / 5.0)));
    }
    String[] names = new String[results.size()];
    for (int k = 0; k < results.size(); k++) {
      Result r = results.get(k);
      names[k] = r.scheduler;
      double[] s = sortedSeconds(r.runtimesMs);
      if (s.length == 0 || max <= 0) {
        continue;
      }
      StringBuilder pts = new StringBuilder();
      for (int i = 0; i < s.length; i++) {
        double x = left + (w - left - right) * s[i] / max;
        double y0 = h - bottom - (h - bottom - top) * (double) i / s.length;
        double y1 = h - bottom - (h - bottom - top) * (double) (i + 1) / s.length;
        pts.append(String.format(Locale.ROOT, "%.1f,%.1f %.1f,%.1f ", x, y0, x, y1));
      }
      b.append(String.format(Locale.ROOT, "<polyline fill='none' stroke='%s' stroke-width='1.5' points='%s'/>%n",
          COLORS[k % COLORS.length], pts.toString().trim()));
    }
    legend(b, names, w - 190, h - bottom - 20 * names.length - 10);
    return b.append("</svg>\n").toString();
  }

  private static StringBuilder header(int w, int h, String title) {
    StringBuilder b = new StringBuilder();
    b.append(String.format(Locale.ROOT, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' "
        + "font-family='sans-serif'>%n<rect width='100%%' height='100%%' fill='white'/>%n", w, h));
    b.append(String.format(Locale.ROOT, "<text x='%d' y='22' font-size='15' text-anchor='middle'>%s</text>%n", w / 2,
        esc(title)));
    return b;
  }

  private static void axisY(StringBuilder b, int left, int top, int right, int base, double max, String unit) {
    b.append(String.format(Locale.ROOT, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='black'/>%n", left, base, right,
        base));
    b.append(String.format(Locale.ROOT, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='black'/>%n", left, top, left,
        base));
    for (int i = 0; i <= 5; i++) {
      double y = base - (base - top) * i / 5.0;
      b.append(String.format(Locale.ROOT, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='#ddd'/>%n", left, y,
          right, y));
      b.append(String.format(Locale.ROOT, "<text x='%d' y='%.1f' font-size='11' text-anchor='end'>%s%s</text>%n",
          left - 5, y + 4, num(max * i / 5.0), unit.isEmpty() ? "" : " " + unit));
    }
  }

  private static void legend(StringBuilder b, String[] labels, int x, int y) {
    for (int i = 0; i < labels.length; i++) {
      b.append(String.format(Locale.ROOT, "<rect x='%d' y='%d' width='12' height='12' fill='%s'/>%n", x, y + i * 20,
          COLORS[i % COLORS.length]));
      b.append(String.format(Locale.ROOT, "<text x='%d' y='%d' font-size='12'>%s</text>%n", x + 18, y + i * 20 + 11,
          esc(labels[i])));
    }
  }

  private static double niceCeil(double v) {
    if (v <= 0 || Double.isNaN(v)) {
      return 1;
    }
    double p = Math.pow(10, Math.floor(Math.log10(v)));
    for (double m : new double[] {1, 2, 2.5, 5, 10}) {
      if (m * p >= v) {
        return m * p;
      }
    }
    return 10 * p;
  }
}
