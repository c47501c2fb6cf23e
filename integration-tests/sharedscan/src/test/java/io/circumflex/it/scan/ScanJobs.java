package io.circumflex.it.scan;

import java.io.File;
import java.io.IOException;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.input.FileSplit;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;

/**
 * Three different jobs over one text dataset (lines {@code k<id> <number> w<a> w<b> ...}), and its
 * generator: word count (with a combiner), a grep count (tokens matching a pattern) and a per-key sum
 * of the number column (two reduces, long values). Different mappers, value types, reduce counts.
 */
final class ScanJobs {
  private ScanJobs() {}

  /** Writes {@code lines} deterministic lines (seeded) to {@code file}; returns its size in bytes. */
  static long generate(FileSystem fs, Path file, int lines, long seed) throws IOException {
    return generate(fs, file, lines, Long.MAX_VALUE, seed);
  }

  /**
   * Writes deterministic lines (seeded, the same as {@link #generate(FileSystem, Path, int, long)})
   * until the file holds at least {@code bytes} bytes (whole lines); returns its size in bytes.
   */
  static long generateBytes(FileSystem fs, Path file, long bytes, long seed) throws IOException {
    return generate(fs, file, Integer.MAX_VALUE, bytes, seed);
  }

  private static long generate(FileSystem fs, Path file, int lines, long bytes, long seed) throws IOException {
    java.util.Random rnd = new java.util.Random(seed);
    long written = 0;
    try (FSDataOutputStream out = fs.create(file, true)) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < lines && written < bytes; i++) {
        line.setLength(0);
        line.append('k').append(rnd.nextInt(40)).append(' ').append(rnd.nextInt(1000));
        int words = 4 + rnd.nextInt(8);
        for (int w = 0; w < words; w++) {
          // Zipf-like: small ids are frequent, as words are.
          line.append(" w").append((int) Math.floor(Math.pow(rnd.nextDouble(), 3) * 5000));
        }
        line.append('\n');
        byte[] b = line.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        out.write(b);
        written += b.length;
      }
    }
    return fs.getFileStatus(file).getLen();
  }

  /** Word count. With {@code it.pause.dir} set, attempt 0 of the map of the split at offset 0 stops halfway (see below). */
  public static final class WordMapper extends Mapper<LongWritable, Text, Text, IntWritable> {
    private static final IntWritable ONE = new IntWritable(1);
    private final Text word = new Text();
    private long records;

    @Override
    protected void map(LongWritable key, Text value, Context context) throws IOException, InterruptedException {
      String[] tokens = value.toString().split(" ");
      for (int i = 2; i < tokens.length; i++) {
        word.set(tokens[i]);
        context.write(word, ONE);
      }
      if (++records == 500) {
        pauseIfAsked(context);
      }
    }

    /**
     * Test hook for the kill-mid-split scenario: the first attempt of the map over the dataset's
     * first split announces itself with a file named after the attempt in {@code it.pause.dir}, then
     * waits to be killed, so the kill lands mid-split by construction rather than by timing.
     */
    private static void pauseIfAsked(Context context) throws InterruptedException, IOException {
      String dir = context.getConfiguration().get("it.pause.dir");
      if (dir == null || context.getTaskAttemptID().getId() != 0
          || !(context.getInputSplit() instanceof FileSplit)
          || ((FileSplit) context.getInputSplit()).getStart() != 0) {
        return;
      }
      Path marker = new Path(dir, context.getTaskAttemptID().toString());
      FileSystem fs = marker.getFileSystem(context.getConfiguration());
      fs.create(marker, true).close();
      Thread.sleep(120_000);
    }
  }

  public static final class IntSum extends Reducer<Text, IntWritable, Text, IntWritable> {
    private final IntWritable sum = new IntWritable();

    @Override
    protected void reduce(Text key, Iterable<IntWritable> values, Context context) throws IOException, InterruptedException {
      int s = 0;
      for (IntWritable v : values) {
        s += v.get();
      }
      sum.set(s);
      context.write(key, sum);
    }
  }

  /** Counts tokens matching {@code it.grep.pattern}. */
  public static final class GrepMapper extends Mapper<LongWritable, Text, Text, IntWritable> {
    private static final IntWritable ONE = new IntWritable(1);
    private final Text match = new Text();
    private Pattern pattern;

    @Override
    protected void setup(Context context) {
      pattern = Pattern.compile(context.getConfiguration().get("it.grep.pattern", "w1[0-9]"));
    }

    @Override
    protected void map(LongWritable key, Text value, Context context) throws IOException, InterruptedException {
      for (String t : value.toString().split(" ")) {
        if (pattern.matcher(t).matches()) {
          match.set(t);
          context.write(match, ONE);
        }
      }
    }
  }

  /** Sums the number column per key. */
  public static final class SumMapper extends Mapper<LongWritable, Text, Text, LongWritable> {
    private final Text k = new Text();
    private final LongWritable n = new LongWritable();

    @Override
    protected void map(LongWritable key, Text value, Context context) throws IOException, InterruptedException {
      String[] tokens = value.toString().split(" ", 3);
      k.set(tokens[0]);
      n.set(Long.parseLong(tokens[1]));
      context.write(k, n);
      context.getCounter("it", "SUM_RECORDS").increment(1);
    }
  }

  public static final class LongSum extends Reducer<Text, LongWritable, Text, LongWritable> {
    private final LongWritable sum = new LongWritable();

    @Override
    protected void reduce(Text key, Iterable<LongWritable> values, Context context) throws IOException, InterruptedException {
      long s = 0;
      for (LongWritable v : values) {
        s += v.get();
      }
      sum.set(s);
      context.write(key, sum);
    }
  }

  /** The kinds of job, by the example. */
  enum Kind { WORDCOUNT, GREP, SUM }

  /** A job of {@code kind} over {@code input} into {@code output}, splits of {@code splitBytes}. */
  static Job job(Configuration base, Kind kind, Path input, Path output, long splitBytes) throws IOException {
    Job job = Job.getInstance(new Configuration(base), kind.name().toLowerCase());
    FileInputFormat.addInputPath(job, input);
    FileOutputFormat.setOutputPath(job, output);
    job.getConfiguration().setLong(FileInputFormat.SPLIT_MAXSIZE, splitBytes);
    job.setOutputKeyClass(Text.class);
    switch (kind) {
      case WORDCOUNT:
        job.setMapperClass(WordMapper.class);
        job.setCombinerClass(IntSum.class);
        job.setReducerClass(IntSum.class);
        job.setOutputValueClass(IntWritable.class);
        job.setNumReduceTasks(1);
        break;
      case GREP:
        job.setMapperClass(GrepMapper.class);
        job.setReducerClass(IntSum.class);
        job.setOutputValueClass(IntWritable.class);
        job.setNumReduceTasks(1);
        break;
      case SUM:
        job.setMapperClass(SumMapper.class);
        job.setReducerClass(LongSum.class);
        job.setOutputValueClass(LongWritable.class);
        job.setNumReduceTasks(2);
        break;
      default:
        throw new IllegalArgumentException("unknown job kind " + kind);
    }
    job.setMaxMapAttempts(4);
    return job;
  }

  /** The job's output: its part files, in name order, concatenated. */
  static byte[] output(FileSystem fs, Path dir) throws IOException {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    org.apache.hadoop.fs.FileStatus[] parts = fs.listStatus(dir, p -> p.getName().startsWith("part-"));
    java.util.Arrays.sort(parts);
    for (org.apache.hadoop.fs.FileStatus p : parts) {
      try (java.io.InputStream in = fs.open(p.getPath())) {
        org.apache.hadoop.io.IOUtils.copyBytes(in, out, 64 * 1024, false);
      }
    }
    return out.toByteArray();
  }

  static File workDir(String name) {
    String work = System.getProperty("circumflex.it.workdir", "build/it-work");
    return new File(work, name);
  }
}
