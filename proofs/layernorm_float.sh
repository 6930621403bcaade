# The float-model WP run on ref/layernorm.c (f32 forward), shared by proofs/prove.sh and
# proofs/mutants.sh (which runs it on patched copies).  Sourced after proofs/lib.sh.
#   ln_float_run SESSION: proof_wp_float with the helpers' rounding facts by Gappa (pass A), every
#   other goal of the f32 forward functions by SMT (pass B), the float lemma f32_is_f32 (pass C).
LN_FLOAT_GAPPA_FCT=ln_add_f32,ln_div_f32,ln_sqdev_f32
LN_FLOAT_GAPPA_PROPS=add_err,add_nov,div_err,div_nov,div_nn,sub_nov,d_range,sq_nov,sq_range
LN_FLOAT_FCT=ln_add_f32,ln_div_f32,ln_sqdev_f32,ln_row_mean_f32,ln_row_rstd_f32,layernorm_row_forward_f32,ln_affine_f32
LN_FLOAT_LEMMAS=f32_is_f32
ln_float_run() {
  proof_wp_float ref/layernorm.c "$1" "$LN_FLOAT_GAPPA_FCT" "$LN_FLOAT_GAPPA_PROPS" "$LN_FLOAT_FCT" \
    "$LN_FLOAT_LEMMAS"
}

# The rows run of LayerNorm's drivers (proof_wp_rows in proofs/lib.sh: the forward drivers' y_rows and
# stats_rows from the row kernel's y_stats, mean_def, rstd_def; the backward drivers' dgb_sum, dgamma
# and dbeta over the rows, from dgamma_acc, dbeta_acc, and dx_rows, every row of dx, from dx_def:
# specs/layernorm_rows.h).  ln_rows_run SESSION: log $OUT/rows.log, exit code in rows_rc.
LN_ROWS_FCT=layernorm_forward_f32,layernorm_forward_f64,layernorm_backward_f32,layernorm_backward_f64,lemma_rows_before
# The rows run's lemmas (specs/layernorm_model.h, rows composed: mean and rstd; dx), proved in a pass
# of their own: the *_shift, *_frame, ln_same_row_intro and _elem ones by induction scripts
# (proofs/session_rows/script/).
LN_ROWS_LEMMAS=ln_sum_shift_step_f32,ln_sum_shift_step_f64,ln_sum_shift_f32,ln_sum_shift_f64,ln_sum_at_step_f32,ln_sum_at_step_f64,ln_sum_at_frame_f32,ln_sum_at_frame_f64,ln_ssd_unfold_f32,ln_ssd_unfold_f64,ln_ssd_shift_step_f32,ln_ssd_shift_step_f64,ln_ssd_shift_f32,ln_ssd_shift_f64,ln_ssd_at_step_f32,ln_ssd_at_step_f64,ln_ssd_at_frame_f32,ln_ssd_at_frame_f64,ln_same_row_step_f32,ln_same_row_step_f64,ln_same_row_intro_f32,ln_same_row_intro_f64,ln_same_row_elem_f32,ln_same_row_elem_f64,ln_sum_g_step_f32,ln_sum_g_step_f64,ln_sum_g_frame_f32,ln_sum_g_frame_f64,ln_sum_gx_step_f32,ln_sum_gx_step_f64,ln_sum_gx_frame_f32,ln_sum_gx_frame_f64,ln_dx_split_f32,ln_dx_split_f64,ln_dx_frame_f32,ln_dx_frame_f64
ln_rows_run() { proof_wp_rows ref/layernorm.c "$LN_ROWS_FCT" "$1" "$LN_ROWS_LEMMAS"; }
