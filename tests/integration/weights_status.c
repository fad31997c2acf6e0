/* weights_status.c - checks the status codes of a generated model's API.
 *
 * Linked with the C that rlxc generated for the "tiny" model of
 * weights_status.sh (y = x * w + b, x:[2,3], w:[3], b:[1]) and runtime_min.
 * argv names the weights files the script prepared: the right one, a
 * truncated copy, a header-only cut, a copy with another version, the
 * weights of another model, one with bad magic, and one with a bit of w[1]
 * flipped (its second byte's bit 3: 0xc0000000 -> 0xc0000800, -2 becomes
 * -2.00048828125 = -2 * (1 + 2^-12)). Each check prints
 * "ok NAME" or "FAIL NAME: ..."; the script counts them. Expected outputs are
 * computed here by hand from the weights written in the script, not taken
 * from a run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "m.h"

static int failures;

static void expect_status(const char *what, int got, int want) {
    if (got == want) printf("ok   %s\n", what);
    else {
        printf("FAIL %s: status %d (%s), want %d (%s)\n", what, got, rlx_status_str(got), want,
               rlx_status_str(want));
        failures++;
    }
}

static void expect(const char *what, int cond, const char *detail) {
    if (cond) printf("ok   %s\n", what);
    else {
        printf("FAIL %s: %s\n", what, detail);
        failures++;
    }
}

static const float x_in[6] = {1, 2, 3, 4, 5, 6};
/* x * [0.5, -2, 4] + 0.25, row by row; every value is exact in f32. */
static const float y_want[6] = {0.75f, -3.75f, 12.25f, 2.25f, -9.75f, 24.25f};

/* Runs the model and compares with y_want exactly. */
static void expect_result(const char *what, rlx_model *m) {
    float y[6];
    for (int i = 0; i < 6; i++) y[i] = -12345.0f;
    const void *in[1] = {x_in};
    void *out[1] = {y};
    int st = tiny_run(m, in, out);
    char name[128];
    snprintf(name, sizeof name, "%s: run status", what);
    expect_status(name, st, RLX_OK);
    char detail[256] = "";
    int same = 1;
    for (int i = 0; i < 6; i++)
        if (y[i] != y_want[i]) {
            if (same) snprintf(detail, sizeof detail, "y[%d] = %.9g, want %.9g", i, y[i], y_want[i]);
            same = 0;
        }
    snprintf(name, sizeof name, "%s: y = x*w + b", what);
    expect(name, same, detail);
}

static unsigned char *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    *len = n;
    return buf;
}

