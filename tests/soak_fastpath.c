/* make fastpath-soak: the differential test of tests/fastpath_diff.h at scale (default 1.2e7
 * output elements over the families; SOAK_ELEMS sets the total, SOAK_SEED the seed).  Prints the
 * fraction that fell back to the twin, per family and per scenario; then the a-priori bounds with
 * the fast statistics against the MPFR path alone (SOAK_BOUND_ELEMS bound elements, default 2e6:
 * they must be bit-identical).  Exits 1 on any mismatch. */
#include "fastpath_diff.h"

int main(void)
{
    const char *e = getenv("SOAK_ELEMS"), *sd = getenv("SOAK_SEED");
    unsigned long long total = e ? strtoull(e, NULL, 10) : 12000000ull;
    uint64_t seed = sd ? strtoull(sd, NULL, 10) : 2026;
    const double share[FD_NFAM] = {0.3, 0.2, 0.2, 0.15, 0.15};
    unsigned long long elems = 0, bad = 0, twin_err = 0;
    for (int f = 0; f < FD_NFAM; f++) {
        fd_diff_stats st;
        fd_diff_family(f, (unsigned long long)(share[f] * (double)total), seed, &st, 1);
        fd_print_stats(fd_fam_name[f], &st);
        fflush(stdout);
        elems += st.elems;
        bad += st.mismatches;
        twin_err += st.twin_errors;
    }
    printf("fastpath-soak: %llu elements compared with the MPFR twin alone, %llu mismatches; %llu "
           "batches where the twin alone could not certify (the fast path then returned the same "
           "status)\n", elems, bad, twin_err);
    const char *be = getenv("SOAK_BOUND_ELEMS");
    fd_bound_stats bs;
    fd_bound_diff(be ? strtoull(be, NULL, 10) : 2000000ull, seed, &bs, 1);
    fd_print_bound_stats("(soak)", &bs);
    return bad || bs.differ || bs.below || bs.errors ? 1 : 0;
}
