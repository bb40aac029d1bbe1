# attnprof: `make` builds build/attnprof; `make run` runs the batch on this machine's GPU;
# `make test` runs the test suite (no GPU needed); `make gpu-test` checks the variants on a GPU;
# `make slurm-test` runs the sweep's Slurm array on a local slurmctld + slurmd (root).
# The paper tests (tests/paper/) print with Chromium and compile with pdflatex: without them
# they say so and pass, except in CI (CI set), where they fail.
#
# Two halves (README "Layout of the source"):
#   build/libattnprof_report.a     report/{base,archive,io,analysis,figures,docs}/: reads and
#                                  renders archives; Cairo, libpng, cmark-gfm, jansson, yajl,
#                                  zlib and libm only, no CUDA header
#   build/libattnprof_recorder.so  src/recorder/ + kernels/: runner, CUPTI, variants, kernels;
#                                  cudart, cuBLAS, cuDNN, CUPTI (built only with nvcc)
#   build/attnprof                 src/cli/ over the report library; loads the recorder
#                                  with dlopen for `run` and `list` only
# Without nvcc under CUDA_HOME the recorder is left out and attnprof has every GPU-free
# command: `make CUDA_HOME=/nonexistent BUILD=build-nocuda test`.
CUDA_HOME ?= /usr/local/cuda
PREFIX    ?= /usr/local
BUILD     ?= build
CC        ?= gcc
NVCC      ?= $(CUDA_HOME)/bin/nvcc
OUT       ?= out
RUN_ARGS  ?=
EXAMPLE   ?= $(OUT)/example-h200

WITH_CUDA := $(if $(wildcard $(NVCC)),1,0)

# The Debian packages: one list, .ci/packages, read here, by .ci/run and named in the README.
# The paper ones (report.pdf, tests/paper/) are installed with the others when root; when not,
# `make` names them and goes on (the tests then say they did not run; in CI they fail).
DEB_RUN_PACKAGES   := $(shell sed -n 's/^run://p' .ci/packages)
DEB_PACKAGES       := $(DEB_RUN_PACKAGES) $(shell sed -n 's/^build://p' .ci/packages)
DEB_PAPER_PACKAGES := $(shell sed -n 's/^paper://p' .ci/packages)
PKGS      := cairo fontconfig libpng libcmark-gfm jansson yajl zlib

VERSION   := $(shell git describe --always --dirty --tags 2>/dev/null || echo unknown)
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)

CFLAGS   ?= -O2 -g
# -fPIC everywhere: the report library is also linked into the recorder's shared object.
BASE_CFLAGS = $(CFLAGS) -std=c11 -Wall -Wextra -Wno-unused-parameter -Wno-format-truncation -D_GNU_SOURCE \
              -fPIC -MMD -MP -DATTNPROF_VERSION='"$(VERSION)"'
# report/ sees only its own headers and the GPU-free libraries: a CUDA header or a
# src/ header included there does not compile. One folder a layer, lowest first
# (tests/layout.sh checks that no layer includes a header of a later one); a header is
# included by its bare name, so the folders are all on the include path.
REPORT_LAYERS := base archive io analysis figures docs
REPORT_INC   := $(addprefix -Ireport/,$(REPORT_LAYERS))
REPORT_CFLAGS = $(BASE_CFLAGS) $(REPORT_INC) $(PKG_CFLAGS)
SRC_INC      := -Isrc/recorder $(REPORT_INC) -Ikernels -I$(CUDA_HOME)/include
SRC_CFLAGS    = $(BASE_CFLAGS) $(SRC_INC) $(PKG_CFLAGS)
TEST_CFLAGS   = $(BASE_CFLAGS) -Isrc/cli -Isrc/recorder $(REPORT_INC) -Ikernels -Itests $(PKG_CFLAGS) -DATTNPROF_WITH_RECORDER=$(WITH_CUDA)

# sm_80 (A100) and sm_90 (H100/H200) machine code, plus PTX for newer GPUs.
CUDA_ARCH ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
             -gencode arch=compute_90,code=compute_90
