# Two commands for a new user:  make  (install what is missing, build, run the main job)
#                               make test  (build and run every test through ctest)
BUILD ?= build
JOBS ?= $(shell nproc)
RIDGE := $(BUILD)/bench/ridge

.PHONY: all deps build report test clean

all: report

deps:
	@scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
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

test: build
	@cd $(BUILD) && ctest --output-on-failure

clean:
	rm -rf $(BUILD) results
