/* gc_case_write (cli/golden_case.h): one case of a sublayer family, files and manifest entries. */
#include "golden_case.h"

#include <errno.h>
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

static const gc_array *find_array(const gc_case *c, const char *name)
{
    for (int i = 0; i < c->narrays; i++)
        if (!strcmp(c->arrays[i].name, name))
            return &c->arrays[i];
    return NULL;
}

/* The outputs of op k at every dtype: files under <dir>/<dtype>/, paths into `expected`. */
static int write_outputs(golden_ctx *G, const char *dir, const gc_op *op, void *ctx,
                         json_t *expected, json_t *res, json_t *sha)
{
    double *outs[GC_MAX_ARR] = {0};
    int rc = -1;
    for (int k = 0; k < op->noutputs; k++) {
        size_t n = count_of(&op->outputs[k]);
        if (!(outs[k] = malloc((n ? n : 1) * sizeof(double)))) {
            fprintf(stderr, "resnorm golden: out of memory\n");
            goto out;
        }
    }
    for (int d = 0; d < RN_NDTYPES; d++) {
        rn_dtype dt = (rn_dtype)d;
        char sub[16], path[4096];
        snprintf(sub, sizeof sub, "%s/", rn_dtype_name(dt));
        snprintf(path, sizeof path, "%s/%s/%s", G->out, dir, rn_dtype_name(dt));
        if (golden_mkdirs(path) != 0) {
            fprintf(stderr, "resnorm golden: cannot create %s\n", path);
            goto out;
        }
        int t = op->twin(ctx, dt, outs);
        if (t != RN_TWIN_OK) {
            fprintf(stderr, "resnorm golden: %s %s/%s: the twin could not certify an output\n",
                    op->op, dir, rn_dtype_name(dt));
            goto out;
        }
        json_t *p = json_object();
        json_object_set_new(expected, rn_dtype_name(dt), p);
        json_object_set_new(res, rn_dtype_name(dt), json_string("valid"));
        for (int k = 0; k < op->noutputs; k++) {
            const gc_array *o = &op->outputs[k];
            if (golden_put(G->out, dir, sub, o->name, dt, o->ndim, o->shape, outs[k], p, sha, NULL))
                goto out;
        }
    }
    rc = 0;
out:
    for (int k = 0; k < op->noutputs; k++)
        free(outs[k]);
    return rc;
}

int gc_case_write(golden_ctx *G, const gc_case *c, void *ctx)
{
    char dir[512], path[4096];
    int rc = -1;
    json_t *files = json_object(), *hashes = json_object(); /* every input: name -> path, path -> sha */
    json_t *entries[3] = {0};
    snprintf(dir, sizeof dir, "%s/%s", c->family, c->name);
    snprintf(path, sizeof path, "%s/%s", G->out, dir);
    if (golden_mkdirs(path) != 0) {
        fprintf(stderr, "resnorm golden: cannot create %s: %s\n", path, strerror(errno));
        goto out;
    }
    for (int i = 0; i < c->narrays; i++) {
        const gc_array *a = &c->arrays[i];
        if (golden_put(G->out, dir, "", a->name, c->in, a->ndim, a->shape, a->v, files, hashes, NULL))
            goto out;
    }
    for (int k = 0; k < c->nops; k++) {
        const gc_op *op = &c->ops[k];
        json_t *e = entries[k] = json_object();
        json_t *in = json_object(), *ex = json_object(), *res = json_object(), *sha = json_object();
        char id[512];
        for (int j = 0; j < op->ninputs; j++) {
            json_t *p = json_object_get(files, op->inputs[j]);
            if (!p || !find_array(c, op->inputs[j])) {
                fprintf(stderr, "resnorm golden: %s: no input %s\n", dir, op->inputs[j]);
                json_decref(in), json_decref(ex), json_decref(res), json_decref(sha);
                goto out;
            }
            json_object_set(in, op->inputs[j], p);
            json_object_set(sha, json_string_value(p),
                            json_object_get(hashes, json_string_value(p)));
        }
        snprintf(id, sizeof id, "%s/%s", op->op, c->name);
        json_object_set_new(e, "id", json_string(id));
        json_object_set_new(e, "op", json_string(op->op));
        json_object_set_new(e, "comment", json_string(c->comment));
        json_object_set_new(e, "flags", golden_flags_json(c->flags));
        if (c->attrs)
            json_object_set(e, "attrs", c->attrs); /* c->attrs is released below */
        else
            json_object_set_new(e, "attrs", json_object());
        json_object_set_new(e, "shape", golden_shape_json(c->ndim, c->shape));
        json_object_set_new(e, "input_dtype", json_string(rn_dtype_name(c->in)));
        json_object_set_new(e, "inputs", in);
        json_object_set_new(e, "expected", ex);
        json_object_set_new(e, "result", res);
        json_object_set_new(e, "sha256", sha);
        if (write_outputs(G, dir, op, ctx, ex, res, sha) != 0)
            goto out;
    }
    for (int k = 0; k < c->nops; k++)
        json_array_append(G->cases, entries[k]);
    G->ncases++;
    fprintf(stderr, "golden: %s/%s  input %s: ok\n", c->family, c->name, rn_dtype_name(c->in));
    rc = 0;
out:
    for (int k = 0; k < c->nops; k++)
        json_decref(entries[k]);
    json_decref(files), json_decref(hashes);
    if (c->attrs)
        json_decref(c->attrs);
    return rc;
}
