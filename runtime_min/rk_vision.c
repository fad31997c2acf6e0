/* rk_vision.c - the vision family's kernels: GridSample, RoiAlign, MaxUnpool,
 * Det (ONNX semantics, as the ONNX reference implementation computes them).
 *
 * Float tensors (f16, bf16, f32, f64) are read into double, all arithmetic is
 * in double, and each output element is rounded once when stored.
 *
 * GridSample maps a grid value g in [-1, 1] to a pixel coordinate x =
 * (g + 1) / 2 * (size - 1) with align_corners, else ((g + 1) * size - 1) / 2,
 * so that the borders lo..hi are the corner pixels' centres (0..size-1) or
 * their outer edges (-0.5..size-0.5). As in the reference, padding is
 * applied twice: first to the coordinate (nearest rounds it half to even
 * before that), when it lies outside lo..hi (border clamps it to 0..size-1,
 * reflection folds it back between lo and hi, as often as needed); then to
 * each integer tap (zeros reads 0 outside the image, border clamps,
 * reflection folds the tap between lo and hi). The taps of an axis are
 * floor(x) and floor(x) + 1 with weights 1 - t, t (bilinear; t = x -
 * floor(x)), or floor(x) - 1 .. floor(x) + 2 with Keys' weights for A =
 * -0.75 (bicubic), or the one rounded coordinate (nearest); an output
 * element is the sum over rows and columns of weight_y * weight_x * pixel,
 * which equals the reference's interpolation of rows, then of the column.
 * The taps of a grid point are computed once and serve every channel. A
 * reflection range of zero (align_corners with a size-1 axis) maps
 * everything to 0 rather than dividing by zero, and grid values beyond
 * +-1e15 pixels (NaN counts as -1e15) are clamped there first, so every
 * float-to-integer conversion is defined; a tap is clamped into the image
 * after reflection, so no read ever leaves it.
 *
 * RoiAlign follows the reference (a port of ONNX Runtime's) literally: the
 * roi corners times spatial_scale, minus 0.5 for half_pixel; for
 * output_half_pixel, rois narrower or lower than 1 are widened to 1; bins of
 * roi / output size; per bin a grid of sampling_ratio^2 points (or, if 0,
 * ceil(roi / output size) per axis) at the centres of equal sub-bins; each
 * point interpolated bilinearly, reading 0 when it lies more than one pixel
 * outside the image and clamping to the edge otherwise; avg divides the sum
 * by max(grid points, 1), max takes the largest of the four weighted
 * corner values of each point (the reference's definition). The image
 * index of every roi is checked before anything is written; an adaptive
 * grid wider than 65536 points per axis is refused (RLX_E_ARG) rather than
 * looping for hours on a malformed roi.
 *
 * MaxUnpool zeroes the output and writes each input element at its flat
 * index (MaxPool's indices are flat over the whole tensor), in input order,
 * all indices checked first. As in the reference, the indices address the
 * unpooled shape ((in - 1) * stride - pads + kernel); a larger output_shape
 * holds that tensor at its origin, with zeros after it on every axis. It
 * only moves bytes, so it works for any element size.
 *
 * Det factors each matrix as P A = L U by Gaussian elimination with partial
 * pivoting (the largest magnitude in the column), in double, in the kernel
 * scratch that the lowering reserves (n * n doubles + alignment); det =
 * (-1)^swaps * prod(diag U). A zero pivot column is left as it is (as LAPACK
 * does), so the product is 0, or NaN when the matrix holds a NaN. A 0 x 0
 * matrix has determinant 1 (the empty product, as numpy).
 */
#include "rlx_rt.h"

#include <math.h>
#include <string.h>

/* ---- float elements ---- */

static double load_f(int64_t dt, const void *base, int64_t i) {
    const uint8_t *p = base;
    switch (dt) {
    case RLX_F64: {
        double v;
        memcpy(&v, p + 8 * i, 8);
        return v;
    }
    case RLX_F16:
    case RLX_BF16: {
        uint16_t h;
        memcpy(&h, p + 2 * i, 2);
        return dt == RLX_F16 ? (double)rlx_f16_to_f32(h) : (double)rlx_bf16_to_f32(h);
    }
    default: {
        float v;
        memcpy(&v, p + 4 * i, 4);
        return v;
    }
    }
}

static void store_f(int64_t dt, void *base, int64_t i, double x) {
    uint8_t *p = base;
    switch (dt) {
    case RLX_F64: memcpy(p + 8 * i, &x, 8); break;
    case RLX_F16:
    case RLX_BF16: {
        uint16_t h = dt == RLX_F16 ? rlx_f32_to_f16((float)x) : rlx_f32_to_bf16((float)x);
        memcpy(p + 2 * i, &h, 2);
        break;
    }
    default: {
        float v = (float)x;
        memcpy(p + 4 * i, &v, 4);
        break;
    }
    }
}

