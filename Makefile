# Circumflex: the two user commands are `make demo` and `make test` (see README.md).
# Both do their own set-up: Gradle and a JDK from Debian if missing; Hadoop 3.4.1 from Maven Central
# through Gradle; Rust crates from crates.io through cargo.

SHELL := /bin/bash
GRADLE ?= gradle
GRADLE_FLAGS ?= --console=plain
CARGO ?= cargo
APT := $(shell command -v sudo >/dev/null 2>&1 && [ "$$(id -u)" != 0 ] && echo sudo) apt-get

.PHONY: demo test setup rust-test native-check java-test jar mrv1-replay ui-test sls jni-bench gridmix gridmix-loaded clean fuzz soak scan-bench

## The main job: Circumflex FLEX against Hadoop's FairScheduler (preemption on) and CapacityScheduler
## (default AM limit) on an embedded MiniMRYarnCluster, the Gridmix evaluation's six recorded sleep jobs
## under each; prints per-job response times, the means and FLEX's ratios. About 6 minutes.
## Options: make demo DEMO_ARGS="--schedulers circumflex-flex,circumflex-fair"
demo: setup
	$(GRADLE) $(GRADLE_FLAGS) -q :integration-tests:gridmix:demo $(if $(DEMO_ARGS),-PdemoArgs="$(DEMO_ARGS)")

## Every test: Rust unit/property tests, the cbindgen header check, the C ABI test, Java unit tests,
## ResourceManager start-up tests and the MiniMRYarnCluster integration tests; MRv1: shim unit tests and
## the Hadoop 1.2.1 MiniMRCluster integration tests (docs/mrv1.md).
test: setup rust-test results-check java-test

## Every crate's tests (crates/*); the test-panic policy is on for the FFI failure-path tests.
## TEST_LIB builds exactly what `cargo test` builds (the same targets, so the same unified features), plus the
## cdylib itself, which `cargo test` does not refresh: target/debug/libcircumflex.so, loaded by the C ABI test
## and by every Java test. So the one debug build of the workspace serves the Rust tests, the C ABI test and
## the Java tests (with debug assertions on: an overflow in the engine fails a Java test instead of wrapping).
TEST_FEATURES := --features circumflex-policies/test-policies
TEST_LIB := $(CARGO) build --workspace --lib --tests $(TEST_FEATURES)
rust-test:
	$(TEST_LIB)
	$(CARGO) test --workspace $(TEST_FEATURES)

## The native library the jars ship holds only what daemons run (issue 18): builds the shipped cdylib (native profile),
## fails if circumflex-ffi depends on rand*, clap or indicatif, then runs the nm check
## (crates/circumflex-ffi/tests/native_symbols.rs) on target/native/libcircumflex.so, printing its size
## and symbol counts. `make test` runs the same check on the test profile's library.
native-check:
	$(CARGO) build --profile native -p circumflex-ffi --lib
	@if $(CARGO) tree -p circumflex-ffi -e normal --prefix none | grep -E '^(rand|rand_core|rand_pcg|rand_distr|clap|indicatif) '; then \
	  echo "circumflex-ffi depends on a lab-only crate (above)" >&2; exit 1; fi
	CIRCUMFLEX_NATIVE_LIB=$(abspath target/native/libcircumflex.so) \
	  $(CARGO) test -p circumflex-ffi --test native_symbols -- --nocapture

