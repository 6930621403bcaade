/* The implementation profile a rigorous bound admits (specs/error-analysis.md §0).
 *
 * The LayerNorm-family bounds (ref/layernorm_bound.c, and through it skip_layernorm) are the
 * maximum of the a-priori errors of the algorithms a profile admits:
 *   RN_PROFILE_RUNTIMES  ("runtimes") two-pass, Welford / Chan-merged moments (PyTorch's
 *                        CPU RowwiseMoments) and the one-pass E[x^2] - E[x]^2 (ONNX Runtime's CPU
 *                        LayerNormalization): every runtime as it ships;
 *   RN_PROFILE_MOMENTS   (default, "moments") two-pass and Welford / Chan merges; rejects the
 *                        one-pass variance where its error exceeds theirs (large means, and
 *                        constant rows, where eps decides rstd);
 *   RN_PROFILE_TWO_PASS  ("two-pass") the two-pass variance only (llm.c, the project's kernels):
 *                        the tightest, ~ (n/2) u on rstd for a well-conditioned row.
 * Every profile admits any summation order, 1/sqrt or a 2-ulp rsqrt or a division by sqrt, and any
 * association of the affine step (folded forms included).  The setting is process-wide: `resnorm
 * check` / `golden run-check` set it from --profile before any bound is evaluated. */
#ifndef RESNORM_BOUND_PROFILE_H
#define RESNORM_BOUND_PROFILE_H

typedef enum { RN_PROFILE_RUNTIMES = 0, RN_PROFILE_MOMENTS, RN_PROFILE_TWO_PASS } rn_profile;

void rn_bound_set_profile(rn_profile p);
rn_profile rn_bound_profile(void);
/* "runtimes" | "moments" | "two-pass" -> 0, else -1. */
int rn_profile_from_name(const char *name, rn_profile *p);
const char *rn_profile_name(rn_profile p);

#endif
