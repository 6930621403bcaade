# Attention proof target (included by the top Makefile; opt-in, NOT in `make prove`: a replay of the
# committed session still costs 4.4 min of CPU, WP regenerating and simplifying 1218 goals).  WP with
# -wp-model real on ref/attention.c; see proofs/README-sublayers.md and proofs/results/attention.json.
#   make prove-attention                   replay the committed cache (proofs/session_attention)
#   make prove-attention WP_CACHE=update   ... and store new results (then commit the session)
.PHONY: prove-attention
prove-attention:
	WP_CACHE=$(or $(WP_CACHE),replay) proofs/attention.sh