NVCCFLAGS ?= -O3 -lineinfo
# Default visibility for the kernels' host stubs: the runner finds our kernels in the
# recorder by the name CUPTI records and asks the occupancy API about them.
NVCCFLAGS += -std=c++17 $(CUDA_ARCH) -Ikernels -MMD -MP -Xptxas -warn-spills \
             -Xcompiler -fPIC -device-entity-has-hidden-visibility=false

REPORT_LIBS   := -lcairo -lfontconfig -lpng -lcmark-gfm-extensions -lcmark-gfm -ljansson -lyajl -lz -lm
CUDA_LIBS     := -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/extras/CUPTI/lib64 \
                 -Wl,--enable-new-dtags,-rpath,$(CUDA_HOME)/lib64:$(CUDA_HOME)/extras/CUPTI/lib64 \
                 -lcudnn -lcublas -lcupti -lcudart -lstdc++ -lm -ldl -lpthread

# The folders say which binary a source belongs to: src/cli/ is the executable,
# src/recorder/ (and its variants/) the recorder's shared object.
REPORT_SRC   := $(foreach l,$(REPORT_LAYERS),$(wildcard report/$(l)/*.c))
CLI_SRC      := $(wildcard src/cli/*.c)
RECORDER_SRC := $(wildcard src/recorder/*.c src/recorder/variants/*.c)
# kernels/attn_bwd_sm90a.cu is bench-only (never run on a GPU yet): built into bwd_tc_bench, not the recorder.
CU_SRC       := $(filter-out kernels/attn_bwd_sm90a.cu,$(wildcard kernels/*.cu))
TEMPLATES    := $(wildcard templates/*)
REPORT_OBJ   := $(REPORT_SRC:%.c=$(BUILD)/%.o) $(BUILD)/templates.o
CLI_OBJ      := $(CLI_SRC:%.c=$(BUILD)/%.o)
RECORDER_OBJ := $(RECORDER_SRC:%.c=$(BUILD)/%.o) $(CU_SRC:%.cu=$(BUILD)/%.o)
# Tests by module: tests/<layer>/<topic>.c (layer: a folder of report/, or cli, recorder);
# the test of a module lives in the folder of its layer, named by what it tests.
TEST_MODULES := base archive io analysis figures docs cli recorder
TEST_SRC     := $(foreach m,$(TEST_MODULES),$(wildcard tests/$(m)/*.c))
TEST_OBJ     := $(TEST_SRC:%.c=$(BUILD)/%.o)
REPORT_LIB   := $(BUILD)/libattnprof_report.a
RECORDER     := $(BUILD)/libattnprof_recorder.so
# `attnprof record`'s CUPTI injection library (src/inject/): CUPTI and the driver only.
INJECT_OBJ   := $(patsubst %.c,$(BUILD)/%.o,$(wildcard src/inject/*.c))
INJECT       := $(BUILD)/libattnprof_inject.so

ifeq ($(WITH_CUDA),1)
PROGRAMS := $(BUILD)/attnprof $(RECORDER) $(INJECT)
else
PROGRAMS := $(BUILD)/attnprof
$(info attnprof: no nvcc at $(NVCC): building without the CUDA recorder (every command but `run`))
endif

.DEFAULT_GOAL := all
.PHONY: all deps deps-run deps-check run test gpu-test hta-test slurm-test install clean resources resources-sm90a sass-identity sanitize fuzz citation FORCE

# main.o, cmd_archive.o and report.o carry the version: rebuild them when `git describe` changes.
VERSION_STAMP := $(BUILD)/version.stamp
$(VERSION_STAMP): FORCE
	@mkdir -p $(BUILD); echo '$(VERSION)' | cmp -s - $@ || echo '$(VERSION)' > $@
$(BUILD)/src/cli/main.o $(BUILD)/src/cli/cmd_archive.o $(BUILD)/report/docs/report.o: $(VERSION_STAMP)
# run.json records how the recorder was built: the nvcc release and the flags (the sm_90a
# object's architectures are stated by the objects themselves, runner_env.c).
NVCC_RELEASE := $(if $(filter 1,$(WITH_CUDA)),$(shell $(NVCC) --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p'))
$(BUILD)/src/recorder/runner_env.o: BASE_CFLAGS += -DATTNPROF_NVCC_VERSION='"$(NVCC_RELEASE)"' \
    -DATTNPROF_BUILD_FLAGS='"nvcc $(strip $(NVCCFLAGS)); cc $(strip $(CFLAGS))"'
# `attnprof list` without a recorder (no CUDA, no driver) prints the variant catalog, generated
# from the registry and the variant files themselves (a variant stays one file + one line).
VARIANT_CATALOG := $(BUILD)/gen/variant_catalog.h
$(VARIANT_CATALOG): src/cli/variant_catalog.py src/recorder/registry.c $(wildcard src/recorder/variants/*.c) $(wildcard src/recorder/*.h)
	@mkdir -p $(dir $@)
	python3 src/cli/variant_catalog.py src/recorder/registry.c src/recorder/variants $@
$(BUILD)/src/cli/cmd_archive.o: $(VARIANT_CATALOG)
# The CLI objects see no CUDA header; they know whether this build has a recorder.
$(CLI_OBJ): SRC_INC := -Isrc/cli -Isrc/recorder $(REPORT_INC) -I$(BUILD)/gen
$(CLI_OBJ): BASE_CFLAGS += -DATTNPROF_WITH_RECORDER=$(WITH_CUDA)
# CUDA 13's cupti_profiler_host.h includes C++'s <string>: the C counter pass gets an
# empty stand-in (src/recorder/cupti_c/string).
$(BUILD)/src/recorder/counter_pass.o: SRC_INC += -Isrc/recorder/cupti_c

all: deps-check $(PROGRAMS)

$(REPORT_LIB): $(REPORT_OBJ)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/attnprof: $(CLI_OBJ) $(REPORT_LIB)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(REPORT_LIB) -Wl,--as-needed $(REPORT_LIBS) -ldl

# The report library's symbols stay inside the recorder (--exclude-libs); the
# executable has its own copy. --no-undefined: every dependency is named here.
$(RECORDER): $(RECORDER_OBJ) $(REPORT_LIB)
	$(CC) -shared -o $@ $(RECORDER_OBJ) $(REPORT_LIB) -Wl,--exclude-libs,ALL -Wl,--no-undefined \
	  -Wl,--as-needed $(CUDA_LIBS) $(REPORT_LIBS)

$(INJECT): $(INJECT_OBJ)
	$(CC) -shared -o $@ $^ -Wl,--no-undefined -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/lib64/stubs \
	  -L$(CUDA_HOME)/extras/CUPTI/lib64 -Wl,--enable-new-dtags,-rpath,$(CUDA_HOME)/lib64:$(CUDA_HOME)/extras/CUPTI/lib64 \
	  -Wl,--as-needed -lcupti -lcuda -lstdc++ -ldl -lpthread

# The repository's CITATION.cff is written by the report library's citation writer, the
# one every report's BibTeX comes from (report/docs/citation.c): never edited by hand.
$(BUILD)/citation_cff: $(BUILD)/tests/citation_cff.o $(REPORT_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ -Wl,--as-needed $(REPORT_LIBS)
citation: $(BUILD)/citation_cff
	$< > CITATION.cff.tmp && mv CITATION.cff.tmp CITATION.cff

$(BUILD)/report/%.o: report/%.c
	@mkdir -p $(dir $@)
	$(CC) $(REPORT_CFLAGS) -c $< -o $@

$(BUILD)/src/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(SRC_CFLAGS) -c $< -o $@

$(BUILD)/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -c $< -o $@

$(BUILD)/%.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -c $< -o $@

# The Hopper flash kernel needs wgmma and setmaxnreg: sm_90a machine code only, and
# the only object built for 90a. nvcc 13.0's `-arch=sm_90a` shorthand also runs a
# plain sm_90 pass that rejects those instructions; the -gencode form does not.
SM90A_ARCH := -gencode arch=compute_90a,code=sm_90a -DATTNPROF_HAVE_SM90A
# override: a CUDA_ARCH given on the command line (an sm_90-only build) must not reach this object.
$(BUILD)/kernels/flash_fwd_sm90a.o: override CUDA_ARCH = $(SM90A_ARCH)
# ptxas says so only in an info line, not a warning, when it serialises every wgmma of a
# kernel (C7515-C7520: an accumulator written, or a wgmma issued, on some paths only); that
# cost two tried kernels 10-60% (bench/RESULTS.md, steps 12 and 14), so it fails the build.
WGMMA_SERIALISED := Potential Performance Loss: wgmma
define check_wgmma_log
@cat $@.ptxas >&2; if grep -q "$(WGMMA_SERIALISED)" $@.ptxas; then rm -f $@; \
  echo "error: ptxas serialised the wgmma of a kernel (lines above); keep wgmma issue and accumulator writes on every path" >&2; exit 1; fi
endef
$(BUILD)/kernels/flash_fwd_sm90a.o: kernels/flash_fwd_sm90a.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -c $< -o $@ 2> $@.ptxas || { cat $@.ptxas >&2; rm -f $@; exit 1; }
	$(check_wgmma_log)

# The sm_90a backward (bench-only, kernels/attn_bwd_sm90a.h): the same target and the same
# serialisation check as the forward's object.
SM90A_BWD_HEADERS := kernels/attn_bwd_sm90a.h kernels/ptx_sm90a.cuh kernels/wgmma_bf16.cuh kernels/flash_tile_order.h \
                     kernels/ptx_bf16.cuh kernels/tensor_map_encoder.h kernels/attn_bwd_rows.cuh
$(BUILD)/kernels/attn_bwd_sm90a.o: override CUDA_ARCH = $(SM90A_ARCH)
$(BUILD)/kernels/attn_bwd_sm90a.o: kernels/attn_bwd_sm90a.cu $(SM90A_BWD_HEADERS)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -Xptxas -v -c $< -o $@ 2> $@.ptxas || { cat $@.ptxas >&2; rm -f $@; exit 1; }
	$(check_wgmma_log)

# Templates and stylesheet are linked into the report library so an installed
# attnprof needs no data directory.
$(BUILD)/templates.o: $(TEMPLATES)
	@mkdir -p $(BUILD)
	ld -r -b binary -z noexecstack -o $@ $(TEMPLATES)

# The GPU-free tests link the report library (and the pure-C FP64 reference and command line), never CUDA.
$(BUILD)/test_attnprof: $(TEST_OBJ) $(BUILD)/src/recorder/reference.o $(BUILD)/src/recorder/reference_bwd.o $(BUILD)/src/recorder/stop_rule.o $(BUILD)/src/recorder/gqa_decode.o $(BUILD)/src/cli/cli.o $(BUILD)/src/cli/cli_table.o $(REPORT_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ -Wl,--as-needed $(REPORT_LIBS) -lcriterion

# CUDA builds only: CUPTI's host half checks the counter pass's metric names (no GPU).
$(BUILD)/host_metrics: tests/cupti/host_metrics.c $(BUILD)/src/recorder/counter_pass.o $(REPORT_LIB)
	$(CC) $(SRC_CFLAGS) -o $@ $< $(BUILD)/src/recorder/counter_pass.o $(REPORT_LIB) -Wl,--as-needed $(CUDA_LIBS) $(REPORT_LIBS)
# CUDA builds only: the kernel family table against each family's own API (no GPU).
KERNEL_FAMILY_OBJ := $(addprefix $(BUILD)/kernels/,families.o efficient_fwd.o flash_fwd.o flash_fwd_sm90a.o \
                     flash_decode.o attn_bwd_tc.o)
$(BUILD)/kernel_families: tests/kernels/families.c $(KERNEL_FAMILY_OBJ)
	$(CC) $(SRC_CFLAGS) -o $@ $< $(KERNEL_FAMILY_OBJ) -Wl,--as-needed $(CUDA_LIBS)
# CUDA builds only: the activity kinds the injection library asks CUPTI for (no GPU, no CUPTI call).
$(BUILD)/inject_kinds: tests/cupti/inject_kinds.c $(BUILD)/src/inject/inject_kinds.o
	$(CC) $(SRC_CFLAGS) -Isrc/inject -o $@ $^
HOST_CHECKS := $(if $(filter 1,$(WITH_CUDA)),$(BUILD)/host_metrics $(BUILD)/kernel_families $(BUILD)/inject_kinds)

# Missing Debian packages: installed when root, otherwise the exact command is printed.
deps:
	@missing=""; for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	paper=""; for p in $(DEB_PAPER_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || paper="$$paper $$p"; done; \
	if [ -n "$$missing$$paper" ] && [ "$$(id -u)" = 0 ]; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing $$paper; \
	elif [ -n "$$missing" ]; then \
	  echo "attnprof: missing packages; run: sudo apt-get install -y$$missing$$paper" >&2; exit 1; \
	elif [ -n "$$paper" ]; then \
	  echo "attnprof: no report.pdf and no paper tests without:$$paper (sudo apt-get install -y$$paper)" >&2; \
	fi

# `make run` installs only what building and running needs (not the test, sanitizer and paper toolchains).
deps-run:
	@missing=""; for p in $(DEB_RUN_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ] && [ "$$(id -u)" = 0 ]; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	elif [ -n "$$missing" ]; then \
	  echo "attnprof: missing packages; run: sudo apt-get install -y$$missing" >&2; exit 1; \
	fi

deps-check:
	@pkg-config --exists $(PKGS) || $(MAKE) --no-print-directory deps

# On a machine without a GPU (or a build without CUDA), `attnprof run` exits 3 with its
# one-line reason; the bundled H200 example is rendered instead.
run: deps-run $(PROGRAMS)
	@mkdir -p $(OUT)
	@$(BUILD)/attnprof run $(RUN_ARGS); rc=$$?; \
	if [ $$rc = 3 ]; then \
	  echo "attnprof: no GPU run here; rendering the bundled H200 example archive $(EXAMPLE) instead"; \
	  $(BUILD)/attnprof report $(EXAMPLE) -q && echo "report: $(EXAMPLE)/report.html"; \
	else exit $$rc; fi

test: deps $(BUILD)/test_attnprof $(PROGRAMS) $(HOST_CHECKS)
	ATTNPROF_PDF=0 ATTNPROF_BIN=$(BUILD)/attnprof $(BUILD)/test_attnprof --jobs 2
	$(if $(HOST_CHECKS),$(BUILD)/host_metrics)
	$(if $(HOST_CHECKS),$(BUILD)/kernel_families)
	$(if $(HOST_CHECKS),$(BUILD)/inject_kinds)
	ATTNPROF_PDF=0 ATTNPROF_BIN=$(BUILD)/attnprof tests/golden/rerender.sh
	ATTNPROF_PDF=0 ATTNPROF_BIN=$(BUILD)/attnprof python3 tests/docs/model_sentences.py
	ATTNPROF_BIN=$(BUILD)/attnprof tests/paper/latex.sh
	ATTNPROF_BIN=$(BUILD)/attnprof tests/paper/print.sh
	ATTNPROF_BIN=$(BUILD)/attnprof tests/paper/summary_cells.sh
	ATTNPROF_BIN=$(BUILD)/attnprof tests/paper/caption_lines.sh
	ATTNPROF_BIN=$(BUILD)/attnprof tests/paper/readme_latex.sh
	BUILD=$(BUILD) WITH_CUDA=$(WITH_CUDA) tests/layout.sh
	tests/limits.sh

# `attnprof sweep --slurm` against a real slurmctld and slurmd on this host (root,
# Debian's slurm-wlm and munge; .ci/run installs them). A missing piece fails.
slurm-test: $(BUILD)/attnprof
	ATTNPROF_BIN=$(BUILD)/attnprof bash tests/slurm/run.sh

# Holistic Trace Analysis (PyPI) reads our trace.json as a PyTorch trace: needs a Python
# with HolisticTraceAnalysis and ijson (HTA_PYTHON; .ci/run makes a venv for it).
HTA_PYTHON ?= python3
hta-test: $(BUILD)/attnprof
	ATTNPROF_BIN=$(BUILD)/attnprof HTA_PYTHON=$(HTA_PYTHON) bash tests/hta/run.sh

# The whole GPU-free suite (Criterion, golden re-renders, CLI tests, layout) under
# AddressSanitizer + UndefinedBehaviorSanitizer, built with clang: its UBSan also has
# float-cast-overflow (a double outside an integer's range converted to it), which
# gcc's lacks. The first report fails the run.
SANITIZE_FLAGS := -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer
sanitize: export LSAN_OPTIONS = suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0
sanitize: export UBSAN_OPTIONS = print_stacktrace=1:halt_on_error=1
sanitize:
	@command -v clang >/dev/null || { echo "attnprof: make sanitize needs clang (Debian: apt-get install clang)" >&2; exit 1; }
	$(MAKE) --no-print-directory CC=clang CUDA_HOME=/nonexistent BUILD=build-sanitize \
	  CFLAGS="-O1 -g $(SANITIZE_FLAGS)" LDFLAGS="$(SANITIZE_FLAGS)" test

# libFuzzer (clang) over the archive readers (run.json, trace.json, counters.json,
# sweep.json), analysis, findings and every writer, in memory, seeded from the fixtures; tests/fuzz/corpus keeps what it finds. Runs
# FUZZ_SECONDS (default 60) and fails on any crash or sanitizer report.
FUZZ_SECONDS ?= 60
FUZZ_BUILD   := build-fuzz
FUZZ_FLAGS   := -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer
fuzz: export LSAN_OPTIONS = suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0
fuzz:
	@command -v clang >/dev/null || { echo "attnprof: make fuzz needs clang (Debian: apt-get install clang)" >&2; exit 1; }
	$(MAKE) --no-print-directory CC=clang CUDA_HOME=/nonexistent BUILD=$(FUZZ_BUILD) \
	  CFLAGS="-O1 -g $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link" $(FUZZ_BUILD)/libattnprof_report.a
	clang -O1 -g $(FUZZ_FLAGS) -fsanitize=fuzzer -std=c11 -D_GNU_SOURCE $(REPORT_INC) $(PKG_CFLAGS) \
	  tests/fuzz/fuzz_archive.c $(FUZZ_BUILD)/libattnprof_report.a $(REPORT_LIBS) -o $(FUZZ_BUILD)/fuzz_archive
	@mkdir -p tests/fuzz/corpus $(FUZZ_BUILD)/seeds
	python3 tests/fuzz/seeds.py $(FUZZ_BUILD)/seeds
	cd $(FUZZ_BUILD) && ./fuzz_archive -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	  -max_len=65536 -print_final_stats=1 -artifact_prefix=../tests/fuzz/ ../tests/fuzz/corpus seeds

# The fused kernels' own check (bench/fused_bench.cu --check): every configuration,
# the sm_90a flash kernels causal and non-causal, against an FP64 reference.
FUSED_BENCH := $(BUILD)/fused_bench
$(FUSED_BENCH): bench/fused_bench.cu $(BUILD)/kernels/flash_fwd.o $(BUILD)/kernels/efficient_fwd.o \
                $(BUILD)/kernels/flash_fwd_sm90a.o $(BUILD)/kernels/families.o $(BUILD)/kernels/flash_decode.o \
                $(BUILD)/kernels/attn_bwd_tc.o
	$(NVCC) $(NVCCFLAGS) -Xcompiler -fopenmp $^ -o $@ -lcublas -lgomp

# The unfused variants' elementwise kernels against the copy and write-only ceilings
# (bench/elementwise_bench.cu; issue 40, item 5).
$(BUILD)/elementwise_bench: bench/elementwise_bench.cu $(BUILD)/kernels/elementwise.o $(BUILD)/kernels/math_kernels.o \
                           $(BUILD)/kernels/softmax_staged.o
	$(NVCC) $(NVCCFLAGS) $^ -o $@

# The masked fill's write pattern and candidates (bench/fill_probe.cu; issue 40, item 5).
$(BUILD)/fill_probe: bench/fill_probe.cu $(BUILD)/kernels/elementwise.o $(BUILD)/kernels/softmax_staged.o
	$(NVCC) $(NVCCFLAGS) $^ -o $@

# The row kernels' and scale's limits: cache policies, the bulk-copy engine, staged rows
# (bench/softmax_probe.cu; issue 40, item 5). sm_90 only: its bulk copies and mbarriers are
# Hopper's; it compiles the kernels' sources itself, for the same target.
$(BUILD)/softmax_probe: bench/softmax_probe.cu kernels/elementwise.cu kernels/math_kernels.cu kernels/softmax_staged.cu \
                        kernels/softmax_staged_row.cuh
	$(NVCC) -O3 -lineinfo -std=c++17 -gencode arch=compute_90,code=sm_90 -Ikernels $(filter %.cu,$^) -o $@

# The tensor-core backward's own harness (bench/bwd_tc_bench.cu: check, small for
# compute-sanitizer, time), outside attnprof so that the sanitizer can run it; with the sm_90a
# backward's bench-only configurations after the mma.sync ones.
$(BUILD)/bwd_tc_bench: bench/bwd_tc_bench.cu kernels/attn_bwd_tc.cu kernels/attn_bwd_tc.h kernels/ptx_bf16.cuh \
                       $(BUILD)/kernels/attn_bwd_sm90a.o
	$(NVCC) -std=c++17 -O3 -lineinfo $(CUDA_ARCH) -Ikernels -DATTNPROF_HAVE_SM90A bench/bwd_tc_bench.cu \
	  kernels/attn_bwd_tc.cu $(BUILD)/kernels/attn_bwd_sm90a.o -o $@

# The sm_90a flash kernels with the bench-only configurations (bench/flash_sm90a_experiments.cu
# over the same kernels/sm90a/ headers), as a shared library for bench/flash_sm90a_torch.py
# (ours against PyTorch's flash and cuDNN in one process).
SM90A_HEADERS := kernels/flash_fwd_sm90a.h kernels/ptx_sm90a.cuh kernels/wgmma_bf16.cuh kernels/flash_tile_order.h \
                 kernels/tensor_map_encoder.h $(wildcard kernels/sm90a/*.cuh)
$(BUILD)/bench/libflash_sm90a.so: bench/flash_sm90a_experiments.cu $(SM90A_HEADERS)
	@mkdir -p $(dir $@)
	$(NVCC) -std=c++17 -O3 -lineinfo -shared -Xcompiler -fPIC $(SM90A_ARCH) \
	  -Ikernels -Xptxas -warn-spills $< -o $@ 2> $@.ptxas || { cat $@.ptxas >&2; rm -f $@; exit 1; }
	$(check_wgmma_log)

gpu-test: $(PROGRAMS) $(FUSED_BENCH) $(BUILD)/bwd_tc_bench
	ATTNPROF_BIN=$(BUILD)/attnprof FUSED_BENCH=$(FUSED_BENCH) BWD_TC_BENCH=$(BUILD)/bwd_tc_bench bash tests/gpu/run.sh

# The compiler's resource report (registers, shared memory, spills) for every kernel.
resources:
	@for f in $(filter-out kernels/flash_fwd_sm90a.cu,$(CU_SRC)); do \
	  $(NVCC) $(NVCCFLAGS) -Xptxas -v -c $$f -o /dev/null 2>&1 | grep -E "Compiling entry|registers|spill" ; done
	@$(MAKE) --no-print-directory CUDA_ARCH='$(SM90A_ARCH)' resources-sm90a
resources-sm90a:
	@for f in kernels/flash_fwd_sm90a.cu kernels/attn_bwd_sm90a.cu; do \
	  $(NVCC) $(NVCCFLAGS) -Xptxas -v -c $$f -o /dev/null 2>&1 | grep -E "Compiling entry|registers|spill"; done
# The sm_90a kernels' SASS and resources against a git revision, kernel by kernel, for the
# production object and the bench library (bench/sass_identity.sh; needs cuobjdump, CUOBJDUMP=).
SASS_REV ?= HEAD
sass-identity:
	bench/sass_identity.sh $(SASS_REV)

install: $(PROGRAMS)
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(BUILD)/attnprof $(DESTDIR)$(PREFIX)/bin/attnprof
	if [ -f $(RECORDER) ]; then install -d $(DESTDIR)$(PREFIX)/lib/attnprof && \
	  install -m 755 $(RECORDER) $(DESTDIR)$(PREFIX)/lib/attnprof/; fi
	if [ -f $(INJECT) ]; then install -m 755 $(INJECT) $(DESTDIR)$(PREFIX)/lib/attnprof/; fi

clean:
	rm -rf $(BUILD)

-include $(REPORT_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(RECORDER_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(INJECT_OBJ:.o=.d)
