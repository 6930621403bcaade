/* libFuzzer target for the .npy reader (cli/npy.c): any byte string must be either parsed into a
 * consistent array or refused with a one-line message naming the input, never crash, leak or read
 * out of bounds (built with -fsanitize=fuzzer,address,undefined: `make fuzz-smoke`, `make fuzz`).
 * Seeds: tests/fuzz-seeds/ (tests/fuzz-seeds/make_seeds.sh regenerates them). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rn_array a;
    char err[512];
    if (npy_parse("fuzz.npy", data, size, &a, err, sizeof err) == 0) {
        size_t count = 1;
        for (int i = 0; i < a.ndim; i++)
            count *= a.shape[i];
        if (count != a.count || a.ndim < 0 || a.ndim > RN_MAX_DIMS || !a.data)
            abort();
        volatile double sink = 0;
        for (size_t i = 0; i < a.count; i++)
            sink += a.data[i];
        (void)sink;
        rn_array_free(&a);
    } else {
        if (a.data != NULL || strstr(err, "fuzz.npy") == NULL || strchr(err, '\n') != NULL)
            abort();
    }
    return 0;
}
