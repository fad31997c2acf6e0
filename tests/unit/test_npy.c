/* test_npy.c - runtime_min/rlx_npy.c: round trips, files written by numpy,
 * files of ours read back by numpy, and malformed files.
 *
 * numpy is /usr/bin/python3's; the test writes and checks its files in a
 * fresh temporary directory. Malformed files are built byte by byte here.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rlx_npy.h"

static char dir[64];

static void make_dir(void) {
    strcpy(dir, "/tmp/rlx_test_npy_XXXXXX");
    cr_assert(mkdtemp(dir) != NULL);
}

static void remove_dir(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

TestSuite(npy, .init = make_dir, .fini = remove_dir);

static const char *path_of(const char *name) {
    static char buf[4][128];
    static int next;
    char *p = buf[next++ % 4];
    snprintf(p, 128, "%s/%s", dir, name);
    return p;
}

/* Runs python code with numpy imported as np and `d` the temp dir; returns its exit status. */
static int python(const char *code) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 -c \"import numpy as np; d='%s'; %s\"", dir, code);
    return system(cmd);
}

static void write_bytes(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    cr_assert(f);
    cr_assert_eq(fwrite(data, 1, n, f), n);
    fclose(f);
}

/* A version 1.0 file with the given header text (not padded) and data. */
static void write_npy_raw(const char *path, const char *header, const void *data, size_t n) {
    unsigned char buf[1024];
    size_t hl = strlen(header);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)(hl & 0xff);
    buf[9] = (unsigned char)(hl >> 8);
    memcpy(buf + 10, header, hl);
    if (n) memcpy(buf + 10 + hl, data, n);
    write_bytes(path, buf, 10 + hl + n);
}

typedef struct {
    int st, dtype, rank;
    int64_t dims[RK_MAX_RANK];
    void *data;
    size_t nbytes;
} npy_file;

static npy_file read_npy(const char *path) {
    npy_file r;
    memset(&r, 0, sizeof r);
    r.st = rlx_npy_read(path, &r.dtype, &r.rank, r.dims, &r.data, &r.nbytes);
    if (r.st) cr_expect_null(r.data);
    return r;
}

/* ---- round trips ---- */

static void round_trip(int dtype, int rank, const int64_t *dims, const void *data, size_t nbytes) {
    const char *path = path_of("rt.npy");
    cr_assert_eq(rlx_npy_write(path, dtype, rank, dims, data), RLX_OK);
    /* the header is padded so that the data starts at a multiple of 64 */
    FILE *f = fopen(path, "rb");
    cr_assert(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    cr_expect_eq((size - (long)nbytes) % 64, 0, "data offset %ld", size - (long)nbytes);

    npy_file r = read_npy(path);
    cr_assert_eq(r.st, RLX_OK, "status %d", r.st);
    cr_expect_eq(r.dtype, dtype);
    cr_assert_eq(r.rank, rank);
    for (int a = 0; a < rank; a++) cr_expect_eq(r.dims[a], dims[a]);
    cr_assert_eq(r.nbytes, nbytes);
    cr_assert_not_null(r.data);
    if (nbytes) cr_expect(!memcmp(r.data, data, nbytes));
    free(r.data);
}

Test(npy, round_trip_dtypes_and_ranks) {
    float f[6] = {1, -2.5f, 3, 0, 1e-30f, -7};
    round_trip(RLX_F32, 2, (int64_t[]){2, 3}, f, sizeof f);
    int64_t i64[3] = {-1, (int64_t)1 << 40, INT64_MIN};
    round_trip(RLX_I64, 1, (int64_t[]){3}, i64, sizeof i64);
    uint8_t u8[24];
    for (int i = 0; i < 24; i++) u8[i] = (uint8_t)(i * 11);
    round_trip(RLX_U8, 3, (int64_t[]){2, 3, 4}, u8, sizeof u8);
    uint16_t half = 0x3c00;   /* f16 1.0 */
    round_trip(RLX_F16, 0, NULL, &half, 2);
    double d = -0.125;
    round_trip(RLX_F64, 0, NULL, &d, 8);
    uint8_t b[4] = {1, 0, 0, 1};
    round_trip(RLX_BOOL, 2, (int64_t[]){4, 1}, b, 4);
    int8_t i8[6] = {-128, 127, 0, 1, -1, 5};
    round_trip(RLX_I8, 8, (int64_t[]){1, 2, 1, 1, 3, 1, 1, 1}, i8, 6);
    round_trip(RLX_U32, 2, (int64_t[]){0, 3}, NULL, 0);   /* empty */
}

Test(npy, numpy_reads_our_files) {
    float f[6] = {0, 0.5f, 1, 1.5f, 2, 2.5f};
    cr_assert_eq(rlx_npy_write(path_of("f.npy"), RLX_F32, 2, (int64_t[]){2, 3}, f), RLX_OK);
    int16_t s = -300;
    cr_assert_eq(rlx_npy_write(path_of("s.npy"), RLX_I16, 0, NULL, &s), RLX_OK);
    uint64_t u[2] = {0, UINT64_MAX};
    cr_assert_eq(rlx_npy_write(path_of("u.npy"), RLX_U64, 1, (int64_t[]){2}, u), RLX_OK);
    cr_expect_eq(python("a = np.load(d + '/f.npy'); b = np.load(d + '/s.npy'); c = np.load(d + '/u.npy'); "
                        "assert a.dtype == np.float32 and (a == np.arange(6, dtype=np.float32).reshape(2, 3) / 2).all(); "
                        "assert b.dtype == np.int16 and b.shape == () and b == -300; "
                        "assert c.dtype == np.uint64 and c.tolist() == [0, 2**64 - 1]"),
                 0);
}

Test(npy, bf16_and_bad_arguments) {
    uint16_t h = 0;
    cr_expect_eq(rlx_npy_write(path_of("b.npy"), RLX_BF16, 0, NULL, &h), RLX_E_ARG);
    cr_expect_eq(rlx_npy_write(path_of("b.npy"), RLX_F32, 9, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1}, &h), RLX_E_ARG);
    cr_expect_eq(rlx_npy_write(path_of("b.npy"), RLX_F32, 1, (int64_t[]){-1}, &h), RLX_E_ARG);
    cr_expect_eq(rlx_npy_write(path_of("b.npy"), RLX_NDTYPES, 0, NULL, &h), RLX_E_ARG);
    cr_expect_eq(rlx_npy_write(path_of("no/such/dir.npy"), RLX_F32, 0, NULL, &h), RLX_E_IO);
}

