/* `resnorm eval` streaming (issue 12: memory proportional to one block of rows, not to the tensor)
 * for the ops whose twin computes each row from that row alone (cli.h: cli_op.rowwise).
 *
 *   headers    cli_load_headers: every input's header, the op's prepare (shapes, attributes), as
 *              cli_load does, with the same messages; the files stay open (npy_open);
 *   begin      cli_pub_begin: --out created, no output path other than a regular file;
 *   shared     the inputs not shaped like x (gamma, beta, bias: [n]) read whole, once;
 *   blocks     for rows [r0, r0 + R): the rows of x (and skip, f) read from their files
 *              (npy_read_range), a sub-job of R rows whose per-row inputs point at them, the op's
 *              twin on it, its outputs appended to one temporary file per output (the header with
 *              the full shape written first: npy_writer).  The threads take blocks in turn in one
 *              parallel region and append them in block order (run_blocks);
 *   commit     cli_pub_commit: every temporary renamed into place together, as cli_publish does.
 *
 * Memory: per thread, R rows of each per-row input and output as doubles; the shared inputs; and
 * the twin's own per-row state.  R is chosen so that a block of x is about 2 MiB of doubles (at
 * least one row, and at least one block per thread).  The output is the whole tensor path's byte
 * for byte: each row's values are the correctly rounded exact values of that row (cli.h: why for
 * each op), the files are written by the same encoder (cli/npy.c), in row order whatever the
 * threads.
 *
 * The norms' backward (cli_op.rowwise CLI_ROWWISE_COLUMNS, cli.h: cli_colsums): dx (and dskip)
 * are per row as above; dgamma, dbeta, dbias are sums over all rows.  Each block runs the op's
 * fast path on its rows (ref/norm_fast.h: *_backward_rows_fast), which writes dx and adds the
 * rows' terms to the thread's column accumulators (a norm_cols); after the last block the columns
 * are merged and certified, and written.  A block where some row's dx alone is not certified
 * gets its dx from the op's twin on the block, and the sums are kept (every row's terms are in
 * them).  dbeta's elements left undecided (a sum of dy exactly a midpoint) are summed exactly in
 * one more pass over dy's file.  A block the fast path does not take at all (NaN/Inf, any skip-op
 * failure) gets its dx from the op's twin on the block, and then -- as when another column is not
 * certified (an exact zero) -- the sums come from the op's twin on the whole tensor, read again
 * from the files (memory then the whole tensor's, as RESNORM_STREAM=0; rare on real data).  Every
 * value is the correctly rounded exact one either way, so the files are the whole path's byte
 * for byte.
 *
 * Any error -- a read error (a file truncated while it is read), a twin failure, a value the
 * encoder refuses, a failed write, the memory limit, SIGINT/SIGTERM/SIGHUP -- removes every
 * temporary (and, but for a signal, every directory this run created): no output is left, and the
 * previous outputs are untouched.  RESNORM_STREAM=0 takes the whole-tensor path instead;
 * RESNORM_STREAM_ROWS=R (a testing knob) sets the rows (elements, for the residual add) per block.
 * Reference: specs/cli.md, "Streaming". */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "cli.h"
#include "memlimit.h"
#include "norm_fast.h" /* rn_threads_for */

/* A block holds about this many elements of x (2 MiB of doubles): large enough that the reads,
   the twin and the writes of a block are long against their fixed costs, small enough to sit in a
   cache level or two.  Each thread has one block in flight. */
enum { STREAM_BLOCK_ELEMS = (2 << 20) / sizeof(double) };

