/* The sizes n of the EVA row harnesses (proofs/eva_layernorm.c, proofs/eva_rmsnorm.c), included
 * after the harness's own bucket(lo, hi), which analyses every n in [lo, hi] at once.
 *
 * EVA is non-relational: with one interval n in [1, 4096] it would bound a mean sum/n by
 * 4096 * max|x| instead of max|x|; within a bucket hi/lo <= 2, so by at most 2 * max|x|.  Each
 * bucket costs an analysis with the loops unrolled to hi, so the buckets end at powers of two and
 * n = 4096 is analysed once.  Their union is every n in [1, 4096]; bucket() caps hi at EVA_NMAX. */
static void eva_every_bucket(void)
{
    bucket(1, 1);
    bucket(2, 2);
    bucket(3, 4);
    bucket(5, 8);
    bucket(9, 16);
    bucket(17, 32);
    bucket(33, 64);
    bucket(65, 128);
    bucket(129, 256);
    bucket(257, 512);
    bucket(513, 1024);
    bucket(1025, 2048);
    bucket(2049, 4096);
}
