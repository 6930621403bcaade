/* The memory limit of the `resnorm` command (cli/memlimit.c; specs/cli.md, "Memory"). */
#ifndef RESNORM_MEMLIMIT_H
#define RESNORM_MEMLIMIT_H

#include <stddef.h>

/* Read $RESNORM_MEMORY_LIMIT (default: 3/4 of physical memory) and count every MPFR/GMP and
   rn_array allocation against it from now on; going over ends the run with exit 2 and a message.
   0, or an exit code after a message (a malformed value). */
int rn_memlimit_init(const char *verb);
/* Called before that exit (e.g. to remove a temporary tree). */
void rn_memlimit_on_exit(void (*fn)(void));
/* The most bytes counted at once so far. */
size_t rn_memlimit_peak(void);

#endif
