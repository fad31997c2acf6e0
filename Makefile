# rlxc - ahead-of-time compiler for neural-network inference.
#
#   make            build build/rlxc
#   make test       the whole test suite (tests/run_all.sh), closing line "N passed, N failed"
#   make demo       compile, build and run the bundled example model
#   make install PREFIX=/usr/local
#   make clean

CC      ?= cc
PREFIX  ?= /usr/local
CFLAGS  ?= -O2 -g
STD      = -std=c99 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror
B        = build

CJSON_CFLAGS := $(shell pkg-config --cflags libcjson 2>/dev/null)
CJSON_LIBS   := $(shell pkg-config --libs libcjson 2>/dev/null || echo -lcjson)

LIB_SRCS = $(sort $(wildcard lib/*.c lib/frontend/*.c lib/passes/*.c lib/codegen_c/*.c))
# the runtime: every .c file of runtime_min/ (generated code links them all)
RT_ALL   = $(sort $(wildcard runtime_min/*.c))
HDRS     = $(wildcard lib/*.h lib/*.def lib/*/*.h runtime_min/*.h runtime_min/*.def)

LIB_OBJS = $(LIB_SRCS:%.c=$(B)/obj/%.o) $(RT_ALL:%.c=$(B)/obj/%.o)

all: $(B)/rlxc

# ONNX import (lib/frontend/onnx.c): protobuf-c code generated at build time
# from Debian's onnx.proto (libonnx-dev), never committed. The generated file
# is not warning-clean under our flags, so it gets its own rule without -Werror.
PROTOBUF_C_CFLAGS := $(shell pkg-config --cflags libprotobuf-c 2>/dev/null)
PROTOBUF_C_LIBS   := $(shell pkg-config --libs libprotobuf-c 2>/dev/null || echo -lprotobuf-c)
ONNX_PROTO ?= /usr/include/onnx/onnx.proto
LIB_OBJS  += $(B)/obj/gen/onnx.pb-c.o

$(B)/gen/onnx.pb-c.c: $(ONNX_PROTO)
	@mkdir -p $(dir $@)
	protoc-c --c_out=$(B)/gen -I$(dir $(ONNX_PROTO)) $(ONNX_PROTO)
$(B)/gen/onnx.pb-c.h: $(B)/gen/onnx.pb-c.c ;
$(B)/obj/gen/onnx.pb-c.o: $(B)/gen/onnx.pb-c.c $(B)/gen/onnx.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu99 $(CFLAGS) $(PROTOBUF_C_CFLAGS) -w -I$(B)/gen -c $< -o $@
$(B)/obj/lib/frontend/onnx.o: lib/frontend/onnx.c $(B)/gen/onnx.pb-c.h $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(CFLAGS) $(PROTOBUF_C_CFLAGS) -Ilib -Iruntime_min -I$(B)/gen -c $< -o $@

$(B)/obj/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(CFLAGS) $(CJSON_CFLAGS) -Ilib -Iruntime_min -c $< -o $@

$(B)/librlx.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(B)/rlxc: $(B)/obj/cmd/rlxc/main.o $(B)/librlx.a
	$(CC) $(CFLAGS) -o $@ $^ $(CJSON_LIBS) $(PROTOBUF_C_LIBS) -lm -pthread

# Criterion unit tests: one binary per tests/unit/test_*.c
UNIT_SRCS = $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS = $(UNIT_SRCS:tests/unit/%.c=$(B)/unit/%)
$(B)/unit/%: tests/unit/%.c $(B)/librlx.a $(HDRS) tests/unit/testgraph.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu99 -Wall -Wextra -Werror -Wno-missing-field-initializers $(CFLAGS) $(CJSON_CFLAGS) -Ilib -Iruntime_min $< -o $@ $(B)/librlx.a $(CJSON_LIBS) $(PROTOBUF_C_LIBS) -lcriterion -lm -pthread

# The kernel tests again, built for this machine (-march=native) with the
# runtime's sources, so the AVX2 / AVX-512 kernels that generated models use
# are tested as well as the portable ones librlx.a holds.
NATIVE_UNIT = test_gemm test_gemm_epilogue test_wino test_conv_turned test_conv_pwdw test_pool test_conv_s2 test_depthwise
NATIVE_BINS = $(NATIVE_UNIT:%=$(B)/unit_native/%)
RT_LIB_SRCS = $(filter-out runtime_min/rlx_main.c,$(RT_ALL))
$(B)/unit_native/%: tests/unit/%.c $(RT_LIB_SRCS) $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu99 -Wall -Wextra -Werror -Wno-missing-field-initializers -O2 -march=native -Iruntime_min $< $(RT_LIB_SRCS) -o $@ -lcriterion -lm -pthread

# And built for AVX2 + FMA without AVX-512 (the kernels most x86 machines
# run; -march=native on an AVX-512 machine never reaches them), where this
# CPU can run them.
HAVE_AVX2 := $(shell grep -qw avx2 /proc/cpuinfo 2>/dev/null && grep -qw fma /proc/cpuinfo && echo 1)
AVX2_BINS = $(if $(HAVE_AVX2),$(NATIVE_UNIT:%=$(B)/unit_avx2/%))
$(B)/unit_avx2/%: tests/unit/%.c $(RT_LIB_SRCS) $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu99 -Wall -Wextra -Werror -Wno-missing-field-initializers -O2 -mavx2 -mfma -Iruntime_min $< $(RT_LIB_SRCS) -o $@ -lcriterion -lm -pthread

unit: $(UNIT_BINS) $(NATIVE_BINS) $(AVX2_BINS)

test: all unit
	bash tests/run_all.sh

demo: all
	bash examples/demo.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/rlxc/runtime_min
	install -m 755 $(B)/rlxc $(DESTDIR)$(PREFIX)/bin/rlxc
	install -m 644 runtime_min/*.c runtime_min/*.h runtime_min/*.def $(DESTDIR)$(PREFIX)/share/rlxc/runtime_min/

clean:
	rm -rf $(B)

.PHONY: all unit test demo install clean
.DELETE_ON_ERROR:
