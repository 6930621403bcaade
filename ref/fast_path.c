/* The fast paths' switches and counters (ref/norm_fast.h). */
#include "norm_fast.h"

#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

static int enabled = -1; /* -1: not yet read from the environment */
static int nthreads = -1;
static unsigned long long st_rows, st_fb_rows, st_elems, st_fb_elems;

int rn_fast_enabled(void)
{
    int e = __atomic_load_n(&enabled, __ATOMIC_RELAXED);
    if (e < 0) {
        const char *v = getenv("RESNORM_FASTPATH");
        e = !(v && strcmp(v, "0") == 0);
        __atomic_store_n(&enabled, e, __ATOMIC_RELAXED);
    }
    return e;
}

void rn_fast_set_enabled(int on)
{
    __atomic_store_n(&enabled, on ? 1 : 0, __ATOMIC_RELAXED);
}

void rn_fast_stats_get(rn_fast_stats *s)
{
    s->rows = __atomic_load_n(&st_rows, __ATOMIC_RELAXED);
    s->fallback_rows = __atomic_load_n(&st_fb_rows, __ATOMIC_RELAXED);
    s->elems = __atomic_load_n(&st_elems, __ATOMIC_RELAXED);
    s->fallback_elems = __atomic_load_n(&st_fb_elems, __ATOMIC_RELAXED);
}

void rn_fast_stats_reset(void)
{
    __atomic_store_n(&st_rows, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&st_fb_rows, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&st_elems, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&st_fb_elems, 0, __ATOMIC_RELAXED);
}

void rn_fast_stats_add(size_t rows, size_t fallback_rows, size_t elems_per_row)
{
    __atomic_fetch_add(&st_rows, rows, __ATOMIC_RELAXED);
    __atomic_fetch_add(&st_fb_rows, fallback_rows, __ATOMIC_RELAXED);
    __atomic_fetch_add(&st_elems, (unsigned long long)rows * elems_per_row, __ATOMIC_RELAXED);
    __atomic_fetch_add(&st_fb_elems, (unsigned long long)fallback_rows * elems_per_row,
                       __ATOMIC_RELAXED);
}

void rn_set_threads(int n)
{
    __atomic_store_n(&nthreads, n < 0 ? 0 : n, __ATOMIC_RELAXED);
}

int rn_threads(void)
{
    int t = __atomic_load_n(&nthreads, __ATOMIC_RELAXED);
    if (t < 0) {
        const char *v = getenv("RESNORM_THREADS");
        t = v ? atoi(v) : 0;
        if (t < 0)
            t = 0;
        __atomic_store_n(&nthreads, t, __ATOMIC_RELAXED);
    }
#ifdef _OPENMP
    return t ? t : omp_get_max_threads();
#else
    return 1;
#endif
}

int rn_threads_for(size_t work)
{
    return work < RN_PAR_MIN_WORK ? 1 : rn_threads();
}
