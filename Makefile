# nbody-render - build, test, demo, bench.
#
#   make              build build/nbody-render (CUDA compiled in when nvcc is found)
#   make CUDA=0       CPU-only build
#   make CUDA_ARCH=sm_90   one GPU target (quick builds); default: sm_80 sm_86 sm_89 sm_90 + PTX
#   make MPI=1        an MPI build in build-mpi/ (OpenMPI found with pkg-config
#                     ompi-c, else mpicc --showme): one simulation over the ranks
#                     of mpirun, batches spread over them (dist/, docs/batch.md)
#   make test         install missing deps, build, run every test (GPU tests skip without a GPU)
#   make demo         install missing deps, render the default scene into out/demo/
#   make bench        build build/nbody-bench
#   make check-long   the long physics checks
#   make check-hostile   every output row, writer, reader and process under hostile
#                     conditions, signal cases included (docs/PROMISES.md)
#   make check-sanitize  CPU tests under -fsanitize=undefined,address (build-san/)
#   make deps         install missing Debian packages (or print the apt-get command)
#   make fuzz         libFuzzer harnesses (clang-14, ASan/UBSan) run FUZZ_SECONDS each
#   make check-fresh  the README's two commands in a fresh Debian 12 root
#                     (../shared/tools/fresh-check; root and debootstrap)
#   make check-layers include arrows between folders follow the layers
#                     (tools/check-layers.sh; docs/DESIGN.md)
#   make check-names  exported names carry their folder's prefix (nm over a
#                     CPU-only build; tools/check-names.sh)
#   make check-keys   docs/scenes.md's key reference is --list-keys --markdown's
#                     (tools/check-keys.sh)
#   make check-rules  no host function over 80 lines in any folder
#                     (tools/long-functions.py) and no call circle between
#                     the files of a folder (tools/circles.py over a CPU-only
#                     build's objects; docs/DESIGN.md)
#
# On a machine without the packages, `make test` and `make demo` first run
# `make deps`, then a second make: that one reads the packages' pkg-config
# flags, which exist only once the packages are installed (a make that read
# them at start-up would link without -lpng -lyaml -lav*).

# MPI=1 builds into its own folder, so the plain build's objects stay as they are.
MPI ?= 0
ifeq ($(MPI),1)
  BUILD ?= build-mpi
endif
BUILD ?= build
CC ?= cc
PKGS := yaml-0.1 libavcodec libavformat libavutil libswscale libpng check
# Snapshots and FITS maps (issue 16, writing side: output/snap_write.c,
# output/fits.c, sim/snap_restart.c): libhdf5 and cfitsio.
PKGS_SNAPOUT := hdf5 cfitsio
PKGS += $(PKGS_SNAPOUT)

# ---- CUDA probe -----------------------------------------------------------
NVCC ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
ifeq ($(NVCC),)
  CUDA ?= 0
endif
CUDA ?= 1
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
ifdef CUDA_ARCH
  GENCODE := -gencode arch=compute_$(subst sm_,,$(CUDA_ARCH)),code=$(CUDA_ARCH)
else
  GENCODE := -gencode arch=compute_80,code=sm_80 -gencode arch=compute_86,code=sm_86 \
             -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90,code=sm_90 \
             -gencode arch=compute_90,code=compute_90
endif

# ---- flags ----------------------------------------------------------------
PKG_MISSING := $(strip $(foreach p,$(PKGS),$(if $(shell pkg-config --exists $(p) 2>/dev/null && echo y),,$(p))))
PKG_FOUND := $(strip $(foreach p,$(filter-out $(PKG_MISSING),$(PKGS)),$(p)-$(shell pkg-config --modversion $(p))))
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs yaml-0.1 libavcodec libavformat libavutil libswscale libpng 2>/dev/null)
PKG_LIBS += $(shell pkg-config --libs $(PKGS_SNAPOUT) 2>/dev/null)
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)
OPT ?= -O2
CFLAGS += $(OPT) -g -fno-math-errno -std=c11 -D_GNU_SOURCE -Wall -Wextra -fopenmp -I. -I/usr/include/stb $(PKG_CFLAGS) $(SAN)
LDLIBS += $(PKG_LIBS) -fopenmp -lpthread -lm $(SAN)
NVCCFLAGS ?= -O3 -lineinfo -std=c++17 $(GENCODE) -Xcompiler -Wall -I.
NVCCFLAGS += -Xcompiler -fopenmp

