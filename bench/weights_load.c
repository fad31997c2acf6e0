/* weights_load.c - the cost of the weights checksum when loading.
 *
 * Linked with the code rlxc generated for a model under the name `wl`
 * (bench/weights_load.sh makes it for ResNet-18). Each round loads the
 * model's weights file four ways, in alternating order so that a slow
 * phase of the machine hits both sides alike: from the file with the
 * checksum (what NAME_load_weights does) and without it
 * (RLX_LOAD_NO_CHECKSUM, otherwise the same code), and from a misaligned
 * buffer in memory (copied piece by piece) with and without it. Every file
 * load reads into freshly allocated memory, as a program starting up
 * would; the file itself stays in the page cache after the first round.
 * Prints the median and the fastest time of each, and the checked/unchecked
 * ratios of both (on a loaded machine the fastest times are the steadier).
 *
 * With a third argument `cold`, only the two file loads run, and before
 * each the file is dropped from the page cache (posix_fadvise DONTNEED, on
 * Linux), so that each reads from storage as a program's first start does.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include "wl.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Drops the file's pages from the page cache: its next read is from storage. */
static void evict(const char *path) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return;
#if defined(POSIX_FADV_DONTNEED)
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
#endif
    close(fd);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

enum { FILE_CHECKED, FILE_UNCHECKED, BUF_CHECKED, BUF_UNCHECKED, NWAYS };
static const char *const way_name[NWAYS] = {"file, checksum", "file, no checksum", "misaligned buffer, checksum",
                                            "misaligned buffer, no checksum"};

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s WEIGHTS [ROUNDS [cold]]\n", argv[0]);
        return 2;
    }
    const char *path = argv[1];
    int rounds = argc > 2 ? atoi(argv[2]) : 21;
    if (rounds < 1) rounds = 1;
    int cold = argc > 3 && !strcmp(argv[3], "cold"), nways = cold ? 2 : NWAYS;
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *raw = malloc((size_t)len + 2 * RLX_ALIGN);
    unsigned char *mis = raw + (RLX_ALIGN - (uintptr_t)raw % RLX_ALIGN) % RLX_ALIGN + 1;
    if (!raw || fread(mis, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "cannot read %s\n", path);
        return 1;
    }
    fclose(f);
    double *t[NWAYS];
    for (int w = 0; w < NWAYS; w++) t[w] = malloc(sizeof(double) * (size_t)rounds);
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < nways; k++) {
            int w = (k + r) % nways;   /* a different order every round */
            rlx_model *m = NULL;
            if (wl_init(&m)) {
                fprintf(stderr, "wl_init failed\n");
                return 1;
            }
            unsigned flags = w == FILE_UNCHECKED || w == BUF_UNCHECKED ? RLX_LOAD_NO_CHECKSUM : 0;
            if (cold) evict(path);
            double t0 = now();
            int st = w <= FILE_UNCHECKED ? rlx_load_weights_file_flags(m, path, flags)
                                         : rlx_load_weights_buffer_flags(m, mis, (size_t)len, flags);
            t[w][r] = now() - t0;
            if (st) {
                fprintf(stderr, "%s: %s\n", way_name[w], rlx_status_str(st));
                return 1;
            }
            wl_free(m);
        }
    printf("weights: %s, %.1f MB, %d rounds%s\n", path, (double)len / 1e6, rounds,
           cold ? ", from storage (dropped from the page cache before each load)" : "");
    double med[NWAYS], fast[NWAYS];
    for (int w = 0; w < nways; w++) {
        qsort(t[w], (size_t)rounds, sizeof(double), cmp_double);
        med[w] = t[w][rounds / 2];
        fast[w] = t[w][0];
        printf("  %-32s median %7.2f ms   fastest %7.2f ms   %5.2f GB/s\n", way_name[w], med[w] * 1e3, fast[w] * 1e3,
               (double)len / med[w] / 1e9);
    }
    if (cold) {
        printf("  checksum cost: file %+.1f%% (medians), %+.1f%% (fastest)\n",
               100 * (med[FILE_CHECKED] / med[FILE_UNCHECKED] - 1), 100 * (fast[FILE_CHECKED] / fast[FILE_UNCHECKED] - 1));
        return 0;
    }
    printf("  checksum cost: file %+.1f%%, buffer %+.1f%% (medians); file %+.1f%%, buffer %+.1f%% (fastest)\n",
           100 * (med[FILE_CHECKED] / med[FILE_UNCHECKED] - 1), 100 * (med[BUF_CHECKED] / med[BUF_UNCHECKED] - 1),
           100 * (fast[FILE_CHECKED] / fast[FILE_UNCHECKED] - 1), 100 * (fast[BUF_CHECKED] / fast[BUF_UNCHECKED] - 1));
    return 0;
}
