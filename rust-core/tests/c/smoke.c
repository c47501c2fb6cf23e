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

  char tiny[8];
  circumflex_task_started(e, 99, 0, node, 0, 3, tiny, sizeof tiny);
  CHECK(strlen(tiny) == sizeof tiny - 1, "messages are truncated to the buffer, NUL-terminated");

  CHECK(circumflex_engine_free(e) == CIRCUMFLEX_OK, "the engine is freed");
  CHECK(circumflex_engine_free(e) == CIRCUMFLEX_UNKNOWN_ID, "a second free is refused, not a double free");
  CHECK(circumflex_tick(e, 1, &planned, err, sizeof err) == CIRCUMFLEX_UNKNOWN_ID,
        "a freed engine is CIRCUMFLEX_UNKNOWN_ID");
  CHECK(circumflex_engine_free(NULL) == CIRCUMFLEX_OK, "freeing NULL is a no-op");

  printf("%d passed, 0 failed\n", checks);
  return 0;
}
