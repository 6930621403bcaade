/* `resnorm golden gen --out DIR`: generate the golden vectors (manifest + .npy files) into DIR.
 * Format and conventions: specs/golden-format.md.  Deterministic: bit-identical on every run. */
#ifndef RESNORM_GOLDEN_H
#define RESNORM_GOLDEN_H

/* argv[0] is "golden".  Returns a process exit code (0 ok, 2 usage, 3 internal failure). */
int golden_main(int argc, char **argv);

#endif
