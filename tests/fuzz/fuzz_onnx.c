/* fuzz_onnx.c - libFuzzer target: the ONNX reader.
 *
 * Each input is a whole .onnx file: the wire-format scan, protobuf-c's
 * unpacking and the import into the IR (opset rewrites, subgraphs) run on
 * it as `rlxc import` runs them, and an imported graph without subgraphs is
 * written as an .rlxg container, which must read back (the import command's
 * output must be a file rlxc reads).
 */
#include "fuzz.h"

#define FILE_NAME "fuzz.onnx"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_limits(FILE_NAME);
    jmp_buf jb;
    if (rlx_try(jb)) {
        fuzz_check_message(FILE_NAME);
    } else {
        RlxGraph *g = rlx_read_onnx_buffer(FILE_NAME, data, size, 0, NULL, NULL);
        RlxBuf out = {0};
        rlx_write_rlxg(g, &out);   /* refuses subgraphs with a user error */
        if (rlx_try(jb)) {
            fprintf(stderr, "fuzz: the imported .rlxg does not read back: %s\n", rlx_diag.msg);
            abort();
        }
        rlx_read_rlxg_buffer(FILE_NAME, (const uint8_t *)out.data, out.len);
    }
    rlx_diag.jmp = NULL;
    rlx_arena_free_all();
    return 0;
}