typedef struct {
    cli_job *job;
    rn_dtype out;
    npy_reader rd[CLI_MAX_IO];
    int per_row[CLI_MAX_IO];       /* input k is shaped like x: read a block at a time */
    rn_array shared[CLI_MAX_IO];   /* the other inputs, whole */
    size_t units, unit_elems, R;   /* stream rows (elements for the residual add), the elements
                                      of x in one, and rows per block */
    long nblocks;
    int threads;
    int nout;                      /* the outputs present, in the op's order */
    int kout[CLI_MAX_IO];          /* their index among the op's outputs */
    const char *names[CLI_MAX_IO];
    size_t per_unit[CLI_MAX_IO];   /* values of each output per stream row */
    npy_writer w[CLI_MAX_IO];
    cli_pub *pub;
    int rc;                        /* the first error, in block order (atomic) */
    /* CLI_ROWWISE_COLUMNS: is_col[j], output j is a sum over rows (n values, written last); the
       column accumulators (NULL: none, every sum from the whole twin); whole_sums: set by a
       block the fast path did not certify (atomic) */
    int is_col[CLI_MAX_IO];
    struct norm_cols *cols;
    int whole_sums;
    size_t exact_sums;             /* the exact column's elements summed again exactly */
} stream;

/* The run in progress, for the memory limit's exit and the signal handler. */
static stream *live;

/* The memory limit's exit (maybe from a worker thread, with the others still running): unlink the
   temporaries and remove the directories this run created; nothing else is touched. */
static void remove_temporaries(void)
{
    stream *s = live;
    if (!s)
        return;
    for (int j = 0; j < s->nout; j++)
        if (s->w[j].have_tmp)
            unlink(s->w[j].tmp);
    if (s->pub)
        cli_pub_rollback(s->pub);
}

/* SIGINT, SIGTERM, SIGHUP while the temporaries are written: unlink them (async-signal-safe), then
   die of the signal as before.  A signal the process ignores (a background job's SIGINT) stays
   ignored. */
static const int caught[] = {SIGINT, SIGTERM, SIGHUP};
static struct sigaction saved[sizeof caught / sizeof caught[0]];

static void on_signal(int sig)
{
    stream *s = live;
    for (int j = 0; s && j < s->nout; j++)
        if (s->w[j].have_tmp)
            unlink(s->w[j].tmp);
    signal(sig, SIG_DFL);
    raise(sig); /* delivered when the handler returns */
}

static void catch_signals(int on)
{
    for (size_t i = 0; i < sizeof caught / sizeof caught[0]; i++) {
        if (!on) {
            sigaction(caught[i], &saved[i], NULL);
            continue;
        }
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(caught[i], NULL, &saved[i]);
        if (saved[i].sa_handler != SIG_IGN)
            sigaction(caught[i], &sa, NULL);
    }
}

int cli_stream_applies(const cli_job *job)
{
    const char *e = getenv("RESNORM_STREAM");
    if (job->op->rowwise == CLI_ROWWISE_COLUMNS && !rn_fast_enabled())
        return 0; /* every block and the sums would go to the twins: the whole path at twice its
                     cost */
    return job->op->rowwise != CLI_WHOLE && !(e && !strcmp(e, "0"));
}

/* Rows per block and threads.  RESNORM_STREAM_ROWS if set (a positive integer), else about
   STREAM_BLOCK_ELEMS elements of x, and at least one block per thread when the tensor is worth
   the threads (rn_threads_for).  0 after a message. */
static int block_plan(stream *s, const char *verb)
{
    size_t total = s->units * s->unit_elems;
    s->threads = rn_threads_for(total);
    const char *e = getenv("RESNORM_STREAM_ROWS");
    if (e) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(e, &end, 10);
        if (!*e || *end || errno || v == 0 || *e == '-') {
            cli_error(verb, "RESNORM_STREAM_ROWS='%s': expected a positive number of rows", e);
            return RN_EXIT_USAGE;
        }
        s->R = (size_t)v;
    } else {
        s->R = STREAM_BLOCK_ELEMS / s->unit_elems;
        size_t per_thread = (s->units + (size_t)s->threads - 1) / (size_t)s->threads;
        if (s->R > per_thread)
            s->R = per_thread;
    }
    if (s->R == 0)
        s->R = 1;
    if (s->R > s->units)
        s->R = s->units ? s->units : 1;
    s->nblocks = (long)((s->units + s->R - 1) / s->R);
    if (s->nblocks < s->threads)
        s->threads = s->nblocks > 0 ? (int)s->nblocks : 1;
    return 0;
}

