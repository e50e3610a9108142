# nbody-render - build, test, demo, bench.
#
#   make              build build/nbody-render (CUDA compiled in when nvcc is found)
#   make CUDA=0       CPU-only build
#   make CUDA_ARCH=sm_90   one GPU target (quick builds); default: sm_80 sm_86 sm_89 sm_90 + PTX
#   make test         install missing deps, build, run every test (GPU tests skip without a GPU)
#   make demo         install missing deps, render the default scene into out/demo/
#   make bench        build build/nbody-bench
#   make check-long   the long physics checks
#   make check-sanitize  CPU tests under -fsanitize=undefined,address (build-san/)
#   make deps         install missing Debian packages (or print the apt-get command)

BUILD ?= build
CC ?= cc
PKGS := yaml-0.1 libavcodec libavformat libavutil libswscale libpng check

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
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs yaml-0.1 libavcodec libavformat libavutil libswscale libpng 2>/dev/null)
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)
OPT ?= -O2
CFLAGS += $(OPT) -g -fno-math-errno -std=c11 -D_GNU_SOURCE -Wall -Wextra -fopenmp -I. -I/usr/include/stb $(PKG_CFLAGS) $(SAN)
LDLIBS += $(PKG_LIBS) -fopenmp -lpthread -lm $(SAN)
NVCCFLAGS ?= -O3 -lineinfo -std=c++17 $(GENCODE) -Xcompiler -Wall -I.

VERSION := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
CFLAGS += -DNB_VERSION='"$(VERSION)"'

LIB_C := $(sort $(wildcard sim/*.c render/*.c output/*.c))
APP_C := $(sort $(wildcard app/*.c))
ifeq ($(CUDA),1)
  CU_SRC := $(sort $(wildcard kernels/*.cu))
  CU_OBJ := $(CU_SRC:%.cu=$(BUILD)/%.o)
  LDLIBS += -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lstdc++
  CFLAGS += -DNB_HAVE_CUDA=1
else
  LIB_C += kernels/gpu_none.c
  CU_OBJ :=
endif
LIB_OBJ := $(LIB_C:%.c=$(BUILD)/%.o) $(CU_OBJ)
APP_OBJ := $(APP_C:%.c=$(BUILD)/%.o)
TEST_SRC := $(sort $(wildcard tests/test_*.c))
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BIN := $(BUILD)/nbody-render
BENCH := $(BUILD)/nbody-bench

.PHONY: all test demo bench deps check-long check-sanitize clean info
all: info $(BIN)

info:
	@echo "nbody-render $(VERSION): CUDA=$(CUDA) nvcc=$(or $(NVCC),none) targets=$(if $(CUDA_ARCH),$(CUDA_ARCH),sm_80 sm_86 sm_89 sm_90 +PTX)"

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/%.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libnbody.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(APP_OBJ) $(BUILD)/libnbody.a
	$(CC) -o $@ $(APP_OBJ) $(BUILD)/libnbody.a $(LDLIBS)

$(BUILD)/tests/%: tests/%.c $(BUILD)/libnbody.a $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libnbody.a $(CHECK_LIBS) $(LDLIBS)

BENCH_C := $(sort $(wildcard bench/*.c))
$(BENCH): $(BENCH_C) $(wildcard bench/*.h) $(BUILD)/libnbody.a
	$(CC) $(CFLAGS) -o $@ $(BENCH_C) $(BUILD)/libnbody.a $(LDLIBS)

bench: info $(BIN) $(BENCH)

# Tests run from the repo root; each test binary prints its own summary.
# CK_DEFAULT_TIMEOUT: physics tests may take tens of seconds on 2 cores.
test: deps info $(BIN) $(TEST_BIN)
	@fail=0; for t in $(TEST_BIN); do \
	  echo "== $$t"; CK_DEFAULT_TIMEOUT=600 NB_BIN=$(BIN) $$t || fail=1; done; \
	  if [ $$fail = 0 ]; then echo "ALL TESTS PASSED"; else echo "SOME TESTS FAILED"; exit 1; fi

check-long: deps $(BIN) $(TEST_BIN)
	@fail=0; for t in $(TEST_BIN); do \
	  CK_DEFAULT_TIMEOUT=3600 NB_LONG=1 NB_BIN=$(BIN) $$t || fail=1; done; exit $$fail

check-sanitize: deps
	$(MAKE) BUILD=build-san CUDA=0 OPT=-O1 SAN="-fsanitize=undefined,address -fno-omit-frame-pointer" \
	  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=0 test

demo: deps $(BIN)
	./tools/demo.sh $(BIN)

deps:
	@./tools/deps.sh

clean:
	rm -rf $(BUILD) build-san

-include $(LIB_OBJ:.o=.d) $(APP_OBJ:.o=.d)
