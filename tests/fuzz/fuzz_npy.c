/* fuzz_npy.c - libFuzzer target: the .npy reader (runtime_min/rlx_npy.c).
 *
 * Each input is a whole .npy file, read through a memory stream the way
 * `--emit-main` programs and `rlxc --freeze` read files: the preamble, the
 * header dict parser, the size checks against the bytes left, the data.
 * Whatever it returns, a successful read must describe its bytes
 * consistently (dims that multiply to *nbytes with the dtype's size).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rlx_npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;   /* fmemopen refuses an empty buffer */
    FILE *f = fmemopen((void *)data, size, "rb");
    if (!f) return 0;
    int dtype, rank;
    int64_t dims[RK_MAX_RANK];
    void *buf;
    size_t nbytes;
    int st = rlx_npy_fread(f, &dtype, &rank, dims, &buf, &nbytes);
    fclose(f);
    if (st == RLX_OK) {
        uint64_t want = (uint64_t)rlx_dtype_size(dtype);
        for (int i = 0; i < rank; i++) want *= (uint64_t)dims[i];
        if (!buf || rank < 0 || rank > RK_MAX_RANK || want != nbytes || nbytes > size) abort();
        free(buf);
    } else if (buf) {
        abort();   /* a failed read keeps nothing */
    }
    return 0;
}