## The Java tests load the debug test library TEST_LIB builds (a no-op after rust-test); `gradle test` run alone
## builds its own release one instead (build.gradle, cargoTestLib).
java-test:
	$(TEST_LIB)
	$(GRADLE) $(GRADLE_FLAGS) test -PprebuiltTestLibDir=$(abspath target/debug)
	@cat $$(find java-shim integration-tests -path '*/build/test-results/test/*.xml') | \
	  grep -o '<testsuite [^>]*' | \
	  awk -F'"' '{for (i = 1; i < NF; i++) { if ($$i ~ /tests=$$/) t += $$(i+1); if ($$i ~ /failures=$$/) f += $$(i+1); \
	    if ($$i ~ /errors=$$/) f += $$(i+1); if ($$i ~ /skipped=$$/) s += $$(i+1) } } \
	    END { printf "java: %d passed, %d failed, %d skipped\n", t - f - s, f, s }'
	@echo "java: slowest test classes (s), to keep make test within CI's budget:"
	@cat $$(find java-shim integration-tests -path '*/build/test-results/test/*.xml') | \
	  grep -o '<testsuite [^>]*' | \
	  awk -F'"' '{for (i = 1; i < NF; i++) { if ($$i ~ /(^|[^a-z])name=$$/) n = $$(i+1); if ($$i ~ / time=$$/) d = $$(i+1) } \
	    printf "%8.1f %s\n", d, n; total += d } END { printf "%8.1f (all classes)\n", total }' | sort -rn | head -15

## ---- Simulation results are code ------------------------------------------------------------------
## `make results` regenerates every committed simulation result under results/ by the one command per folder
## below (each folder's COMMAND file is what that command writes). The Hadoop runs (Gridmix, SLS, the JNI
## benchmark, mrv1-replay) are not here: they keep their own targets. RESULTS_DIR=DIR writes elsewhere.
## `make results-check` (part of `make test`) regenerates RESULTS_CHECKED into a scratch folder and fails when
## a committed summary differs (wall-clock columns aside; crates/circumflex-sim/src/sim/drift.rs says which).
## `make sweep` (= `make quality`): the load sweep of issue 21 into results/sweep (docs/lower-bounds.md,
## docs/quality.md), every policy with the engine's preemption on (as operators who care about response time
## run the FairScheduler); `--gate` makes it fail when a FLEX objective or ASRPT loses to fair on its own
## objective in any cell other than the known losses of results/quality-gate-known-losses.csv, or a known
## loss grows. `make test` runs it through results-check (the sweep is regenerated there): that is the gate.
## `make sweep` also runs the gated policies with `--no-estimates` (the host that knows task counts only, as
## a Gridmix or any `job.xml`-only submission: the engine starts from its learned prior and age floor) at
## 35%, 45% and 65% utilization, both pools, seeds 1-3, into results/sweep-no-estimates (about 1 min of CPU),
## gated the same way against results/quality-gate-known-losses-no-estimates.csv (docs/quality.md, session 14).
## `make quality-gate`: the same gates on a reduced sweep (35% and 65% utilization, both pools, seeds 1-3;
## about 3 minutes of CPU) for a quick check while working on the engine or the policies.
RESULTS_DIR ?= results
CIRCUMFLEX := target/release/circumflex
SWIM_DAY := ../shared/data/swim/FB-2009_samples_24_times_1hr_0.tsv
SWIM_COMPARE := compare --policies fifo,fair,flex:avg_response_time,flex:max_stretch --baseline fair \
  --workload swim:$(SWIM_DAY) --nodes 50 --map-slots 4 --reduce-slots 2 --racks 2
RESULTS_ALL := asrpt adaptive-ch3 rtmr ras-ch4 flowflex flowflex-slack4 reverse-ch5 circumflex circumflex-sensitivity \
  swim-fb2009 swim-fb2009-shared synthetic-deadlines sweep sweep-no-estimates burst-orders
## Checked in `make test`: all but the CIRCUMFLEX study and its sensitivity runs (together over 10 min of CPU) and
## reverse-ch5 (1.5 min): about 1 min of CPU, plus the sweeps (2.5 + 1 min of CPU), the burst orders (0.5 min) and
## the release build of the CLI.
RESULTS_CHECKED ?= asrpt adaptive-ch3 rtmr ras-ch4 flowflex flowflex-slack4 swim-fb2009 swim-fb2009-shared \
  synthetic-deadlines sweep sweep-no-estimates burst-orders

cli:
	$(CARGO) build --release -p circumflex-sim --bin circumflex

.PHONY: cli results results-check sweep quality quality-gate $(addprefix result-,$(RESULTS_ALL))

results: $(addprefix result-,$(RESULTS_ALL))

