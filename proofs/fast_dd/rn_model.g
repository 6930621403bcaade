# specs/fast-path.md §3: the round-to-nearest model behind every "2u|x| + eta/2" term.
# For z the exact result of one binary64 operation: relative error <= u = 2^-53 in the normal
# range (here for positive z; the rounding is symmetric), absolute error <= eta/2 = 2^-1075 below
# it.  (u / (1 - u) <= 2u then gives the form with |RN(z)| used in the code.)
@rnd = float<ieee_64, ne>;
zr = rnd(z);
{ (z in [0x1p-1022, 0x1p1000] -> (zr - z) / z in [-0x1p-53, 0x1p-53])
  /\ (z in [-0x1p-1022, 0x1p-1022] -> zr - z in [-0x1p-1075, 0x1p-1075]) }
$ z in (0x1p-1022);
