# rlxc - ahead-of-time compiler for neural-network inference.
#
#   make            build build/rlxc and the runtime library build/librlxrt.a
#   make test       the whole test suite (tests/run_all.sh), closing line "N passed, N failed"
#   make test SANITIZE=address,undefined   the suites again under ASan and UBSan (tests/sanitize/run.sh)
#   make demo       compile, build and run the bundled example model
#   make fuzz FUZZ_SECONDS=N   build the libFuzzer targets (tests/fuzz/) and run each N seconds
#   make install PREFIX=/usr/local [DESTDIR=...]
#   make clean

CC      ?= cc
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
LIBDIR  ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR  ?= $(PREFIX)/share/man
DATADIR ?= $(PREFIX)/share/rlxc
CFLAGS  ?= -O2 -g
STD      = -std=c99 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror
B        = build

# make test SANITIZE=address,undefined (docs/robustness.md): rlxc, the unit
# tests and the runtime library built with those sanitizers in a build
# directory of their own (build/san-address-undefined), then
# tests/sanitize/run.sh runs the suites against them, generated models built
# sanitized too. The sanitizers reach everything through CFLAGS.
comma := ,
ifneq ($(SANITIZE),)
SAN_FLAGS := -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer
B := build/san-$(subst $(comma),-,$(SANITIZE))
override CFLAGS := -O1 -g $(SAN_FLAGS)
# rlxc looks for runtime_min/ beside its build directory's parent
RT_ENV := RLXC_RUNTIME_DIR=$(CURDIR)/runtime_min
endif

CJSON_CFLAGS := $(shell pkg-config --cflags libcjson 2>/dev/null)
CJSON_LIBS   := $(shell pkg-config --libs libcjson 2>/dev/null || echo -lcjson)

