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

# The rows run (issue 13, "rows composed"): WP in the real model with -DRESNORM_WP_ROWS on the rows x n
# forward drivers (specs/fperr.h: LN_ROWS, LN_ROWMODEL), which proves their functional contract y_rows
# from the row kernel's pointwise postcondition y_stats (proved by the real-model run).
#   ln_rows_run SESSION: log $OUT/rows.log, exit code in rows_rc.
LN_ROWS_FCT=layernorm_forward_f32,layernorm_forward_f64,lemma_rows_before
ln_rows_run() {
  frama-c -cpp-extra-args="$CPP -DRESNORM_WP_ROWS" ref/layernorm.c \
    -wp -wp-model real -wp-fct "$LN_ROWS_FCT" -wp-prover qed,cvc5,z3 -wp-par 2 \
    -wp-timeout "$WP_TIMEOUT" -wp-smoke-tests -wp-session "$1" -wp-cache "$WP_CACHE" \
    > "$OUT/rows.log" 2>&1
  rows_rc=$?
  # Every goal and smoke test of this run must be proved.  (No -report-classify: it would also
  # report the preconditions of lemma_row_offset, whose other callers, the backward drivers, this
  # run does not check; the real-model run proves every call site.)
  grep -qE '^\[wp\] \[[^]]*\] Goal ' "$OUT/rows.log" || rows_rc=1
  if grep -E '^\[wp\] \[[^]]*\] (Goal|Smoke-test) ' "$OUT/rows.log" | grep -vE ' : Valid|^\[wp\] \[Passed\]' | grep -q .; then
    rows_rc=1
  fi
}
