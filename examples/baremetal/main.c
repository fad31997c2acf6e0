/* main.c - a bare-metal program around one model compiled by rlxc.
 *
 * Built by build.sh (beside this file) for a Cortex-M4F: the model's C file,
 * its weights as a const array in flash (rlxc --embed-weights), a fixed
 * input (bm_input, from a .npy file), the runtime without threads or files
 * (-DRLX_NO_THREADS -DRLX_NO_STDIO) and startup.c. RLX_MODEL is the model's
 * name (its API prefix) and RLX_MODEL_HEADER its header.
 *
 * It initializes the model (the only allocation: the arena), loads the
 * weights from the flash array and checks that they are used in place (no
 * copy in RAM: the array is 64-byte aligned), runs the model once on the
 * input, and prints each output's bytes in hex (`out0 3f8000...`), then `ok`.
 * Any failure prints `FAIL what: status` and exits 1.
 */
#include <stdint.h>
#include <stdlib.h>

#include RLX_MODEL_HEADER

#define RLX_CAT_(a, b) a##b
#define RLX_CAT(a, b) RLX_CAT_(a, b)
#define MODEL(x) RLX_CAT(RLX_MODEL, x)

extern const unsigned char bm_input[];
extern const size_t bm_input_size;
void bm_write(const char *s);

static int fail(const char *what, int st) {
    char num[4] = {(char)('0' + st / 10 % 10), (char)('0' + st % 10), '\n', 0};
    bm_write("FAIL ");
    bm_write(what);
    bm_write(": ");
    bm_write(num);
    return 1;
}

/* The bytes of one output in hex, 32 to a write. */
static void print_output(int k, const unsigned char *p, uint64_t n) {
    static const char hex[] = "0123456789abcdef";
    char line[2 * 32 + 1];
    char head[] = {'o', 'u', 't', (char)('0' + k), ' ', 0};
    bm_write(head);
    for (uint64_t i = 0; i < n; i += 32) {
        int len = 0;
        for (uint64_t j = i; j < n && j < i + 32; j++) {
            line[len++] = hex[p[j] >> 4];
            line[len++] = hex[p[j] & 15];
        }
        line[len] = 0;
        bm_write(line);
    }
    bm_write("\n");
}

int main(void) {
    const rlx_model_info *info = &MODEL(_info);
    rlx_model *m;
    int st = MODEL(_init)(&m);
    if (st) return fail("init", st);
    st = MODEL(_load_weights_buffer)(m, MODEL(_weights), MODEL(_weights_size));
    if (st) return fail("load_weights_buffer", st);
    /* the flash copy in place: the data section right behind the header */
    if (m->weights != MODEL(_weights) + RLX_WEIGHTS_HEADER || m->weights_alloc)
        return fail("the weights were copied to RAM", 0);
    if (info->ninputs != 1 || info->inputs[0].nbytes != bm_input_size) return fail("input size", 0);
    void *outputs[8];
    if (info->noutputs > 8) return fail("more than 8 outputs", 0);
    for (int k = 0; k < info->noutputs; k++)
        if (!(outputs[k] = malloc((size_t)info->outputs[k].nbytes + 1))) return fail("malloc", RLX_E_NOMEM);
    const void *inputs[1] = {bm_input};
    st = MODEL(_run)(m, inputs, outputs);
    if (st) return fail("run", st);
    for (int k = 0; k < info->noutputs; k++) print_output(k, outputs[k], info->outputs[k].nbytes);
    bm_write("ok\n");
    MODEL(_free)(m);
    return 0;
}