static int is_float_dtype(int64_t dt) { return dt == RLX_F32 || dt == RLX_F64 || dt == RLX_F16 || dt == RLX_BF16; }

/* ---- GridSample ---- */

enum { GS_BILINEAR, GS_NEAREST, GS_BICUBIC };
enum { GS_ZEROS, GS_BORDER, GS_REFLECTION };
#define GS_COORD_LIMIT 1e15

/* Fold x back between lo and hi, mirroring at each border in turn. */
static double gs_reflect(double x, double lo, double hi) {
    double range = hi - lo;
    if (!(range > 0)) return lo;
    if (x < lo || x > hi) {
        double dx = x < lo ? lo - x : x - hi;
        double flips = floor(dx / range), r = dx - flips * range;
        int odd = fmod(flips, 2.0) != 0;
        if (x < lo) x = odd ? hi - r : lo + r;
        else x = odd ? lo + r : hi - r;
    }
    return x;
}

static double gs_clamp(double x, double lo, double hi) { return x < lo ? lo : (x > hi ? hi : x); }

/* Keys' cubic convolution weights (A = -0.75) of the taps at -1, 0, 1, 2
 * for a point t in [0, 1) past tap 0. */
static void gs_cubic_weights(double t, double w[4]) {
    const double a = -0.75;
    double x = t + 1;
    w[0] = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    w[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
    x = 1 - t;
    w[2] = ((a + 2) * x - (a + 3)) * x * x + 1;
    x = 2 - t;
    w[3] = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
}

/* The taps (index, or -1 for a zero pixel, and weight) of coordinate x on
 * an axis of `size` pixels; returns how many (1, 2 or 4). */
static int gs_taps(double x, int64_t size, int mode, int padding, int align, int64_t *idx, double *w) {
    double lo = align ? 0.0 : -0.5, hi = align ? (double)size - 1 : (double)size - 0.5;
    if (!(x >= -GS_COORD_LIMIT)) x = -GS_COORD_LIMIT;
    if (x > GS_COORD_LIMIT) x = GS_COORD_LIMIT;
    if (mode == GS_NEAREST) x = rint(x);
    if (x < lo || x > hi) {
        if (padding == GS_BORDER) x = gs_clamp(x, 0, (double)size - 1);
        else if (padding == GS_REFLECTION) x = gs_reflect(x, lo, hi);
    }
    int ntaps;
    int64_t first;
    if (mode == GS_NEAREST) {
        ntaps = 1;
        first = (int64_t)x;   /* truncation, as the reference's astype(int32) */
        w[0] = 1;
    } else {
        double fl = floor(x), t = x - fl;
        if (mode == GS_BILINEAR) {
            ntaps = 2;
            first = (int64_t)fl;
            w[0] = 1 - t;
            w[1] = t;
        } else {
            ntaps = 4;
            first = (int64_t)fl - 1;
            gs_cubic_weights(t, w);
        }
    }
    for (int k = 0; k < ntaps; k++) {
        int64_t i = first + k;
        if (padding == GS_ZEROS) {
            idx[k] = i >= 0 && i < size ? i : -1;
        } else {
            double v = padding == GS_BORDER ? (double)i : gs_reflect((double)i, lo, hi);
            int64_t j = (int64_t)v;
            idx[k] = j < 0 ? 0 : (j > size - 1 ? size - 1 : j);
        }
    }
    return ntaps;
}

int rk_grid_sample(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    (void)ctx;
    const rk_grid_sample_params *p = params;
    if (!is_float_dtype(p->dtype) || !is_float_dtype(p->grid_dtype) || p->mode < 0 || p->mode > 2 ||
        p->padding < 0 || p->padding > 2 || p->h < 1 || p->w < 1)
        return RLX_E_ARG;
    int mode = (int)p->mode, padding = (int)p->padding, align = p->align_corners != 0;
    int64_t plane = p->h * p->w, oplane = p->oh * p->ow;
    for (int64_t n = 0; n < p->n; n++)
        for (int64_t o = 0; o < oplane; o++) {
            int64_t g = (n * oplane + o) * 2;
            double gx = load_f(p->grid_dtype, in[1], g), gy = load_f(p->grid_dtype, in[1], g + 1);
            double x = align ? (gx + 1) / 2 * (double)(p->w - 1) : ((gx + 1) * (double)p->w - 1) / 2;
            double y = align ? (gy + 1) / 2 * (double)(p->h - 1) : ((gy + 1) * (double)p->h - 1) / 2;
            int64_t ix[4], iy[4];
            double wx[4], wy[4];
            int nx = gs_taps(x, p->w, mode, padding, align, ix, wx);
            int ny = gs_taps(y, p->h, mode, padding, align, iy, wy);
            for (int64_t c = 0; c < p->c; c++) {
                int64_t base = (n * p->c + c) * plane;
                double sum = 0;
                for (int a = 0; a < ny; a++) {
                    if (iy[a] < 0) continue;
                    double row = 0;
                    for (int b = 0; b < nx; b++)
                        if (ix[b] >= 0) row += wx[b] * load_f(p->dtype, in[0], base + iy[a] * p->w + ix[b]);
                    sum += wy[a] * row;
                }
                store_f(p->dtype, out[0], (n * p->c + c) * oplane + o, sum);
            }
        }
    return RLX_OK;
}

/* ---- RoiAlign ---- */

#define ROI_MAX_GRID 65536.0

/* Bilinear sample of the h x w plane at (y, x), the reference's rules. */
static double roi_sample(int64_t dt, const void *x_base, int64_t plane_off, int64_t h, int64_t w, double y, double x,
                         int max_mode) {
    if (y < -1.0 || y > (double)h || x < -1.0 || x > (double)w) {
        /* every weight 0 at position 0: avg adds 0, max sees 0 * X[0] */
        double v = 0 * load_f(dt, x_base, plane_off);
        return v;
    }
    if (y <= 0) y = 0;
    if (x <= 0) x = 0;
    int64_t y_low = (int64_t)y, x_low = (int64_t)x, y_high, x_high;
    if (y_low >= h - 1) {
        y_high = y_low = h - 1;
        y = (double)y_low;
    } else {
        y_high = y_low + 1;
    }
    if (x_low >= w - 1) {
        x_high = x_low = w - 1;
        x = (double)x_low;
    } else {
        x_high = x_low + 1;
    }
    double ly = y - (double)y_low, lx = x - (double)x_low, hy = 1 - ly, hx = 1 - lx;
    double v1 = hy * hx * load_f(dt, x_base, plane_off + y_low * w + x_low);
    double v2 = hy * lx * load_f(dt, x_base, plane_off + y_low * w + x_high);
    double v3 = ly * hx * load_f(dt, x_base, plane_off + y_high * w + x_low);
    double v4 = ly * lx * load_f(dt, x_base, plane_off + y_high * w + x_high);
    if (!max_mode) return v1 + v2 + v3 + v4;
    double m = v1 > v2 ? v1 : v2;
    m = m > v3 ? m : v3;
    return m > v4 ? m : v4;
}

/* The sampling grid of one axis: sampling_ratio, or ceil(extent / bins);
 * -1 if too large. */
static int64_t roi_grid(int64_t sampling_ratio, double extent, int64_t bins) {
    if (sampling_ratio > 0) return sampling_ratio;
    double g = ceil(extent / (double)bins);
    if (!(g > 0)) return 0;   /* negative or NaN extents sample nothing */
    return g > ROI_MAX_GRID ? -1 : (int64_t)g;
}

int rk_roi_align(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    (void)ctx;
    const rk_roi_align_params *p = params;
    if (!is_float_dtype(p->dtype) || p->h < 1 || p->w < 1 || p->oh < 1 || p->ow < 1) return RLX_E_ARG;
    const int64_t *batch = in[2];
    for (int64_t r = 0; r < p->nrois; r++)
        if (batch[r] < 0 || batch[r] >= p->n) return RLX_E_RANGE;
    double offset = p->half_pixel ? 0.5 : 0.0, scale = p->spatial_scale;
    int max_mode = p->max_mode != 0;
    for (int64_t r = 0; r < p->nrois; r++) {
        double x1 = load_f(p->dtype, in[1], 4 * r) * scale - offset, y1 = load_f(p->dtype, in[1], 4 * r + 1) * scale - offset;
        double x2 = load_f(p->dtype, in[1], 4 * r + 2) * scale - offset, y2 = load_f(p->dtype, in[1], 4 * r + 3) * scale - offset;
        double roi_w = x2 - x1, roi_h = y2 - y1;
        if (!p->half_pixel) {
            /* malformed rois become 1 x 1 */
            if (!(roi_w >= 1.0)) roi_w = 1.0;
            if (!(roi_h >= 1.0)) roi_h = 1.0;
        }
        double bin_h = roi_h / (double)p->oh, bin_w = roi_w / (double)p->ow;
        int64_t gh = roi_grid(p->sampling_ratio, roi_h, p->oh), gw = roi_grid(p->sampling_ratio, roi_w, p->ow);
        if (gh < 0 || gw < 0) return RLX_E_ARG;
        double count = gh * gw > 1 ? (double)(gh * gw) : 1.0;
        for (int64_t c = 0; c < p->c; c++) {
            int64_t plane_off = (batch[r] * p->c + c) * p->h * p->w;
            for (int64_t ph = 0; ph < p->oh; ph++)
                for (int64_t pw = 0; pw < p->ow; pw++) {
                    double acc = 0;
                    int first = 1;
                    for (int64_t sy = 0; sy < gh; sy++) {
                        double y = y1 + (double)ph * bin_h + ((double)sy + 0.5) * bin_h / (double)gh;
                        for (int64_t sx = 0; sx < gw; sx++) {
                            double x = x1 + (double)pw * bin_w + ((double)sx + 0.5) * bin_w / (double)gw;
                            double v = roi_sample(p->dtype, in[0], plane_off, p->h, p->w, y, x, max_mode);
                            if (!max_mode) acc += v;
                            else if (first || v > acc) acc = v;
                            first = 0;
                        }
                    }
                    if (!max_mode) acc /= count;
                    store_f(p->dtype, out[0], ((r * p->c + c) * p->oh + ph) * p->ow + pw, acc);
                }
        }
    }
    return RLX_OK;
}

/* ---- MaxUnpool ---- */

int rk_max_unpool(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    (void)ctx;
    const rk_max_unpool_params *p = params;
    const uint8_t *x = in[0];
    const int64_t *idx = in[1];
    uint8_t *y = out[0];
    size_t es = (size_t)p->esize;
    int rank = (int)p->rank;
    if (rank < 1 || rank > RK_MAX_RANK) return RLX_E_ARG;
    int64_t unpooled = 1, numel = 1;
    for (int a = 0; a < rank; a++) {
        if (p->unpooled_dims[a] > p->out_dims[a]) return RLX_E_ARG;
        unpooled *= p->unpooled_dims[a];
        numel *= p->out_dims[a];
    }
    for (int64_t i = 0; i < p->in_numel; i++)
        if (idx[i] < 0 || idx[i] >= unpooled) return RLX_E_RANGE;
    memset(y, 0, (size_t)numel * es);
    for (int64_t i = 0; i < p->in_numel; i++) {
        /* unravel in the unpooled dims, ravel in the output's */
        int64_t rest = idx[i], pos = 0, stride = 1;
        for (int a = rank - 1; a >= 0; a--) {
            pos += rest % p->unpooled_dims[a] * stride;
            rest /= p->unpooled_dims[a];
            stride *= p->out_dims[a];
        }
        memcpy(y + (size_t)pos * es, x + (size_t)i * es, es);
    }
    return RLX_OK;
}

/* ---- Det ---- */

int rk_det(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_det_params *p = params;
    int64_t n = p->n;
    if (!is_float_dtype(p->dtype) || n < 0) return RLX_E_ARG;
    double *a = NULL;
    if (n > 0) {
        size_t need = (size_t)(n * n) * sizeof(double) + sizeof(double);
        if (!ctx || !ctx->scratch || ctx->scratch_per_thread < need) return RLX_E_ARG;
        uintptr_t u = (uintptr_t)ctx->scratch;
        a = (double *)(void *)(ctx->scratch + (sizeof(double) - u % sizeof(double)) % sizeof(double));
    }
    for (int64_t b = 0; b < p->batch; b++) {
        for (int64_t i = 0; i < n * n; i++) a[i] = load_f(p->dtype, in[0], b * n * n + i);
        double det = 1;
        for (int64_t k = 0; k < n; k++) {
            int64_t piv = k;
            for (int64_t i = k + 1; i < n; i++)
                if (fabs(a[i * n + k]) > fabs(a[piv * n + k])) piv = i;
            if (piv != k) {
                for (int64_t j = 0; j < n; j++) {
                    double t = a[k * n + j];
                    a[k * n + j] = a[piv * n + j];
                    a[piv * n + j] = t;
                }
                det = -det;
            }
            double d = a[k * n + k];
            det *= d;
            if (d == 0) continue;
            for (int64_t i = k + 1; i < n; i++) {
                double f = a[i * n + k] / d;
                for (int64_t j = k + 1; j < n; j++) a[i * n + j] -= f * a[k * n + j];
            }
        }
        store_f(p->dtype, out[0], b, det);
    }
    return RLX_OK;
}