result-asrpt: cli
	$(CIRCUMFLEX) reproduce asrpt --seeds 10 --slots 500 --out $(RESULTS_DIR)/asrpt
result-adaptive-ch3: cli
	$(CIRCUMFLEX) reproduce adaptive-ch3 --seeds 5 --out $(RESULTS_DIR)/adaptive-ch3
result-rtmr: cli
	$(CIRCUMFLEX) reproduce rtmr --seeds 10 --estimate-factor 4 --out $(RESULTS_DIR)/rtmr
result-ras-ch4: cli
	$(CIRCUMFLEX) reproduce ras-ch4 --period 30 --out $(RESULTS_DIR)/ras-ch4
result-flowflex: cli
	$(CIRCUMFLEX) reproduce flowflex --instances 25 --seed 1 --max-flows 20 --slack 1 --out $(RESULTS_DIR)/flowflex
result-flowflex-slack4: cli
	$(CIRCUMFLEX) reproduce flowflex --instances 25 --seed 1 --max-flows 20 --slack 4 --out $(RESULTS_DIR)/flowflex/slack4
result-reverse-ch5: cli
	$(CIRCUMFLEX) reproduce reverse-ch5 --seeds 2 --days 7 --nodes 100 --loads 0.2,0.4,0.6 --factors 4,8,12 \
	  --out $(RESULTS_DIR)/reverse-ch5
result-circumflex: cli
	$(CIRCUMFLEX) reproduce circumflex --seeds 10 --max-slots 5 --rho 0.9 --workers 2 --out $(RESULTS_DIR)/circumflex
result-circumflex-sensitivity: cli
	for m in 10 25 100; do $(CIRCUMFLEX) reproduce circumflex --seeds 3 --max-slots $$m --rho 0.9 --workers 2 \
	  --out $(RESULTS_DIR)/circumflex/sensitivity/m$$m || exit 1; done
	for m in 25 100; do $(CIRCUMFLEX) reproduce circumflex --seeds 1 --max-slots $$m --rho 0.97 --workers 2 \
	  --out $(RESULTS_DIR)/circumflex/sensitivity/rho0.97-m$$m || exit 1; done
result-swim-fb2009: cli
	$(CIRCUMFLEX) $(SWIM_COMPARE) --pool split --seed 1 --out $(RESULTS_DIR)/swim-fb2009
result-swim-fb2009-shared: cli
	$(CIRCUMFLEX) $(SWIM_COMPARE) --pool shared --seed 1 --out $(RESULTS_DIR)/swim-fb2009-shared
result-synthetic-deadlines: cli
	$(CIRCUMFLEX) compare --policies fifo,fair,flex:avg_response_time,flex:total_tardiness,flex:max_lateness,rtmr,deadline-constraint \
	  --baseline fair --workload synthetic:jobs=400,interarrival_ms=15000,deadline=3 --nodes 20 --map-slots 4 \
	  --reduce-slots 2 --seed 1 --out $(RESULTS_DIR)/synthetic-deadlines
SWEEP_ARGS := --workload swim:$(SWIM_DAY) --racks 2 --param circumflex.preemption.enabled=true \
  --gate --gate-known results/quality-gate-known-losses.csv
# How far ordering alone goes on the Gridmix burst (docs/evaluation.md, "How far ordering alone goes on the
# burst"): the calibrated model of the mini cluster (docs/simulator.md, start-up contention on 2 cores), the
# three recorded burst traces, the FairScheduler and CapacityScheduler models, FLEX as the harness runs it, and
# every static priority order of the 8 jobs under FLEX's AM gate, with at most 1 or any number of AMs starting.
BURST_MODEL := --nodes 1 --reduce-slots 0 --racks 1 --replicas 1 --pool shared --heartbeat-ms 200 --epoch-ms 1000 \
  --am-slots 2 --host-cores 2 --map-slots 24 --am-startup-ms 3020 --launch-ms 2170
BURST_GATE := --param circumflex.am.admission.enabled=true --param circumflex.preemption.enabled=true \
  --param circumflex.preemption.delay.ms=3000
