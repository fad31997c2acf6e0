/* rlx_npy.h - reading and writing NumPy .npy files (runtime_min).
 *
 * Used by the main() that `rlxc --emit-main` generates, and by tests. Only
 * C-order (fortran_order False) little-endian arrays of the dtypes in
 * rlx_dtypes.def that numpy knows (every one but bf16), rank <= RK_MAX_RANK.
 */
#ifndef RLX_NPY_H
#define RLX_NPY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rlx_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reads a .npy file (format versions 1.0, 2.0 and 3.0). On success fills
 * dtype (an rlx_dtype), rank, dims[0..rank) and *data, a malloc'd copy of the
 * elements (host byte order; the caller frees it; never NULL, even when
 * empty), *nbytes its size in bytes, and returns RLX_OK. Else returns
 *   RLX_E_NOFILE     the file can't be opened,
 *   RLX_E_FORMAT     not an .npy file, or a header this reader rejects
 *                    (bad magic or version, unknown descr, fortran_order True,
 *                    rank > RK_MAX_RANK, a size that overflows, syntax),
 *   RLX_E_TRUNCATED  the file ends inside the header or the data,
 *   RLX_E_NOMEM, RLX_E_IO, RLX_E_ARG (a NULL pointer),
 * and sets *data to NULL. */
int rlx_npy_read(const char *path, int *dtype, int *rank, int64_t dims[RK_MAX_RANK], void **data, size_t *nbytes);
/* The same from an open stream, from its current position (the stream stays
 * open; RLX_E_NOFILE is never returned). */
int rlx_npy_fread(FILE *f, int *dtype, int *rank, int64_t dims[RK_MAX_RANK], void **data, size_t *nbytes);

/* Writes `data` (rank dims, C order, host byte order) as a version 1.0 .npy
 * file, header padded to 64 bytes. RLX_E_ARG for a dtype numpy has no type for
 * (bf16), a bad rank or a negative dim; RLX_E_IO if the file can't be written. */
int rlx_npy_write(const char *path, int dtype, int rank, const int64_t *dims, const void *data);

#ifdef __cplusplus
}
#endif
#endif
