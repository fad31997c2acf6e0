/* fuzz_weights.c - libFuzzer target: the runtime's weights loader.
 *
 * Linked with the C that rlxc generates for examples/shapes.rlxg under the
 * name fuzzmodel (the Makefile makes it at build time), so the loader
 * checks each input against a real model's hash, sizes and weight count.
 * Each input is a whole weights file, loaded four ways: from a buffer
 * whose data section is misaligned (copied) and from one that is aligned
 * (borrowed), from a file (a memfd, through fuzzmodel_load_weights), and
 * once more from a copy whose header checksum was recomputed for its data,
 * so that inputs get past the checksum and the model then runs on their
 * tensor data (zero input). Every status must be one of RLX_STATUSES, and
 * the four loads must agree whenever the checksum is not what decides.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzzmodel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int known_status(int st) {
    switch (st) {
#define X(id, code, msg) case code: return 1;
        RLX_STATUSES(X)
#undef X
    }
    return 0;
}

/* A fresh model, loaded one way; runs it when the load succeeds. */
static int load_and_run(int how, const uint8_t *buf, size_t len, const char *path) {
    rlx_model *m = NULL;
    if (fuzzmodel_init(&m)) abort();
    int st = how == 2 ? fuzzmodel_load_weights(m, path) : fuzzmodel_load_weights_buffer(m, buf, len);
    if (!known_status(st)) abort();
    if (st == RLX_OK) {
        float image[64] = {0}, probs[6];
        int64_t cls[1];
        const void *in[1] = {image};
        void *out[2] = {cls, probs};
        if (!known_status(fuzzmodel_run(m, in, out))) abort();
    }
    fuzzmodel_free(m);
    return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* two copies: data section misaligned (copied) and aligned (borrowed) */
    uint8_t *raw = malloc(size + 2 * RLX_ALIGN + 1);
    uint8_t *aligned = raw + (RLX_ALIGN - (uintptr_t)raw % RLX_ALIGN) % RLX_ALIGN, *mis = aligned + 1;
    if (size) memcpy(mis, data, size);
    int st_mis = load_and_run(0, mis, size, NULL);
    if (size) memcpy(aligned, data, size);
    int st_al = load_and_run(1, aligned, size, NULL);
    int fd = memfd_create("weights", 0);
    if (fd < 0) abort();
    if (size && write(fd, data, size) != (ssize_t)size) abort();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int st_file = load_and_run(2, NULL, 0, path);
    close(fd);
    /* the buffer loaders see the same bytes; the file loader differs only
     * where the file is shorter than its header says (TRUNCATED, not SIZE) */
    if (st_mis != st_al) abort();
    if (st_file != st_mis && st_file != RLX_E_TRUNCATED && st_mis != RLX_E_TRUNCATED) abort();
    /* past the checksum: the same bytes with a checksum that fits them */
    if (size >= RLX_WEIGHTS_HEADER) {
        size_t n = size - RLX_WEIGHTS_HEADER;
        if (n > fuzzmodel_info.weights_bytes) n = (size_t)fuzzmodel_info.weights_bytes;
        uint64_t sum = rlx_weights_checksum(aligned + RLX_WEIGHTS_HEADER, n);
        for (int i = 0; i < 8; i++) aligned[40 + i] = (uint8_t)(sum >> (8 * i));
        int st = load_and_run(1, aligned, size, NULL);
        if (st == RLX_E_CHECKSUM) abort();   /* the sum fits the data now */
    }
    free(raw);
    return 0;
}
