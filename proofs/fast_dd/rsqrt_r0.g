# specs/fast-path.md §3.3, step 1: r0 = RN(1 / RN(sqrt(yh))) is within 2.01u of yh^(-1/2), for yh
# in [1, 4] (every yh in [2^-900, 2^900] is 4^k times such a value, and all the operations of
# fd_rsqrt scale exactly by powers of two there: no underflow, no overflow).
@rnd = float<ieee_64, ne>;
yh = rnd(y);
r0 = rnd(1 / rnd(sqrt(yh)));
R = 1 / sqrt(yh);
{ yh in [1, 4] -> (r0 - R) / R in [-0x1.02p-52, 0x1.02p-52] }