LIB_SRCS = $(sort $(wildcard lib/*.c lib/frontend/*.c lib/passes/*.c lib/codegen_*/*.c lib/gpu/*.c))
# the runtime: every .c file of runtime_min/. The compiler links its own
# copy (portable, for constant folding); generated models link librlxrt.a.
RT_ALL   = $(sort $(wildcard runtime_min/*.c))
RT_HDRS  = $(wildcard runtime_min/*.h runtime_min/*.def)
HDRS     = $(wildcard lib/*.h lib/*.def lib/*/*.h cmd/rlxc/*.h) $(RT_HDRS)

LIB_OBJS = $(LIB_SRCS:%.c=$(B)/obj/%.o) $(RT_ALL:%.c=$(B)/obj/%.o)
DRIVER_OBJS = $(B)/obj/cmd/rlxc/main.o $(B)/obj/cmd/rlxc/build.o $(B)/obj/cmd/rlxc/check.o

all: $(B)/rlxc $(B)/librlxrt.a $(B)/rlxc.1

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

# GLSL -> SPIR-V (lib/codegen_spirv/spirv.c): shaderc and SPIRV-Tools, linked
# statically. Debian's shaderc_combined.a holds only shaderc itself; glslang's
# and SPIRV-Tools' archives come from the spirv package (glslang-dev), and they
# are C++. Never -lshaderc: Debian's shared one is built against another
# glslang and crashes.
SPIRV_CFLAGS := $(shell pkg-config --cflags shaderc_combined spirv 2>/dev/null)
SPIRV_LIBS   := $(shell pkg-config --libs shaderc_combined spirv 2>/dev/null || echo -lshaderc_combined) -lstdc++ -lpthread
$(B)/obj/lib/codegen_spirv/%.o: lib/codegen_spirv/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(CFLAGS) $(SPIRV_CFLAGS) -Ilib -Iruntime_min -c $< -o $@

# The GPU kernels' templates and preludes (lib/gpu/), embedded as strings,
# and the Metal host that the msl target writes out (lib/codegen_msl/).
GPU_KL = $(sort $(wildcard lib/gpu/*.kl lib/gpu/kernels/*.kl)) lib/codegen_msl/metal_host.m
LIB_OBJS += $(B)/obj/gen/gpu_sources.o
$(B)/gen/gpu_sources.c: $(GPU_KL) scripts/embed_kl.sh
	@mkdir -p $(dir $@)
	bash scripts/embed_kl.sh $@ $(GPU_KL)
$(B)/obj/gen/gpu_sources.o: $(B)/gen/gpu_sources.c
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(CFLAGS) -c $< -o $@

$(B)/obj/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(CFLAGS) $(CJSON_CFLAGS) -Ilib -Iruntime_min -c $< -o $@

$(B)/librlx.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(B)/rlxc: $(DRIVER_OBJS) $(B)/librlx.a
	$(CC) $(CFLAGS) -o $@ $^ $(CJSON_LIBS) $(PROTOBUF_C_LIBS) $(SPIRV_LIBS) -lm -ldl -pthread

# The runtime library that generated models link (cmd/rlxc/build.c says how
# it is compiled: -O3, and on x86-64 the kernels three times, portable, AVX2
# and AVX-512, with CPUID dispatch). rlxc builds it, so that `rlxc --build`
# and this rule make the same library; objects are cached in build/cache.
# Then every external symbol of an instruction-set variant must carry its
# suffix (rk_isa.h), or two variants would clash in a model's link.
$(B)/librlxrt.a: $(B)/rlxc $(RT_ALL) $(RT_HDRS) tests/tools/check_isa_names.sh
	$(RT_ENV) RLXC_CACHE_DIR=$(B)/cache CC="$(CC)" CFLAGS="$(CFLAGS)" $(B)/rlxc runtime -o $(B)
	bash tests/tools/check_isa_names.sh $@

# The man page, from the same text as rlxc --help.
$(B)/rlxc.1: $(B)/rlxc scripts/rlxc-man.sh
	bash scripts/rlxc-man.sh $(B)/rlxc > $@

# Criterion unit tests: one binary per tests/unit/test_*.c
UNIT_SRCS = $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS = $(UNIT_SRCS:tests/unit/%.c=$(B)/unit/%)
$(B)/unit/%: tests/unit/%.c $(B)/librlx.a $(HDRS) $(wildcard tests/unit/*.h)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu99 -Wall -Wextra -Werror -Wno-missing-field-initializers $(CFLAGS) $(CJSON_CFLAGS) -Ilib -Iruntime_min $< -o $@ $(B)/librlx.a $(CJSON_LIBS) $(PROTOBUF_C_LIBS) $(SPIRV_LIBS) -lcriterion -lm -ldl -pthread

# test_vk runs the Vulkan host through a stand-in loader that logs the
# command stream and fails calls on demand (tests/unit/vk_trace.c), found
# beside the test binary.
$(B)/unit/libvktrace.so: tests/unit/vk_trace.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu99 -shared -fPIC -Wall -Wextra -Werror -Wno-missing-field-initializers $(CFLAGS) $< -o $@ -ldl
$(B)/unit/test_vk: $(B)/unit/libvktrace.so

# The kernel tests again against the instruction-set variants of
# librlxrt.a that generated models run: compiled with -DRK_ISA=avx2 or
# avx512 (rk_isa.h gives their calls the variant's names) and the variant's
# flags, where this CPU has that instruction set, and without FMA
# contraction, as the library is compiled (the tests' reference loops must
# round like it). build/unit/ holds the portable runs (rlxc's own copy of the
# runtime). test_checksum runs there too: the library's weights checksum takes
# AVX-512 where the CPU has it (rlx_rt.c), and must give the hand-worked sums.
ISA_UNIT = test_gemm test_gemm_epilogue test_wino test_conv_turned test_conv_pwdw test_pool test_conv_s2 test_depthwise test_conv_grouped \
           test_mixed test_vmath test_softmax test_checksum test_rnn_f32 test_conv_pwdw_small test_conv_pool
CPU_FLAGS := $(shell grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
HAVE_AVX2 := $(if $(and $(filter avx2,$(CPU_FLAGS)),$(filter fma,$(CPU_FLAGS)),$(filter f16c,$(CPU_FLAGS))),1)
HAVE_AVX512 := $(if $(HAVE_AVX2),$(if $(and $(filter avx512f,$(CPU_FLAGS)),$(filter avx512cd,$(CPU_FLAGS)),$(filter avx512vl,$(CPU_FLAGS)),$(filter avx512bw,$(CPU_FLAGS)),$(filter avx512dq,$(CPU_FLAGS))),1))
ISA_BINS = $(if $(HAVE_AVX2),$(ISA_UNIT:%=$(B)/unit_avx2/%)) $(if $(HAVE_AVX512),$(ISA_UNIT:%=$(B)/unit_avx512/%))
define isa_unit_rule
$(B)/unit_$(1)/%: tests/unit/%.c $(B)/librlxrt.a $(HDRS) $(wildcard tests/unit/*.h)
	@mkdir -p $$(dir $$@)
	$$(CC) -std=gnu99 -ffp-contract=off -Wall -Wextra -Werror -Wno-missing-field-initializers -O2 $(SAN_FLAGS) -DRK_ISA=$(1) \
	    $$$$($(B)/rlxc runtime --isa-flags $(1)) -Iruntime_min $$< -o $$@ $(B)/librlxrt.a -lcriterion -lm -pthread
endef
$(foreach isa,avx2 avx512,$(eval $(call isa_unit_rule,$(isa))))

unit: $(UNIT_BINS) $(ISA_BINS)

test: all unit
ifneq ($(SANITIZE),)
	bash tests/sanitize/run.sh $(B) "$(SAN_FLAGS)"
else
	bash tests/run_all.sh
endif

demo: all
	bash examples/demo.sh

# ---- fuzzing (tests/fuzz/, docs/robustness.md) ----
# The library and runtime built again with clang, ASan, UBSan and libFuzzer's
# coverage (a sub-make with its own B, so nothing mixes with build/), and one
# libFuzzer binary per tests/fuzz/fuzz_*.c. The weights target links the
# code rlxc generates for examples/shapes.rlxg. `make fuzz FUZZ_SECONDS=N`
# runs each target N seconds over its committed seeds and regression inputs,
# adding what it finds to build/fuzz/corpus/TARGET.
FUZZ_CC      ?= clang-14
FUZZ_SAN      = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS   = -O1 -g $(FUZZ_SAN) -fsanitize=fuzzer-no-link
FUZZ_SECONDS ?= 60
FB            = $(B)/fuzz
FUZZ_TARGETS  = $(sort $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_BINS     = $(FUZZ_TARGETS:%=$(FB)/fuzz_%)
FUZZ_LIBS     = $(CJSON_LIBS) $(PROTOBUF_C_LIBS) $(SPIRV_LIBS) -lm -ldl -pthread

fuzz-lib:
	@$(MAKE) --no-print-directory B=$(FB)/lib CC=$(FUZZ_CC) CFLAGS="$(FUZZ_CFLAGS)" $(FB)/lib/librlx.a

$(FB)/model/fuzzmodel.c: examples/shapes.rlxg $(B)/rlxc
	@mkdir -p $(dir $@)
	$(B)/rlxc $< -o $@ -n fuzzmodel

$(FB)/fuzz_weights: tests/fuzz/fuzz_weights.c $(FB)/model/fuzzmodel.c $(FB)/lib/librlx.a
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -Iruntime_min -I$(FB)/model $< $(FB)/model/fuzzmodel.c \
		$(FB)/lib/librlx.a -o $@ $(FUZZ_LIBS)

$(FB)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FB)/lib/librlx.a
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -Ilib -Iruntime_min $< $(FB)/lib/librlx.a -o $@ $(FUZZ_LIBS)

$(FB)/lib/librlx.a: fuzz-lib ;

fuzz-build: fuzz-lib $(FUZZ_BINS)

fuzz: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p $(FB)/corpus/$$t $(FB)/artifacts/$$t tests/fuzz/corpus/$$t tests/fuzz/regress/$$t; \
		dict=; [ -f tests/fuzz/$$t.dict ] && dict=-dict=tests/fuzz/$$t.dict; \
		echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
		$(FB)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=1024 -print_final_stats=1 \
			$$dict -artifact_prefix=$(FB)/artifacts/$$t/ $(FB)/corpus/$$t tests/fuzz/corpus/$$t \
			tests/fuzz/regress/$$t || exit 1; \
	done

# Installed: rlxc, the runtime library, its headers (include/rlxrt, what
# generated code includes), a pkg-config file, the man page, and the runtime's
# sources with the library's key (share/rlxc), from which rlxc builds
# libraries for other compilers and flags. rlxc finds them from its own
# location (bin/../lib, bin/../share/rlxc), so LIBDIR and DATADIR should stay
# under the same PREFIX as BINDIR.
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/rlxrt \
	    $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(DATADIR)/runtime_min
	install -m 755 $(B)/rlxc $(DESTDIR)$(BINDIR)/rlxc
	install -m 644 $(B)/librlxrt.a $(DESTDIR)$(LIBDIR)/librlxrt.a
	install -m 644 $(RT_HDRS) $(DESTDIR)$(INCLUDEDIR)/rlxrt/
	install -m 644 $(RT_ALL) $(RT_HDRS) $(DESTDIR)$(DATADIR)/runtime_min/
	install -m 644 $(B)/librlxrt.stamp $(DESTDIR)$(DATADIR)/librlxrt.stamp
	install -m 644 $(B)/rlxc.1 $(DESTDIR)$(MANDIR)/man1/rlxc.1
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|'"$$($(B)/rlxc --version | cut -d' ' -f2)"'|' scripts/rlxrt.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/rlxrt.pc
	chmod 644 $(DESTDIR)$(LIBDIR)/pkgconfig/rlxrt.pc

clean:
	rm -rf $(B)

.PHONY: all unit test demo install clean fuzz fuzz-lib fuzz-build
.DELETE_ON_ERROR:
