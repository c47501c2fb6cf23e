package io.circumflex.it.yarn;

import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import io.circumflex.it.yarn.MiniCircumflexCluster.JobSpec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.mapreduce.Job;
import org.junit.Test;

/**
 * FlowFlex on a real MiniMRYarnCluster: a driver runs two flows of dependent MapReduce sleep jobs
 * ({@code first -> second} each), submitting a job only when its predecessor has finished, with
 * Hadoop's workflow keys set as Pig, Hive and Oozie set them. The engine's plan must group the jobs
 * into the two flows and know each flow's second job before it is submitted; every job must succeed.
 */
public class FlowFlexIT {
  private static final String[][] FLOWS = {{"flow-a", "a1", "a2"}, {"flow-b", "b1", "b2"}};

  private static Map<String, String> flowflex() {
    Map<String, String> keys = new HashMap<>();
    keys.put("circumflex.policy", "flowflex");
    keys.put("circumflex.objective", "avg_response_time");
    keys.put("circumflex.epoch.ms", "500");
    return keys;
  }

  /** The workflow keys of node {@code node} of {@code flow} = {id, first, second}. */
  private static Map<String, String> workflowKeys(String[] flow, String node) {
    Map<String, String> keys = new HashMap<>();
    keys.put("mapreduce.workflow.id", flow[0]);
    keys.put("mapreduce.workflow.node.name", node);
    keys.put("mapreduce.workflow.adjacency." + flow[1], flow[2]);
    return keys;
  }

  /** Runs one flow: its first job, then (once that finished) its second. True when both succeed. */
  private static boolean runFlow(MiniCircumflexCluster cluster, String[] flow) throws Exception {
    for (int i = 1; i <= 2; i++) {
      Job job = cluster.sleepJob(new JobSpec(flow[i], 2, 0, 1000), workflowKeys(flow, flow[i]));
      job.submit();
      if (!job.waitForCompletion(false)) {
        return false;
      }
    }
    return true;
  }

  @Test
  public void planGroupsJobsIntoFlowsAndKnowsUnsubmittedSuccessors() throws Exception {
    try (MiniCircumflexCluster cluster = MiniCircumflexCluster.start("it-flowflex", flowflex(), 2)) {
      ExecutorService drivers = Executors.newFixedThreadPool(FLOWS.length);
      try {
        List<Future<Boolean>> flows = new ArrayList<>();
        for (String[] flow : FLOWS) {
          flows.add(drivers.submit(() -> runFlow(cluster, flow)));
        }
        // While the first jobs run, the plan must show both flows with their unsubmitted second job.
        String seen = null;
        long until = System.currentTimeMillis() + 60_000;
        while (seen == null && System.currentTimeMillis() < until && !allDone(flows)) {
          String plan = cluster.scheduler().planJson();
          if (plan != null && knowsBothFlows(plan)) {
            seen = plan;
          } else {
            Thread.sleep(200);
          }
        }
        assertTrue("the plan never showed both flows with their unsubmitted successors; last plan: "
            + cluster.scheduler().planJson(), seen != null);
        System.out.println("flowflex: plan with both flows: " + seen);
        for (int i = 0; i < flows.size(); i++) {
          assertTrue("every job of " + FLOWS[i][0] + " must succeed", flows.get(i).get(120, TimeUnit.SECONDS));
        }
      } finally {
        drivers.shutdownNow();
      }
      assertFalse("no fallback: " + cluster.scheduler().getFallbackCause(), cluster.scheduler().isFallbackActive());
    }
  }

  private static boolean allDone(List<Future<Boolean>> flows) {
    return flows.stream().allMatch(Future::isDone);
  }

  /** Both flows planned, each with its second node unsubmitted and preceded by the first. */
  private static boolean knowsBothFlows(String plan) {
    for (String[] flow : FLOWS) {
      boolean grouped = plan.contains("\"flow_id\":\"" + flow[0] + "\"");
      boolean future = plan.contains("{\"name\":\"" + flow[2] + "\",\"job\":null,\"predecessors\":[\"" + flow[1] + "\"]}");
      boolean first = plan.contains("{\"name\":\"" + flow[1] + "\",\"job\":");
      if (!(grouped && future && first)) {
        return false;
      }
    }
    return true;
  }
}