/* The stream's geometry, its outputs, and the shared inputs.  0 or an exit code after a message. */
static int plan(stream *s)
{
    cli_job *job = s->job;
    const cli_op *op = job->op;
    const rn_array *x = &job->in[0];
    if (op->rowwise == CLI_ROWWISE_ELEMENTS)
        s->units = x->count, s->unit_elems = 1;
    else
        s->units = job->rows, s->unit_elems = job->n;
    int rc = block_plan(s, job->verb);
    if (rc)
        return rc;
    for (int k = 0; k < op->noutputs; k++) {
        int nd;
        size_t sh[RN_MAX_DIMS], count = 1;
        cli_output_shape(job, k, &nd, sh);
        if (nd < 0)
            continue; /* absent for these inputs (cli.h: output_shape) */
        for (int i = 0; i < nd; i++)
            count *= sh[i];
        int j = s->nout++;
        s->kout[j] = k;
        s->names[j] = op->outputs[k];
        s->is_col[j] = op->colsums && op->colsums->col[k] >= 0;
        s->per_unit[j] = s->units && !s->is_col[j] ? count / s->units : 0;
        if (!s->is_col[j] && s->per_unit[j] * s->units != count) { /* an op flagged rowwise that is not */
            cli_error(job->verb, "internal: %s's output %s (%zu values) is not per row of x "
                      "(%zu rows); set RESNORM_STREAM=0", op->name, op->outputs[k], count,
                      s->units);
            return RN_EXIT_INTERNAL;
        }
    }
    if (op->colsums) { /* NULL (n = 0 or beyond 2^20, no memory): the sums from the whole twin */
        s->cols = norm_cols_new(op->colsums->ncols, op->colsums->skip, job->n, s->threads);
        s->whole_sums = !s->cols;
    }
    char err[512];
    for (int k = 0; k < op->ninputs; k++) {
        if (!job->in_path[k])
            continue;
        const rn_array *a = &job->in[k];
        if ((s->per_row[k] = cli_same_shape(a->ndim, a->shape, x->ndim, x->shape)))
            continue;
        if (rn_array_alloc(&s->shared[k], a->dtype, a->ndim, a->shape) != 0) {
            cli_error(job->verb, "out of memory");
            return RN_EXIT_INTERNAL;
        }
        if (npy_read_range(&s->rd[k], 0, a->count, s->shared[k].data, err, sizeof err) != 0) {
            cli_error(job->verb, "input %s: %s", op->inputs[k], err);
            return RN_EXIT_USAGE;
        }
    }
    return 0;
}

/* One temporary per output, its header written (the full shape).  0 or an exit code. */
static int open_outputs(stream *s)
{
    char err[512];
    for (int j = 0; j < s->nout; j++) {
        int nd;
        size_t sh[RN_MAX_DIMS];
        cli_output_shape(s->job, s->kout[j], &nd, sh);
        if (npy_writer_open(&s->w[j], cli_pub_dst(s->pub, j), s->out, nd, sh, err,
                            sizeof err) != 0) {
            cli_error("eval", "%s; no output written", err);
            return RN_EXIT_USAGE;
        }
    }
    return 0;
}

/* The values of output j a block of nb rows holds: nb rows of it, or n for a sum over rows (where
   the op's twin on a block puts the block's, unused). */
static size_t block_len(const stream *s, int j, size_t nb)
{
    return s->is_col[j] ? s->job->n : nb * s->per_unit[j];
}

/* A thread's block in flight: the per-row inputs' rows, the outputs' rows, and the sub-job. */
typedef struct {
    rn_array in[CLI_MAX_IO], out[CLI_MAX_IO];
    cli_job *sub;              /* a cli_job is ~100 KiB: not on the stack */
    unsigned char *row_ok;     /* CLI_ROWWISE_COLUMNS: the block's rows the fast path certified */
    int failed;                /* out of memory */
} worker;

