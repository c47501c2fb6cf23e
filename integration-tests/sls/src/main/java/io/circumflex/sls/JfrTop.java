package io.circumflex.sls;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedMethod;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/**
 * Where a scheduler operation spends its time, from a Java Flight Recording of an SLS run: reads the
 * {@code jdk.ExecutionSample} events, keeps the samples whose stack passes through a frame named by
 * {@code root} (e.g. {@code CircumflexScheduler.nodeUpdate}), and prints the top frames of those
 * samples two ways: self (the frame on top of the stack, where the CPU was) and inclusive (every
 * distinct method between the root frame and the top, counted once per sample). Text only, for
 * {@code results/sls/profile-*.txt}.
 *
 * <p>Record with {@code -XX:StartFlightRecording=filename=F.jfr,settings=profile,method-profiling=max}
 * (1 ms sampling) on the SLS child JVM ({@code SlsCompare --jfr true}).
 */
public final class JfrTop {
  private JfrTop() {}

  /** A frame's display name: {@code SimpleClass.method}. */
  static String name(RecordedFrame frame) {
    RecordedMethod m = frame.getMethod();
    if (m == null || m.getType() == null) {
      return "<unknown>";
    }
    String type = m.getType().getName();
    int dot = type.lastIndexOf('.');
    return type.substring(dot + 1) + "." + m.getName();
  }

  /** Writes the summary of {@code jfr} for stacks through {@code root} (top {@code top} rows) to {@code out}. */
  static void summarize(Path jfr, String root, int top, PrintStream out) throws IOException {
    Map<String, Integer> self = new HashMap<>();
    Map<String, Integer> inclusive = new HashMap<>();
    int all = 0;
    int matched = 0;
    for (RecordedEvent event : RecordingFile.readAllEvents(jfr)) {
      if (!"jdk.ExecutionSample".equals(event.getEventType().getName())) {
        continue;
      }
      all++;
      RecordedStackTrace stack = event.getStackTrace();
      if (stack == null) {
        continue;
      }
      List<RecordedFrame> frames = stack.getFrames(); // top of stack first
      int rootAt = -1;
      for (int i = frames.size() - 1; i >= 0; i--) {
        if (name(frames.get(i)).equals(root)) {
          rootAt = i;
          break;
        }
      }
      if (rootAt < 0) {
        continue;
      }
      matched++;
      self.merge(frames.isEmpty() ? "<empty>" : name(frames.get(0)), 1, Integer::sum);
      Set<String> seen = new HashSet<>();
      for (int i = 0; i <= rootAt; i++) {
        String n = name(frames.get(i));
        if (seen.add(n)) {
          inclusive.merge(n, 1, Integer::sum);
        }
      }
    }
    out.printf(Locale.ROOT, "recording: %s%n", jfr.getFileName());
    out.printf(Locale.ROOT, "execution samples: %d in all, %d with %s on the stack%n%n", all, matched, root);
    print(out, "self (top-of-stack frame) within " + root, self, matched, top);
    print(out, "inclusive (on the stack, once per sample) within " + root, inclusive, matched, top);
  }

  private static void print(PrintStream out, String title, Map<String, Integer> counts, int total, int top) {
    out.println(title + ":");
    List<Map.Entry<String, Integer>> rows = new ArrayList<>(counts.entrySet());
    rows.sort((a, b) -> b.getValue() != a.getValue().intValue() ? b.getValue() - a.getValue()
        : a.getKey().compareTo(b.getKey()));
    for (int i = 0; i < Math.min(top, rows.size()); i++) {
      Map.Entry<String, Integer> r = rows.get(i);
      out.printf(Locale.ROOT, "  %6d  %5.1f%%  %s%n", r.getValue(), total == 0 ? 0.0 : 100.0 * r.getValue() / total,
          r.getKey());
    }
    out.println();
  }

  /** {@code JfrTop <recording.jfr> <root frame, e.g. CircumflexScheduler.nodeUpdate> [out.txt] [top N]}. */
  public static void main(String[] args) throws IOException {
    if (args.length < 2 || args.length > 4) {
      System.err.println("usage: JfrTop <recording.jfr> <SimpleClass.method> [out.txt] [top N]");
      System.exit(2);
    }
    int top = args.length == 4 ? Integer.parseInt(args[3]) : 30;
    if (args.length >= 3) {
      try (PrintStream out = new PrintStream(Files.newOutputStream(Paths.get(args[2])), true, StandardCharsets.UTF_8)) {
        summarize(Paths.get(args[0]), args[1], top, out);
      }
    } else {
      summarize(Paths.get(args[0]), args[1], top, System.out);
    }
  }
}
