package org.apache.hadoop.mapred;

import java.io.IOException;
import java.io.PrintWriter;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

/**
 * The JobTracker's {@code /scheduler} page for Circumflex, registered the way the contrib
 * FairScheduler registers its servlet: {@link CircumflexTaskScheduler#start} puts itself into the
 * info server's attributes and adds this servlet. It shows the engine's own HTML rendering of its
 * status (rust-core {@code ffi::page}; every job-supplied text is escaped there). {@code ?format=json}
 * answers the status document instead.
 */
public class CircumflexSchedulerServlet extends HttpServlet {
  private static final long serialVersionUID = 1L;
  /** Servlet-context attribute holding the scheduler. */
  static final String ATTRIBUTE = "circumflex.scheduler";

  @Override
  protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
    CircumflexTaskScheduler scheduler = (CircumflexTaskScheduler) getServletContext().getAttribute(ATTRIBUTE);
    boolean json = "json".equals(request.getParameter("format"));
    response.setCharacterEncoding("UTF-8");
    response.setContentType(json ? "application/json" : "text/html");
    PrintWriter out = response.getWriter();
    if (json) {
      String status = scheduler == null ? null : scheduler.getEngineStatusJson();
      out.print(status == null ? "{\"fallback\":true}" : status);
      return;
    }
    out.println("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Circumflex Scheduler</title>");
    out.println("<style>body{font-family:sans-serif} table{border-collapse:collapse;margin-bottom:1em}"
        + " th,td{border:1px solid #bbb;padding:2px 6px;text-align:left} tr.active{background:#eef6ee}</style>");
    out.println("</head><body><p><a href=\"jobtracker.jsp\">JobTracker</a></p>");
    String html = scheduler == null ? null : scheduler.getEngineStatusHtml();
    if (html == null) {
      out.println("<h2>Circumflex is in FIFO fallback</h2><p>"
          + escape(scheduler == null ? "no scheduler" : String.valueOf(scheduler.getFallbackReason())) + "</p>");
    } else {
      out.println(html);
    }
    out.println("</body></html>");
  }

  private static String escape(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
  }
}
