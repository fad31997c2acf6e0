/* rlx_npy.c - NumPy .npy reader and writer (C99 and stdio only).
 *
 * An .npy file is "\x93NUMPY", a version (major, minor), the length of a text
 * header (u16 little-endian in version 1.0, u32 in 2.0 and 3.0), the header
 * itself - a Python dict literal such as
 *     {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces and ended by '\n' - and then the raw elements in C order.
 *
 * The reader treats the file as untrusted: the header length is capped, the
 * header is parsed by a small recursive-descent reader over a bounded buffer
 * (exactly the three keys, each once; anything else is RLX_E_FORMAT), every
 * dim and the byte count are checked for overflow, and the data size is
 * checked against the file size before anything that large is allocated.
 * Elements are little-endian on disk; a big-endian host swaps them.
 */
#include "rlx_npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_MAX_HEADER (1u << 20)   /* numpy writes a few hundred bytes */

static const char *const npy_descr[] = {
#define X(id, name, bytes, ctype, npy, onnx) npy,
#include "rlx_dtypes.def"
#undef X
};

static int host_is_big_endian(void) {
    uint16_t one = 1;
    uint8_t first;
    memcpy(&first, &one, 1);
    return first == 0;
}

static void swap_elements(uint8_t *p, size_t n, size_t esize) {
    for (size_t i = 0; i < n; i++, p += esize)
        for (size_t a = 0, b = esize - 1; a < b; a++, b--) {
            uint8_t t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

/* ---- header parsing ---- */

typedef struct {
    const char *s, *end;
} cursor;

static void skip_space(cursor *c) {
    while (c->s < c->end && (*c->s == ' ' || *c->s == '\t' || *c->s == '\n' || *c->s == '\r')) c->s++;
}

static int accept(cursor *c, char ch) {
    skip_space(c);
    if (c->s < c->end && *c->s == ch) {
        c->s++;
        return 1;
    }
    return 0;
}

/* A quoted string (no escapes: no valid key or descr has any) into out. */
static int parse_string(cursor *c, char *out, size_t cap) {
    skip_space(c);
    if (c->s >= c->end || (*c->s != '\'' && *c->s != '"')) return 0;
    char quote = *c->s++;
    size_t n = 0;
    while (c->s < c->end && *c->s != quote) {
        if (*c->s == '\\' || n + 1 >= cap) return 0;
        out[n++] = *c->s++;
    }
    if (c->s >= c->end) return 0;
    c->s++;
    out[n] = 0;
    return 1;
}

static int parse_word(cursor *c, const char *word) {
    size_t n = strlen(word);
    skip_space(c);
    if ((size_t)(c->end - c->s) < n || memcmp(c->s, word, n)) return 0;
    c->s += n;
    return 1;
}

/* A nonnegative decimal integer (Python 2 headers may add 'L'). */
static int parse_dim(cursor *c, int64_t *out) {
    skip_space(c);
    int64_t v = 0;
    const char *start = c->s;
    while (c->s < c->end && *c->s >= '0' && *c->s <= '9') {
        int d = *c->s++ - '0';
        if (v > (INT64_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    if (c->s == start) return 0;
    if (c->s < c->end && *c->s == 'L') c->s++;
    *out = v;
    return 1;
}

/* "(" [dim ("," dim)* [","]] ")" ; a 1-tuple may be written "(n,)" or "(n)". */
static int parse_shape(cursor *c, int *rank, int64_t *dims) {
    if (!accept(c, '(')) return 0;
    int r = 0;
    if (accept(c, ')')) {
        *rank = 0;
        return 1;
    }
    for (;;) {
        int64_t d;
        if (r >= RK_MAX_RANK || !parse_dim(c, &d)) return 0;
        dims[r++] = d;
        if (accept(c, ')')) break;
        if (!accept(c, ',')) return 0;
        if (accept(c, ')')) break;
    }
    *rank = r;
    return 1;
}

static int parse_header(const char *text, size_t len, int *dtype, int *rank, int64_t *dims) {
    cursor c = {text, text + len};
    int have_descr = 0, have_order = 0, have_shape = 0;
    if (!accept(&c, '{')) return RLX_E_FORMAT;
    while (!accept(&c, '}')) {
        char key[32], descr[16];
        if (!parse_string(&c, key, sizeof key) || !accept(&c, ':')) return RLX_E_FORMAT;
        if (!strcmp(key, "descr") && !have_descr) {
            have_descr = 1;
            if (!parse_string(&c, descr, sizeof descr)) return RLX_E_FORMAT;
            *dtype = -1;
            for (int t = 0; t < RLX_NDTYPES; t++)
                if (npy_descr[t][0] && !strcmp(descr, npy_descr[t])) *dtype = t;
            if (*dtype < 0) return RLX_E_FORMAT;
        } else if (!strcmp(key, "fortran_order") && !have_order) {
            have_order = 1;
            if (parse_word(&c, "True")) return RLX_E_FORMAT;   /* column-major data is not supported */
            if (!parse_word(&c, "False")) return RLX_E_FORMAT;
        } else if (!strcmp(key, "shape") && !have_shape) {
            have_shape = 1;
            if (!parse_shape(&c, rank, dims)) return RLX_E_FORMAT;
        } else {
            return RLX_E_FORMAT;
        }
        if (accept(&c, '}')) break;
        if (!accept(&c, ',')) return RLX_E_FORMAT;
    }
    skip_space(&c);
    if (c.s != c.end || !have_descr || !have_order || !have_shape) return RLX_E_FORMAT;
    return RLX_OK;
}

/* ---- reading ---- */

static uint32_t le_u32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Reads exactly n bytes: RLX_OK, RLX_E_TRUNCATED at end of file, RLX_E_IO. */
static int read_exact(FILE *f, void *buf, size_t n) {
    size_t got = n ? fread(buf, 1, n, f) : 0;
    if (got == n) return RLX_OK;
    return ferror(f) ? RLX_E_IO : RLX_E_TRUNCATED;
}

/* Bytes left in f after the current position, or -1 if it can't be told. */
static long bytes_left(FILE *f) {
    long here = ftell(f);
    if (here < 0 || fseek(f, 0, SEEK_END)) return -1;
    long end = ftell(f);
    if (fseek(f, here, SEEK_SET) || end < here) return -1;
    return end - here;
}

static int read_npy(FILE *f, int *dtype, int *rank, int64_t *dims, void **data, size_t *nbytes) {
    unsigned char pre[12];
    size_t got = fread(pre, 1, 10, f);
    if (ferror(f)) return RLX_E_IO;
    /* a prefix of the magic that ends early is a truncated file, anything else is not .npy */
    if (memcmp(pre, NPY_MAGIC, got < NPY_MAGIC_LEN ? got : NPY_MAGIC_LEN)) return RLX_E_FORMAT;
    if (got < 8) return RLX_E_TRUNCATED;
    int major = pre[6], minor = pre[7];
    if (major < 1 || major > 3 || minor != 0) return RLX_E_FORMAT;
    if (got < 10) return RLX_E_TRUNCATED;
    size_t hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
    if (major >= 2) {
        int st = read_exact(f, pre + 10, 2);
        if (st) return st;
        uint32_t h32 = le_u32(pre + 8);
        if (h32 > NPY_MAX_HEADER) return RLX_E_FORMAT;
        hlen = h32;
    }
    char *text = malloc(hlen + 1);
    if (!text) return RLX_E_NOMEM;
    int st = read_exact(f, text, hlen);
    if (!st) st = parse_header(text, hlen, dtype, rank, dims);
    free(text);
    if (st) return st;

    size_t esize = (size_t)rlx_dtype_size(*dtype), count = 1;
    for (int a = 0; a < *rank; a++) {
        if (dims[a] != 0 && count > SIZE_MAX / esize / (uint64_t)dims[a]) return RLX_E_FORMAT;
        count *= (size_t)dims[a];
    }
    size_t n = count * esize;
    long left = bytes_left(f);
    if (left >= 0 && (unsigned long)left < n) return RLX_E_TRUNCATED;
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf) return RLX_E_NOMEM;
    st = read_exact(f, buf, n);
    if (st) {
        free(buf);
        return st;
    }
    if (esize > 1 && host_is_big_endian()) swap_elements(buf, count, esize);
    *data = buf;
    *nbytes = n;
    return RLX_OK;
}

int rlx_npy_read(const char *path, int *dtype, int *rank, int64_t dims[RK_MAX_RANK], void **data, size_t *nbytes) {
    if (!data) return RLX_E_ARG;
    *data = NULL;
    if (!path) return RLX_E_ARG;
    FILE *f = fopen(path, "rb");
    if (!f) return RLX_E_NOFILE;
    int st = rlx_npy_fread(f, dtype, rank, dims, data, nbytes);
    fclose(f);
    return st;
}

int rlx_npy_fread(FILE *f, int *dtype, int *rank, int64_t dims[RK_MAX_RANK], void **data, size_t *nbytes) {
    if (!data) return RLX_E_ARG;
    *data = NULL;
    if (!f || !dtype || !rank || !dims || !nbytes) return RLX_E_ARG;
    int t = -1, r = 0;
    int64_t d[RK_MAX_RANK] = {0};
    void *buf = NULL;
    size_t n = 0;
    int st = read_npy(f, &t, &r, d, &buf, &n);
    if (st) return st;
    *dtype = t;
    *rank = r;
    memcpy(dims, d, sizeof d);
    *data = buf;
    *nbytes = n;
    return RLX_OK;
}

/* ---- writing ---- */

int rlx_npy_write(const char *path, int dtype, int rank, const int64_t *dims, const void *data) {
    if (!path || dtype < 0 || dtype >= RLX_NDTYPES || !npy_descr[dtype][0]) return RLX_E_ARG;
    if (rank < 0 || rank > RK_MAX_RANK || (rank && !dims)) return RLX_E_ARG;
    size_t esize = (size_t)rlx_dtype_size(dtype), count = 1;
    for (int a = 0; a < rank; a++) {
        if (dims[a] < 0) return RLX_E_ARG;
        if (dims[a] != 0 && count > SIZE_MAX / esize / (uint64_t)dims[a]) return RLX_E_ARG;
        count *= (size_t)dims[a];
    }
    if (count && !data) return RLX_E_ARG;

    /* 10 bytes of preamble + the dict + spaces + '\n', a multiple of 64 */
    char header[512];
    int len = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (", npy_descr[dtype]);
    for (int a = 0; a < rank; a++)
        len += snprintf(header + len, sizeof header - (size_t)len, "%s%lld", a ? ", " : "", (long long)dims[a]);
    len += snprintf(header + len, sizeof header - (size_t)len, "%s), }", rank == 1 ? "," : "");
    while ((10 + len + 1) % 64) header[len++] = ' ';
    header[len++] = '\n';

    unsigned char pre[10];
    memcpy(pre, NPY_MAGIC, NPY_MAGIC_LEN);
    pre[6] = 1;
    pre[7] = 0;
    pre[8] = (unsigned char)(len & 0xff);
    pre[9] = (unsigned char)(len >> 8);

    FILE *f = fopen(path, "wb");
    if (!f) return RLX_E_IO;
    int ok = fwrite(pre, 1, sizeof pre, f) == sizeof pre && fwrite(header, 1, (size_t)len, f) == (size_t)len;
    if (ok && count) {
        if (esize > 1 && host_is_big_endian()) {
            const uint8_t *src = data;
            uint8_t elem[8];
            for (size_t i = 0; ok && i < count; i++) {
                for (size_t b = 0; b < esize; b++) elem[b] = src[i * esize + esize - 1 - b];
                ok = fwrite(elem, 1, esize, f) == esize;
            }
        } else {
            ok = fwrite(data, 1, count * esize, f) == count * esize;
        }
    }
    if (fclose(f)) ok = 0;
    return ok ? RLX_OK : RLX_E_IO;
}
