/* SHA-256 (report/base/sha256.h, the digest an archive keeps of its trace) against the
 * FIPS 180 test vectors, fed whole and byte by byte. */
#include <criterion/criterion.h>
#include <string.h>

#include "sha256.h"

Test(sha256, fips_180_vectors)
{
    sha256_ctx c;
    char hex[65];
    sha256_init(&c);
    sha256_final_hex(&c, hex);
    cr_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    sha256_init(&c);
    sha256_update(&c, "abc", 3);
    sha256_final_hex(&c, hex);
    cr_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha256_init(&c);
    for (size_t i = 0; i < strlen(two); i++) /* byte by byte: the block buffer */
        sha256_update(&c, two + i, 1);
    sha256_final_hex(&c, hex);
    cr_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}
