package io.circumflex.mrv1;

import java.util.Map;
import java.util.TreeMap;

/**
 * Collects configuration keys to forward to the native engine. The shim only collects: parsing and
 * validation belong to the Rust side ({@code config::EngineConfig::from_pairs} for scheduler keys,
 * {@code config::job_spec_from_conf} for job keys), so both Hadoop lines validate the same way.
 */
public final class ConfKeys {
  /** Prefix of every scheduler key. */
  public static final String PREFIX = "circumflex.";
  /** Prefix of per-job keys, which are not scheduler settings. */
  public static final String JOB_PREFIX = "circumflex.job.";
  /** Prefix of keys the MRv1 shim reads itself (never forwarded: the engine would hand them to the policy). */
  public static final String SHIM_PREFIX = "circumflex.mrv1.";
  /** Native log level ({@code env_logger} syntax, default {@code warn}); read at start and at every refresh. */
  public static final String NATIVE_LOG = "circumflex.mrv1.native.log";
  /** The pool-mode key; MRv1 has separate map and reduce slots, so the shim defaults it to split. */
  public static final String POOL_MODE = "circumflex.pool.mode";

  private ConfKeys() {}

  /**
   * The scheduler's {@code circumflex.*} keys (not {@code circumflex.job.*} nor the shim's own
   * {@code circumflex.mrv1.*}), with
   * {@code circumflex.pool.mode=split} unless the operator set it. Values are taken as given: the
   * caller passes entries whose values Hadoop has already resolved.
   */
  public static Map<String, String> schedulerKeys(Iterable<Map.Entry<String, String>> conf) {
    Map<String, String> keys = new TreeMap<String, String>();
    for (Map.Entry<String, String> e : conf) {
      String k = e.getKey();
      if (k != null && k.startsWith(PREFIX) && !k.startsWith(JOB_PREFIX) && !k.startsWith(SHIM_PREFIX)
          && e.getValue() != null) {
        keys.put(k, e.getValue());
      }
    }
    if (!keys.containsKey(POOL_MODE)) {
      keys.put(POOL_MODE, "split");
    }
    return keys;
  }

  /**
   * Every key of a job's configuration (the engine ignores those it does not know), plus
   * {@code mapreduce.job.id} set to the Hadoop job id so engine reports name the job.
   */
  public static Map<String, String> jobKeys(Iterable<Map.Entry<String, String>> jobConf, String jobId) {
    Map<String, String> keys = new TreeMap<String, String>();
    for (Map.Entry<String, String> e : jobConf) {
      if (e.getKey() != null && e.getValue() != null) {
        keys.put(e.getKey(), e.getValue());
      }
    }
    keys.put("mapreduce.job.id", jobId);
    return keys;
  }
}
