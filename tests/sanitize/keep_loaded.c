/* keep_loaded.c - preloaded into the sanitized run of test_vk only
 * (tests/sanitize/run.sh, tests/run_all.sh): dlclose does nothing, so the
 * Vulkan loader's layers stay mapped until exit and LeakSanitizer can name
 * the module of each leaked allocation, which lsan.supp matches. Debian's
 * validation layer (libVkLayer_khronos_validation.so) leaks at teardown;
 * unloaded, its allocations show as "<unknown module>" and no suppression
 * can tell them from rlxc's own. */
int dlclose(void *handle);
int dlclose(void *handle) {
    (void)handle;
    return 0;
}
