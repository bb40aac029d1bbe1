# attnprof: `make` builds build/attnprof; `make run` runs the batch on this machine's GPU;
# `make test` runs the test suite (no GPU needed); `make gpu-test` checks the variants on a GPU.
CUDA_HOME ?= /usr/local/cuda
PREFIX    ?= /usr/local
BUILD     ?= build
CC        ?= gcc
NVCC      ?= $(CUDA_HOME)/bin/nvcc
OUT       ?= out
RUN_ARGS  ?=

DEB_PACKAGES := libcairo2-dev libpng-dev libcmark-gfm-dev libcmark-gfm-extensions-dev libjansson-dev \
                libcriterion-dev fonts-dejavu-core pkg-config poppler-utils
PKGS      := cairo libpng libcmark-gfm jansson

VERSION   := $(shell git describe --always --dirty --tags 2>/dev/null || echo unknown)
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)

CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -Wall -Wextra -Wno-unused-parameter -Wno-format-truncation -D_GNU_SOURCE -MMD -MP \
            -Isrc -Ikernels -I$(CUDA_HOME)/include $(PKG_CFLAGS) -DATTNPROF_VERSION='"$(VERSION)"'
# sm_80 (A100) and sm_90 (H100/H200) machine code, plus PTX for newer GPUs.
CUDA_ARCH ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
             -gencode arch=compute_90,code=compute_90
NVCCFLAGS ?= -O3 -lineinfo
# Default visibility for the kernels' host stubs: with -rdynamic the runner finds our
# kernels by the name CUPTI records and asks the occupancy API about them.
NVCCFLAGS += -std=c++17 $(CUDA_ARCH) -Isrc -Ikernels -MMD -MP -Xptxas -warn-spills \
             -device-entity-has-hidden-visibility=false
LDLIBS    := -rdynamic -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/extras/CUPTI/lib64 \
             -Wl,--enable-new-dtags,-rpath,$(CUDA_HOME)/lib64:$(CUDA_HOME)/extras/CUPTI/lib64 \
             -lcudnn -lcublas -lcupti -lcudart \
             -lcairo -lpng -lcmark-gfm-extensions -lcmark-gfm -ljansson -lstdc++ -lm -ldl -lpthread

C_SRC    := $(filter-out src/main.c,$(wildcard src/*.c src/*/*.c))
CU_SRC   := $(wildcard kernels/*.cu)
TEMPLATES:= $(wildcard templates/*)
C_OBJ    := $(C_SRC:%.c=$(BUILD)/%.o)
CU_OBJ   := $(CU_SRC:%.cu=$(BUILD)/%.o)
TPL_OBJ  := $(BUILD)/templates.o
TEST_SRC := $(wildcard tests/test_*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)

.DEFAULT_GOAL := all
.PHONY: all deps run test gpu-test install clean resources FORCE

# main.o and report.o carry the version: rebuild them when `git describe` changes.
VERSION_STAMP := $(BUILD)/version.stamp
$(VERSION_STAMP): FORCE
	@mkdir -p $(BUILD); echo '$(VERSION)' | cmp -s - $@ || echo '$(VERSION)' > $@
$(BUILD)/src/main.o $(BUILD)/src/report.o: $(VERSION_STAMP)
all: deps-check $(BUILD)/attnprof

$(BUILD)/attnprof: $(BUILD)/src/main.o $(C_OBJ) $(CU_OBJ) $(TPL_OBJ)
	$(CC) -o $@ $^ $(LDLIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/%.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -c $< -o $@

# Templates and stylesheet are linked into the binary so an installed attnprof
# needs no data directory.
$(TPL_OBJ): $(TEMPLATES)
	@mkdir -p $(BUILD)
	ld -r -b binary -z noexecstack -o $@ $(TEMPLATES)

$(BUILD)/test_attnprof: $(TEST_OBJ) $(C_OBJ) $(CU_OBJ) $(TPL_OBJ)
	$(CC) -o $@ $^ $(LDLIBS) -lcriterion

# Missing Debian packages: installed when root, otherwise the exact command is printed.
deps:
	@missing=""; for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else echo "attnprof: missing packages; run: sudo apt-get install -y$$missing" >&2; exit 1; fi; \
	fi; \
	test -x $(NVCC) || { echo "attnprof: no nvcc at $(NVCC); install the CUDA Toolkit or set CUDA_HOME" >&2; exit 1; }

deps-check:
	@pkg-config --exists $(PKGS) || $(MAKE) --no-print-directory deps

run: deps $(BUILD)/attnprof
	@mkdir -p $(OUT)
	$(BUILD)/attnprof run $(RUN_ARGS)

test: deps $(BUILD)/test_attnprof $(BUILD)/attnprof
	ATTNPROF_BIN=$(BUILD)/attnprof $(BUILD)/test_attnprof --jobs 2

gpu-test: $(BUILD)/attnprof
	ATTNPROF_BIN=$(BUILD)/attnprof bash tests/gpu/run.sh

# The compiler's resource report (registers, shared memory, spills) for every kernel.
resources:
	@for f in $(CU_SRC); do $(NVCC) $(NVCCFLAGS) -Xptxas -v -c $$f -o /dev/null 2>&1 | grep -E "Compiling entry|registers|spill" ; done

install: $(BUILD)/attnprof
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(BUILD)/attnprof $(DESTDIR)$(PREFIX)/bin/attnprof

clean:
	rm -rf $(BUILD)

-include $(C_OBJ:.o=.d) $(CU_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BUILD)/src/main.d
