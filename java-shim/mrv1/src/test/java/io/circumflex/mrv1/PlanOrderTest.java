package io.circumflex.mrv1;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.util.Arrays;
import org.junit.Test;

public class PlanOrderTest {
  @Test
  public void readsJobIdsInPlanOrder() {
    String plan = "{\"computed_at\":12,\"entries\":[{\"job\":3,\"target\":[2,0],\"predicted_completion_ms\":null},"
        + "{\"job\":0,\"target\":[1,1],\"predicted_completion_ms\":500},{\"job\": 17,\"target\":[0,0]}]}";
    assertEquals(Arrays.asList(3, 0, 17), PlanOrder.jobIds(plan));
  }

  @Test
  public void emptyOrUnreadablePlansGiveNoOrder() {
    assertTrue(PlanOrder.jobIds(null).isEmpty());
    assertTrue(PlanOrder.jobIds("{\"computed_at\":0,\"entries\":[]}").isEmpty());
    assertTrue(PlanOrder.jobIds("not json").isEmpty());
    assertTrue("ids out of int range are skipped", PlanOrder.jobIds("{\"entries\":[{\"job\":99999999999}]}").isEmpty());
  }
}
