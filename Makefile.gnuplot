# Draws the figures of a study (see report/figures.h): every DIR/data/NAME.dat becomes
# DIR/figures/NAME.png and NAME.svg, drawn by plots/KIND.gp, KIND being NAME up to its first '-'.
# The script gets plots (this folder), dat (the data file) and out (the figure path without extension), and the
# scalars of DIR/data/NAME.gpv already loaded.
#     make -f Makefile.gnuplot DIR=results/<host>
# `ridge report` runs it from inside the report's folder with DIR=. (make cannot take a path with
# spaces, and one with '$' would be expanded); it can be rerun by hand after editing a script.
DIR ?= results/$(shell hostname)
PLOTS := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))/plots
NAMES := $(basename $(notdir $(wildcard $(DIR)/data/*.dat)))
MAKEFLAGS += --no-print-directory
# A figure whose gnuplot failed is not left half-drawn, so that `ridge report` sees it is missing.
.DELETE_ON_ERROR:

.PHONY: all
all: $(NAMES:%=$(DIR)/figures/%.png)

$(DIR)/figures:
	@mkdir -p $@

kind = $(firstword $(subst -, ,$(1)))

.SECONDEXPANSION:
$(DIR)/figures/%.png $(DIR)/figures/%.svg: $(DIR)/data/%.dat $(DIR)/data/%.gpv $(PLOTS)/$$(call kind,$$*).gp | $(DIR)/figures
	@echo "plot $*"
	@gnuplot -e "plots='$(PLOTS)'; dat='$(DIR)/data/$*.dat'; out='$(DIR)/figures/$*'; load '$(DIR)/data/$*.gpv'" $(PLOTS)/$(call kind,$*).gp
