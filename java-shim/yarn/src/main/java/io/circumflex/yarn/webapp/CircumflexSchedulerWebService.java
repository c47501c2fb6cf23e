package io.circumflex.yarn.webapp;

import com.google.inject.Inject;
import io.circumflex.yarn.CircumflexScheduler;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import javax.ws.rs.core.MediaType;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;

/**
 * {@code GET /ws/v1/cluster/scheduler} for Circumflex.
 *
 * <p>{@code RMWebServices.getSchedulerInfo} only knows the Capacity, Fair and Fifo schedulers and
 * answers 404 ("Unknown scheduler configured") for any other. This resource is registered through
 * {@code yarn.http.rmwebapp.external.classes} (which {@code CircumflexScheduler} appends itself to)
 * and declares the longer path {@code /ws/v1/cluster/scheduler}; JAX-RS matches the root resource
 * with the most literal characters first, so it answers before {@code RMWebServices} ({@code
 * /ws/v1/cluster}) is consulted. The body keeps YARN's envelope, {@code
 * {"scheduler":{"schedulerInfo":{"type":"circumflexScheduler", ...}}}}, with the engine's status
 * document (policy, objective, epoch, counters, jobs, decisions, flows, datasets) inside.
 */
@Path("/ws/v1/cluster/scheduler")
public class CircumflexSchedulerWebService {
  private final ResourceManager rm;

  @Inject
  public CircumflexSchedulerWebService(ResourceManager rm) {
    this.rm = rm;
  }

  @GET
  @Produces(MediaType.APPLICATION_JSON + "; charset=utf-8")
  public String get() {
    ResourceScheduler scheduler = rm.getResourceScheduler();
    if (!(scheduler instanceof CircumflexScheduler)) {
      return envelope("{\"error\":\"the scheduler is not Circumflex\"}");
    }
    CircumflexScheduler circumflex = (CircumflexScheduler) scheduler;
    String status = circumflex.statusJson();
    if (status == null) {
      return envelope("{\"fallback\":" + quote(circumflex.getFallbackCause()) + "}");
    }
    return envelope(status);
  }

  /** Wraps a JSON object in YARN's scheduler envelope, adding {@code type} as its first member. */
  public static String envelope(String statusObject) {
    String members = statusObject.trim();
    members = members.substring(1, members.length() - 1).trim();
    return "{\"scheduler\":{\"schedulerInfo\":{\"type\":\"circumflexScheduler\""
        + (members.isEmpty() ? "" : "," + members) + "}}}";
  }

  private static String quote(String s) {
    StringBuilder sb = new StringBuilder("\"");
    for (char c : String.valueOf(s).toCharArray()) {
      if (c == '"' || c == '\\') {
        sb.append('\\').append(c);
      } else if (c < 0x20) {
        sb.append(String.format("\\u%04x", (int) c));
      } else {
        sb.append(c);
      }
    }
    return sb.append('"').toString();
  }
}
