/* The libm calls of the sublayer kernels, one place (specs/libm.h states the assumption that links
 * them to the real functions in the proofs; WP never sees this file). */
#include <math.h>

#include "libm.h"

float rn_expf(float x)
{
    return expf(x);
}

double rn_exp(double x)
{
    return exp(x);
}

float rn_erff(float x)
{
    return erff(x);
}

double rn_erf(double x)
{
    return erf(x);
}

float rn_tanhf(float x)
{
    return tanhf(x);
}

double rn_tanh(double x)
{
    return tanh(x);
}
