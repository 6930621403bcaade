/* Rounding an Arb ball once, certified: the step every Arb twin (softmax, attention, ffn, block)
 * ends with.  The ball's ends are taken outward to MPFR (prec + 64 bits: the conversion itself
 * never narrows the enclosure) and the value is emitted only when both ends round to the same value
 * of `out` (exact_mpfr.h's certify: RN-even, subnormals and overflow as IEEE).  Otherwise the
 * caller raises the precision of its whole computation (Ziv) and tries again.
 * Non-finite balls are the caller's business (a twin decides whether they mean NaN or "not yet"). */
#ifndef RESNORM_ARB_ROUND_H
#define RESNORM_ARB_ROUND_H

#include <arb.h>

#include "exact_mpfr.h"

/* 1 with *res = the value of every point of v rounded to out; 0 when the ends round differently
   (or are not numbers). */
static inline int arb_round_once(double *res, const arb_t v, slong prec, rn_dtype out)
{
    arf_t l, u;
    mpfr_t lo, hi;
    arf_init(l), arf_init(u);
    mpfr_inits2(prec + 64, lo, hi, (mpfr_ptr)0);
    arb_get_lbound_arf(l, v, prec + 64);
    arb_get_ubound_arf(u, v, prec + 64);
    arf_get_mpfr(lo, l, MPFR_RNDD);
    arf_get_mpfr(hi, u, MPFR_RNDU);
    int ok = mpfr_number_p(lo) && mpfr_number_p(hi) && certify(res, lo, hi, out);
    mpfr_clears(lo, hi, (mpfr_ptr)0);
    arf_clear(l), arf_clear(u);
    return ok;
}

#endif
