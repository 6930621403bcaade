/* Ball matrix products for the Arb twins (contract and why: ref/arb_matmul.h). */
#include "arb_matmul.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* Columns per chunk of a threaded product: divides the GPT-2 widths (768, 2304, 3072) so that two
   threads get equal shares; wide enough that each chunk's integer blocks stay efficient. */
#define BALLMAT_CHUNK 192

void ballmat_view(arb_mat_t m, arb_srcptr p, slong r, slong c)
{
    m->entries = (arb_ptr)p;
    m->r = r;
    m->c = c;
    m->rows = flint_malloc((size_t)(r > 0 ? r : 1) * sizeof(arb_ptr));
    for (slong i = 0; i < r; i++)
        m->rows[i] = (arb_ptr)p + i * c;
}

void ballmat_view_clear(arb_mat_t m) { flint_free(m->rows); }

void ballmat_from_d(arb_mat_t m, const double *v, slong r, slong c, int transpose)
{
    arb_mat_init(m, transpose ? c : r, transpose ? r : c);
    for (slong i = 0; i < r; i++)
        for (slong j = 0; j < c; j++)
            arb_set_d(transpose ? arb_mat_entry(m, j, i) : arb_mat_entry(m, i, j), v[i * c + j]);
}

void ballmat_transpose_of(arb_mat_t m, arb_srcptr p, slong r, slong c)
{
    arb_mat_init(m, c, r);
    for (slong i = 0; i < r; i++)
        for (slong j = 0; j < c; j++)
            arb_set(arb_mat_entry(m, j, i), p + i * c + j);
}

/* C[:, c0 .. c1) = A·B[:, c0 .. c1) through windows (no copies). */
static void mul_columns(arb_mat_t C, const arb_mat_t A, const arb_mat_t B, slong c0, slong c1,
                        slong prec)
{
    arb_mat_t Bw, Cw;
    arb_mat_window_init(Bw, B, 0, c0, arb_mat_nrows(B), c1);
    arb_mat_window_init(Cw, C, 0, c0, arb_mat_nrows(C), c1);
    arb_mat_mul_block(Cw, A, Bw, prec);
    arb_mat_window_clear(Bw);
    arb_mat_window_clear(Cw);
}

void ballmat_mul(arb_mat_t C, const arb_mat_t A, const arb_mat_t B, slong prec)
{
    slong n = arb_mat_ncols(B), chunks = (n + BALLMAT_CHUNK - 1) / BALLMAT_CHUNK;
    if (arb_mat_nrows(A) == 0 || n == 0)
        return;
    if (arb_mat_ncols(A) == 0) {
        arb_mat_zero(C);
        return;
    }
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 1)
        for (slong k = 0; k < chunks; k++)
            mul_columns(C, A, B, k * BALLMAT_CHUNK,
                        (k + 1) * BALLMAT_CHUNK < n ? (k + 1) * BALLMAT_CHUNK : n, prec);
#ifdef _OPENMP
        /* FLINT keeps per-thread caches (integers, constants): a worker frees its own, the calling
           thread's are freed by the twin's final flint_cleanup. */
        if (omp_get_thread_num() != 0)
            flint_cleanup();
#endif
    }
}

void ballmat_linear(arb_ptr y, arb_srcptr x, const double *w, const double *b, slong rows, slong in,
                    slong out, slong prec)
{
    arb_mat_t X, WT, Y;
    ballmat_view(X, x, rows, in);
    ballmat_view(Y, y, rows, out);
    ballmat_from_d(WT, w, out, in, 1); /* [in, out] */
    ballmat_mul(Y, X, WT, prec);
    arb_mat_clear(WT);
    ballmat_view_clear(X);
    ballmat_view_clear(Y);
    if (b) {
        arb_t t;
        arb_init(t);
        for (slong r = 0; r < rows; r++)
            for (slong j = 0; j < out; j++) {
                arb_set_d(t, b[j]);
                arb_add(y + r * out + j, y + r * out + j, t, prec);
            }
        arb_clear(t);
    }
}

void ballmat_mul_d(arb_ptr c, arb_srcptr a, const double *w, slong rows, slong k, slong n,
                   slong prec)
{
    arb_mat_t A, W, C;
    ballmat_view(A, a, rows, k);
    ballmat_view(C, c, rows, n);
    ballmat_from_d(W, w, k, n, 0);
    ballmat_mul(C, A, W, prec);
    arb_mat_clear(W);
    ballmat_view_clear(A);
    ballmat_view_clear(C);
}

void ballmat_tmul(arb_ptr c, arb_srcptr a, arb_srcptr b, slong rows, slong m, slong n, slong prec)
{
    arb_mat_t AT, B, C;
    ballmat_transpose_of(AT, a, rows, m);
    ballmat_view(B, b, rows, n);
    ballmat_view(C, c, m, n);
    ballmat_mul(C, AT, B, prec);
    arb_mat_clear(AT);
    ballmat_view_clear(B);
    ballmat_view_clear(C);
}
