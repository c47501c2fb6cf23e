package io.circumflex.scan;

import org.apache.hadoop.conf.Configured;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.hadoop.util.Tool;
import org.apache.hadoop.util.ToolRunner;

/**
 * The command-line form for existing jobs: everything about the job comes from the usual MapReduce
 * keys ({@code -D mapreduce.job.map.class=...}, {@code mapreduce.job.reduce.class},
 * {@code mapreduce.job.inputformat.class}, output key/value classes, reduces, and optionally
 * {@code circumflex.job.dataset}); arguments are the input path(s) and the output path.
 *
 * <pre>
 * hadoop jar circumflex-sharedscan.jar io.circumflex.scan.SharedScanTool -libjars my-job.jar \
 *   -D circumflex.scan.zk.quorum=zk1:2181 -D mapreduce.job.map.class=my.Mapper ... in1 [in2 ...] out
 * </pre>
 */
public class SharedScanTool extends Configured implements Tool {
  @Override
  public int run(String[] args) throws Exception {
    if (args.length < 2) {
      System.err.println("usage: SharedScanTool [generic options] <input path>... <output path>");
      ToolRunner.printGenericCommandUsage(System.err);
      return 2;
    }
    Job job = Job.getInstance(getConf(), getConf().get("mapreduce.job.name", "shared-scan job"));
    for (int i = 0; i < args.length - 1; i++) {
      FileInputFormat.addInputPath(job, new Path(args[i]));
    }
    FileOutputFormat.setOutputPath(job, new Path(args[args.length - 1]));
    ScanRegistry.Attachment a = SharedScan.submit(job);
    System.err.println(a == null ? "submitted unshared"
        : "member " + a.member + ": drives " + a.drives.size() + " splits, rides " + a.rides.size());
    return job.monitorAndPrintJob() ? 0 : 1;
  }

  public static void main(String[] args) throws Exception {
    System.exit(ToolRunner.run(new SharedScanTool(), args));
  }
}
