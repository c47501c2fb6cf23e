/* C-level test of the Circumflex C ABI: built against include/circumflex.h and the cdylib by
 * tests/c_abi.rs. Prints one line per check and exits non-zero on the first failure. */
#include "circumflex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int checks = 0;

#define CHECK(cond, what)                                          \
  do {                                                             \
    checks++;                                                      \
    if (!(cond)) {                                                 \
      fprintf(stderr, "FAILED: %s (%s:%d)\n", what, __FILE__, __LINE__); \
      exit(1);                                                     \
    }                                                              \
    printf("ok %d - %s\n", checks, what);                          \
  } while (0)

int main(void) {
  char err[512];

  CircumflexEngine *bad = circumflex_engine_new("{\"circumflex.policy\":\"lottery\"}", err, sizeof err);
  CHECK(bad == NULL, "an unknown policy is refused");
  CHECK(strstr(err, "circumflex.policy") && strstr(err, "lottery") && strstr(err, "fifo"),
        "the message names key, value and allowed values");

  CircumflexEngine *e = circumflex_engine_new(
      "{\"circumflex.policy\":\"fifo\",\"circumflex.locality.node.delay\":\"0\","
      "\"circumflex.locality.rack.delay\":\"0\"}",
      err, sizeof err);
  CHECK(e != NULL, "a fifo engine is created");

  int32_t node = -1;
  CHECK(circumflex_add_node(e, "h1", "/r1", 4, 0, &node, err, sizeof err) == CIRCUMFLEX_OK && node == 0,
        "a node is added");

  int32_t a = -1, b = -1;
  CHECK(circumflex_submit_job(e, "{\"mapreduce.job.maps\":\"4\",\"mapreduce.job.reduces\":\"0\"}", 0, &a, err,
                              sizeof err) == CIRCUMFLEX_OK,
        "job a is submitted");
  CHECK(circumflex_submit_job(e, "{\"mapreduce.job.maps\":\"4\",\"mapreduce.job.reduces\":\"0\"}", 1, &b, err,
                              sizeof err) == CIRCUMFLEX_OK && b == a + 1,
        "job b is submitted");
  CHECK(circumflex_submit_job(e, "{\"circumflex.job.weight\":\"-2\"}", 2, &b, err, sizeof err) ==
            CIRCUMFLEX_INVALID_JOB && strstr(err, "circumflex.job.weight"),
        "a malformed job key is CIRCUMFLEX_INVALID_JOB naming the key");

  int32_t out[4 * 8];
  size_t written = 0;
  CHECK(circumflex_node_update(e, node, 4, 0, 2, out, sizeof out / sizeof out[0], &written, err, sizeof err) ==
            CIRCUMFLEX_OK && written >= 1,
        "a node update answers");
  CHECK(out[0] == a && out[1] == 0 && out[2] == 4 && out[3] == 2, "fifo gives the first job all four slots");

  for (int i = 0; i < 4; i++) {
    CHECK(circumflex_task_started(e, a, 0, node, 0, 3, err, sizeof err) == CIRCUMFLEX_OK, "a task starts");
  }
  CHECK(circumflex_task_finished(e, a, 0, node, 100, true, 103, err, sizeof err) == CIRCUMFLEX_OK,
        "a task finishes");
  bool planned = false;
  CHECK(circumflex_tick(e, 5000, &planned, err, sizeof err) == CIRCUMFLEX_OK && planned, "an epoch re-plans");

  char *json = NULL;
  CHECK(circumflex_plan_json(e, &json, err, sizeof err) == CIRCUMFLEX_OK && strstr(json, "\"entries\""),
        "the plan is JSON");
  circumflex_string_free(json);
  CHECK(circumflex_status_json(e, 6000, &json, err, sizeof err) == CIRCUMFLEX_OK && strstr(json, "\"fifo\""),
        "the status is JSON");
  circumflex_string_free(json);

  CHECK(circumflex_task_started(e, 99, 0, node, 0, 3, err, sizeof err) == CIRCUMFLEX_UNKNOWN_ID,
        "an unknown job is CIRCUMFLEX_UNKNOWN_ID");
  CHECK(circumflex_set_pending(e, a, 7, 1, err, sizeof err) == CIRCUMFLEX_ARGUMENT && strstr(err, "phase = 7"),
        "a bad phase code is CIRCUMFLEX_ARGUMENT");
  CHECK(circumflex_set_reduces_ready(e, a, true, err, sizeof err) == CIRCUMFLEX_OK, "reduces are declared ready");
  CHECK(circumflex_set_node_capacity(e, node, 8, 0, err, sizeof err) == CIRCUMFLEX_OK, "a node's capacity changes");
  CHECK(circumflex_finish_job(e, a, 7000, err, sizeof err) == CIRCUMFLEX_OK, "a job is finished");

  int32_t node2 = -1;
  CHECK(circumflex_add_node(e, "h2", "/r1", 2, 0, &node2, err, sizeof err) == CIRCUMFLEX_OK, "a second node");
  CHECK(circumflex_remove_node(e, node2, 7100, err, sizeof err) == CIRCUMFLEX_OK, "a node is removed");
  CHECK(circumflex_remove_node(e, node2, 7200, err, sizeof err) == CIRCUMFLEX_UNKNOWN_ID,
        "a removed node is CIRCUMFLEX_UNKNOWN_ID");

  /* ----- the calls the JNI layer has too: refresh, counters, page, logs, accelerated pool ----- */
  CHECK(circumflex_version() != NULL && strlen(circumflex_version()) > 0, "the version is a string");
  CHECK(circumflex_init("info,=,,bogus=notalevel", err, sizeof err) == CIRCUMFLEX_CONFIG &&
            strstr(err, "notalevel"),
        "a bad log level is CIRCUMFLEX_CONFIG naming it");
  CHECK(circumflex_init("info", err, sizeof err) == CIRCUMFLEX_OK, "the log buffer is installed at info");
  char *logs = NULL;
  CHECK(circumflex_drain_logs(&logs, err, sizeof err) == CIRCUMFLEX_OK && logs != NULL, "logs drain");
  circumflex_string_free(logs);

  const char *fair = "{\"circumflex.policy\":\"fair\",\"circumflex.locality.node.delay\":\"0\","
                     "\"circumflex.locality.rack.delay\":\"0\"}";
  CHECK(circumflex_reconfigure(e, fair, 7300, err, sizeof err) == CIRCUMFLEX_OK, "a refresh to fair applies");
  CHECK(circumflex_reconfigure(e, "{\"circumflex.policy\":\"lottery\"}", 7400, err, sizeof err) ==
            CIRCUMFLEX_CONFIG && strstr(err, "circumflex.policy") && strstr(err, "lottery"),
        "a refresh to an unknown policy is CIRCUMFLEX_CONFIG naming key and value");
  CHECK(circumflex_reconfigure(e, "{\"circumflex.policy\":\"fifo\",\"circumflex.pool.mode\":\"split\"}", 7410, err,
                               sizeof err) == CIRCUMFLEX_CONFIG && strstr(err, "circumflex.pool.mode"),
        "a refresh may not change the pool mode");
  CHECK(circumflex_reconfigure(e, "{not json", 7420, err, sizeof err) == CIRCUMFLEX_CONFIG,
        "a refresh that does not parse is CIRCUMFLEX_CONFIG");
  CHECK(circumflex_reconfigure(e, NULL, 7430, err, sizeof err) == CIRCUMFLEX_ARGUMENT && strstr(err, "config_json"),
        "a NULL refresh is CIRCUMFLEX_ARGUMENT naming the argument");
  CHECK(circumflex_status_json(e, 7500, &json, err, sizeof err) == CIRCUMFLEX_OK &&
            strstr(json, "\"policy\":\"fair\""),
        "every refused refresh kept the running policy (fair)");
  circumflex_string_free(json);
  CHECK(circumflex_drain_logs(&logs, err, sizeof err) == CIRCUMFLEX_OK &&
            strstr(logs, "INFO\x1f" "circumflex::ffi::ops\x1frefreshed: policy fifo -> fair") &&
            strstr(logs, "WARN\x1f" "circumflex::ffi::ops\x1frefresh rejected"),
        "the refresh and the refusal are in the native log, with level and target");
  circumflex_string_free(logs);
  CHECK(circumflex_drain_logs(&logs, err, sizeof err) == CIRCUMFLEX_OK && logs[0] == '\0',
        "a drain empties the log buffer");
  circumflex_string_free(logs);
  CHECK(circumflex_drain_logs(NULL, err, sizeof err) == CIRCUMFLEX_ARGUMENT, "draining into NULL is refused");

  int64_t counters[CIRCUMFLEX_COUNTER_COUNT + 2];
  for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++) counters[i] = -1;
  CHECK(circumflex_counters(e, counters, sizeof counters / sizeof counters[0], &written, err, sizeof err) ==
            CIRCUMFLEX_OK && written == CIRCUMFLEX_COUNTER_COUNT && counters[CIRCUMFLEX_COUNTER_COUNT] == -1,
        "every counter is written, nothing past them");
  CHECK(strcmp(circumflex_counter_name(0), "plans") == 0 && strcmp(circumflex_counter_name(4), "admitted") == 0 &&
            circumflex_counter_name(CIRCUMFLEX_COUNTER_COUNT) == NULL,
        "counter names by index, NULL past the end");
  CHECK(counters[0] > 0 && counters[3] == 1 && counters[4] == 2 && counters[5] == 0 && counters[6] == 1 &&
            counters[8] == 1,
        "plans, node updates, admitted, rejected, finished and active jobs are counted");
  CHECK(circumflex_counters(e, counters, 2, &written, err, sizeof err) == CIRCUMFLEX_OK && written == 2,
        "a short counter buffer gets what fits");
  CHECK(circumflex_counters(e, NULL, 4, &written, err, sizeof err) == CIRCUMFLEX_ARGUMENT,
        "a NULL counter buffer is CIRCUMFLEX_ARGUMENT");

  int32_t shown = -1;
  CHECK(circumflex_submit_job(e, "{\"mapreduce.job.maps\":\"1\",\"mapreduce.job.name\":\"<b>x</b> & y\"}", 7600,
                              &shown, err, sizeof err) == CIRCUMFLEX_OK,
        "a job with markup in its name is submitted");
  CHECK(circumflex_submit_job(e, "{\"mapreduce.job.maps\":\"1\",\"mapreduce.job.name\":\"nul\\u0000here\"}", 7610,
                              &shown, err, sizeof err) == CIRCUMFLEX_INVALID_JOB && strstr(err, "control characters"),
        "a NUL in a job name is CIRCUMFLEX_INVALID_JOB, so it never reaches the page");
  char *html = NULL;
  CHECK(circumflex_status_html(e, 7700, &html, err, sizeof err) == CIRCUMFLEX_OK &&
            strstr(html, "id=\"circumflex-summary\"") && strstr(html, "<td>fair</td>") &&
            strstr(html, "id=\"circumflex-datasets\""),
        "the page shows the summary with the policy, through the last table");
  CHECK(strstr(html, "&lt;b&gt;x&lt;/b&gt; &amp; y") && !strstr(html, "<b>x</b>"), "job names are escaped");
  circumflex_string_free(html);
  CHECK(circumflex_status_html(e, 7700, NULL, err, sizeof err) == CIRCUMFLEX_ARGUMENT,
        "a NULL page pointer is CIRCUMFLEX_ARGUMENT");

  CHECK(circumflex_set_node_accelerated(e, node, true, err, sizeof err) == CIRCUMFLEX_OK,
        "a node joins the accelerated pool");
  CHECK(circumflex_status_json(e, 7800, &json, err, sizeof err) == CIRCUMFLEX_OK &&
            strstr(json, "\"accelerated\":true"),
        "the status shows the node accelerated");
  circumflex_string_free(json);
  CHECK(circumflex_set_node_accelerated(e, 77, true, err, sizeof err) == CIRCUMFLEX_UNKNOWN_ID,
        "an unknown node is CIRCUMFLEX_UNKNOWN_ID");
  CHECK(circumflex_set_node_accelerated(e, -1, false, err, sizeof err) == CIRCUMFLEX_ARGUMENT && strstr(err, "node"),
        "a negative node id is CIRCUMFLEX_ARGUMENT");

  /* Batches: one call for a heartbeat's starts, one for its ends; a submission with its state. */
  int32_t c = -1;
  CHECK(circumflex_submit_job_with(e, "{\"mapreduce.job.maps\":\"2\"}", 7000, true, 2, 0, &c, err, sizeof err) ==
            CIRCUMFLEX_OK && c >= 0,
        "a job is submitted with its pending counts in one call");
  int32_t started[] = {c, 0, node, 0, c, 0, node, 2, 99, 0, node, 0};
  size_t applied = 0;
  CHECK(circumflex_tasks_started(e, started, 12, 3, 7001, &applied, err, sizeof err) == CIRCUMFLEX_OK &&
            applied == 2,
        "a heartbeat's starts cross in one call; the unknown job is skipped");
  int64_t finished[] = {c, 0, node, 50, 1, 7051, c, 0, node, 60, 1, 7061};
  CHECK(circumflex_tasks_finished(e, finished, 12, 2, &applied, err, sizeof err) == CIRCUMFLEX_OK && applied == 2,
        "a heartbeat's ends cross in one call");
  int32_t bad_started[] = {c, 7, node, 0};
  CHECK(circumflex_tasks_started(e, bad_started, 4, 1, 7100, &applied, err, sizeof err) == CIRCUMFLEX_ARGUMENT &&
            strstr(err, "records[0].phase = 7"),
        "a malformed record is CIRCUMFLEX_ARGUMENT naming it");
  CHECK(circumflex_tasks_started(e, started, 3, 1, 7100, &applied, err, sizeof err) == CIRCUMFLEX_ARGUMENT,
        "a count beyond the array is CIRCUMFLEX_ARGUMENT");
  CHECK(circumflex_set_pending_phases(e, c, 0, 0, err, sizeof err) == CIRCUMFLEX_OK,
        "both phases' pending counts in one call");
  int32_t order[8];
  size_t total = 0;
  CHECK(circumflex_plan_order(e, order, 8, &total, err, sizeof err) == CIRCUMFLEX_OK && total >= 1 && total <= 8,
        "the plan order arrives as job ids");
  int has_c = 0;
  for (size_t i = 0; i < total; i++) {
    has_c |= order[i] == c;
  }
  CHECK(has_c, "the plan order lists the job just submitted");
  CHECK(circumflex_plan_order(e, NULL, 0, &total, err, sizeof err) == CIRCUMFLEX_OK && total >= 1,
        "an empty array asks only for the plan's length");

  /* Preemption: decisions from the timer, kills reported in one call (off here: nothing decided). */
  int32_t decisions[8];
  size_t decided = 99;
  CHECK(circumflex_preemptions(e, 7200, decisions, 8, &decided, err, sizeof err) == CIRCUMFLEX_OK && decided == 0,
        "with preemption off the engine decides nothing");
  int64_t killed[] = {99, 0, node, 10, 7200};
  CHECK(circumflex_tasks_preempted(e, killed, 5, 1, &applied, err, sizeof err) == CIRCUMFLEX_OK && applied == 0,
        "a kill of an unknown job is skipped");
  int64_t bad_killed[] = {c, 2, node, 10, 7200};
  CHECK(circumflex_tasks_preempted(e, bad_killed, 5, 1, &applied, err, sizeof err) == CIRCUMFLEX_ARGUMENT &&
            strstr(err, "records[0].phase = 2"),
        "a malformed kill record is CIRCUMFLEX_ARGUMENT naming it");

  /* AM admission: the gate is off here, so nothing is admitted and AM events are accepted no-ops. */
  int32_t admitted[4];
  size_t admitted_total = 99;
  CHECK(circumflex_am_admissions(e, 7300, admitted, 4, &admitted_total, err, sizeof err) == CIRCUMFLEX_OK &&
            admitted_total == 0,
        "with the AM gate off nothing waits to be admitted");
  int64_t am_events[] = {0, c, 2, 7300, 1, 99, 2, 7300};
  CHECK(circumflex_am_events(e, am_events, 8, 2, &applied, err, sizeof err) == CIRCUMFLEX_OK && applied == 1,
        "AM events in one call; an unknown job is skipped");
  int64_t bad_am[] = {7, c, 2, 7300};
  CHECK(circumflex_am_events(e, bad_am, 4, 1, &applied, err, sizeof err) == CIRCUMFLEX_ARGUMENT &&
            strstr(err, "records[0].kind = 7"),
        "a malformed AM event is CIRCUMFLEX_ARGUMENT naming it");

  char tiny[8];
  circumflex_task_started(e, 99, 0, node, 0, 3, tiny, sizeof tiny);
  CHECK(strlen(tiny) == sizeof tiny - 1, "messages are truncated to the buffer, NUL-terminated");

  CHECK(circumflex_engine_free(e) == CIRCUMFLEX_OK, "the engine is freed");
  CHECK(circumflex_engine_free(e) == CIRCUMFLEX_UNKNOWN_ID, "a second free is refused, not a double free");
  CHECK(circumflex_tick(e, 1, &planned, err, sizeof err) == CIRCUMFLEX_UNKNOWN_ID,
        "a freed engine is CIRCUMFLEX_UNKNOWN_ID");
  CHECK(circumflex_reconfigure(e, fair, 8000, err, sizeof err) == CIRCUMFLEX_UNKNOWN_ID &&
            circumflex_counters(e, counters, 4, &written, err, sizeof err) == CIRCUMFLEX_UNKNOWN_ID &&
            circumflex_status_html(e, 8000, &html, err, sizeof err) == CIRCUMFLEX_UNKNOWN_ID &&
            circumflex_set_node_accelerated(e, node, false, err, sizeof err) == CIRCUMFLEX_UNKNOWN_ID,
        "refresh, counters, page and pools on a freed engine are CIRCUMFLEX_UNKNOWN_ID");
  CHECK(circumflex_engine_free(NULL) == CIRCUMFLEX_OK, "freeing NULL is a no-op");

  printf("%d passed, 0 failed\n", checks);
  return 0;
}
