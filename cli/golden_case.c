/* gc_case_write (cli/golden_case.h): a sublayer family's case, described as data, written by the
 * one case writer of the project, golden_case_write (cli/golden.c), which the norm families call
 * directly.  This file only translates: the case's arrays are golden_case_write's inputs (written in
 * this order), each op is one manifest entry, and the per-dtype twin asks each op's twin in turn. */
#include "golden_case.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layernorm_mpfr.h" /* RN_TWIN_* */

static size_t count_of(const gc_array *a)
{
    size_t n = 1;
    for (int i = 0; i < a->ndim; i++)
        n *= a->shape[i];
    return n;
}

static int has_array(const gc_case *c, const char *name)
{
    for (int i = 0; i < c->narrays; i++)
        if (!strcmp(c->arrays[i].name, name))
            return 1;
    return 0;
}

/* What golden_case_write's twin needs: the family's twins and context, and where op k's outputs
   start among the case's output buffers (outputs are laid out op after op). */
typedef struct {
    const gc_case *c;
    void *ctx;
    double *bufs[GOLDEN_MAX_ARRAYS];
    int first[3];
} gc_adapter;

static int gc_twin(const golden_case *g, rn_dtype dt)
{
    const gc_adapter *A = g->arg;
    for (int k = 0; k < A->c->nops; k++) {
        int t = A->c->ops[k].twin(A->ctx, dt, A->bufs + A->first[k]);
        if (t != RN_TWIN_OK)
            return t;
    }
    return RN_TWIN_OK;
}

/* The golden_case of c: inputs, outputs (buffers allocated here, NULL-checked by the caller) and
   entries.  0, or -1 after a message (an op names an array the case does not have, too many). */
static int translate(const gc_case *c, gc_adapter *A, golden_case *g, json_t *attrs)
{
    *g = (golden_case){.family = c->family, .name = c->name, .comment = c->comment,
                       .flags = c->flags, .in = c->in, .ndim = c->ndim, .shape = c->shape,
                       .attrs = attrs, .ninputs = c->narrays, .nentries = c->nops,
                       .twin = gc_twin, .arg = A};
    for (int i = 0; i < c->narrays; i++) {
        const gc_array *a = &c->arrays[i];
        g->inputs[i] = golden_arr(a->name, a->ndim, a->shape, (double *)a->v);
    }
    for (int k = 0; k < c->nops; k++) {
        const gc_op *op = &c->ops[k];
        golden_entry *e = &g->entries[k];
        e->op = op->op;
        A->first[k] = g->noutputs;
        if (op->ninputs >= GOLDEN_MAX_ARRAYS || g->noutputs + op->noutputs > GOLDEN_MAX_ARRAYS) {
            fprintf(stderr, "resnorm golden: %s/%s: too many arrays\n", c->family, c->name);
            return -1;
        }
        for (int j = 0; j < op->ninputs; j++) {
            if (!has_array(c, op->inputs[j])) {
                fprintf(stderr, "resnorm golden: %s/%s: no input %s\n", c->family, c->name,
                        op->inputs[j]);
                return -1;
            }
            e->inputs[j] = op->inputs[j];
        }
        e->inputs[op->ninputs] = NULL;
        for (int j = 0; j < op->noutputs; j++) {
            const gc_array *o = &op->outputs[j];
            size_t n = count_of(o);
            A->bufs[g->noutputs] = malloc((n ? n : 1) * sizeof(double));
            g->outputs[g->noutputs] = golden_arr(o->name, o->ndim, o->shape, A->bufs[g->noutputs]);
            g->noutputs++;
            e->outputs[j] = o->name;
            if (!A->bufs[g->noutputs - 1]) {
                fprintf(stderr, "resnorm golden: out of memory\n");
                return -1;
            }
        }
        e->outputs[op->noutputs] = NULL;
    }
    return 0;
}

int gc_case_write(golden_ctx *G, const gc_case *c, void *ctx)
{
    gc_adapter A = {.c = c, .ctx = ctx};
    golden_case *g = malloc(sizeof *g); /* ~20 kB: keep it off the stack */
    json_t *attrs = c->attrs ? c->attrs : json_object();
    int rc = -1;
    if (!g)
        fprintf(stderr, "resnorm golden: out of memory\n");
    else if (translate(c, &A, g, attrs) == 0 && golden_case_write(G, g) == 0) {
        fprintf(stderr, "golden: %s/%s  input %s: ok\n", c->family, c->name, rn_dtype_name(c->in));
        rc = 0;
    }
    for (int k = 0; g && k < g->noutputs; k++)
        free(A.bufs[k]);
    free(g);
    json_decref(attrs); /* c->attrs is stolen */
    return rc;
}
