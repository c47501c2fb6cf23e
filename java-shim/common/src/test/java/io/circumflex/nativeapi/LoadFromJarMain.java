package io.circumflex.nativeapi;

/**
 * Run in a child JVM by {@link NativeLoaderTest}: loads the library (java.library.path deliberately
 * empty, so it must come from the jar resource) and prints where it came from and the version.
 */
public final class LoadFromJarMain {
  private LoadFromJarMain() {}

  public static void main(String[] args) {
    String version = NativeEngine.init("warn");
    try (NativeEngine engine = NativeEngine.create(java.util.Collections.singletonMap("circumflex.policy", "fair"))) {
      engine.tick(0);
    }
    System.out.println("loaded " + version + " from " + NativeLoader.source());
  }
}