# ---- MPI probe (MPI=1 only; the default build has no MPI) -----------------
MPI_DEV := $(shell pkg-config --exists ompi-c 2>/dev/null && echo y || (command -v mpicc >/dev/null 2>&1 && echo y))
ifeq ($(MPI),1)
  MPI_CFLAGS := $(shell pkg-config --cflags ompi-c 2>/dev/null || mpicc --showme:compile 2>/dev/null)
  MPI_LIBS := $(shell pkg-config --libs ompi-c 2>/dev/null || mpicc --showme:link 2>/dev/null)
  ifeq ($(strip $(MPI_LIBS)),)
    $(error MPI=1: no OpenMPI found (pkg-config ompi-c, mpicc); run 'make deps' or apt-get install libopenmpi-dev)
  endif
  CFLAGS += -DNB_HAVE_MPI=1 $(MPI_CFLAGS)
  LDLIBS += $(MPI_LIBS)
endif

VERSION := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
CFLAGS += -DNB_VERSION='"$(VERSION)"'

LIB_C := $(sort $(wildcard scene/*.c sim/*.c render/*.c engine/*.c output/*.c dist/*.c))
APP_C := $(sort $(wildcard app/*.c))
ifeq ($(CUDA),1)
  CU_SRC := $(sort $(wildcard sim/cuda/*.cu render/cuda/*.cu))
  CU_OBJ := $(CU_SRC:%.cu=$(BUILD)/%.o)
  LDLIBS += -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lstdc++
  CFLAGS += -DNB_HAVE_CUDA=1
else
  LIB_C += sim/cuda/gpu_none.c render/cuda/gpu_render_none.c
  CU_OBJ :=
endif
LIB_OBJ := $(LIB_C:%.c=$(BUILD)/%.o) $(CU_OBJ)
APP_OBJ := $(APP_C:%.c=$(BUILD)/%.o)
TEST_SRC := $(sort $(wildcard tests/test_*.c))
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BIN := $(BUILD)/nbody-render
BENCH := $(BUILD)/nbody-bench

.PHONY: mpi-test-bin all test test-run demo demo-run bench deps check-long check-sanitize check-fresh check-long-run \
	check-hostile check-hostile-run \
	check-layers check-names check-keys check-rules \
	fuzz fuzz-build fuzz-run fuzz-replay clean info pkgs-present
all: info pkgs-present $(BIN)

# The configuration report: one line at the start of every build.
info:
	@echo "nbody-render $(VERSION): packages $(or $(PKG_FOUND),none)$(if $(PKG_MISSING), MISSING $(PKG_MISSING)); nvcc $(if $(filter 1,$(CUDA)),yes ($(NVCC)),no$(if $(NVCC), (CUDA=0))); targets $(if $(filter 1,$(CUDA)),$(if $(CUDA_ARCH),$(CUDA_ARCH),sm_80 sm_86 sm_89 sm_90 +PTX),CPU only); mpi $(if $(filter 1,$(MPI)),yes,no$(if $(MPI_DEV), (MPI=1 to build it)))"

pkgs-present:
	@if [ -n "$(PKG_MISSING)" ]; then echo "missing packages: $(PKG_MISSING); run 'make deps' (or 'make test' / 'make demo', which do)"; exit 2; fi

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/%.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libnbody.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(APP_OBJ) $(BUILD)/libnbody.a | pkgs-present
	$(CC) -o $@ $(APP_OBJ) $(BUILD)/libnbody.a $(LDLIBS)

$(BUILD)/tests/%: tests/%.c $(BUILD)/libnbody.a $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libnbody.a $(CHECK_LIBS) $(LDLIBS)

BENCH_C := $(sort $(wildcard bench/*.c))
$(BENCH): $(BENCH_C) $(wildcard bench/*.h) $(BUILD)/libnbody.a
	$(CC) $(CFLAGS) -o $@ $(BENCH_C) $(BUILD)/libnbody.a $(LDLIBS)

bench: info pkgs-present $(BIN) $(BENCH)

# test and demo: install the packages first, then build in a second make
# (see the top of this file).
test: deps
	@$(MAKE) --no-print-directory test-run

demo: deps
	@$(MAKE) --no-print-directory demo-run

# Tests run from the repo root; each test binary prints its own summary.
# CK_DEFAULT_TIMEOUT: physics tests may take tens of seconds on 2 cores.
# The MPI tests (tests/test_dist*.c) launch an MPI build of the program with
# mpirun: a CPU-only one in $(BUILD)-mpi, made here when OpenMPI's headers
# are installed (make deps installs them); without them they SKIP.
MPI_TEST_BUILD := $(BUILD)-mpi
ifeq ($(MPI),1)
  MPI_TEST_BIN := $(BIN)
else ifneq ($(MPI_DEV),)
  MPI_TEST_BIN := $(MPI_TEST_BUILD)/nbody-render
endif

mpi-test-bin:
ifneq ($(MPI),1)
ifneq ($(MPI_DEV),)
	@$(MAKE) --no-print-directory MPI=1 CUDA=0 BUILD=$(MPI_TEST_BUILD) $(MPI_TEST_BUILD)/nbody-render
endif
endif

test-run: info pkgs-present $(BIN) $(TEST_BIN) mpi-test-bin fuzz-replay
	@fail=0; for t in $(TEST_BIN); do \
	  echo "== $$t"; CK_DEFAULT_TIMEOUT=600 NB_BIN=$(BIN) NB_MPI_BIN=$(MPI_TEST_BIN) $$t || fail=1; done; \
	  if [ $$fail = 0 ]; then echo "ALL TESTS PASSED"; else echo "SOME TESTS FAILED"; exit 1; fi

demo-run: info pkgs-present $(BIN)
	./tools/demo.sh $(BIN)

check-long: deps
	@$(MAKE) --no-print-directory check-long-run

check-long-run: info pkgs-present $(BIN) $(TEST_BIN)
	@fail=0; for t in $(TEST_BIN); do \
	  CK_DEFAULT_TIMEOUT=3600 NB_LONG=1 NB_BIN=$(BIN) $$t || fail=1; done; exit $$fail

# The hostile cases (docs/PROMISES.md): every row of the outputs table under
# a full disk, special files, shared names, batches, SIGINT and kill -9,
# the writers, the readers and the processes. make test runs the fast part
# (all but the signal cases of tests/test_hostile.c).
HOSTILE_TESTS := test_hostile test_writer_hostile test_reader_hostile test_process_hostile test_output_safety
check-hostile: deps
	@$(MAKE) --no-print-directory check-hostile-run

check-hostile-run: info pkgs-present $(BIN) $(filter $(HOSTILE_TESTS:%=$(BUILD)/tests/%),$(TEST_BIN)) mpi-test-bin
	@fail=0; for t in $(HOSTILE_TESTS); do [ -f tests/$$t.c ] || continue; echo "== $$t"; \
	  NB_HOSTILE_SLOW=1 CK_DEFAULT_TIMEOUT=600 NB_BIN=$(BIN) NB_MPI_BIN=$(MPI_TEST_BIN) $(BUILD)/tests/$$t || fail=1; done; \
	  if [ $$fail = 0 ]; then echo "HOSTILE CHECKS PASSED"; else echo "SOME HOSTILE CHECKS FAILED"; exit 1; fi

check-sanitize: deps
	$(MAKE) BUILD=build-san CUDA=0 OPT=-O1 SAN="-fsanitize=undefined,address -fno-omit-frame-pointer" \
	  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=0 test-run

# The README's two commands in a fresh Debian 12 root (needs root and
# debootstrap; 10-30 minutes). FRESH_CHECK_ARGS: e.g. --cuda, --keep.
FRESH_CHECK ?= ../shared/tools/fresh-check
check-fresh:
	@if [ -x "$(FRESH_CHECK)" ]; then $(FRESH_CHECK) $(FRESH_CHECK_ARGS) .; \
	else echo "check-fresh: $(FRESH_CHECK) not found (set FRESH_CHECK=PATH)"; exit 2; fi

deps:
	@./tools/deps.sh

# The layers (docs/DESIGN.md): the script holds the table of allowed arrows.
check-layers:
	@./tools/check-layers.sh

# docs/scenes.md's key reference is the program's --list-keys --markdown
# (tools/check-keys.sh; docs/scenes.md, "Every key").
check-keys: pkgs-present $(BIN)
	@./tools/check-keys.sh $(BIN)

# The rules that check themselves (docs/DESIGN.md): function length over
# every folder, and call circles inside each folder of a CPU-only build
# (BUILD-cpu when CUDA is on, as check-names).
ifeq ($(CUDA),1)
check-rules:
	@$(MAKE) --no-print-directory CUDA=0 BUILD=$(BUILD)-cpu check-rules
else
check-rules: pkgs-present $(LIB_OBJ) $(APP_OBJ)
	@python3 tools/long-functions.py && echo "check-rules: no host function over 80 lines"
	@python3 tools/circles.py $(BUILD)
endif

# Exported names by folder, read with nm from a CPU-only build's objects
# (BUILD-cpu when CUDA is on; needs the packages: run after make deps).
ifeq ($(CUDA),1)
check-names:
	@$(MAKE) --no-print-directory CUDA=0 BUILD=$(BUILD)-cpu check-names
else
check-names: pkgs-present $(LIB_OBJ) $(APP_OBJ)
	@./tools/check-names.sh $(BUILD) $(filter %.o,$(LIB_OBJ) $(APP_OBJ))
endif

# ---- fuzzing ---------------------------------------------------------------
# make fuzz [FUZZ_SECONDS=60] [FUZZ_TARGETS="scene batch bodyfile"]: install
# clang-14 and libFuzzer (tools/deps.sh fuzz), build the harnesses fuzz/fuzz_*.c
# with ASan/UBSan into build-fuzz/, then run each for FUZZ_SECONDS. Seeds:
# scenes/, tests/data/, fuzz/seeds/NAME/ and the kept regressions
# fuzz/regress/NAME/; new inputs go to build-fuzz/corpus/NAME/, crashes to
# build-fuzz/crash-NAME-*. make test replays the seeds and regressions
# through the same harnesses built with the normal compiler (fuzz-replay).
FUZZ_TARGETS ?= scene batch bodyfile snapbin snaph5 snapload snapseries restart
FUZZ_SECONDS ?= 60
FUZZ_SAN := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_LIB_OBJ := $(filter-out $(BUILD)/app/main.o,$(APP_OBJ)) $(BUILD)/libnbody.a
FUZZ_SEEDS = scenes tests/data $(wildcard fuzz/seeds/$(1)) $(wildcard fuzz/regress/$(1))

fuzz: 
	@./tools/deps.sh fuzz
	@$(MAKE) --no-print-directory BUILD=build-fuzz CC=clang-14 CUDA=0 OPT=-O1 SAN="$(FUZZ_SAN)" fuzz-run

fuzz-build: $(FUZZ_TARGETS:%=$(BUILD)/fuzz/fuzz_%)

$(BUILD)/fuzz/fuzz_%: fuzz/fuzz_%.c $(wildcard fuzz/fuzz_*.h) $(FUZZ_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB_OBJ) $(LDLIBS)

fuzz-run: info fuzz-build
	@for t in $(FUZZ_TARGETS); do mkdir -p $(BUILD)/corpus/$$t; \
	  echo "== fuzz $$t for $(FUZZ_SECONDS) s"; \
	  ASAN_OPTIONS=detect_leaks=1 $(BUILD)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) \
	    -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 -artifact_prefix=$(BUILD)/crash-$$t- \
	    $(BUILD)/corpus/$$t scenes tests/data $$(ls -d fuzz/seeds/$$t fuzz/regress/$$t 2>/dev/null) \
	    2>&1 | tee $(BUILD)/fuzz-$$t.log | grep -E '^#[0-9]+.*(DONE|pulse)|^stat::|ERROR|SUMMARY' || true; \
	  if grep -q 'ERROR: \|SUMMARY: \|contract broken' $(BUILD)/fuzz-$$t.log; then echo "fuzz $$t: CRASH (see $(BUILD)/fuzz-$$t.log)"; exit 1; fi; \
	done; echo "fuzz: no crash in $(FUZZ_TARGETS)"

# The harnesses built with the normal compiler and a plain main (fuzz/replay.c)
# replay every seed and kept regression: part of make test.
$(BUILD)/fuzz/replay_%: fuzz/fuzz_%.c fuzz/replay.c $(wildcard fuzz/fuzz_*.h) $(FUZZ_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ fuzz/replay.c $< $(FUZZ_LIB_OBJ) $(LDLIBS)

fuzz-replay: $(FUZZ_TARGETS:%=$(BUILD)/fuzz/replay_%)
	@for t in $(FUZZ_TARGETS); do \
	  $(BUILD)/fuzz/replay_$$t scenes/*.yaml tests/data/* $$(ls fuzz/seeds/$$t/* fuzz/regress/$$t/* 2>/dev/null) || exit 1; \
	done

clean:
	rm -rf $(BUILD) build-san build-fuzz

-include $(LIB_OBJ:.o=.d) $(APP_OBJ:.o=.d)