static void worker_init(const stream *s, worker *wk)
{
    const cli_job *job = s->job;
    memset(wk, 0, sizeof *wk);
    wk->sub = malloc(sizeof *wk->sub);
    wk->row_ok = malloc(s->R ? s->R : 1);
    wk->failed = !wk->sub || !wk->row_ok;
    for (int k = 0; k < job->op->ninputs && !wk->failed; k++)
        if (job->in_path[k] && s->per_row[k]) {
            size_t n[1] = {s->R * s->unit_elems};
            wk->failed = rn_array_alloc(&wk->in[k], job->in[k].dtype, 1, n) != 0;
        }
    for (int j = 0; j < s->nout && !wk->failed; j++) {
        size_t n[1] = {block_len(s, j, s->R)};
        wk->failed = rn_array_alloc(&wk->out[j], s->out, 1, n) != 0;
    }
}

static void worker_free(worker *wk)
{
    for (int k = 0; k < CLI_MAX_IO; k++)
        rn_array_free(&wk->in[k]), rn_array_free(&wk->out[k]);
    free(wk->sub), free(wk->row_ok);
}

/* What computing a block gave: 0, or which step failed (its message is printed in block order). */
typedef struct {
    enum { B_OK, B_NOMEM, B_READ, B_TWIN } what;
    int input, code;
    char err[512];
} block_result;

/* Rows [u0, u0 + nb): the per-row inputs' rows read from their files, and the twin on a sub-job
   of those rows (the shared inputs whole), into wk->out. */
static void compute_block(stream *s, worker *wk, size_t u0, size_t nb, block_result *res)
{
    const cli_job *job = s->job;
    const cli_op *op = job->op;
    cli_job *sub = wk->sub;
    *sub = *job;
    for (int k = 0; k < op->ninputs; k++) {
        if (!job->in_path[k])
            continue;
        if (!s->per_row[k]) {
            sub->in[k].data = s->shared[k].data;
            continue;
        }
        size_t off = u0 * s->unit_elems, cnt = nb * s->unit_elems;
        if (npy_read_range(&s->rd[k], off, cnt, wk->in[k].data, res->err,
                           sizeof res->err) != 0) {
            res->what = B_READ, res->input = k;
            return;
        }
        sub->in[k].data = wk->in[k].data;
        sub->in[k].count = cnt;
    }
    if (op->rowwise == CLI_ROWWISE_ELEMENTS)
        sub->rows = 1, sub->n = nb; /* the residual add's view: one row of count elements */
    else
        sub->rows = nb;
    double *p[CLI_MAX_IO] = {0};
    for (int j = 0; j < s->nout; j++) { /* zeros, as the whole path's fresh arrays */
        memset(wk->out[j].data, 0, block_len(s, j, nb) * sizeof(double));
        p[s->kout[j]] = wk->out[j].data;
    }
    if (op->colsums) {
        int t = 0;
#ifdef _OPENMP
        t = omp_get_thread_num();
#endif
        int k = s->cols ? op->colsums->rows(sub, s->out, p, s->cols, t, wk->row_ok) : 0;
        if (k == 1)
            return; /* (after a block fell back, its dx still certified row by row here) */
        /* not certified: dx from the twin on the block; the sums kept when every row's terms
           are in (2), else from the whole twin */
        if (k != 2)
            __atomic_store_n(&s->whole_sums, 1, __ATOMIC_RELAXED);
        for (int j = 0; j < s->nout; j++)
            memset(wk->out[j].data, 0, block_len(s, j, nb) * sizeof(double));
    }
    int r = op->twin(sub, s->out, p);
    if (r != 0)
        res->what = B_TWIN, res->code = r;
}

/* In block order: the block's error, if any, is the run's (its message printed), else its outputs
   are appended to the temporaries.  0 or an exit code. */
