#!/bin/sh
# Regenerates the fuzz seeds for tests/fuzz_npy.c: small valid .npy files of each dtype, byte for
# byte as np.save writes them (header padded to 64 bytes), and a few malformed ones.
# Needs only printf; run from anywhere.
set -e
cd "$(dirname "$0")"
# npy HEADER_TEXT DATA_PRINTF FILE: version 1.0 image with a 118-byte padded header (128 in all)
npy() {
    h="$1"; pad=$((117 - ${#h}))
    { printf '\223NUMPY\001\000v\000'; printf '%s' "$h"; printf "%${pad}s" ''; printf '\n';
      printf "$2"; } > "$3"
}
npy "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }" \
    '\000\000\000\000\000\000\360\077\000\000\000\000\000\000\000\300' f64_2.npy
npy "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }" \
    '\000\000\200\077\000\000\000\300\000\000\200\177\000\000\300\177' f32_2x2.npy
npy "{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }" \
    '\000\074\000\300\377\173' f16_3.npy
npy "{'descr': '|V2', 'fortran_order': False, 'shape': (1, 2), }" \
    '\200\077\000\300' bf16_1x2.npy
npy "{'descr': '<V2', 'fortran_order': False, 'shape': (), }" '\200\077' bf16_scalar.npy
npy "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }" '' f32_empty.npy
# malformed
npy "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }" '\077\200\000\000' bad_bigendian.npy
npy "{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }" '\000\000\200\077' bad_fortran.npy
npy "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }" '\000\000\000\000' bad_truncated.npy
npy "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }" '' bad_overflow.npy
