package io.circumflex.yarn.webapp;

import org.apache.hadoop.yarn.server.resourcemanager.webapp.RmView;
import org.apache.hadoop.yarn.webapp.SubView;
import org.apache.hadoop.yarn.webapp.hamlet2.Hamlet;
import org.apache.hadoop.yarn.webapp.view.HtmlPage;

/**
 * The ResourceManager's scheduler page ({@code /cluster/scheduler}) for Circumflex: the RM's usual
 * layout and navigation around {@link CircumflexSchedulerBlock}. Named by {@code
 * yarn.http.rmwebapp.scheduler.page.class}, which {@code CircumflexScheduler} sets when unset.
 */
public class CircumflexSchedulerPage extends RmView {
  /** Page title. */
  public static final String TITLE = "Circumflex Scheduler";

  @Override
  protected void preHead(Hamlet.HTML<HtmlPage.__> html) {
    commonPreHead(html);
    setTitle(TITLE);
  }

  @Override
  protected Class<? extends SubView> content() {
    return CircumflexSchedulerBlock.class;
  }
}
