# Transformer stack proof target (included by the top Makefile).  WP with -wp-model real on the
# stack kernels of ref/block.c (proofs/stack.sh; proofs/README-stack.md).
#   make prove-stack                   replay the committed cache (proofs/session_stack)
#   make prove-stack WP_CACHE=update   ... and store new results (then commit the session)
.PHONY: prove-stack
prove-stack:
	WP_CACHE=$(or $(WP_CACHE),replay) proofs/stack.sh