BURST_TRACES := gridmix-loaded/no-levers/burst gridmix-loaded-k1/burst gridmix-loaded-k1-quiet/burst
# The FairScheduler model keeps the real scheduler's default AM cap (fair-scheduler.xml maxAMShare 0.5) through
# the engine's AM gate at that share (docs/evaluation.md, "Session 16" and "Session 17").
FAIR_AM_CAP := --param circumflex.am.admission.enabled=true --param circumflex.am.max.share=0.5
mean_of = $(CIRCUMFLEX) compare $(1) 2>/dev/null | awk '$$1 ~ /^$(2)/ { print $$2; exit }'
result-burst-orders: cli
	@mkdir -p $(RESULTS_DIR)/burst-orders
	@echo "make result-burst-orders" > $(RESULTS_DIR)/burst-orders/COMMAND
	@{ echo "| trace | fair | capacity | FLEX (k = 1) | submission order (k = 1) | best static order (k = 1) | worst (k = 1) | best static order (no bound) |"; \
	  echo "|---|---:|---:|---:|---:|---:|---:|---:|"; \
	  for t in $(BURST_TRACES); do W="--workload rumen:results/$$t/trace.json $(BURST_MODEL)"; \
	    fair=$$($(call mean_of,--policies fair $$W $(FAIR_AM_CAP),fair)); \
	    cap=$$($(call mean_of,--policies fifo $$W --param circumflex.am.admission.enabled=true --param circumflex.am.max.share=0.1,fifo)); \
	    flex=$$($(call mean_of,--policies flex:avg_response_time $$W $(BURST_GATE) --param circumflex.am.max.starting.per.node=1 --no-estimates,flex)); \
	    k1=$$($(CIRCUMFLEX) best-order $$W $(BURST_GATE) --param circumflex.am.max.starting.per.node=1 2>/dev/null); \
	    k0=$$($(CIRCUMFLEX) best-order $$W $(BURST_GATE) 2>/dev/null); \
	    sub=$$(echo "$$k1" | awk '/^submission/ { print $$5 }'); best=$$(echo "$$k1" | awk '/^best/ { print $$5 }'); \
	    worst=$$(echo "$$k1" | awk '/^worst/ { print $$5 }'); best0=$$(echo "$$k0" | awk '/^best/ { print $$5 }'); \
	    echo "$$t $$fair $$cap $$flex $$sub $$best $$worst $$best0" | awk '{ f = $$2; printf "| %s | %.1f | %.1f (%.2f) | %.1f (%.2f) | %.1f (%.2f) | %.1f (%.2f) | %.1f (%.2f) | %.1f (%.2f) |\n", \
	      $$1, f, $$3, $$3 / f, $$4, $$4 / f, $$5, $$5 / f, $$6, $$6 / f, $$7, $$7 / f, $$8, $$8 / f }'; \
	    echo "$$k1" | awk -v t=$$t '/^best/ { sub(/^best order: +mean response [0-9.]+ s: /, ""); print "best order (k = 1), " t ": " $$0 }' >> $(RESULTS_DIR)/burst-orders/orders.txt.tmp; \
	  done; } > $(RESULTS_DIR)/burst-orders/table.md
	@mv $(RESULTS_DIR)/burst-orders/orders.txt.tmp $(RESULTS_DIR)/burst-orders/orders.txt
	@cat $(RESULTS_DIR)/burst-orders/table.md $(RESULTS_DIR)/burst-orders/orders.txt
result-sweep: cli
	$(CIRCUMFLEX) sweep $(SWEEP_ARGS) --out $(RESULTS_DIR)/sweep
GATED_POLICIES := fair,flex:avg_response_time,flex:avg_stretch,flex:max_stretch,asrpt
SWEEP_NO_ESTIMATES_ARGS := --workload swim:$(SWIM_DAY) --racks 2 --param circumflex.preemption.enabled=true \
  --no-estimates --policies $(GATED_POLICIES) \
  --gate --gate-known results/quality-gate-known-losses-no-estimates.csv
