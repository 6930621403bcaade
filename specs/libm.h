/* The libm functions the sublayer kernels call, and the ONE assumption that links them to the
 * logic's real functions (proofs/libm-assumptions.md; listed in the README's table of what is
 * proved).  Read this file as the trusted base of the softmax proofs:
 *
 *   ASSUMPTION libm_exp: rn_expf(x) and rn_exp(x) return \exp(x), the real exponential, in the
 *   real model (-wp-model real) the kernels are proved in.
 *
 * The functions are defined in ref/libm.c as calls of expf / exp; WP is never given that file, so
 * it uses the contract below without proof (a function without a body is specified, not proved).
 * In floating point the libm result is NOT exact: its accuracy (1 ulp, a documented property of
 * glibc's expf/exp and of Sleef's u10 exp used by PyTorch's CPU kernels) is a separate, stated
 * assumption of the error analysis (specs/error-analysis-softmax.md §2).  EVA is given ref/libm.c
 * and uses Frama-C's own interval model of expf/exp (no assumption there). */
#ifndef RESNORM_LIBM_H
#define RESNORM_LIBM_H

/* The assumption is WP_ONLY: read by WP (-wp-model real), \true for EVA (the softmax and ffn runs),
   which is given ref/libm.c and uses its own model of expf/exp (and the range stubs of erf, tanh in
   proofs/eva_ffn.c). */
#include "wp_only.h"

/*@ assigns \nothing;
    ensures libm_exp: WP_ONLY(\result == \exp(x));
*/
float rn_expf(float x);
/*@ assigns \nothing;
    ensures libm_exp: WP_ONLY(\result == \exp(x));
*/
double rn_exp(double x);

/* GELU (ref/ffn.c, specs/ffn.h) adds two more, of the same form (proofs/libm-assumptions.md):
 *
 *   ASSUMPTION libm_erf: rn_erff(x) and rn_erf(x) return rn_real_erf(x), the logic function below read
 *   as the real error function erf (ACSL has no built-in erf: it is declared, not defined; no
 *   property of it is assumed, so every proof holds for any function in its place).
 *   ASSUMPTION libm_tanh: rn_tanhf(x) and rn_tanh(x) return \tanh(x), the real hyperbolic tangent.
 *
 * Their floating-point accuracy is a separate assumption of specs/error-analysis-ffn.md §3. */
/*@ logic real rn_real_erf(real x); */
/*@ assigns \nothing;
    ensures libm_erf: WP_ONLY(\result == rn_real_erf(x));
*/
float rn_erff(float x);
/*@ assigns \nothing;
    ensures libm_erf: WP_ONLY(\result == rn_real_erf(x));
*/
double rn_erf(double x);
/*@ assigns \nothing;
    ensures libm_tanh: WP_ONLY(\result == \tanh(x));
*/
float rn_tanhf(float x);
/*@ assigns \nothing;
    ensures libm_tanh: WP_ONLY(\result == \tanh(x));
*/
double rn_tanh(double x);

#endif
