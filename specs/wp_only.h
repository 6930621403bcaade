/* The switches between the runs that read the same annotations (no logic here: including this
 * header changes no goal).
 *
 * WP_ONLY(p): a statement that WP proves (a real-model formula, a frame fact, a libm assumption of
 * specs/libm.h) and that EVA must not read.  Under -DRESNORM_EVA it is \true: EVA narrows its states
 * by every property it cannot decide, so a real-number statement (EVA cannot evaluate \exp, nor a
 * sum over the reals) would hide from it the NaN or overflow it is run to find.  Every EVA run fails
 * if it leaves a property unknown (proofs/prove.sh, dropout.sh, ffn.sh, linear.sh).  The one
 * definition every family uses.
 *
 * LN_EXACT(p) (variadic: p may contain commas): a statement about the real model (every float
 * operation exact): p in the real-model run (`-wp-model real`), \true in the float-model run
 * (-DRESNORM_WP_FLOAT, where it is false: floats round).
 * LN_FLOAT(p): a statement about the IEEE float model (rounding, finiteness, error bounds): p in the
 * float-model run, \true in the real-model run (whose floats are reals).
 * Each run proves every annotation it reads, so neither run uses a statement of the other model;
 * EVA reads neither (both \true under -DRESNORM_EVA, for WP_ONLY's reason; and a float-model
 * statement is not EVA's to use either).  The float-model vocabulary: specs/fperr.h. */
#ifndef RESNORM_WP_ONLY_H
#define RESNORM_WP_ONLY_H

#ifdef RESNORM_EVA
#define WP_ONLY(...) \true
#define LN_EXACT(...) \true
#define LN_FLOAT(...) \true
#else
#define WP_ONLY(...) (__VA_ARGS__)
#ifdef RESNORM_WP_FLOAT
#define LN_EXACT(...) \true
#define LN_FLOAT(...) (__VA_ARGS__)
#else
#define LN_EXACT(...) (__VA_ARGS__)
#define LN_FLOAT(...) \true
#endif
#endif

#endif
