/* FLINT's allocations on 2 MiB pages when large (ref/bigbuf.h, rn_bigbuf_flint_init).
 *
 * Why: `eval block_backward` at GPT-2 width (seq 64, d 768, ff 3072) allocates its weight
 * gradients and the matrix products' operands as Arb balls (48 bytes each: ~110 MB for one 768 x
 * 3072 matrix) and touches every page once; on 4 KiB pages that was 320,000 page faults and ~14 %
 * of its wall time (13.9 -> 11.9 s on one thread with glibc's hugetlb tunable, 6 December 2026,
 * AMD host).  The hooks keep FLINT's own allocator (malloc's) and only add the madvise hint, so
 * the values computed and FLINT's frees are unchanged. */
#include <flint/flint.h>

#include "bigbuf.h"

static void *(*orig_alloc)(size_t);
static void *(*orig_calloc)(size_t, size_t);
static void *(*orig_realloc)(void *, size_t);
static void (*orig_free)(void *);

static void *big_alloc(size_t n)
{
    void *p = orig_alloc(n);
    rn_bigbuf_hint(p, n);
    return p;
}

static void *big_calloc(size_t count, size_t size)
{
    void *p = orig_calloc(count, size);
    if (size && count <= (size_t)-1 / size)
        rn_bigbuf_hint(p, count * size);
    return p;
}

static void *big_realloc(void *q, size_t n)
{
    void *p = orig_realloc(q, n);
    rn_bigbuf_hint(p, n);
    return p;
}

void rn_bigbuf_flint_init(void)
{
    __flint_get_memory_functions(&orig_alloc, &orig_calloc, &orig_realloc, &orig_free);
    __flint_set_memory_functions(big_alloc, big_calloc, big_realloc, orig_free);
}
