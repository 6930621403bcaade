/* One golden case of a sublayer family (linear, dropout, softmax, ...): its input files, written
 * once and shared by the case's ops (forward and backward), and for each op its outputs at every
 * output dtype from the family's twin, with the manifest entries (specs/golden-format.md).
 * The families of cli/op_<family>.c describe a case as data and call gc_case_write, which hands it
 * to golden_case_write (cli/golden.h), the one writer the norm and residual families call directly
 * (their twins compute every output of a dtype at once; a sublayer's twin is one per op). */
#ifndef RESNORM_GOLDEN_CASE_H
#define RESNORM_GOLDEN_CASE_H

#include <stddef.h>

#include <jansson.h>

#include "dtype.h"
#include "golden.h"

#define GC_MAX_ARR 72 /* a stack of 4 blocks: x, dy, 4 × 12 parameters, the final norm; < GOLDEN_MAX_ARRAYS */

_Static_assert(GC_MAX_ARR < GOLDEN_MAX_ARRAYS, "an op's list of names must fit golden_entry's");

typedef struct {
    const char *name;     /* file name (without .npy) and manifest key: "x", "d.weight" */
    int ndim;
    size_t shape[4];
    const double *v;      /* values of the input dtype (inputs) or rounded outputs */
} gc_array;

/* The twin of one op: outputs rounded once to d into outs[k] (sized from gc_op.outputs' shapes);
   returns RN_TWIN_*. */
typedef int (*gc_twin_fn)(void *ctx, rn_dtype d, double *const *outs);

typedef struct {
    const char *op;                   /* "linear", "linear_backward" */
    int ninputs;
    const char *inputs[GC_MAX_ARR];   /* names among the case's arrays */
    int noutputs;
    gc_array outputs[GC_MAX_ARR];     /* name and shape (v unused) */
    gc_twin_fn twin;
} gc_op;

typedef struct {
    const char *family;   /* golden/<family>/<name>/ */
    const char *name;
    const char *comment;
    const char *flags;    /* space-separated */
    rn_dtype in;          /* input dtype */
    int ndim;             /* the case's "shape": that of its first input */
    size_t shape[4];
    json_t *attrs;        /* stolen (may be NULL: {}) */
    int narrays;
    gc_array arrays[GC_MAX_ARR]; /* every input of every op */
    int nops;
    gc_op ops[3];
} gc_case;

/* Write the case's files and append one manifest entry per op to G->cases.  0, or -1 after a
   message.  ctx is passed to each twin. */
int gc_case_write(golden_ctx *G, const gc_case *c, void *ctx);

#endif