result-sweep-no-estimates: cli
	$(CIRCUMFLEX) sweep $(SWEEP_NO_ESTIMATES_ARGS) --loads 0.35,0.45,0.65 --out $(RESULTS_DIR)/sweep-no-estimates

quality-gate: cli
	$(CIRCUMFLEX) sweep $(SWEEP_ARGS) --loads 0.35,0.65 --policies $(GATED_POLICIES) > /dev/null
	$(CIRCUMFLEX) sweep $(SWEEP_NO_ESTIMATES_ARGS) --loads 0.35,0.65 > /dev/null

sweep quality: result-sweep result-sweep-no-estimates

# The folder names of RESULTS_CHECKED as they sit under results/ (flowflex-slack4 is flowflex/slack4, etc.).
CHECK_DIRS = $(subst circumflex-sensitivity,circumflex/sensitivity,$(subst flowflex-slack4,flowflex/slack4,$(RESULTS_CHECKED)))
RESULTS_SCRATCH ?= target/results-check
results-check: cli
	rm -rf $(RESULTS_SCRATCH) && mkdir -p $(RESULTS_SCRATCH)
	$(MAKE) --no-print-directory RESULTS_DIR=$(RESULTS_SCRATCH) $(addprefix result-,$(RESULTS_CHECKED)) > $(RESULTS_SCRATCH)/log.txt 2>&1 \
	  || { tail -20 $(RESULTS_SCRATCH)/log.txt; exit 1; }
	$(CIRCUMFLEX) results-check --fresh $(RESULTS_SCRATCH) $(CHECK_DIRS)

## The shim jars (native library inside): YARN for the ResourceManager's classpath, MRv1 for the
## lib/ directory of a Hadoop 1.x install.
jar: setup
	$(GRADLE) $(GRADLE_FLAGS) -q :java-shim:yarn:jar :java-shim:mrv1:jar
	@ls -l java-shim/yarn/build/libs/ java-shim/mrv1/build/libs/

## MRv1 trace replay (the Gridmix 1.x stand-in): sleep jobs on a Hadoop 1.2.1 MiniMRCluster under fifo, fair
## and Hadoop's own JobQueueTaskScheduler (hadoop-jobqueue); per-job response times.
## Options: make mrv1-replay REPLAY_ARGS="--trace /abs/t.csv --policies fifo,fair,hadoop-jobqueue --out /abs/dir"
mrv1-replay: setup
	$(GRADLE) $(GRADLE_FLAGS) -q :integration-tests:mrv1:replay $(if $(REPLAY_ARGS),-PreplayArgs="$(REPLAY_ARGS)")