static int finish_block(stream *s, const worker *wk, size_t nb, const block_result *res)
{
    const cli_job *job = s->job;
    char err[512];
    switch (res->what) {
    case B_NOMEM:
        cli_error(job->verb, "out of memory");
        return RN_EXIT_INTERNAL;
    case B_READ:
        cli_error(job->verb, "input %s: %s", job->op->inputs[res->input], res->err);
        return RN_EXIT_USAGE;
    case B_TWIN:
        return cli_twin_status(job, res->code, "certified twin");
    case B_OK:
        break;
    }
    for (int j = 0; j < s->nout; j++)
        if (!s->is_col[j] && npy_writer_append(&s->w[j], wk->out[j].data, nb * s->per_unit[j],
                                               err, sizeof err) != 0) {
            cli_error("eval", "%s; no output written", err);
            return RN_EXIT_USAGE;
        }
    return 0;
}

/* The sums over rows from the op's twin on the whole tensor: every input read whole from its
   file, every output computed (memory: the whole path's).  0 or an exit code. */
static int sums_from_whole_twin(stream *s, double *const *sums)
{
    cli_job *job = s->job;
    const cli_op *op = job->op;
    cli_job *whole = malloc(sizeof *whole);
    rn_array in[CLI_MAX_IO] = {0}, out[CLI_MAX_IO] = {0};
    double *p[CLI_MAX_IO] = {0};
    char err[512];
    int rc = whole ? 0 : RN_EXIT_INTERNAL;
    if (whole)
        *whole = *job;
    for (int k = 0; k < op->ninputs && !rc; k++) {
        if (!job->in_path[k])
            continue;
        if (!s->per_row[k]) {
            whole->in[k].data = s->shared[k].data;
            continue;
        }
        const rn_array *a = &job->in[k];
        if (rn_array_alloc(&in[k], a->dtype, a->ndim, a->shape) != 0) {
            rc = RN_EXIT_INTERNAL;
            break;
        }
        if (npy_read_range(&s->rd[k], 0, a->count, in[k].data, err, sizeof err) != 0) {
            cli_error(job->verb, "input %s: %s", op->inputs[k], err);
            rc = RN_EXIT_USAGE;
        }
        whole->in[k].data = in[k].data;
    }
    for (int j = 0; j < s->nout && !rc; j++) {
        size_t n[1] = {s->is_col[j] ? job->n : s->units * s->per_unit[j]};
        if (rn_array_alloc(&out[j], s->out, 1, n) != 0)
            rc = RN_EXIT_INTERNAL;
        else
            p[s->kout[j]] = out[j].data;
    }
    if (rc == RN_EXIT_INTERNAL)
        cli_error(job->verb, "out of memory");
    if (!rc) {
        int r = op->twin(whole, s->out, p);
        rc = r ? cli_twin_status(job, r, "certified twin") : 0;
    }
    for (int j = 0; j < s->nout && !rc; j++)
        if (s->is_col[j])
            memcpy(sums[j], out[j].data, job->n * sizeof *sums[j]);
    for (int k = 0; k < CLI_MAX_IO; k++)
        rn_array_free(&in[k]), rn_array_free(&out[k]);
    free(whole);
    return rc;
}

/* The elements which[0..k) of the exact column (cli_colsums.exact_col, e.g. LayerNorm's dbeta =
   sum_r dy_rj) summed exactly over the rows of its input (width job->n): from data where the
   input is in memory, else read through rd R rows at a time; each rounded once to out into dst.
   Shared by `eval`'s stream and `check` by blocks of rows.  0, -1 out of memory, or RN_EXIT_USAGE
   after a message. */