int main(int argc, char **argv) {
    if (argc != 8) {
        fprintf(stderr, "usage: %s RIGHT TRUNCATED HEADER_CUT BADVERSION OTHER BADMAGIC FLIPPED\n", argv[0]);
        return 2;
    }
    const char *right = argv[1], *truncated = argv[2], *header_cut = argv[3], *badver = argv[4],
               *other = argv[5], *badmagic = argv[6], *flipped = argv[7];

    /* The info table describes the model as written in the .rlxg. */
    expect("info: name", tiny_info.name && strcmp(tiny_info.name, "tiny") == 0, "name is not \"tiny\"");
    expect("info: 1 input, 1 output", tiny_info.ninputs == 1 && tiny_info.noutputs == 1, "wrong counts");
    if (tiny_info.ninputs == 1) {
        const rlx_tensor_info *x = &tiny_info.inputs[0];
        expect("info: input x f32 [2,3]",
               strcmp(x->name, "x") == 0 && x->dtype == RLX_F32 && x->rank == 2 && x->dims[0] == 2 &&
                   x->dims[1] == 3,
               "input description differs");
    }
    if (tiny_info.noutputs == 1) {
        const rlx_tensor_info *y = &tiny_info.outputs[0];
        expect("info: output y f32 [2,3]",
               strcmp(y->name, "y") == 0 && y->dtype == RLX_F32 && y->rank == 2 && y->dims[0] == 2 &&
                   y->dims[1] == 3,
               "output description differs");
    }

    rlx_model *m = NULL;
    expect_status("init", tiny_init(&m), RLX_OK);
    if (!m) {
        printf("FAIL init: no model\n");
        return 1;
    }
    int seen[8];
    float y[6];
    const void *in[1] = {x_in};
    void *out[1] = {y};
    expect_status("run before loading", seen[0] = tiny_run(m, in, out), RLX_E_STATE);
    expect_status("missing file", seen[1] = tiny_load_weights(m, "/nonexistent/dir/m.weights"), RLX_E_NOFILE);
    expect_status("truncated data", seen[2] = tiny_load_weights(m, truncated), RLX_E_TRUNCATED);
    expect_status("truncated header", tiny_load_weights(m, header_cut), RLX_E_TRUNCATED);
    expect_status("other version", seen[3] = tiny_load_weights(m, badver), RLX_E_VERSION);
    expect_status("other model", seen[4] = tiny_load_weights(m, other), RLX_E_MODEL);
    expect_status("bad magic", seen[5] = tiny_load_weights(m, badmagic), RLX_E_MAGIC);
    expect_status("flipped data bit", seen[7] = tiny_load_weights(m, flipped), RLX_E_CHECKSUM);
    expect_status("still not loaded after failures", tiny_run(m, in, out), RLX_E_STATE);
    expect_status("right file", seen[6] = tiny_load_weights(m, right), RLX_OK);
    expect_result("from file", m);
    expect_status("flipped bit after a good load", tiny_load_weights(m, flipped), RLX_E_CHECKSUM);
    expect_result("good weights kept after a refused load", m);
    int distinct = 1;
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < i; j++)
            if (seen[i] == seen[j]) distinct = 0;
    expect("each failure has its own status", distinct, "two cases returned the same status");
    /* Without the checksum the flipped file loads, and its w[1] is used (all exact in f32):
     * y[1] = 2 * -2.00048828125 + 0.25 = -3.7509765625, y[4] = 5 * -2.00048828125 + 0.25 = -9.75244140625. */
    expect_status("flipped, RLX_LOAD_NO_CHECKSUM", rlx_load_weights_file_flags(m, flipped, RLX_LOAD_NO_CHECKSUM),
                  RLX_OK);
    expect_status("flipped, unchecked: run", tiny_run(m, in, out), RLX_OK);
    expect("flipped, unchecked: the flipped weight is used", y[1] == -3.7509765625f && y[4] == -9.75244140625f,
           "y[1] or y[4] not from w[1] = -2.00048828125");
    tiny_free(m);

    /* From a caller's buffer: misaligned (copied), aligned (borrowed), and
     * damaged images. */
    size_t len = 0;
    unsigned char *img = read_all(right, &len);
    expect("read weights image", img != NULL && len > RLX_WEIGHTS_HEADER, "cannot read the right file");
    if (img && len > RLX_WEIGHTS_HEADER) {
        unsigned char *raw = malloc(len + 2 * RLX_ALIGN);
        unsigned char *aligned = raw + (RLX_ALIGN - (uintptr_t)raw % RLX_ALIGN) % RLX_ALIGN;
        unsigned char *misaligned = aligned + 1;
        m = NULL;
        expect_status("buffer: init", tiny_init(&m), RLX_OK);
        memcpy(misaligned, img, len);
        expect_status("buffer: misaligned", tiny_load_weights_buffer(m, misaligned, len), RLX_OK);
        memset(misaligned, 0, len);   /* the model must have kept its own copy */
        expect_result("buffer: misaligned", m);
        memcpy(misaligned, img, len);
        misaligned[RLX_WEIGHTS_HEADER + 5] ^= 0x08;
        expect_status("buffer: flipped bit, misaligned (copied)", tiny_load_weights_buffer(m, misaligned, len),
                      RLX_E_CHECKSUM);
        expect_result("buffer: misaligned copy kept after the refused one", m);
        tiny_free(m);

        m = NULL;
        expect_status("buffer: init again", tiny_init(&m), RLX_OK);
        memcpy(aligned, img, len);
        expect_status("buffer: truncated", tiny_load_weights_buffer(m, aligned, len - 1), RLX_E_TRUNCATED);
        expect_status("buffer: header only", tiny_load_weights_buffer(m, aligned, 16), RLX_E_TRUNCATED);
        aligned[4] ^= 0x40;
        expect_status("buffer: other version", tiny_load_weights_buffer(m, aligned, len), RLX_E_VERSION);
        aligned[4] ^= 0x40;
        aligned[0] = 'X';
        expect_status("buffer: bad magic", tiny_load_weights_buffer(m, aligned, len), RLX_E_MAGIC);
        aligned[0] = img[0];
        aligned[9] ^= 1;   /* a bit of the model hash */
        expect_status("buffer: other hash", tiny_load_weights_buffer(m, aligned, len), RLX_E_MODEL);
        aligned[9] ^= 1;
        aligned[RLX_WEIGHTS_HEADER + 5] ^= 0x08;   /* the bit of w[1] the script flips */
        expect_status("buffer: flipped data bit", tiny_load_weights_buffer(m, aligned, len), RLX_E_CHECKSUM);
        aligned[RLX_WEIGHTS_HEADER + 5] ^= 0x08;
        expect_status("buffer: NULL model", tiny_load_weights_buffer(NULL, aligned, len), RLX_E_ARG);
        expect_status("buffer: aligned", tiny_load_weights_buffer(m, aligned, len), RLX_OK);
        expect_result("buffer: aligned", m);
        tiny_free(m);
        free(raw);
    }
    free(img);
    tiny_free(NULL);   /* must be harmless */
    return failures ? 1 : 0;
}
