package io.circumflex.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import io.circumflex.nativeapi.NativeEngine;
import io.circumflex.shim.EngineGuard;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.junit.Test;

/** The YARN shim's half of preemption without a ResourceManager: which containers, and the strict set. */
public class PreemptionTest {
  private static Preemption.Candidate<String> c(String id, int phase, long start, boolean am) {
    return new Preemption.Candidate<>(id, phase, start, am);
  }

  @Test
  public void victimsAreTheYoungestTasksOfThePhaseNeverTheAmNorOnesAlreadyAsked() {
    List<Preemption.Candidate<String>> live = Arrays.asList(
        c("am", -1, 900, true), // the AM container: the youngest of all, never chosen
        c("m-old", NativeEngine.MAP, 100, false),
        c("m-mid", NativeEngine.MAP, 500, false),
        c("m-young", NativeEngine.MAP, 800, false),
        c("r-young", NativeEngine.REDUCE, 850, false),
        c("unknown", -1, 870, false)); // not an engine task (e.g. recovered without a record)
    assertEquals(Arrays.asList("m-young", "m-mid"),
        Preemption.youngestFirst(live, NativeEngine.MAP, 2, Collections.<String>emptySet()));
    assertEquals("already asked back: the next youngest", Arrays.asList("m-mid", "m-old"),
        Preemption.youngestFirst(live, NativeEngine.MAP, 5, new HashSet<>(Collections.singleton("m-young"))));
    assertEquals(Collections.singletonList("r-young"),
        Preemption.youngestFirst(live, NativeEngine.REDUCE, 3, Collections.<String>emptySet()));
    assertTrue(Preemption.youngestFirst(live, NativeEngine.MAP, 0, Collections.<String>emptySet()).isEmpty());
  }

  @Test
  public void theStrictSetIsResentUntilTheContainerIsGoneAndDueAfterTheGrace() {
    Configuration conf = new Configuration(false);
    conf.set("circumflex.preemption.grace.ms", "3000");
    Preemption p = new Preemption(new EngineGuard(LogFactory.getLog(PreemptionTest.class)), null);
    p.configure(conf);
    ApplicationAttemptId attempt = ApplicationAttemptId.newInstance(ApplicationId.newInstance(1, 7), 1);
    ApplicationAttemptId other = ApplicationAttemptId.newInstance(ApplicationId.newInstance(1, 8), 1);
    ContainerId a = ContainerId.newContainerId(attempt, 2);
    ContainerId b = ContainerId.newContainerId(attempt, 3);
    assertNull("nothing asked: allocate passes null, as before preemption", p.strictFor(attempt));
    p.ask(a, 1_000);
    p.ask(b, 2_000);
    Set<ContainerId> expected = new HashSet<>(Arrays.asList(a, b));
    assertEquals(expected, p.strictFor(attempt));
    assertEquals("resent on the next allocate", expected, p.strictFor(attempt));
    assertNull("another application is asked nothing", p.strictFor(other));
    assertTrue("not due within the grace", p.due(3_999).isEmpty());
    assertEquals(Collections.singletonList(a), p.due(4_000));
    assertEquals(Arrays.asList(a, b), p.due(5_000));
    assertTrue("a asked back and gone", p.gone(a));
    assertFalse("reported once", p.gone(a));
    assertEquals(Collections.singleton(b), p.strictFor(attempt));
    assertEquals(1, p.inFlight());
    p.applicationDone(attempt.getApplicationId());
    assertNull(p.strictFor(attempt));
    assertEquals(0, p.inFlight());
    assertFalse("a container never asked back is an ordinary end", p.gone(ContainerId.newContainerId(other, 2)));
  }
}
