package io.circumflex.scan;

/**
 * A stable merge sort of an {@code int[]} of record indices under an int comparator: a rider's
 * buffered records are sorted by index without boxing millions of {@code Integer}s in a task heap.
 */
final class IntMergeSort {
  /** Compares two record indices. */
  interface IntComparator {
    int compare(int a, int b);
  }

  private IntMergeSort() {}

  static void sort(int[] a, IntComparator c) {
    int[] tmp = new int[a.length];
    int[] src = a;
    int[] dst = tmp;
    for (int width = 1; width < a.length; width *= 2) {
      for (int lo = 0; lo < a.length; lo += 2 * width) {
        int mid = Math.min(lo + width, a.length);
        int hi = Math.min(lo + 2 * width, a.length);
        int i = lo;
        int j = mid;
        int k = lo;
        while (i < mid && j < hi) {
          // "<= 0" takes from the left run on ties: stable.
          dst[k++] = c.compare(src[i], src[j]) <= 0 ? src[i++] : src[j++];
        }
        while (i < mid) {
          dst[k++] = src[i++];
        }
        while (j < hi) {
          dst[k++] = src[j++];
        }
      }
      int[] t = src;
      src = dst;
      dst = t;
    }
    if (src != a) {
      System.arraycopy(src, 0, a, 0, a.length);
    }
  }
}
