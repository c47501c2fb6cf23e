package io.circumflex.mrv1;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.Test;

public class ConfKeysTest {
  @Test
  public void schedulerKeysKeepOnlyEngineSettingsAndDefaultToSplitPools() {
    Map<String, String> conf = new LinkedHashMap<String, String>();
    conf.put("circumflex.policy", "fair");
    conf.put("circumflex.job.weight", "2");
    conf.put("circumflex.mrv1.tick.ms", "50");
    conf.put("mapred.job.tracker", "localhost:1");
    Map<String, String> keys = ConfKeys.schedulerKeys(conf.entrySet());
    assertEquals("fair", keys.get("circumflex.policy"));
    assertEquals("split", keys.get("circumflex.pool.mode"));
    assertEquals(2, keys.size());
  }

  @Test
  public void anExplicitPoolModeIsLeftForTheEngineToValidate() {
    Map<String, String> conf = new LinkedHashMap<String, String>();
    conf.put("circumflex.pool.mode", "sideways");
    assertEquals("sideways", ConfKeys.schedulerKeys(conf.entrySet()).get("circumflex.pool.mode"));
  }

  @Test
  public void jobKeysForwardEverythingAndNameTheJob() {
    Map<String, String> conf = new LinkedHashMap<String, String>();
    conf.put("mapred.map.tasks", "4");
    conf.put("circumflex.job.weight", "abc");
    conf.put("mapreduce.workflow.id", "flow1");
    conf.put("unset.value", null);
    Map<String, String> keys = ConfKeys.jobKeys(conf.entrySet(), "job_1_0001");
    assertEquals("4", keys.get("mapred.map.tasks"));
    assertEquals("abc", keys.get("circumflex.job.weight"));
    assertEquals("flow1", keys.get("mapreduce.workflow.id"));
    assertEquals("job_1_0001", keys.get("mapreduce.job.id"));
    assertFalse("entries without a value are not forwarded", keys.containsKey("unset.value"));
  }
}
