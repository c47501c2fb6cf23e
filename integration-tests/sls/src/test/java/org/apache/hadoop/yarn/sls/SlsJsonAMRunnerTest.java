package org.apache.hadoop.yarn.sls;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.junit.Test;

public class SlsJsonAMRunnerTest {
  @SuppressWarnings("unchecked")
  private static Map<String, Object> parse(String json) throws Exception {
    return new ObjectMapper().readValue(json, Map.class);
  }

  @Test
  @SuppressWarnings({"unchecked", "rawtypes"})
  public void numbersBecomeStringsAndTasksStayAList() throws Exception {
    Map<String, String> job = SlsJsonAMRunner.asSlsJob(parse("{\"job.start.ms\": 1500, \"job.id\": \"j1\", "
        + "\"job.tasks\": [{\"container.duration.ms\": 2000, \"container.host\": \"/r/n\"}]}"));
    assertEquals("1500", job.get("job.start.ms"));
    assertEquals("j1", job.get("job.id"));
    List<Map<String, String>> tasks = (List) ((Map) job).get("job.tasks");
    assertEquals(1, tasks.size());
    assertEquals("2000", tasks.get(0).get("container.duration.ms"));
    assertEquals("/r/n", tasks.get(0).get("container.host"));
  }

  @Test
  public void tasksThatAreNotAnArrayAreRefused() throws Exception {
    try {
      SlsJsonAMRunner.asSlsJob(parse("{\"job.tasks\": 3}"));
      fail("job.tasks = 3 accepted");
    } catch (YarnException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("job.tasks"));
    }
  }
}
