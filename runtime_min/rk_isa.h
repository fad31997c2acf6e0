/* rk_isa.h - the kernel files compiled once per instruction set, and the
 * names of one such variant.
 *
 * On x86-64 the runtime library (librlxrt.a) holds the files of
 * RK_ISA_FILES three times: portable (the x86-64 baseline, SSE2), avx2
 * (AVX2, FMA, F16C) and avx512 (AVX-512 F/CD/VL/BW/DQ with the AVX2 set).
 * They are the files with AVX2 / AVX-512 code paths (rk_softmax.c: its
 * exp over rows; rk_rnn_f32.c: the f32 recurrent kernel's activations),
 * and rk_linalg.c and rk_mixed.c, whose kernels call the GEMM; the other kernel files are plain loops, compiled
 * once (the way MLAS and XNNPACK compile their operators once and their
 * micro-kernels per instruction set). Each variant is compiled with
 * -DRK_ISA=portable|avx2|avx512, and this header then renames every
 * external symbol of those files to NAME_<isa>, so that the three coexist
 * in one archive and each variant's kernels call their own GEMM. rlx_isa.c
 * defines the plain names of RK_ISA_KERNELS, the kernels those files
 * define, as one dispatching entry each, which calls the variant chosen
 * once from CPUID (rlx_isa_init).
 *
 * Without RK_ISA (rlxc's own copy of the runtime, builds for other
 * architectures, builds where the user chose the instruction set with
 * -march and friends) every name stays plain and nothing here is renamed.
 * The Makefile checks that every external symbol of a variant carries its
 * suffix, so a function added to one of these files without its line here
 * fails the build instead of clashing at link time.
 */
#ifndef RK_ISA_H
#define RK_ISA_H

/* The builder (cmd/rlxc/build.c) reads this line. */
#define RK_ISA_FILES "rk_conv.c rk_convgemm.c rk_gemm.c rk_linalg.c rk_mixed.c rk_rnn_f32.c rk_softmax.c rk_wino.c"

/* The kernels (and second implementations, KI) of RK_ISA_FILES. */
#define RK_ISA_KERNELS(X)                                                                     \
    X(rk_pool_nd) X(rk_conv_nd_f32) X(rk_conv_transpose_f32) X(rk_conv2d_f32) X(rk_conv_pool_f32) \
    X(rk_conv_pwdw_f32) X(rk_conv_pwdw_small_f32) X(rk_conv_wino_f32) X(rk_matmul_f32) X(rk_matmul_f32_rows) X(rk_gemm_f32) X(rk_gemm_f32_rows) X(rk_softmax_f32)

#ifdef RK_ISA
#define RK_VARIANT_(name, isa) name##_##isa
#define RK_VARIANT2(name, isa) RK_VARIANT_(name, isa)
#define RK_VARIANT(name) RK_VARIANT2(name, RK_ISA)

/* the kernels */
#define rk_pool_nd RK_VARIANT(rk_pool_nd)
#define rk_conv_nd_f32 RK_VARIANT(rk_conv_nd_f32)
#define rk_conv_transpose_f32 RK_VARIANT(rk_conv_transpose_f32)
#define rk_conv2d_f32 RK_VARIANT(rk_conv2d_f32)
#define rk_conv_pool_f32 RK_VARIANT(rk_conv_pool_f32)
#define rk_conv_pwdw_f32 RK_VARIANT(rk_conv_pwdw_f32)
#define rk_conv_pwdw_small_f32 RK_VARIANT(rk_conv_pwdw_small_f32)
#define rk_conv_wino_f32 RK_VARIANT(rk_conv_wino_f32)
#define rk_matmul_f32 RK_VARIANT(rk_matmul_f32)
#define rk_matmul_f32_rows RK_VARIANT(rk_matmul_f32_rows)
#define rk_gemm_f32 RK_VARIANT(rk_gemm_f32)
#define rk_gemm_f32_rows RK_VARIANT(rk_gemm_f32_rows)
#define rk_softmax_f32 RK_VARIANT(rk_softmax_f32)

/* the helpers these files share (GEMM, convolution and Winograd scratch
 * sizes and packing), and rk_rnn_act_f32 and rk_rnn_lstm_gates_f32, which
 * rlx_isa.c dispatches like a kernel */
#define rk_conv2d_scratch RK_VARIANT(rk_conv2d_scratch)
#define rk_conv_pool_scratch RK_VARIANT(rk_conv_pool_scratch)
#define rk_conv_pwdw_scratch RK_VARIANT(rk_conv_pwdw_scratch)
#define rk_conv_pwdw_small_scratch RK_VARIANT(rk_conv_pwdw_small_scratch)
#define rk_conv_transpose_scratch RK_VARIANT(rk_conv_transpose_scratch)
#define rk_conv2d_mixed RK_VARIANT(rk_conv2d_mixed)
#define rk_conv_pwdw_mixed RK_VARIANT(rk_conv_pwdw_mixed)
#define rk_conv_pwdw_mixed_scratch RK_VARIANT(rk_conv_pwdw_mixed_scratch)
#define rk_gemm_mixed RK_VARIANT(rk_gemm_mixed)
#define rk_matmul_mixed RK_VARIANT(rk_matmul_mixed)
#define rk_mixed_scratch RK_VARIANT(rk_mixed_scratch)
#define rk_rnn_act_f32 RK_VARIANT(rk_rnn_act_f32)
#define rk_rnn_lstm_gates_f32 RK_VARIANT(rk_rnn_lstm_gates_f32)
#define rk_sgemm RK_VARIANT(rk_sgemm)
#define rk_sgemm_cols RK_VARIANT(rk_sgemm_cols)
#define rk_sgemm_ex RK_VARIANT(rk_sgemm_ex)
#define rk_sgemm_few_rows RK_VARIANT(rk_sgemm_few_rows)
#define rk_sgemm_few_rows_cols RK_VARIANT(rk_sgemm_few_rows_cols)
#define rk_sgemm_kernel RK_VARIANT(rk_sgemm_kernel)
#define rk_sgemm_pack_a RK_VARIANT(rk_sgemm_pack_a)
#define rk_sgemm_pack_b RK_VARIANT(rk_sgemm_pack_b)
#define rk_sgemm_pack_b_panels RK_VARIANT(rk_sgemm_pack_b_panels)
#define rk_sgemm_packed_a_size RK_VARIANT(rk_sgemm_packed_a_size)
#define rk_sgemm_packed_b_row RK_VARIANT(rk_sgemm_packed_b_row)
#define rk_sgemm_packed_b_size RK_VARIANT(rk_sgemm_packed_b_size)
#define rk_sgemm_prepacked RK_VARIANT(rk_sgemm_prepacked)
#define rk_sgemm_rows RK_VARIANT(rk_sgemm_rows)
#define rk_sgemm_scratch_size RK_VARIANT(rk_sgemm_scratch_size)
#define rk_wino_pack_weights RK_VARIANT(rk_wino_pack_weights)
#define rk_wino_scratch RK_VARIANT(rk_wino_scratch)
#define rk_wino_weights_size RK_VARIANT(rk_wino_weights_size)
#endif

#endif
