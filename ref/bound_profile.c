/* The process-wide implementation profile of the rigorous bounds (ref/bound_profile.h). */
#include <string.h>

#include "bound_profile.h"

static rn_profile current = RN_PROFILE_MOMENTS;

void rn_bound_set_profile(rn_profile p) { current = p; }

rn_profile rn_bound_profile(void) { return current; }

static const char *const NAMES[] = {"runtimes", "moments", "two-pass"};

int rn_profile_from_name(const char *name, rn_profile *p)
{
    for (int k = 0; k < 3; k++)
        if (!strcmp(name, NAMES[k])) {
            *p = (rn_profile)k;
            return 0;
        }
    return -1;
}

const char *rn_profile_name(rn_profile p)
{
    return (unsigned)p < 3 ? NAMES[p] : "?";
}