## Gridmix evaluation (docs/evaluation.md): hadoop-gridmix 3.4.1 (SLEEPJOB, REPLAY) on a MiniMRYarnCluster under
## circumflex-{fifo,fair,flex} and Hadoop's Fair and Capacity schedulers, on a trace recorded from the mini cluster
## and on a window of the SWIM day; report.md + SVGs per trace under $(GRIDMIX_OUT). About 35 min; SMALL=1 about 15.
## Options: make gridmix SMALL=1 GRIDMIX_OUT=build/gridmix GRIDMIX_ARGS="--traces swim --schedulers hadoop-fair,circumflex-flex"
GRIDMIX_OUT ?= results/gridmix
GRIDMIX_SWIM ?= ../shared/data/swim/FB-2009_samples_24_times_1hr_0.tsv
gridmix: setup
	$(CARGO) build --release -p circumflex-sim --bin circumflex
	mkdir -p $(GRIDMIX_OUT)/swim
	target/release/circumflex gridmix-trace --swim $(GRIDMIX_SWIM) $(if $(SMALL),--jobs 6) --out $(GRIDMIX_OUT)/swim/trace.json
	$(GRADLE) $(GRADLE_FLAGS) -q :integration-tests:gridmix:gridmix \
	  -PgridmixArgs="--out $(abspath $(GRIDMIX_OUT)) --swim-trace $(abspath $(GRIDMIX_OUT))/swim/trace.json $(if $(SMALL),--small) $(GRIDMIX_ARGS)"
	target/release/circumflex gridmix-report $$(ls $(GRIDMIX_OUT)/*/jobs-*.csv | xargs -n1 dirname | sort -u)

## Gridmix in the loaded regime (docs/evaluation.md): one NodeManager with 8 task slots; the burst trace (eight
## sleep jobs of 16..1 maps x 20 s recorded on the mini cluster), SWIM jobs 406-421 and SWIM jobs 2947-2962 (swim-mid),
## both with tasks x3 and arrivals x0.1; 3 rounds, schedulers interleaved per round; report.md per round and over
## the rounds (95% intervals). About 100 min for burst and swim; swim-mid adds about 75. Options: make gridmix-loaded LOADED_OUT=build/loaded LOADED_ROUNDS=2
## LOADED_TRACES=burst
LOADED_OUT ?= results/gridmix-loaded
LOADED_ROUNDS ?= 3
LOADED_SCHEDULERS ?= circumflex-flex,hadoop-fair,hadoop-capacity
## The third trace, swim-mid, is fixed by a rule written before any run of it (docs/evaluation.md): the 16 SWIM
## jobs from index 2,947, half of the day's 5,894, with the swim window's scaling.
LOADED_TRACES ?= burst,swim,swim-mid
comma := ,
gridmix-loaded: setup
	$(CARGO) build --release -p circumflex-sim --bin circumflex
	mkdir -p $(LOADED_OUT)/swim $(LOADED_OUT)/swim-mid
	target/release/circumflex gridmix-trace --swim $(GRIDMIX_SWIM) --first-job 406 --jobs 16 --gap-scale 0.1 \
	  --task-scale 3 --max-maps 16 --max-task-ms 90000 --out $(LOADED_OUT)/swim/trace.json
	target/release/circumflex gridmix-trace --swim $(GRIDMIX_SWIM) --first-job 2947 --jobs 16 --gap-scale 0.1 \
	  --task-scale 3 --max-maps 16 --max-task-ms 90000 --out $(LOADED_OUT)/swim-mid/trace.json
	$(GRADLE) $(GRADLE_FLAGS) -q :integration-tests:gridmix:gridmix \
	  -PgridmixArgs="--out $(abspath $(LOADED_OUT)) --swim-trace $(abspath $(LOADED_OUT))/swim/trace.json \
	  --swim-mid-trace $(abspath $(LOADED_OUT))/swim-mid/trace.json \
	  --traces $(LOADED_TRACES) --task-slots 8 --repeat $(LOADED_ROUNDS) --schedulers $(LOADED_SCHEDULERS) $(LOADED_ARGS)"
	target/release/circumflex gridmix-report --slots 8 $$(ls -d $(addprefix $(LOADED_OUT)/,$(subst $(comma), ,$(LOADED_TRACES))) 2>/dev/null)

## JNI micro-benchmark: NativeEngine.nodeUpdate round trip with 1,000 and 10,000 applications against an
## empty JNI call (docs/evaluation.md). Options: make jni-bench BENCH_ARGS="--apps 1000 --policies flex"
jni-bench: setup
	$(GRADLE) $(GRADLE_FLAGS) -q :benchmarks:jni:jniBench $(if $(BENCH_ARGS),-PbenchArgs="$(BENCH_ARGS)")

## Fuzzing, not part of `make test` (which runs a short stable pass, crates/circumflex-sim/tests/fuzz_short.rs).
## With a nightly toolchain and cargo-fuzz: libFuzzer on every target for FUZZ_SECONDS each, new inputs
## in target/fuzz-corpus/ (the committed seeds in fuzz/corpus/ are read, never written). Without them:
## the stable driver with FUZZ_ITERATIONS mutations per target. See docs/hardening.md.
FUZZ_SECONDS ?= 60
FUZZ_ITERATIONS ?= 200000
FUZZ_TARGETS := job_conf engine_config swim_trace rumen_trace ffi_events
fuzz:
	@if $(CARGO) +nightly --version >/dev/null 2>&1 && $(CARGO) fuzz --version >/dev/null 2>&1; then \
	  for t in $(FUZZ_TARGETS); do \
	    mkdir -p target/fuzz-corpus/$$t && \
	    (cd fuzz && $(CARGO) +nightly fuzz run -O $$t ../target/fuzz-corpus/$$t corpus/$$t -- \
	      -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1) || exit 1; \
	  done; \
	else \
	  echo "no nightly toolchain or cargo-fuzz: running the stable fuzz driver"; \
	  FUZZ_ITERATIONS=$(FUZZ_ITERATIONS) $(CARGO) test --release -p circumflex-sim --test fuzz_short -- --nocapture; \
	fi

## Soak: the engine under SOAK_EVENTS random events per policy (release build), invariants checked
## throughout, peak memory at the start and the end. Not part of `make test` (it runs a short version).
SOAK_EVENTS ?= 1000000
soak:
	SOAK_EVENTS=$(SOAK_EVENTS) $(CARGO) test --release -p circumflex-sim --test soak -- --nocapture

## The YARN scheduler page in a real headless browser (docs/operations.md), with Debian's chromium:
## SchedulerWebTest (a started ResourceManager with a waiting application; writes the screenshot
## docs/img/yarn-scheduler-page.png), then SchedulerPageIT (a MiniMRYarnCluster with a running job:
## page, REST, JMX metrics, refresh, DOM). Run it under the machine's JVM lock where one is shared.
ui-test: setup
	@command -v chromium >/dev/null || { echo "installing chromium from Debian"; $(APT) update && $(APT) install -y chromium; }
	$(GRADLE) $(GRADLE_FLAGS) :java-shim:yarn:test --tests io.circumflex.yarn.SchedulerWebTest \
	  -Pchromium="$$(command -v chromium)"
	$(GRADLE) $(GRADLE_FLAGS) :integration-tests:yarn:test --tests io.circumflex.it.yarn.SchedulerPageIT \
	  -Pchromium="$$(command -v chromium)"

## SLS at scale (docs/sls.md): 1,000 simulated NMs, 300 SWIM jobs, under Circumflex fifo/fair/flex,
## FairScheduler and CapacityScheduler, one after the other; report in results/sls/. About 20 minutes.
## Options: make sls SLS_ARGS="--jobs 100 --schedulers circumflex:flex,fair"
sls: setup
	$(GRADLE) $(GRADLE_FLAGS) -q :integration-tests:sls:sls $(if $(SLS_ARGS),-PslsArgs="$(SLS_ARGS)")

## Shared scans on YARN MapReduce (docs/shared-scans.md): CIRCUMFLEX with sharing vs FLEX without, Poisson
## arrivals over a generated dataset on mini clusters; writes results/shared-scans/. Not part of `make test`.
## Options: make scan-bench SCAN_BENCH_ARGS="--mib 1024 --jobs 6 --rounds 3 --gap-s 20 --seed 1 --out results/shared-scans"
## (add "--resume true" to keep the complete rounds already in the out folder and run only the missing ones)
scan-bench: setup
	$(GRADLE) $(GRADLE_FLAGS) -q :integration-tests:sharedscan:scanBench \
	  $(if $(SCAN_BENCH_ARGS),-PscanBenchArgs="$(SCAN_BENCH_ARGS)")

setup:
	@command -v $(CARGO) >/dev/null || { echo "cargo (Rust >= 1.80) is required: see https://rustup.rs" >&2; exit 1; }
	@command -v javac >/dev/null || { echo "installing a JDK from Debian"; $(APT) update && $(APT) install -y openjdk-17-jdk-headless; }
	@command -v $(GRADLE) >/dev/null || { echo "installing Gradle from Debian"; $(APT) update && $(APT) install -y gradle; }
	@command -v gcc >/dev/null || { echo "installing gcc from Debian (C ABI test)"; $(APT) update && $(APT) install -y gcc; }

clean:
	$(CARGO) clean
	$(GRADLE) $(GRADLE_FLAGS) -q clean