/* ---- files written by numpy ---- */

Test(npy, numpy_files) {
    cr_assert_eq(python("np.save(d + '/a.npy', (np.arange(6, dtype=np.float32) * 0.5).reshape(2, 3)); "
                        "np.save(d + '/b.npy', np.array([-1, 2**40], dtype=np.int64)); "
                        "np.save(d + '/c.npy', np.float64(3.25)); "
                        "np.save(d + '/e.npy', np.array([True, False, True])); "
                        "np.save(d + '/g.npy', np.arange(24, dtype=np.uint16).reshape(1, 2, 3, 4)); "
                        "np.save(d + '/h.npy', np.zeros((0,), dtype=np.float16)); "
                        "np.save(d + '/t.npy', np.arange(6, dtype=np.int32).reshape(2, 3).T); "
                        "[np.lib.format.write_array(open(d + '/v%d.npy' % v, 'wb'), np.array([[1, 2], [3, 4]], dtype=np.int8), "
                        "version=(v, 0)) for v in (1, 2, 3)]"),
                 0);
    npy_file r = read_npy(path_of("a.npy"));
    cr_assert_eq(r.st, RLX_OK);
    cr_expect(r.dtype == RLX_F32 && r.rank == 2 && r.dims[0] == 2 && r.dims[1] == 3 && r.nbytes == 24);
    cr_expect(!memcmp(r.data, (float[]){0, 0.5f, 1, 1.5f, 2, 2.5f}, 24));
    free(r.data);

    r = read_npy(path_of("b.npy"));
    cr_assert_eq(r.st, RLX_OK);
    cr_expect(r.dtype == RLX_I64 && r.rank == 1 && r.dims[0] == 2);
    cr_expect(!memcmp(r.data, (int64_t[]){-1, (int64_t)1 << 40}, 16));
    free(r.data);

    r = read_npy(path_of("c.npy"));   /* shape () */
    cr_assert_eq(r.st, RLX_OK);
    cr_expect(r.dtype == RLX_F64 && r.rank == 0 && r.nbytes == 8);
    cr_expect_eq(*(double *)r.data, 3.25);
    free(r.data);

    r = read_npy(path_of("e.npy"));
    cr_assert_eq(r.st, RLX_OK);
    cr_expect(r.dtype == RLX_BOOL && r.rank == 1 && r.dims[0] == 3);
    cr_expect(!memcmp(r.data, (uint8_t[]){1, 0, 1}, 3));
    free(r.data);

    r = read_npy(path_of("g.npy"));
    cr_assert_eq(r.st, RLX_OK);
    cr_expect(r.dtype == RLX_U16 && r.rank == 4 && r.dims[0] == 1 && r.dims[1] == 2 && r.dims[2] == 3 && r.dims[3] == 4);
    for (int i = 0; i < 24; i++) cr_expect_eq(((uint16_t *)r.data)[i], i);
    free(r.data);

    r = read_npy(path_of("h.npy"));
    cr_assert_eq(r.st, RLX_OK);
    cr_expect(r.dtype == RLX_F16 && r.rank == 1 && r.dims[0] == 0 && r.nbytes == 0 && r.data != NULL);
    free(r.data);

    /* a transposed array is saved with fortran_order True: refused */
    r = read_npy(path_of("t.npy"));
    cr_expect_eq(r.st, RLX_E_FORMAT);

    for (int v = 1; v <= 3; v++) {
        char name[32];   /* "v%d.npy" for any int: gcc -O1 with sanitizers checks the bound */
        snprintf(name, sizeof name, "v%d.npy", v);
        r = read_npy(path_of(name));
        cr_assert_eq(r.st, RLX_OK, "version %d: status %d", v, r.st);
        cr_expect(r.dtype == RLX_I8 && r.rank == 2 && r.dims[0] == 2 && r.dims[1] == 2);
        cr_expect(!memcmp(r.data, (int8_t[]){1, 2, 3, 4}, 4));
        free(r.data);
    }
}

