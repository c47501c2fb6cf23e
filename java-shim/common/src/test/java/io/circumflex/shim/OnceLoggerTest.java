package io.circumflex.shim;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import org.apache.commons.logging.Log;
import org.junit.Test;

public class OnceLoggerTest {
  /** A commons-logging Log that records warn messages. */
  private static Log recording(final List<String> warnings) {
    return (Log) Proxy.newProxyInstance(Log.class.getClassLoader(), new Class<?>[] {Log.class},
        new InvocationHandler() {
          @Override
          public Object invoke(Object proxy, Method method, Object[] args) {
            if (method.getName().equals("warn")) {
              warnings.add(String.valueOf(args[0]));
            }
            return method.getReturnType() == boolean.class ? Boolean.TRUE : null;
          }
        });
  }

  @Test
  public void logsEachDistinctKeyOnceUntilReset() {
    List<String> warnings = new ArrayList<String>();
    OnceLogger once = new OnceLogger(recording(warnings));
    assertTrue(once.warn("tick:boom", "boom", null));
    assertFalse(once.warn("tick:boom", "boom again", new RuntimeException()));
    assertTrue(once.warn("tick:bang", "bang", null));
    assertEquals(2, warnings.size());
    once.reset();
    assertTrue(once.warn("tick:boom", "boom after reset", null));
    assertEquals(3, warnings.size());
  }

  @Test
  public void forgetsTheOldestKeyBeyondTheBound() {
    List<String> warnings = new ArrayList<String>();
    OnceLogger once = new OnceLogger(recording(warnings));
    for (int i = 0; i <= OnceLogger.MAX_KEYS; i++) {
      once.warn("k" + i, "m" + i, null);
    }
    assertEquals(OnceLogger.MAX_KEYS + 1, warnings.size());
    assertTrue("k0 was evicted and may log again", once.warn("k0", "again", null));
    assertFalse("a recent key is still remembered", once.warn("k" + OnceLogger.MAX_KEYS, "again", null));
  }
}
