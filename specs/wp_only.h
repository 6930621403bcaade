/* WP_ONLY(p): a statement that WP proves (a real-model formula, a frame fact, a libm assumption of
 * specs/libm.h) and that EVA must not read.  Under -DRESNORM_EVA it is \true: EVA narrows its states
 * by every property it cannot decide, so a real-number statement (EVA cannot evaluate \exp, nor a
 * sum over the reals) would hide from it the NaN or overflow it is run to find.  Every EVA run fails
 * if it leaves a property unknown (proofs/prove.sh, dropout.sh, ffn.sh, linear.sh).  The one
 * definition every family uses (LN_EXACT and LN_FLOAT, specs/fperr.h, are the same for EVA and also
 * select the WP model). */
#ifndef RESNORM_WP_ONLY_H
#define RESNORM_WP_ONLY_H

#ifdef RESNORM_EVA
#define WP_ONLY(...) \true
#else
#define WP_ONLY(...) (__VA_ARGS__)
#endif

#endif
