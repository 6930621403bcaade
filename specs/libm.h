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

/*@ assigns \nothing;
    ensures libm_exp: \result == \exp(x);
*/
float rn_expf(float x);
/*@ assigns \nothing;
    ensures libm_exp: \result == \exp(x);
*/
double rn_exp(double x);

#endif
