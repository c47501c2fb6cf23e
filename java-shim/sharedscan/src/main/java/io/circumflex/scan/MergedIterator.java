package io.circumflex.scan;

import java.io.IOException;
import java.util.List;
import java.util.PriorityQueue;
import org.apache.hadoop.io.DataInputBuffer;
import org.apache.hadoop.io.RawComparator;
import org.apache.hadoop.mapred.RawKeyValueIterator;
import org.apache.hadoop.util.Progress;

/**
 * A k-way merge of sorted {@link RawKeyValueIterator}s under the job's raw sort comparator: a rider's
 * reduce input is its own shuffle's output merged with the runs its drivers wrote for it. Ties go to
 * the lower-numbered source, so the merge is deterministic.
 */
final class MergedIterator implements RawKeyValueIterator {
  private final List<RawKeyValueIterator> sources;
  private final RawComparator<?> comparator;
  private final PriorityQueue<Integer> heap;
  private final Progress progress;
  private RawKeyValueIterator current;
  private boolean started;

  MergedIterator(List<RawKeyValueIterator> sources, RawComparator<?> comparator, Progress progress) {
    this.sources = sources;
    this.comparator = comparator;
    this.progress = progress;
    this.heap = new PriorityQueue<>(Math.max(1, sources.size()), this::compare);
  }

  private int compare(Integer a, Integer b) {
    try {
      DataInputBuffer ka = sources.get(a).getKey();
      DataInputBuffer kb = sources.get(b).getKey();
      int c = comparator.compare(ka.getData(), ka.getPosition(), ka.getLength() - ka.getPosition(),
          kb.getData(), kb.getPosition(), kb.getLength() - kb.getPosition());
      return c != 0 ? c : Integer.compare(a, b);
    } catch (IOException e) {
      // getKey() of an iterator positioned on a record does not read; a failure here is a bug.
      throw new IllegalStateException("merge: key of source unavailable", e);
    }
  }

  @Override
  public boolean next() throws IOException {
    if (!started) {
      started = true;
      for (int i = 0; i < sources.size(); i++) {
        if (sources.get(i).next()) {
          heap.add(i);
        }
      }
    } else if (current != null) {
      int i = heap.poll();
      if (sources.get(i).next()) {
        heap.add(i);
      }
    }
    if (heap.isEmpty()) {
      current = null;
      return false;
    }
    current = sources.get(heap.peek());
    return true;
  }

  @Override
  public DataInputBuffer getKey() throws IOException {
    return current.getKey();
  }

  @Override
  public DataInputBuffer getValue() throws IOException {
    return current.getValue();
  }

  @Override
  public void close() throws IOException {
    IOException first = null;
    for (RawKeyValueIterator s : sources) {
      try {
        s.close();
      } catch (IOException e) {
        if (first == null) {
          first = e;
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }

  @Override
  public Progress getProgress() {
    return progress;
  }
}
