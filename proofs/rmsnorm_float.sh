# The float-model WP runs on ref/rmsnorm.c and ref/residual.c, shared by proofs/rmsnorm.sh,
# proofs/residual.sh and proofs/mutants_rmsnorm.sh (which runs them on patched copies).  Sourced
# after proofs/lib.sh.  Each is proof_wp_float (lib.sh): the helpers' rounding facts by Gappa (pass A),
# every other goal of the listed functions by SMT (pass B), the float lemmas (pass C).
#   rms_float_run SESSION   RMSNorm forward, f32 and f64: sumsq_err on rms_row_sumsq_f32/f64, rstd_not_nan
#   res_float_run SESSION   residual add, f32 and f64, forward and backward: y_err, dx_err, df_err
RMS_FLOAT_GAPPA_FCT=rms_sq_f32,rms_add_f32,rms_div_f32,rms_row_sumsq_f32,rms_sq_f64,rms_add_f64,rms_div_f64,rms_row_sumsq_f64
RMS_FLOAT_GAPPA_PROPS=sq_nov,sq_range,sq_err,sq_err_tiny,add_nov,add_err,add_nn,div_nov,div_err,div_nn,div_le,x2
RMS_FLOAT_FCT=rms_sq_f32,rms_add_f32,rms_div_f32,rms_row_sumsq_f32,rms_row_rstd_f32,rmsnorm_row_forward_f32,rms_y_f32,rms_w_f32,\
rms_sq_f64,rms_add_f64,rms_div_f64,rms_row_sumsq_f64,rms_row_rstd_f64,rmsnorm_row_forward_f64,rms_y_f64,rms_w_f64
RMS_FLOAT_LEMMAS=rms_f32_is_f32,rms_f64_is_f64
rms_float_run() {
  proof_wp_float ref/rmsnorm.c "$1" "$RMS_FLOAT_GAPPA_FCT" "$RMS_FLOAT_GAPPA_PROPS" "$RMS_FLOAT_FCT" \
    "$RMS_FLOAT_LEMMAS"
}
RES_FLOAT_GAPPA_FCT=res_add_f32,res_add_f64
RES_FLOAT_GAPPA_PROPS=add_nov,add_err
RES_FLOAT_FCT=res_add_f32,res_add_f64,residual_forward_f32,residual_forward_f64,residual_backward_f32,residual_backward_f64
RES_FLOAT_LEMMAS=res_f32_is_f32,res_f64_is_f64
res_float_run() {
  proof_wp_float ref/residual.c "$1" "$RES_FLOAT_GAPPA_FCT" "$RES_FLOAT_GAPPA_PROPS" "$RES_FLOAT_FCT" \
    "$RES_FLOAT_LEMMAS"
}

# The rows run of RMSNorm's drivers (proof_wp_rows in proofs/lib.sh: the forward drivers' y_rows and
# rstd_rows from the row kernel's y_stats, rstd_def; the backward drivers' dgamma_sum from dgamma_acc
# and dx_rows from dx_def, specs/rmsnorm_rows.h).  rms_rows_run SESSION: log $OUT/rows.log, exit
# code in rows_rc.
RMS_ROWS_FCT=rmsnorm_forward_f32,rmsnorm_forward_f64,rmsnorm_backward_f32,rmsnorm_backward_f64,rms_lemma_rows_before
# The rows run's lemmas (specs/rmsnorm_model.h, rows composed: rstd; dx), proved in a pass of their
# own (the *_shift, *_frame, rms_same_row_intro and _elem ones by induction scripts,
# proofs/session_rmsnorm_rows/script/).
RMS_ROWS_LEMMAS=rms_sumsq_unfold_f32,rms_sumsq_unfold_f64,rms_sumsq_shift_step_f32,rms_sumsq_shift_step_f64,rms_sumsq_shift_f32,rms_sumsq_shift_f64,rms_sumsq_at_step_f32,rms_sumsq_at_step_f64,rms_sumsq_at_frame_f32,rms_sumsq_at_frame_f64,rms_same_row_step_f32,rms_same_row_step_f64,rms_same_row_intro_f32,rms_same_row_intro_f64,rms_same_row_elem_f32,rms_same_row_elem_f64,rms_sum_gx_step_f32,rms_sum_gx_step_f64,rms_sum_gx_frame_f32,rms_sum_gx_frame_f64,rms_g_split_f32,rms_g_split_f64,rms_xhat_split_f32,rms_xhat_split_f64,rms_dx_split_f32,rms_dx_split_f64,rms_dx_frame_f32,rms_dx_frame_f64
rms_rows_run() { proof_wp_rows ref/rmsnorm.c "$RMS_ROWS_FCT" "$1" "$RMS_ROWS_LEMMAS"; }
