# Two commands for a new user:  make  (install what is missing, build, run the main job)
#                               make test  (build and run every test through ctest)
BUILD ?= build
JOBS ?= $(shell nproc)
RIDGE := $(BUILD)/bench/ridge
MAKEFLAGS += --no-print-directory

.PHONY: all deps build report bench test clean

all: report bench

deps:
	@scripts/install-deps.sh

# Configure prints only ridge's own lines (which optional backends were found); all of it on failure.
build: deps
	@mkdir -p $(BUILD)
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release > $(BUILD)/configure.log 2>&1 \
		|| { cat $(BUILD)/configure.log; exit 1; }
	@grep '^-- ridge:' $(BUILD)/configure.log | sed 's/^-- //'
	@cmake --build $(BUILD) -j $(JOBS)

# The main job: the analytic report of the whole zoo, written to results/.
report: build
	@mkdir -p results
	$(RIDGE) zoo --format csv --out results/zoo.csv
	$(RIDGE) zoo --format csv --layers --out results/zoo_layers.csv
	$(RIDGE) zoo --format json --layers --out results/zoo.json
	$(RIDGE) zoo --out results/zoo.txt
	@cat results/zoo.txt
	@echo "results/: zoo.txt, zoo.csv (a row per net), zoo_layers.csv and zoo.json (every layer)"

# A short CPU benchmark of a few nets (about two minutes on 2 cores), beside the analytic report:
# a table per run in results/bench_<net>_<mode>.txt, the same as JSON, and a row per batch
# appended to results/ledger.csv. Printed here: each run's whole-step lines.
BENCH_RUNS := resnet18:infer:1,16 mobilenet_v2:infer:1,16 resnet50:infer:1,16 resnet18:train:8 mobilenet_v2:train:8
bench: build
	@mkdir -p results
	@for run in $(BENCH_RUNS); do \
		net=$${run%%:*}; rest=$${run#*:}; mode=$${rest%%:*}; batch=$${rest#*:}; \
		$(RIDGE) bench $$net --mode $$mode --batch $$batch --repeat 10 \
			--out results/bench_$${net}_$${mode}.txt --json results/bench_$${net}_$${mode}.json || exit 1; \
		sed '/per layer/,$$d' results/bench_$${net}_$${mode}.txt; \
	done
	@echo "results/: bench_<net>_<mode>.txt and .json (whole steps and every layer), ledger.csv (every run so far)"

test: build
	@cd $(BUILD) && ctest --output-on-failure

clean:
	rm -rf $(BUILD) results
