package io.circumflex.sls;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import org.junit.Test;

public class SlsCompareTest {
  /** 1,000 NMs keep sls-runner.xml's window; larger clusters get about 300 s of heartbeats. */
  @Test
  public void timerWindowCoversAboutThreeHundredSecondsOfHeartbeats() {
    assertEquals(300_000, SlsCompare.defaultTimerWindow(20));
    assertEquals(300_000, SlsCompare.defaultTimerWindow(1000));
    assertEquals(900_000, SlsCompare.defaultTimerWindow(3000));
  }

  @Test
  public void heapSizeIsCheckedBeforeAnyRun() {
    assertEquals("6g", SlsCompare.heapSize("6g"));
    assertEquals("4096m", SlsCompare.heapSize("4096m"));
    try {
      SlsCompare.heapSize("-Xmx6g");
      throw new AssertionError("accepted a malformed heap size");
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("--heap"));
    }
  }

  @Test
  public void threadGroupsFoldDigits() {
    assertEquals("pool-N-thread-N", SlsRun.threadGroup("pool-12-thread-7"));
    assertEquals("SchedulerEventDispatcher:Event Processor", SlsRun.threadGroup("SchedulerEventDispatcher:Event Processor"));
  }
}
