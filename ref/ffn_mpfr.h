/* Certified twin of ref/ffn.c (Arb balls + MPFR's final rounding): the feed-forward sublayer
 *   y = linear2(dropout(act(linear1(x)))),  act = relu | gelu (erf) | gelu_tanh,
 * forward and backward, exact real values rounded once.
 *
 * Two levels (INTERFACES.md, fixed with the block twin, which calls the Arb level):
 *  - ffn_arb_forward / ffn_arb_backward: the whole op in ball arithmetic at precision prec, with
 *    ball inputs x (and dy): the block passes LayerNorm's output balls.  Parameters are exact doubles.
 *  - ffn_forward_mpfr / ffn_backward_mpfr: double inputs (values of the input format), every output
 *    rounded once (RN-even, subnormals and overflow to +-Inf as IEEE) to format `out`.  Ziv over the
 *    whole op: every output's ball is converted to an MPFR interval (outward) and emitted only when
 *    both ends round to the same value of `out`; otherwise the whole computation is redone at twice
 *    the precision (128 .. 65536 bits); past that RN_TWIN_UNCERTIFIED, never a guess.
 *
 * The real op (shapes: ref/ffn.c, specs/ffn.h; s = 1/(1 - p), the REAL quotient, p the input-format
 * value of the attribute as ref/dropout_mpfr.h):
 *   z = x·w1ᵀ + b1,  h = act(z)·mask·s,  y = h·w2ᵀ + b2
 *   relu(a) = max(a, 0), relu'(a) = [a > 0] (PyTorch's threshold_backward: 0 at a = 0);
 *   gelu(a) = a/2·(1 + erf(a/√2)); gelu_tanh(a) = a/2·(1 + tanh(√(2/π)·(a + 0.044715·a³)))
 *   with the real constants (√2, π and 0.044715 exactly); their exact derivatives.
 *   backward (gradients of Σ dy ⊙ y, from zero): dh = dy·w2, dw2 = dyᵀ·h, db2 = Σ_rows dy,
 *   dz = act'(z)·dh·mask·s, dx = dz·w1, dw1 = dzᵀ·x, db1 = Σ_rows dz.
 *
 * Exact cases, which a ball never shrinks to: a product with an exact zero (a zero weight, a dropped
 * element, relu of a negative z) is an exact zero in Arb; z itself is formed from exact inputs by
 * an exact matrix product rounded to prec (exact once prec holds its bits), and an element whose z
 * ball still contains 0 while its row of x is exact is recomputed exactly (ARF_PREC_EXACT), so relu,
 * relu' and gelu at z = 0 are exact.  Every other value of a relu op is a dyadic number (times s): at
 * a precision holding its bits the ball is a point, so an exact value on a rounding boundary is
 * certified too.  With gelu the outputs are transcendental unless every path through an erf/tanh is
 * multiplied by an exact zero (then exact, as above).
 * Non-finite inputs: every output is NaN (a convention; IEEE would give a mixture of NaN and +-Inf).
 * Returns RN_TWIN_OK, RN_TWIN_UNCERTIFIED or RN_TWIN_NOMEM (ref/layernorm_mpfr.h). */
#ifndef RESNORM_FFN_MPFR_H
#define RESNORM_FFN_MPFR_H

#include <stddef.h>

#include <arb.h>

#include "dtype.h"
#include "layernorm_mpfr.h" /* RN_TWIN_* */

typedef enum { RN_ACT_RELU = 0, RN_ACT_GELU = 1 /* erf */, RN_ACT_GELU_TANH = 2 } rn_activation;
typedef struct {
    const double *w1, *b1;   /* linear1.weight [ff, d], linear1.bias [ff] or NULL */
    const double *w2, *b2;   /* linear2.weight [d, ff], linear2.bias [d] or NULL */
    const double *mask;      /* dropout.mask [rows, ff] (0/1) or NULL (eval mode: no dropout) */
    double p;                /* dropout probability; the scale is the REAL 1/(1 - p) (as ref/dropout_mpfr.c) */
    rn_activation act;
    size_t rows, d, ff;
} ffn_args;

/* y [rows, d] = linear2(dropout(act(linear1(x)))) in ball arithmetic at precision prec.
   Returns 0, or -1 on allocation failure. */
int ffn_arb_forward(arb_ptr y, arb_srcptr x, const ffn_args *F, slong prec);
/* Gradients (overwritten, not accumulated) of sum(dy ⊙ y): dx [rows, d], dw1 [ff, d], db1 [ff],
   dw2 [d, ff], db2 [d]; any of dw1, db1, dw2, db2 may be NULL (not wanted).  Recomputes the forward
   (ffn_arb_backward_from below starts from a kept one). */
int ffn_arb_backward(arb_ptr dx, arb_ptr dw1, arb_ptr db1, arb_ptr dw2, arb_ptr db2,
                     arb_srcptr x, arb_srcptr dy, const ffn_args *F, slong prec);

/* The same forward, keeping what the backward needs (z, act(z)·mask·s, act'(z)) so that a caller
   running both at one precision (the block twin) evaluates the forward once: returns the state
   (NULL on allocation failure), which ffn_arb_backward_from(S, ...) then uses in place of
   recomputing it; same x, F and prec.  Release with ffn_fwd_free. */
typedef struct ffn_fwd ffn_fwd;
ffn_fwd *ffn_arb_forward_keep(arb_ptr y, arb_srcptr x, const ffn_args *F, slong prec);
int ffn_arb_backward_from(const ffn_fwd *S, arb_ptr dx, arb_ptr dw1, arb_ptr db1, arb_ptr dw2,
                          arb_ptr db2, arb_srcptr x, arb_srcptr dy, const ffn_args *F, slong prec);
void ffn_fwd_free(ffn_fwd *S);

/* The rounded entry points: x [rows, d], dy [rows, d] doubles; outputs rounded once to `out`.
   db1, db2 may be NULL (not wanted). */
int ffn_forward_mpfr(double *y, const double *x, const ffn_args *F, rn_dtype out);
int ffn_backward_mpfr(double *dx, double *dw1, double *db1, double *dw2, double *db2,
                      const double *x, const double *dy, const ffn_args *F, rn_dtype out);

#endif
