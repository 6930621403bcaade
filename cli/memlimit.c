/* The memory limit of the `resnorm` command (specs/cli.md, "Memory").
 *
 * The certified twins hold every element of a row as an MPFR number, several of them exact (their
 * precision grows with the exponent span of the data), so a run's footprint is data-dependent:
 * 24 (residual) to about 700 (skip_layernorm_backward) bytes per element of a row for f32 data,
 * up to about 1.5 KiB for f64 data spanning hundreds of binades (measured; specs/cli.md).  Rather than estimate it, every byte MPFR/GMP and the arrays (rn_array)
 * allocate is counted, and the first allocation that would take the total over the limit ends the
 * run with a clear message and exit 2 -- before the kernel's OOM killer would.  Nothing has been
 * written at that point (eval publishes after the twin; a streaming eval and gen remove their
 * temporaries through the cleanup hook).
 *
 * The sublayers' and the block's twins (ref/<op>_mpfr.c on Arb) hold their matrices as balls, 48
 * bytes per value and their integer products' blocks beside them: FLINT's allocations are counted
 * too (its hooks below), each block at its malloc_usable_size, since FLINT frees without a size.
 * Those hooks also ask for 2 MiB pages on large blocks (ref/bigbuf.h): `eval block_backward` at
 * GPT-2 width touches ~560 MB of fresh balls, 320,000 page faults of ~12 us on 4 KiB pages,
 * 72,600 now (13.9 -> 10.9-11.9 s on one thread, 6 December 2026, the same bytes).
 *
 * Limit: $RESNORM_MEMORY_LIMIT (bytes, or with a K/M/G/T suffix, powers of 1024; 0: no limit);
 * default three quarters of the physical memory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <flint/flint.h>
#include <gmp.h>
#include <malloc.h>

#include "bigbuf.h"
#include "cli.h"
#include "memlimit.h"

static size_t limit, used, peak;
static const char *verb_name;
static void (*cleanup)(void);
static void *(*orig_alloc)(size_t);
static void *(*orig_realloc)(void *, size_t, size_t);
static void (*orig_free)(void *, size_t);

static void human(char *buf, size_t cap, size_t b)
{
    static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024 && u < 4)
        v /= 1024, u++;
    snprintf(buf, cap, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
}

static void over_limit(size_t want)
{
    char l[32], w[32];
    human(l, sizeof l, limit);
    human(w, sizeof w, want);
    fprintf(stderr, "resnorm%s%s: error: memory limit: this run needs more than %s (it asked for "
            "%s in all; limit RESNORM_MEMORY_LIMIT=%s). The certified twin needs up to about 700 "
            "bytes per element of a row for f32 data, 1.5 KiB for f64 data of wide range, with "
            "the arrays (8 bytes per element each); the sublayers' and the block's about 48 "
            "bytes per value of each matrix they hold as balls "
            "(specs/cli.md, Memory): raise the limit or use shorter rows or smaller shapes; "
            "no output written\n",
            verb_name ? " " : "", verb_name ? verb_name : "", l, w,
            getenv("RESNORM_MEMORY_LIMIT") ? getenv("RESNORM_MEMORY_LIMIT") : "default");
    if (cleanup)
        cleanup();
    _exit(RN_EXIT_USAGE); /* at once: no leak report of the run cut short under LSan */
}

/* The counters are atomic: the twins may run on several threads (experiment prepost runs its
   seeds in parallel), each allocating through these hooks. */
static void charge(size_t add)
{
    size_t now = __atomic_add_fetch(&used, add, __ATOMIC_RELAXED);
    if (limit && (add > limit || now > limit))
        over_limit(now);
    size_t p = __atomic_load_n(&peak, __ATOMIC_RELAXED);
    while (now > p && !__atomic_compare_exchange_n(&peak, &p, now, 1, __ATOMIC_RELAXED,
                                                   __ATOMIC_RELAXED))
        ;
}

