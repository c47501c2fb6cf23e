package io.circumflex.scan;

import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.OutputCommitter;
import org.apache.hadoop.mapreduce.OutputFormat;
import org.apache.hadoop.mapreduce.RecordWriter;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;
import org.apache.hadoop.util.ReflectionUtils;

/**
 * The job's own output format, unchanged, except that its committer leaves the scan when the job
 * ends: after commitJob or abortJob (both run in the MapReduce AM, also when the job is killed or
 * fails) the member is detached in ZooKeeper and its files deleted, so finished scans leave no state.
 */
public class SharedScanOutputFormat extends OutputFormat<Object, Object> {
  private OutputFormat<Object, Object> delegate;

  @SuppressWarnings("unchecked")
  private synchronized OutputFormat<Object, Object> delegate(Configuration conf) throws IOException {
    if (delegate == null) {
      String name = conf.get(ScanKeys.ORIG_OUTPUT_FORMAT);
      if (name == null) {
        throw new IOException(ScanKeys.ORIG_OUTPUT_FORMAT + " is unset: the job was not submitted through SharedScan");
      }
      try {
        delegate = (OutputFormat<Object, Object>) ReflectionUtils.newInstance(conf.getClassByName(name), conf);
      } catch (ClassNotFoundException e) {
        throw new IOException("output format class " + name + " (" + ScanKeys.ORIG_OUTPUT_FORMAT + ") not found", e);
      }
    }
    return delegate;
  }

  @Override
  public RecordWriter<Object, Object> getRecordWriter(TaskAttemptContext context) throws IOException, InterruptedException {
    return delegate(context.getConfiguration()).getRecordWriter(context);
  }

  @Override
  public void checkOutputSpecs(JobContext context) throws IOException, InterruptedException {
    delegate(context.getConfiguration()).checkOutputSpecs(context);
  }

  @Override
  public OutputCommitter getOutputCommitter(TaskAttemptContext context) throws IOException, InterruptedException {
    return new LeavingCommitter(delegate(context.getConfiguration()).getOutputCommitter(context), context);
  }

  /**
   * Delegates every call; a {@link PathOutputCommitter} so code that asks the task's committer for
   * its work path ({@code FileOutputFormat.getWorkOutputPath}) still gets the delegate's.
   */
  static final class LeavingCommitter extends PathOutputCommitter {
    private final OutputCommitter d;

    LeavingCommitter(OutputCommitter d, TaskAttemptContext context) throws IOException {
      super(d instanceof PathOutputCommitter ? ((PathOutputCommitter) d).getOutputPath() : null, context);
      this.d = d;
    }

    @Override
    public Path getOutputPath() {
      return d instanceof PathOutputCommitter ? ((PathOutputCommitter) d).getOutputPath() : null;
    }

    @Override
    public Path getWorkPath() throws IOException {
      return d instanceof PathOutputCommitter ? ((PathOutputCommitter) d).getWorkPath() : null;
    }

    @Override
    public void setupJob(JobContext jobContext) throws IOException {
      d.setupJob(jobContext);
      // Again, in case the client could not (SharedScan.submit logs and goes on): the id lets a later
      // client remove this member if the job ends without its committer running.
      SharedScan.recordJobId(jobContext.getConfiguration(), jobContext.getJobID().toString());
    }

    @Override
    public void commitJob(JobContext jobContext) throws IOException {
      try {
        d.commitJob(jobContext);
      } finally {
        SharedScan.cleanup(jobContext.getConfiguration());
      }
    }

    @Override
    public void abortJob(JobContext jobContext, JobStatus.State state) throws IOException {
      try {
        d.abortJob(jobContext, state);
      } finally {
        SharedScan.cleanup(jobContext.getConfiguration());
      }
    }

    @Override
    public void setupTask(TaskAttemptContext taskContext) throws IOException {
      d.setupTask(taskContext);
    }

    @Override
    public boolean needsTaskCommit(TaskAttemptContext taskContext) throws IOException {
      return d.needsTaskCommit(taskContext);
    }

    @Override
    public void commitTask(TaskAttemptContext taskContext) throws IOException {
      d.commitTask(taskContext);
    }

    @Override
    public void abortTask(TaskAttemptContext taskContext) throws IOException {
      d.abortTask(taskContext);
    }

    @Override
    public boolean isRecoverySupported(JobContext jobContext) throws IOException {
      return d.isRecoverySupported(jobContext);
    }

    @Override
    public boolean isCommitJobRepeatable(JobContext jobContext) throws IOException {
      return d.isCommitJobRepeatable(jobContext);
    }

    @Override
    public void recoverTask(TaskAttemptContext taskContext) throws IOException {
      d.recoverTask(taskContext);
    }
  }
}
