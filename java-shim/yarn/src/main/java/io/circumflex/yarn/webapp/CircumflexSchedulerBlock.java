package io.circumflex.yarn.webapp;

import com.google.inject.Inject;
import io.circumflex.yarn.CircumflexScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.apache.hadoop.yarn.webapp.view.HtmlBlock;

/**
 * The body of the scheduler page: the engine's own HTML rendering of its status (rust-core {@code
 * ffi::page}, which escapes every job-supplied text), or a notice when the scheduler runs in FIFO
 * fallback or is not Circumflex.
 */
public class CircumflexSchedulerBlock extends HtmlBlock {
  private final ResourceManager rm;

  @Inject
  CircumflexSchedulerBlock(ResourceManager rm, ViewContext ctx) {
    super(ctx);
    this.rm = rm;
  }

  @Override
  protected void render(Block html) {
    ResourceScheduler scheduler = rm.getResourceScheduler();
    if (!(scheduler instanceof CircumflexScheduler)) {
      html.h2("The ResourceManager's scheduler is not Circumflex: " + scheduler.getClass().getName());
      return;
    }
    CircumflexScheduler circumflex = (CircumflexScheduler) scheduler;
    String fragment = circumflex.statusHtml();
    if (fragment == null) {
      html.h2("Circumflex is in FIFO fallback: " + circumflex.getFallbackCause());
      return;
    }
    html.div().$id("circumflex").__();
    echoWithoutEscapeHtml(fragment);
  }
}
