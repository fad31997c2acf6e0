/* fuzz.h - what the libFuzzer targets of tests/fuzz/ share.
 *
 * Every compiler target runs one input the way the driver runs a model:
 * under rlx_try, so a user error (the expected outcome for most inputs)
 * longjmps back here; then rlx_arena_free_all releases everything the input
 * allocated, so no state or memory carries over to the next input and
 * LeakSanitizer sees only real leaks (malloc'd memory a failure path
 * forgot). An error must be one line starting with the file name the
 * reader was given (the house rule for messages): anything else aborts, so
 * the fuzzer reports it as a finding. Internal errors (RLX_ASSERT) abort
 * too; a crash, hang, leak or sanitizer report is a finding as well.
 */
#ifndef RLX_FUZZ_H
#define RLX_FUZZ_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rlx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The driver's default memory limit is 512 MiB plus 16 times the file;
 * under ASan (shadow memory, the quarantine of freed blocks) a target must
 * stay below libFuzzer's -rss_limit_mb=1024, so the targets stop at 256
 * MiB: a model that needs more is refused by the same code path. */
#define FUZZ_MEMORY_LIMIT ((int64_t)256 << 20)

static inline void fuzz_limits(const char *file) {
    rlx_limits.memory = FUZZ_MEMORY_LIMIT;
    rlx_limits.max_nodes = RLX_DEFAULT_MAX_NODES;
    rlx_limits.file = file;
}

/* Aborts unless the error message is one line that starts with "FILE: ". */
static inline void fuzz_check_message(const char *file) {
    size_t n = strlen(file);
    const char *msg = rlx_diag.msg;
    if (strncmp(msg, file, n) || msg[n] != ':' || msg[n + 1] != ' ' || strchr(msg, '\n')) {
        fprintf(stderr, "fuzz: a user error that does not name the file '%s': %s\n", file, msg);
        abort();
    }
}

/* Which reader a model's bytes go to: the .rlxg forms start with '{' (after
 * blanks, pure JSON) or "RLXG" (the container); anything else is ONNX. */
static inline int fuzz_is_rlxg(const uint8_t *data, size_t size) {
    size_t i = 0;
    while (i < size && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r')) i++;
    return (i < size && data[i] == '{') || (size >= 4 && !memcmp(data, "RLXG", 4));
}

#endif
