# Two commands for a new user:  make  (install what is missing, build, run the main job)
#                               make test  (build and run every test through ctest)
BUILD ?= build
JOBS ?= $(shell nproc)
RIDGE := $(BUILD)/cli/ridge
MAKEFLAGS += --no-print-directory

.PHONY: all deps build zoo report full test sanitize-configure test-sanitize test-sanitize-ci mutate clean

all: zoo report

deps:
	@scripts/install-deps.sh

# Configure prints only ridge's own lines (which optional backends were found); all of it on failure.
build: deps
	@mkdir -p $(BUILD)
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release > $(BUILD)/configure.log 2>&1 \
		|| { cat $(BUILD)/configure.log; exit 1; }
	@grep '^-- ridge:' $(BUILD)/configure.log | sed 's/^-- //'
	@cmake --build $(BUILD) -j $(JOBS)

# The analytic counts of the whole zoo (milliseconds): a table, a CSV row per net, every layer.
zoo: build
	@mkdir -p results
	@$(RIDGE) zoo --format csv --out results/zoo.csv
	@$(RIDGE) zoo --format csv --layers --out results/zoo_layers.csv
	@$(RIDGE) zoo --format json --layers --out results/zoo.json
	@$(RIDGE) zoo --out results/zoo.txt
	@echo "results/: zoo.txt, zoo.csv (a row per net), zoo_layers.csv and zoo.json (every layer)"

# The main job: the quick study on the CPU (a few minutes on 2 cores): counts, measured ceilings,
# benchmarks, every figure and results/<host>/report.md.
report: build
	@$(RIDGE) report --quick

# The whole study, on the GPU too when there is one (hours on a small CPU).
full: build
	@$(RIDGE) report --full

# Tests run $(JOBS) at a time: test_gradients' two halves take about 5 minutes each on 2 cores,
# and no test measures speed (their scratch files are per test).
test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The tests again, built with AddressSanitizer and UndefinedBehaviorSanitizer (CUDA left out) in
# $(SANITIZE_BUILD); any finding fails the test that made it. test-sanitize builds and runs the whole
# suite; test-sanitize-ci builds only what the tests labelled sanitize-ci need and runs those (CI
# runs it after `make test`; tests/CMakeLists.txt says which and why).
SANITIZE_BUILD ?= build-sanitize
sanitize-configure: deps
	@mkdir -p $(SANITIZE_BUILD)
	@cmake -S . -B $(SANITIZE_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRIDGE_SANITIZE=ON -DRIDGE_CUDA=OFF \
		> $(SANITIZE_BUILD)/configure.log 2>&1 || { cat $(SANITIZE_BUILD)/configure.log; exit 1; }
	@grep '^-- ridge:' $(SANITIZE_BUILD)/configure.log | sed 's/^-- //'

test-sanitize: sanitize-configure
	@cmake --build $(SANITIZE_BUILD) -j $(JOBS)
	@cd $(SANITIZE_BUILD) && ctest --output-on-failure -j $(JOBS)

test-sanitize-ci: sanitize-configure
	@cmake --build $(SANITIZE_BUILD) -j $(JOBS) --target sanitize_ci_tests
	@cd $(SANITIZE_BUILD) && ctest --output-on-failure -j $(JOBS) -L sanitize-ci

# One-line mutants of the cost formulas, reference kernels, roofline math and report writer
# (scripts/mutants.txt); fails if the tests miss one. MUTANTS=subset runs the quick set.
mutate:
	@scripts/mutate.sh

clean:
	rm -rf $(BUILD) $(SANITIZE_BUILD) results
