/* Arb twin of ref/tanh_stack.c: the exact input gradient of the float network, enclosed in balls.
 *
 * Every operation of the forward and backward pass (ref/tanh_stack.h) is done in Arb ball
 * arithmetic at working precision prec: the parameters are exact (float values), arb_dot sums each
 * row with one rigorous rounding, arb_tanh is rigorous.  The final ball encloses the exact real
 * mean_j |g_0[j]|.  Without the residual the gradient is a product of L Jacobians each shrinking
 * it by ~1/2, and the balls' radii grow at every layer: the precision needed grows with depth, so
 * it is raised (Ziv) until the result is known to 2^-53 relative. */
#include "tanh_stack.h"

#include <arb.h>
#include <stdlib.h>

/* One pass at precision prec: *out gets the ball of mean_j |g_0[j]|.  Returns -1 on no memory. */
static int grad_ball(arb_t out, const tanh_stack *s, slong prec)
{
    int L = s->depth, d = s->d;
    arb_ptr a = _arb_vec_init((slong)L * d), h = _arb_vec_init(d), g = _arb_vec_init(d);
    arb_ptr gz = _arb_vec_init(d), wrow = _arb_vec_init(d), wcol = _arb_vec_init(d);
    arb_t t;
    arb_init(t);
    for (int j = 0; j < d; j++)
        arb_set_d(h + j, s->x[j]);
    for (int l = 0; l < L; l++) { /* z_i = b_i + sum_j W_ij h_j;  a = tanh(z) */
        const float *w = s->w + (size_t)l * d * d, *b = s->b + (size_t)l * d;
        arb_ptr al = a + (size_t)l * d;
        for (int i = 0; i < d; i++) {
            for (int j = 0; j < d; j++)
                arb_set_d(wrow + j, w[i * d + j]);
            arb_set_d(t, b[i]);
            arb_dot(t, t, 0, wrow, 1, h, 1, d, prec);
            arb_tanh(al + i, t, prec);
        }
        for (int i = 0; i < d; i++) {
            if (s->residual)
                arb_add(h + i, h + i, al + i, prec);
            else
                arb_set(h + i, al + i);
        }
    }
    for (int j = 0; j < d; j++)
        arb_one(g + j);
    for (int l = L - 1; l >= 0; l--) { /* gz = g (1 - a^2);  g = W^T gz (+ g) */
        const float *w = s->w + (size_t)l * d * d;
        arb_srcptr al = a + (size_t)l * d;
        for (int i = 0; i < d; i++) {
            arb_sqr(t, al + i, prec);
            arb_sub_si(t, t, 1, prec);
            arb_neg(t, t);
            arb_mul(gz + i, g + i, t, prec);
        }
        for (int j = 0; j < d; j++) {
            for (int i = 0; i < d; i++)
                arb_set_d(wcol + i, w[i * d + j]);
            if (s->residual)
                arb_set(t, g + j);
            else
                arb_zero(t);
            arb_dot(h + j, t, 0, wcol, 1, gz, 1, d, prec); /* h: the new g */
        }
        _arb_vec_set(g, h, d);
    }
    arb_zero(out);
    for (int j = 0; j < d; j++) {
        arb_abs(t, g + j);
        arb_add(out, out, t, prec);
    }
    arb_div_ui(out, out, (ulong)d, prec);
    arb_clear(t);
    _arb_vec_clear(a, (slong)L * d), _arb_vec_clear(h, d), _arb_vec_clear(g, d);
    _arb_vec_clear(gz, d), _arb_vec_clear(wrow, d), _arb_vec_clear(wcol, d);
    return 0;
}

/* mid and rad as doubles that still enclose the ball: rad rounded up, plus mid's rounding. */
static void ball_to_doubles(const arb_t x, double *mid, double *rad)
{
    arf_t m, r;
    arf_init(m), arf_init(r);
    arf_set(m, arb_midref(x));
    *mid = arf_get_d(m, ARF_RND_NEAR);
    arf_set_d(r, *mid);
    arf_sub(r, m, r, 64, ARF_RND_UP);
    arf_abs(r, r);
    arf_t rr;
    arf_init(rr);
    arf_set_mag(rr, arb_radref(x));
    arf_add(r, r, rr, 64, ARF_RND_UP);
    *rad = arf_get_d(r, ARF_RND_UP);
    arf_clear(m), arf_clear(r), arf_clear(rr);
}

int tanh_stack_grad_arb(const tanh_stack *s, double *mid, double *rad, long *prec_used)
{
    arb_t out;
    arb_init(out);
    int rc = 1;
    slong prec;
    for (prec = 128; prec <= 8192; prec *= 2) {
        if (grad_ball(out, s, prec) < 0) {
            rc = -1;
            break;
        }
        if (arb_rel_accuracy_bits(out) >= 53) {
            rc = 0;
            break;
        }
    }
    if (prec > 8192)
        prec = 8192;
    *prec_used = (long)prec;
    ball_to_doubles(out, mid, rad);
    arb_clear(out);
    return rc;
}
