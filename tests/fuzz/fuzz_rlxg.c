/* fuzz_rlxg.c - libFuzzer target: the .rlxg reader, both forms.
 *
 * Each input is a whole .rlxg file, pure JSON or container (lib/frontend/
 * rlxg.c decides by its first bytes, as for a file on disk). A file the
 * reader accepts must also survive the round trip the import command makes
 * of it: written as a container (rlx_write_rlxg) it must read back, and
 * written again give the same bytes; a writer that emits what its own
 * reader refuses, or that is not deterministic, aborts as a finding.
 */
#include "fuzz.h"

#define FILE_NAME "fuzz.rlxg"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_limits(FILE_NAME);
    jmp_buf jb;
    if (rlx_try(jb)) {
        fuzz_check_message(FILE_NAME);
    } else {
        RlxGraph *g = rlx_read_rlxg_buffer(FILE_NAME, data, size);
        RlxBuf once = {0}, twice = {0};
        rlx_write_rlxg(g, &once);
        if (rlx_try(jb)) {
            fprintf(stderr, "fuzz: the container written from an accepted file does not read back: %s\n",
                    rlx_diag.msg);
            abort();
        }
        RlxGraph *back = rlx_read_rlxg_buffer(FILE_NAME, (const uint8_t *)once.data, once.len);
        rlx_write_rlxg(back, &twice);
        if (once.len != twice.len || memcmp(once.data, twice.data, once.len)) {
            fprintf(stderr, "fuzz: writing the read-back container gives other bytes (%zu vs %zu)\n", once.len,
                    twice.len);
            abort();
        }
    }
    rlx_diag.jmp = NULL;
    rlx_arena_free_all();
    return 0;
}
