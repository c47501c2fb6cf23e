package io.circumflex.yarn;

import io.circumflex.yarn.webapp.CircumflexSchedulerPage;
import io.circumflex.yarn.webapp.CircumflexSchedulerWebService;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;

/**
 * Points the RM web app at the Circumflex page and REST resource unless the operator chose
 * otherwise: the scheduler is initialised before the web app starts and shares the RM's
 * configuration, so one scheduler class setting is enough for the whole UI.
 */
final class WebDefaults {
  /** Key of the RM's plug-in scheduler page class. */
  static final String KEY_SCHEDULER_PAGE = "yarn.http.rmwebapp.scheduler.page.class";
  /** Key of the RM web app's extra JAX-RS resources. */
  static final String KEY_EXTERNAL_CLASSES = "yarn.http.rmwebapp.external.classes";

  private WebDefaults() {}

  /** Sets the page class if unset and adds the REST resource to the external classes once. */
  static void register(Configuration configuration) {
    configuration.setIfUnset(KEY_SCHEDULER_PAGE, CircumflexSchedulerPage.class.getName());
    String rest = CircumflexSchedulerWebService.class.getName();
    List<String> external = new ArrayList<>(configuration.getTrimmedStringCollection(KEY_EXTERNAL_CLASSES));
    if (!external.contains(rest)) {
      external.add(rest);
      configuration.set(KEY_EXTERNAL_CLASSES, String.join(",", external));
    }
  }
}
