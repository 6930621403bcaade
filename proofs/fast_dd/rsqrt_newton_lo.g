# specs/fast-path.md §3.3, step 2 (r0 in [1/2, 3/4]; rsqrt_newton_hi.g: [3/4, 1]): the rounding error of fd_rsqrt's Newton correction.
# yh in [1, 4], yl = the low part (|yl| <= u yh <= 2^-51), r0 a double with
# yh r0^2 within 5u of 1 (from rsqrt_r0.g: (1 + 2.01u)^2 - 1 < 4.1u); the code computes
#   s1 + s2 = r0^2, m1 + m2 = yh s1 (TwoProd: exact), t1 = RN(RN(1 - m1) - m2),
#   t3 = RN(yh s2 + RN(yl s1)) (fma), h = RN(t1 - t3), c = RN(r0 h) / 2,
# and the exact correction is cex = r0 (1 - (yh + yl) r0^2) / 2.  Goal: |c - cex| <= 20 u^2 r0,
# as absolute bounds on two ranges of r0: 10 u^2 for r0 in [1/2, 3/4], 15 u^2 for r0 in [3/4, 1]
# (u^2 = 2^-106).  With the exact Newton step's 10.2 u^2 (specs/fast-path.md §3.3) the total
# stays below the 32 u^2 the code charges.
@rnd = float<ieee_64, ne>;
yhr = rnd(yh);
ylr = rnd(yl);
r0r = rnd(r0);
s1 = rnd(r0r * r0r);
s2 = r0r * r0r - s1;
m1 = rnd(yhr * s1);
m2 = yhr * s1 - m1;
t1 = rnd(rnd(1 - m1) - m2);
t3 = rnd(yhr * s2 + rnd(ylr * s1));
h = rnd(t1 - t3);
c = rnd(r0r * h) * 0.5;
cex = r0r * (1 - (yhr + ylr) * r0r * r0r) * 0.5;
t1ex = (1 - m1) - m2;
t3ex = yhr * s2 + ylr * s1;
hex = 1 - (yhr + ylr) * r0r * r0r;
{ yhr in [1, 4] /\ ylr in [-0x1p-51, 0x1p-51] /\ r0r in [0.5, 0.75]
  /\ yhr * r0r * r0r - 1 in [-0x1.4p-51, 0x1.4p-51]
  -> c - cex in [-0x1.4p-103, 0x1.4p-103] }

# hints: the error splits into the roundings of r0 h, of h, t1 and t3, and the dropped yl s2
c - cex -> (rnd(r0r * h) - r0r * h) * 0.5 + r0r * (h - hex) * 0.5;
h - hex -> (h - (t1 - t3)) + (t1 - t1ex) - (t3 - t3ex) + ylr * s2;
t1ex -> (1 - yhr * r0r * r0r) + yhr * s2;
h -> (h - (t1 - t3)) + (t1 - t1ex) - (t3 - t3ex) + ylr * s2 + hex;
hex -> (1 - yhr * r0r * r0r) - ylr * r0r * r0r;
