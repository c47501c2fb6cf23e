package io.circumflex.scan;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import org.apache.hadoop.mapreduce.Mapper;

/**
 * Calls a job's {@link Mapper} piecewise (setup, map per record, cleanup), which a C-mapper needs to
 * feed one record to several jobs' map functions in turn. Those methods are {@code protected} in
 * Hadoop's API, so they are reached by reflection once per class, not per record.
 *
 * <p>Consequence, documented in docs/shared-scans.md: a mapper that overrides {@code run()} is driven
 * through setup/map/cleanup when it shares a scan.
 */
final class MapperCalls {
  private static final Method SETUP;
  private static final Method MAP;
  private static final Method CLEANUP;

  static {
    try {
      SETUP = Mapper.class.getDeclaredMethod("setup", Mapper.Context.class);
      MAP = Mapper.class.getDeclaredMethod("map", Object.class, Object.class, Mapper.Context.class);
      CLEANUP = Mapper.class.getDeclaredMethod("cleanup", Mapper.Context.class);
      SETUP.setAccessible(true);
      MAP.setAccessible(true);
      CLEANUP.setAccessible(true);
    } catch (NoSuchMethodException e) {
      // Mapper has had these three methods since the new API appeared (Hadoop 0.20).
      throw new ExceptionInInitializerError(e);
    }
  }

  private MapperCalls() {}

  static void setup(Mapper<?, ?, ?, ?> m, Mapper<?, ?, ?, ?>.Context c) throws IOException, InterruptedException {
    invoke(SETUP, m, c);
  }

  static void map(Mapper<?, ?, ?, ?> m, Object key, Object value, Mapper<?, ?, ?, ?>.Context c)
      throws IOException, InterruptedException {
    invoke(MAP, m, key, value, c);
  }

  static void cleanup(Mapper<?, ?, ?, ?> m, Mapper<?, ?, ?, ?>.Context c) throws IOException, InterruptedException {
    invoke(CLEANUP, m, c);
  }

  private static void invoke(Method method, Object target, Object... args) throws IOException, InterruptedException {
    try {
      method.invoke(target, args);
    } catch (InvocationTargetException e) {
      Throwable cause = e.getCause();
      if (cause instanceof IOException) {
        throw (IOException) cause;
      }
      if (cause instanceof InterruptedException) {
        throw (InterruptedException) cause;
      }
      if (cause instanceof RuntimeException) {
        throw (RuntimeException) cause;
      }
      if (cause instanceof Error) {
        throw (Error) cause;
      }
      throw new IOException(cause);
    } catch (IllegalAccessException e) {
      throw new IOException("cannot call " + method + " on " + target.getClass().getName(), e);
    }
  }
}
