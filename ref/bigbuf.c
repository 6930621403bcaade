/* Tensor-size buffers on 2 MiB pages (ref/bigbuf.h). */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE: hidden by -std=c11 -D_POSIX_C_SOURCE alone */
#include "bigbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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

/* A block of RN_BIGBUF_ALIGNED_MIN to RN_BIGBUF_MIN bytes: 2 MiB-aligned and rounded up to whole
   2 MiB pages, so that it has pages to hint at all (calloc's block of 2 MiB starts 16 bytes into a
   fresh mapping and holds no aligned 2 MiB page), zeroed after the hint (posix_memalign's memory
   may be reused, and the memset's faults are then one per 2 MiB). */
static void *aligned_zeroed(size_t n)
{
    size_t len = (n + RN_BIGBUF_PAGE - 1) & ~(RN_BIGBUF_PAGE - 1);
    void *p = NULL;
    if (posix_memalign(&p, RN_BIGBUF_PAGE, len) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, len, MADV_HUGEPAGE);
#endif
    return memset(p, 0, n);
}

void *rn_bigbuf_calloc(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return NULL;
    size_t n = count * size;
    if (n >= RN_BIGBUF_ALIGNED_MIN && n < RN_BIGBUF_MIN)
        return aligned_zeroed(n);
    /* calloc: a block this large is a fresh mmap, zero without a memset, its pages not yet touched */
    char *p = calloc(n ? n : 1, 1);
    rn_bigbuf_hint(p, n);
    return p;
}
