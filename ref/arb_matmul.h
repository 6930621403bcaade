/* Ball matrix products for the Arb twins (ffn, attention, and through them the block).
 *
 * Why not a loop of arb_dot: at GPT-2 width the twins' big products (64 rows × 768 × 2304, ...)
 * are ~2.6× cheaper through arb_mat_mul_block (Arb splits the midpoints into blocks of similar
 * exponent, multiplies them EXACTLY as integer matrices -- multi-modular -- and rounds each sum once
 * to prec; the radii go through a separate magnitude product).  The enclosure is as rigorous as
 * arb_dot's: every entry of the result contains the exact real product of any points of the inputs.
 *
 * Threads: the columns of the result are cut into fixed chunks of BALLMAT_CHUNK and the chunks are
 * shared among the OpenMP threads.  The chunking does not depend on the thread count, so the
 * result's balls (midpoints and radii) are bit-identical for 1 or n threads.
 *
 * Shapes: row-major arrays of balls or doubles; a view shares the caller's storage. */
#ifndef RESNORM_ARB_MATMUL_H
#define RESNORM_ARB_MATMUL_H

#include <arb.h>
#include <arb_mat.h>

/* m views p as an r × c row-major matrix (no copy); release with ballmat_view_clear. */
void ballmat_view(arb_mat_t m, arb_srcptr p, slong r, slong c);
void ballmat_view_clear(arb_mat_t m);

/* m (initialized here) = the r × c matrix v of doubles (row-major), or its transpose (then m is
   c × r); exact balls.  Release with arb_mat_clear. */
void ballmat_from_d(arb_mat_t m, const double *v, slong r, slong c, int transpose);

/* m (initialized here) = the transpose of the r × c row-major balls p (copies).  arb_mat_clear. */
void ballmat_transpose_of(arb_mat_t m, arb_srcptr p, slong r, slong c);

/* C = A·B at precision prec (C may not alias A or B).  Threaded over column chunks (above). */
void ballmat_mul(arb_mat_t C, const arb_mat_t A, const arb_mat_t B, slong prec);

/* y [rows, out] = x [rows, in] · w [out, in]ᵀ (+ b [out] per row when b != NULL): a linear
   layer with exact double parameters on ball inputs. */
void ballmat_linear(arb_ptr y, arb_srcptr x, const double *w, const double *b, slong rows, slong in,
                    slong out, slong prec);

/* c [rows, n] = a [rows, k] · w [k, n] (w exact doubles, as stored: no transpose). */
void ballmat_mul_d(arb_ptr c, arb_srcptr a, const double *w, slong rows, slong k, slong n,
                   slong prec);

/* c [m, n] = aᵀ·b with a [rows, m], b [rows, n] balls: the weight gradient of a linear layer
   (a = the output gradients, b = the layer's inputs). */
void ballmat_tmul(arb_ptr c, arb_srcptr a, arb_srcptr b, slong rows, slong m, slong n, slong prec);

#endif
