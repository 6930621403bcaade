# specs/fast-path.md §5.2 (Lanes): the four-lane Sum2 of the LayerNorm moments stays within the
# charges written for one chain.  tc is an RN sum of 2n + 3 leaves (the chain errors e_i, the b_i,
# three merge errors), within gamma_{2n+2} * sum|leaves| (Higham, any order and tree), and
# sum|leaves| <= (1 + gamma_{2n+3}) * TA, TA their RN sum; the code charges (4n + 2) u TA.  wc
# likewise within 1.0102 gamma_{2n+2} B, charged (3n + 2) u B.  With gamma_k = k u / (1 - k u),
# the ratios of bound to charge are below 1 for every row length 1 <= n <= 2^20:
#   ratio_t = (2n + 2) / (4n + 2) * (1 + gamma_{2n+3}) / (1 - (2n + 2) u)
#   ratio_w = 1.0102 (2n + 2) / (3n + 2) / (1 - (2n + 2) u)
# written with (2n + 2) / (4n + 2) = 1/2 + 1 / (4n + 2) and (2n + 2) / (3n + 2) = 2/3 + 2/3 / (3n + 2)
# so that interval arithmetic sees the dependence on n.
u = 0x1p-53;
g2 = (2 * n + 3) * u / (1 - (2 * n + 3) * u);
ratio_t = (0.5 + 1 / (4 * n + 2)) * (1 + g2) / (1 - (2 * n + 2) * u);
ratio_w = 1.0102 * (2 / 3 + (2 / 3) / (3 * n + 2)) / (1 - (2 * n + 2) * u);
{ n in [1, 1048576] -> ratio_t <= 1 /\ ratio_w <= 1 }
