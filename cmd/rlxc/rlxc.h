/* rlxc.h - what the driver's files (main.c, build.c) share.
 *
 * main.c parses the command line, runs the pass pipeline and writes the
 * sources; build.c finds or builds the runtime library and compiles a
 * model's executable against it; check.c is `rlxc check`, which runs rlxc
 * itself and the programs it built. Files the driver writes go through
 * temporary names registered here, so that a user error anywhere removes
 * them again (rlxc_remove_temps, called by main's error handler).
 */
#ifndef RLXC_H
#define RLXC_H

#include <stdint.h>

#include "rlx.h"

/* ---- temporary files (main.c) ---- */
void rlxc_add_temp(const char *path);       /* removed if rlxc fails before rlxc_keep_temps */
void rlxc_keep_temps(void);                 /* the registered files are final: forget them */
void rlxc_remove_temps(void);

/* ---- processes (build.c) ---- */
/* Runs argv (NULL-terminated), waiting for it; its exit status, or -1. */
int rlxc_run(char **argv);
/* Splits a flags string on blanks (no quoting, like make's); returns the count. */
int rlxc_split_words(const char *s, char **argv, int max);

/* ---- the runtime (build.c) ---- */
/* Where the runtime's sources and headers are: $RLXC_RUNTIME_DIR, else
 * <dir of rlxc>/../runtime_min (the build tree), else
 * <dir of rlxc>/../share/rlxc/runtime_min (installed). */
const char *rlxc_runtime_src(void);

/* The runtime library that matches compiler `cc` and flags `cflags` (the
 * user's CC and CFLAGS): the one `make` built beside rlxc when it matches,
 * else one from the cache, built there first if needed. Returns the path of
 * librlxrt.a; *gnu tells whether the compiler takes GCC's flags. */
const char *rlxc_runtime_library(const char *cc, const char *cflags, int blas, int *gnu);

/* rlxc runtime -o DIR: builds the library for $CC and $CFLAGS into DIR
 * (librlxrt.a and its key, librlxrt.stamp). */
void rlxc_build_runtime_into(const char *dir, const char *cc, const char *cflags);
/* The compiler flags of one instruction-set variant of the kernels (rk_isa.h). */
const char *rlxc_isa_flags(const char *isa);

/* Compiles BASE.c (which includes BASE.h) into the executable EXE with $CC
 * and $CFLAGS, linked with the matching runtime library and the target's
 * libraries (target.h: build_libs, e.g. -ldl); extra, if not NULL, is one
 * more source compiled the same way (the --embed-weights array). With
 * report set, also prints the executable's code size split by part to
 * stdout and appends it to report (an RlxBuf of the --report text). */
void rlxc_build_executable(const char *base, const char *exe, int blas, const char *target_libs, const char *extra,
                           RlxBuf *report);

/* ---- rlxc check (check.c) ---- */
/* rlxc check ARGS... (argv[0] is "check"); the exit status. */
int rlxc_check(int argc, char **argv);

#endif