int cli_exact_column_sums(const cli_job *job, const double *data, npy_reader *rd, size_t rows,
                          size_t R, const size_t *which, size_t k, rn_dtype out, double *dst)
{
    int in = job->op->colsums->exact_input;
    size_t n = job->n;
    double *buf = data ? NULL : malloc((R * n + 1) * sizeof *buf);
    exact_cols *c = exact_cols_new(k);
    char err[512];
    int rc = c && (buf || data) ? 0 : -1;
    for (size_t r0 = 0; r0 < rows && !rc; r0 += R) {
        size_t nr = rows - r0 < R ? rows - r0 : R;
        const double *v = data ? data + r0 * n : buf;
        if (!data && npy_read_range(rd, r0 * n, nr * n, buf, err, sizeof err) != 0) {
            cli_error(job->verb, "input %s: %s", job->op->inputs[in], err);
            rc = RN_EXIT_USAGE;
            break;
        }
        for (size_t r = 0; r < nr; r++)
            for (size_t t = 0; t < k; t++)
                exact_cols_add(c, t, v[r * n + which[t]]);
    }
    for (size_t t = 0; !rc && t < k; t++)
        dst[which[t]] = exact_cols_round(c, t, out);
    exact_cols_free(c);
    free(buf);
    return rc;
}

/* CLI_ROWWISE_COLUMNS, after the last block: the sums over rows certified from the columns (the
   exact column's undecided elements summed exactly; where another is not certified, every sum
   from the whole twin), appended to their temporaries.  0 or an exit code. */
static int write_sums(stream *s)
{
    const cli_job *job = s->job;
    const cli_colsums *cs = job->op->colsums;
    double *sums[CLI_MAX_IO] = {0};
    size_t *undecided = malloc((job->n ? job->n : 1) * sizeof *undecided), k = 0;
    int ex = -1; /* the output that is the exact column */
    char err[512];
    int rc = 0, whole = s->whole_sums || !s->cols || !norm_cols_merge(s->cols);
    if (!undecided) {
        cli_error(job->verb, "out of memory");
        rc = RN_EXIT_INTERNAL;
    }
    for (int j = 0; j < s->nout && !rc; j++) {
        if (!s->is_col[j])
            continue;
        if (!(sums[j] = malloc((job->n ? job->n : 1) * sizeof *sums[j]))) {
            cli_error(job->verb, "out of memory");
            rc = RN_EXIT_INTERNAL;
        }
        int col = cs->col[s->kout[j]];
        for (size_t i = 0; !rc && !whole && i < job->n; i++) {
            if (norm_cols_value(s->cols, col, i, s->out, &sums[j][i]))
                continue;
            if (col == cs->exact_col)
                ex = j, undecided[k++] = i;
            else
                whole = 1;
        }
    }
    s->whole_sums = whole, s->exact_sums = whole ? 0 : k; /* for the timing line */
    if (!rc && !whole && k) {
        size_t R = STREAM_BLOCK_ELEMS / job->n ? STREAM_BLOCK_ELEMS / job->n : 1;
        int in = job->op->colsums->exact_input;
        rc = cli_exact_column_sums(job, NULL, &s->rd[in], s->units, R, undecided, k, s->out,
                                   sums[ex]);
        if (rc == -1) {
            cli_error(job->verb, "out of memory");
            rc = RN_EXIT_INTERNAL;
        }
    }
    free(undecided);
    if (!rc && whole)
        rc = sums_from_whole_twin(s, sums);
    for (int j = 0; j < s->nout && !rc; j++)
        if (s->is_col[j] && npy_writer_append(&s->w[j], sums[j], job->n, err, sizeof err) != 0) {
            cli_error("eval", "%s; no output written", err);
            rc = RN_EXIT_USAGE;
        }
    for (int j = 0; j < s->nout; j++)
        free(sums[j]);
    return rc;
}

/* Every block: one parallel region for the whole stream, each thread computing its blocks (the
   twin's own loops then run on that thread alone: nested regions are inactive) while the writes
   go in block order (`ordered`), so the files are the same whatever the threads.  One region, not
   one per block: on a loaded machine a region per block cost a scheduler time slice each (the
   4096 x 4096 LayerNorm's twin phase took 0.47 s in 64 regions, 0.19 s in one).  Then every
   temporary is closed and handed to the publisher.  0 or an exit code. */
