/* MPFR twin of ref/layernorm.c: the exact real LayerNorm of the given inputs, rounded once.
 *
 * Inputs are doubles holding values of the input format; eps is the exact value used (see
 * rn_parse_eps). Every output element is the exact real result of the formula in
 * specs/layernorm.h, rounded once (RN-even, with subnormals and overflow as IEEE) to format `out`
 * and stored in a double. Certified: the result is emitted only when the working-precision
 * enclosure of the exact value rounds to a single value of `out`; otherwise the precision is raised
 * (Ziv). Non-finite inputs propagate as documented in ref/layernorm_mpfr.c.
 *
 * Shapes: x, y, dy, dx: [rows*n] row-major; gamma, beta, dgamma, dbeta: [n]; mean, rstd: [rows].
 * dgamma and dbeta are the sums over all rows (starting from zero), rounded once.
 * Return: 0 on success; RN_TWIN_UNCERTIFIED if some output could not be certified at the maximum
 * precision (nothing is guessed: the caller must fail); RN_TWIN_NOMEM on allocation failure. */
#ifndef RESNORM_LAYERNORM_MPFR_H
#define RESNORM_LAYERNORM_MPFR_H

#include <stddef.h>

#include "dtype.h"

enum { RN_TWIN_OK = 0, RN_TWIN_UNCERTIFIED = 1, RN_TWIN_NOMEM = 2 };

int layernorm_forward_mpfr(double *y, double *mean, double *rstd, const double *x,
                           const double *gamma, const double *beta, size_t rows, size_t n,
                           double eps, rn_dtype out);

/* The same forward on inputs that are not binary64 values: xs[i] is the exact value of element i
   (an MPFR number of any precision, e.g. the exact sum x + skip + bias of the skip_layernorm twin),
   read only when every element of its row is finite; xcls[i] is any finite double where xs[i] is
   finite, and the element's NaN or +-Inf otherwise (the NaN/Inf rules above apply to it). */
int layernorm_forward_mpfr_exact(double *y, double *mean, double *rstd, const double *xcls,
                                 mpfr_srcptr const *xs, const double *gamma, const double *beta,
                                 size_t rows, size_t n, double eps, rn_dtype out);

int layernorm_backward_mpfr(double *dx, double *dgamma, double *dbeta, const double *dy,
                            const double *x, const double *gamma, size_t rows, size_t n,
                            double eps, rn_dtype out);

/* The same backward on exact inputs (xcls, xs as for layernorm_forward_mpfr_exact; [rows*n]),
   and dxsum (may be NULL): the column sums of dx over all rows, sum_r dx_rj, [n], rounded once
   (the bias gradient of skip_layernorm_backward). */
int layernorm_backward_mpfr_exact(double *dx, double *dgamma, double *dbeta, double *dxsum,
                                  const double *dy, const double *xcls, mpfr_srcptr const *xs,
                                  const double *gamma, size_t rows, size_t n, double eps,
                                  rn_dtype out);

#endif
