# The float-model WP run on ref/linear.c (proofs/linear.sh; proofs/mutants_linear.sh runs it on patched
# copies).  Sourced after proofs/lib.sh.  proof_wp_float (lib.sh): the helpers' rounding facts by Gappa
# (pass A), every other goal of the listed functions by SMT (pass B), the float lemmas (pass C).
#   lin_float_run SESSION   linear_dot_f32/f64, linear_sdot_f32/f64: dot_err / sdot_err, dot_fin / sdot_fin
LIN_FLOAT_GAPPA_FCT=lin_mul_f32,lin_add_f32,lin_mul_f64,lin_add_f64
LIN_FLOAT_GAPPA_PROPS=mul_nov,mul_q,mul_ab,mul_err,mul_err_tiny,add_nov,add_err
LIN_FLOAT_FCT=lin_mul_f32,lin_add_f32,lemma_lin_dot_hints_f32,linear_dot_f32,lemma_lin_sdot_hints_f32,linear_sdot_f32,\
lin_mul_f64,lin_add_f64,lemma_lin_dot_hints_f64,linear_dot_f64,lemma_lin_sdot_hints_f64,linear_sdot_f64
LIN_FLOAT_LEMMAS=lin_f32_is_f32,lin_f64_is_f64
lin_float_run() {
  proof_wp_float ref/linear.c "$1" "$LIN_FLOAT_GAPPA_FCT" "$LIN_FLOAT_GAPPA_PROPS" "$LIN_FLOAT_FCT" \
    "$LIN_FLOAT_LEMMAS"
}
