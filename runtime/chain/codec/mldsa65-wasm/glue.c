/*
 * Glue for the ML-DSA-65 verification WebAssembly module (see build.ts beside this file).
 * The module exports PQClean's PQCLEAN_MLDSA65_CLEAN_crypto_sign_verify_ctx (FIPS 204 pure
 * ML-DSA-65 verification with a context string) plus malloc/free; no lattice code is here.
 *
 * sign.c also holds key generation and signing, which call PQCLEAN_randombytes. They are not
 * exported and the linker drops them, but the symbol must resolve: it traps if ever reached,
 * so this module can never produce keys or signatures from a missing entropy source.
 */
#include <stddef.h>
#include <stdint.h>

#include "randombytes.h"

int PQCLEAN_randombytes(uint8_t *output, size_t n) {
    (void)output;
    (void)n;
    __builtin_trap();
}
