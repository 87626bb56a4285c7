/*
 * xkb_bindir.so: preloaded into the bundle's Xvfb (LD_PRELOAD) by the bundle's `run` script.
 *
 * The X server compiles its keymap by running xkbcomp from a folder fixed when it was built
 * (XkbBinDirectory, "/usr/bin"), and has no option to move it. A machine with no X packages has
 * no /usr/bin/xkbcomp, so Xvfb would not start: this sets XkbBinDirectory, a variable the server
 * exports, to $TOPKSPEC_XKB_BINDIR (the bundle's xvfb/bin) before the server's main runs.
 *
 * Built by `topkspec directml bundle` with the machine's C compiler:
 *   cc -shared -fPIC -O2 -o xkb_bindir.so xkb_bindir.c
 */
#include <stdlib.h>

/* Weak: in any other program (the shell that runs xkbcomp inherits LD_PRELOAD) it is absent. */
extern char *XkbBinDirectory __attribute__((weak));

__attribute__((constructor)) static void use_bundle_xkbcomp(void) {
    const char *dir = getenv("TOPKSPEC_XKB_BINDIR");
    if (&XkbBinDirectory == NULL || dir == NULL || *dir == '\0') return;
    XkbBinDirectory = (char *)dir;
    /* Only the X server needs it: its children (sh, xkbcomp) run without it. */
    unsetenv("LD_PRELOAD");
}