/* used -= n, never below 0 */
static void uncharge(size_t n)
{
    size_t u = __atomic_load_n(&used, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&used, &u, n < u ? u - n : 0, 1, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
        ;
}

/* Each MPFR number also has a descriptor (32 bytes, in the twin's malloc'd arrays) and malloc's
   own overhead per block (about 16 bytes), which the GMP hooks do not see: counted here with the
   limbs, so the total tracks the resident size (measured: within about 10% for f32 rows). */
enum { PER_BLOCK = 48 };

static void *lim_alloc(size_t n)
{
    charge(n + PER_BLOCK);
    return orig_alloc(n); /* GMP's own handler reports a failed allocation */
}

static void *lim_realloc(void *p, size_t old, size_t n)
{
    if (n > old)
        charge(n - old);
    else
        uncharge(old - n);
    return orig_realloc(p, old, n);
}

static void lim_free(void *p, size_t n)
{
    uncharge(n + PER_BLOCK);
    orig_free(p, n);
}

/* FLINT's hooks (Arb's balls): charged before the allocation (as GMP's), then reconciled with
   the block's usable size, which is what the free uncharges. */
static void *(*fl_orig_alloc)(size_t);
static void *(*fl_orig_calloc)(size_t, size_t);
static void *(*fl_orig_realloc)(void *, size_t);
static void (*fl_orig_free)(void *);

/* After an allocation of n bytes charged as n + PER_BLOCK: the block as allocated (p), or the
   charge returned when it failed. */
static void *settle(void *p, size_t n)
{
    if (!p) {
        uncharge(n + PER_BLOCK);
        return NULL;
    }
    size_t u = malloc_usable_size(p);
    if (u > n)
        charge(u - n);
    rn_bigbuf_hint(p, u);
    return p;
}

static void *fl_alloc(size_t n)
{
    charge(n + PER_BLOCK);
    return settle(fl_orig_alloc(n), n);
}

static void *fl_calloc(size_t count, size_t size)
{
    if (size && count > ((size_t)-1 - PER_BLOCK) / size)
        return fl_orig_calloc(count, size); /* overflows: FLINT's calloc fails, nothing charged */
    size_t n = count * size;
    charge(n + PER_BLOCK);
    return settle(fl_orig_calloc(count, size), n);
}

static void *fl_realloc(void *q, size_t n)
{
    if (!q)
        return fl_alloc(n);
    size_t old = malloc_usable_size(q);
    if (n > old)
        charge(n - old);
    void *p = fl_orig_realloc(q, n);
    if (!p) { /* q is left as it was */
        if (n > old)
            uncharge(n - old);
        return NULL;
    }
    size_t u = malloc_usable_size(p), was = n > old ? n : old; /* what is charged now */
    if (u > was)
        charge(u - was);
    else
        uncharge(was - u);
    rn_bigbuf_hint(p, u);
    return p;
}

static void fl_free(void *p)
{
    if (p)
        uncharge(malloc_usable_size(p) + PER_BLOCK);
    fl_orig_free(p);
}

static void charge_array(long long delta)
{
    if (delta >= 0)
        charge((size_t)delta);
    else
        uncharge((size_t)-delta);
}

/* "8G", "512M", "1048576", "0" -> bytes; -1 if malformed. */
static int parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno || *s == '-')
        return -1;
    int shift = 0;
    if (*end) {
        const char *units = "KMGT", *u = strchr(units, *end & ~0x20);
        if (!u || end[1] != '\0')
            return -1;
        shift = 10 * (int)(u - units + 1);
    }
    if (shift && v > (~0ULL >> shift))
        return -1;
    *out = (size_t)(v << shift);
    return 0;
}

int rn_memlimit_init(const char *verb)
{
    verb_name = verb;
    const char *e = getenv("RESNORM_MEMORY_LIMIT");
    if (e) {
        if (parse_size(e, &limit) != 0) {
            cli_error(verb, "RESNORM_MEMORY_LIMIT='%s': expected a size in bytes, optionally with "
                      "a K, M, G or T suffix (powers of 1024), or 0 for no limit", e);
            return RN_EXIT_USAGE;
        }
    } else {
        long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
        limit = pages > 0 && psz > 0 ? (size_t)pages / 4 * 3 * (size_t)psz : 0;
    }
    mp_get_memory_functions(&orig_alloc, &orig_realloc, &orig_free);
    mp_set_memory_functions(lim_alloc, lim_realloc, lim_free);
    __flint_get_memory_functions(&fl_orig_alloc, &fl_orig_calloc, &fl_orig_realloc, &fl_orig_free);
    __flint_set_memory_functions(fl_alloc, fl_calloc, fl_realloc, fl_free);
    rn_array_charge = charge_array;
    return 0;
}

void rn_memlimit_on_exit(void (*fn)(void)) { cleanup = fn; }

size_t rn_memlimit_peak(void) { return __atomic_load_n(&peak, __ATOMIC_RELAXED); }
