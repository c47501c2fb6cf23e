package io.circumflex.it.gridmix;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.Map;
import org.junit.Test;

/** The harness's --circumflex-keys: engine keys for a lever under study, refused by name when malformed. */
public class CircumflexKeysTest {

  @Test
  public void keysKeepTheirOrderAndValues() {
    Map<String, String> keys = GridmixEval.circumflexKeys("circumflex.am.max.starting.per.node=1, circumflex.am.max.share=0.4");
    assertEquals("[circumflex.am.max.starting.per.node, circumflex.am.max.share]", keys.keySet().toString());
    assertEquals("1", keys.get("circumflex.am.max.starting.per.node"));
    assertEquals("0.4", keys.get("circumflex.am.max.share"));
    assertTrue(GridmixEval.circumflexKeys("").isEmpty());
  }

  @Test
  public void malformedEntriesAreRefusedByName() {
    for (String bad : new String[] {"circumflex.am.max.starting.per.node", "yarn.x=1", "circumflex.a="}) {
      try {
        GridmixEval.circumflexKeys(bad);
        fail(bad + " was accepted");
      } catch (IllegalArgumentException e) {
        assertTrue(e.getMessage(), e.getMessage().contains(bad));
      }
    }
  }
}
