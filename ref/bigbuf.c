/* Tensor-size buffers on 2 MiB pages (ref/bigbuf.h). */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE: hidden by -std=c11 -D_POSIX_C_SOURCE alone */
#include "bigbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

void rn_bigbuf_hint(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
    if (p && n >= RN_BIGBUF_MIN) {
        /* the 2 MiB-aligned interior; the first touch (in the caller's loops) faults it in */
        uintptr_t lo = ((uintptr_t)p + RN_BIGBUF_PAGE - 1) & ~(uintptr_t)(RN_BIGBUF_PAGE - 1);
        uintptr_t hi = ((uintptr_t)p + n) & ~(uintptr_t)(RN_BIGBUF_PAGE - 1);
        if (hi > lo)
            (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* a hint: else 4 KiB pages */
    }
#else
    (void)p, (void)n;
#endif
}

void *rn_bigbuf_calloc(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return NULL;
    size_t n = count * size;
    /* calloc: a block this large is a fresh mmap, zero without a memset, its pages not yet touched */
    char *p = calloc(n ? n : 1, 1);
    rn_bigbuf_hint(p, n);
    return p;
}