static int run_blocks(stream *s)
{
    char err[512];
#pragma omp parallel num_threads(s->threads)
    {
        worker wk;
        worker_init(s, &wk);
#pragma omp for ordered schedule(static, 1)
        for (long b = 0; b < s->nblocks; b++) {
            size_t u0 = (size_t)b * s->R, nb = s->units - u0 < s->R ? s->units - u0 : s->R;
            block_result res;
            res.what = wk.failed ? B_NOMEM : B_OK;
            if (!wk.failed && !__atomic_load_n(&s->rc, __ATOMIC_ACQUIRE))
                compute_block(s, &wk, u0, nb, &res);
#pragma omp ordered
            if (!__atomic_load_n(&s->rc, __ATOMIC_ACQUIRE))
                __atomic_store_n(&s->rc, finish_block(s, &wk, nb, &res), __ATOMIC_RELEASE);
        }
        worker_free(&wk);
    }
    int rc = s->rc;
    if (!rc && s->job->op->colsums)
        rc = write_sums(s);
    for (int j = 0; j < s->nout && !rc; j++) {
        if (npy_writer_close(&s->w[j], err, sizeof err) != 0) {
            cli_error("eval", "%s; no output written", err);
            rc = RN_EXIT_USAGE;
        }
    }
    /* the publisher owns the temporaries from here (cli_pub_end removes them on failure) */
    for (int j = 0; j < s->nout && !rc; j++) {
        rc = cli_pub_set_tmp(s->pub, j, s->w[j].tmp);
        s->w[j].have_tmp = 0;
    }
    return rc;
}

static void stream_free(stream *s)
{
    for (int j = 0; j < s->nout; j++)
        npy_writer_abort(&s->w[j]);
    for (int k = 0; k < CLI_MAX_IO; k++) {
        if (s->rd[k].fd >= 0)
            npy_close(&s->rd[k]);
        rn_array_free(&s->shared[k]);
    }
    norm_cols_free(s->cols);
    free(s);
}

int cli_eval_stream(cli_job *job)
{
    stream *s = calloc(1, sizeof *s);
    if (!s) {
        cli_error(job->verb, "out of memory");
        return RN_EXIT_INTERNAL;
    }
    for (int k = 0; k < CLI_MAX_IO; k++)
        s->rd[k].fd = -1;
    s->job = job;
    cli_phase(NULL);
    int rc = cli_load_headers(job, s->rd);
    if (!rc) {
        s->out = job->have_dtype ? job->dtype : job->in[0].dtype;
        rc = plan(s);
    }
    if (!rc)
        s->pub = cli_pub_begin(job->out_dir, s->names, s->nout, &rc); /* NULL: rc set */
    cli_phase("load");
    if (!rc) {
        live = s;
        rn_memlimit_on_exit(remove_temporaries);
        catch_signals(1);
        rc = open_outputs(s);
        cli_phase_lap(NULL);
        if (!rc)
            rc = run_blocks(s);
        cli_lap lap = {0, 0};
        char note[200], sums[120] = "";
        cli_phase_lap(&lap);
        if (job->op->colsums && s->whole_sums)
            snprintf(sums, sizeof sums, "; the sums over rows from the whole tensor's twin");
        else if (job->op->colsums)
            snprintf(sums, sizeof sums, "; the sums over rows certified from the blocks, %zu "
                     "summed again exactly", s->exact_sums);
        snprintf(note, sizeof note, " (%ld blocks of %zu %s on %d thread%s%s)", s->nblocks, s->R,
                 job->op->rowwise == CLI_ROWWISE_ELEMENTS ? "elements" : "rows", s->threads,
                 s->threads == 1 ? "" : "s", sums);
        cli_phase_print("blocks", &lap, note);
        catch_signals(0);
        rn_memlimit_on_exit(NULL);
        live = NULL;
    }
    cli_phase_lap(NULL);
    if (!rc)
        rc = cli_pub_commit(s->pub);
    for (int j = 0; rc && j < s->nout; j++) /* the temporaries not yet handed over */
        npy_writer_abort(&s->w[j]);
    cli_pub_end(s->pub, rc); /* on failure: the others, and every directory this run created */
    cli_phase("publish");
    stream_free(s); /* closes and removes what no one took over */
    cli_phase("free");
    return rc;
}