/* ---- malformed files ---- */

static int status_of_raw(const char *header, const void *data, size_t n) {
    const char *path = path_of("bad.npy");
    write_npy_raw(path, header, data, n);
    return read_npy(path).st;
}

Test(npy, missing_file) {
    cr_expect_eq(read_npy(path_of("missing.npy")).st, RLX_E_NOFILE);
}

Test(npy, truncated) {
    float f[4] = {1, 2, 3, 4};
    const char *good = path_of("good.npy");
    cr_assert_eq(rlx_npy_write(good, RLX_F32, 1, (int64_t[]){4}, f), RLX_OK);
    FILE *in = fopen(good, "rb");
    unsigned char img[256];
    size_t len = fread(img, 1, sizeof img, in);
    fclose(in);
    /* 10 + 58 bytes of header text, padded to 128 */
    cr_assert_eq(len, 128 + 16);
    /* cut in the magic, in the version, in the header length, in the header, in the data; and empty */
    size_t cuts[] = {0, 3, 7, 9, 30, 127, 128, 143};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        write_bytes(path_of("cut.npy"), img, cuts[i]);
        cr_expect_eq(read_npy(path_of("cut.npy")).st, RLX_E_TRUNCATED, "cut at %zu", cuts[i]);
    }
    /* the whole file reads */
    write_bytes(path_of("cut.npy"), img, len);
    npy_file r = read_npy(path_of("cut.npy"));
    cr_expect_eq(r.st, RLX_OK);
    free(r.data);

    /* a huge but representable size with little data: truncated, not an attempt to allocate 4 TiB */
    cr_expect_eq(status_of_raw("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }\n", f, 16),
                 RLX_E_TRUNCATED);
    cr_expect_eq(status_of_raw("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", f, 16), RLX_E_TRUNCATED);
}

Test(npy, bad_magic_and_version) {
    write_bytes(path_of("m.npy"), "\x93NUMPZ\x01\x00\x10\x00{}", 12);
    cr_expect_eq(read_npy(path_of("m.npy")).st, RLX_E_FORMAT);
    write_bytes(path_of("m.npy"), "PK\x03\x04", 4);   /* an .npz is not an .npy */
    cr_expect_eq(read_npy(path_of("m.npy")).st, RLX_E_FORMAT);
    write_bytes(path_of("m.npy"), "\x93NUMPY\x04\x00\x10\x00", 10);
    cr_expect_eq(read_npy(path_of("m.npy")).st, RLX_E_FORMAT);
    write_bytes(path_of("m.npy"), "\x93NUMPY\x01\x01\x10\x00", 10);
    cr_expect_eq(read_npy(path_of("m.npy")).st, RLX_E_FORMAT);
    /* version 2.0 with a header length of 2 GiB */
    write_bytes(path_of("m.npy"), "\x93NUMPY\x02\x00\x00\x00\x00\x80", 12);
    cr_expect_eq(read_npy(path_of("m.npy")).st, RLX_E_FORMAT);
}

Test(npy, bad_headers) {
    float f[4] = {0};
    const char *bad[] = {
        "{'descr': '<f4', 'fortran_order': True, 'shape': (4,), }",
        "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }",           /* complex: unknown */
        "{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }",           /* big-endian */
        "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }",   /* bytes overflow */
        "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }",    /* dim overflow */
        "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1), }", /* rank 9 */
        "{'descr': '<f4', 'fortran_order': False, }",                          /* no shape */
        "{'descr': '<f4', 'shape': (4,), }",                                   /* no fortran_order */
        "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (4,), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'extra': 1, }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), } x",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (4,) ",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (4,,), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': [4], }",
        "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4,), }",  /* structured */
        "{'descr': '<f4', 'fortran_order': Fals, 'shape': (4,), }",
        "{'descr': '<f4' 'fortran_order': False, 'shape': (4,), }",
        "{'descr: '<f4', 'fortran_order': False, 'shape': (4,), }",
        "",
        "{",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_expect_eq(status_of_raw(bad[i], f, sizeof f), RLX_E_FORMAT, "header %zu: %s", i, bad[i]);

    /* accepted variants: double quotes, no trailing comma, Python 2 "4L", keys in any order */
    const char *ok[] = {
        "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (4,)}",
        "{'shape': (4L,), 'fortran_order': False, 'descr': '<f4'}   \n",
        "{'descr':'<f4','fortran_order':False,'shape':(2,2,),}",
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        const char *path = path_of("ok.npy");
        write_npy_raw(path, ok[i], f, sizeof f);
        npy_file r = read_npy(path);
        cr_expect_eq(r.st, RLX_OK, "header %zu: %s", i, ok[i]);
        cr_expect_eq(r.nbytes, 16);
        free(r.data);
    }
}
