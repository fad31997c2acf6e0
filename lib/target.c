/* target.c - the list of targets (target.h) and finding one by name. */
#include <string.h>

#include "target.h"

const RlxTarget *const rlx_targets[] = {&rlx_target_c, &rlx_target_spirv, &rlx_target_cuda, &rlx_target_msl};
const int rlx_ntargets = (int)(sizeof rlx_targets / sizeof rlx_targets[0]);

const RlxTarget *rlx_target_find(const char *file, const char *name) {
    for (int i = 0; i < rlx_ntargets; i++)
        if (!strcmp(rlx_targets[i]->name, name)) return rlx_targets[i];
    RlxBuf b = {0};
    for (int i = 0; i < rlx_ntargets; i++) rlx_buf_printf(&b, "%s%s", i ? ", " : "", rlx_targets[i]->name);
    rlx_error("%s: unknown target '%s' (targets: %s)", file ? file : "rlxc", name, b.data);
    return NULL;
}
