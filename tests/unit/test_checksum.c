/* test_checksum.c - the weights data checksum (runtime_min/rlx_rt.c).
 *
 * Known answers worked out by hand from the definition in rlx_rt.c (16
 * lanes of a += w, b += a over 32-bit words; A = sum a[j], B = sum
 * (2j + 1) b[j], checksum = A | B << 32), then the properties the loader
 * relies on, checked exhaustively on a small buffer: every single flipped
 * bit changes the checksum, summing in pieces gives the one-shot value,
 * and two swapped words change it.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "rlx_rt.h"

static uint64_t sum_words(const uint32_t *w, size_t n) { return rlx_weights_checksum(w, 4 * n); }

/* Words 1..16, one block: a[j] = b[j] = j + 1, so A = 136 and
 * B = sum over k = 1..16 of (2k - 1) k = 2 * 1496 - 136 = 2856. */
Test(checksum, one_block_by_hand) {
    uint32_t w[16];
    for (int i = 0; i < 16; i++) w[i] = (uint32_t)i + 1;
    cr_assert_eq(sum_words(w, 16), (uint64_t)2856 << 32 | 136);
}

/* Words 1..32, two blocks: lane j sees j + 1, then j + 17, so
 * a[j] = 2j + 18, b[j] = (j + 1) + (2j + 18) = 3j + 19;
 * A = 2 * 120 + 16 * 18 = 528, B = sum (2j + 1)(3j + 19)
 *   = 6 * 1240 + 41 * 120 + 19 * 16 = 12664. */
Test(checksum, two_blocks_by_hand) {
    uint32_t w[32];
    for (int i = 0; i < 32; i++) w[i] = (uint32_t)i + 1;
    cr_assert_eq(sum_words(w, 32), (uint64_t)12664 << 32 | 528);
}

/* A partial word is padded with zero bytes: {1, 2, 3} is the word
 * 0x00030201 = 197121 in lane 0, so A = B = 197121. */
Test(checksum, tail_bytes_by_hand) {
    const uint8_t bytes[3] = {1, 2, 3};
    cr_assert_eq(rlx_weights_checksum(bytes, 3), (uint64_t)197121 << 32 | 197121);
    cr_assert_eq(rlx_weights_checksum(bytes, 0), 0);
}

static void fill(uint8_t *p, size_t n) {
    uint32_t x = 12345;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (uint8_t)(x >> 16);
    }
}

/* Every one of the 32792 bits of a 4099-byte buffer (64 blocks and a
 * 3-byte tail), flipped alone, changes the checksum. */
Test(checksum, every_single_bit_flip_is_caught) {
    enum { N = 4099 };
    static uint8_t buf[N];
    fill(buf, N);
    uint64_t good = rlx_weights_checksum(buf, N);
    for (size_t i = 0; i < N; i++)
        for (int bit = 0; bit < 8; bit++) {
            buf[i] ^= (uint8_t)(1u << bit);
            uint64_t got = rlx_weights_checksum(buf, N);
            buf[i] ^= (uint8_t)(1u << bit);
            cr_assert_neq(got, good, "flipping bit %d of byte %zu went unnoticed", bit, i);
        }
}

/* Pieces of any multiple of 64 bytes (and a last piece of any size) give
 * the one-shot checksum: the loaders sum each piece as it arrives. */
Test(checksum, pieces_give_the_same_sum) {
    enum { N = 64 * 100 + 37 };
    static uint8_t buf[N];
    fill(buf, N);
    uint64_t whole = rlx_weights_checksum(buf, N);
    const size_t pieces[] = {64, 128, 192, 640, 4096};
    for (size_t k = 0; k < sizeof pieces / sizeof pieces[0]; k++) {
        rlx_sum s;
        rlx_sum_init(&s);
        size_t off = 0;
        for (; N - off > pieces[k]; off += pieces[k]) rlx_sum_add(&s, buf + off, pieces[k]);
        rlx_sum_add(&s, buf + off, N - off);
        cr_assert_eq(rlx_sum_end(&s), whole, "pieces of %zu bytes", pieces[k]);
    }
}

/* Words that trade places keep A (the plain sum) but not B: here two
 * different words of lane 0, one block apart. */
Test(checksum, swapped_words_are_caught) {
    uint32_t w[32];
    for (int i = 0; i < 32; i++) w[i] = (uint32_t)(i * 7 + 3);
    uint64_t good = sum_words(w, 32);
    uint32_t t = w[0];
    w[0] = w[16];
    w[16] = t;
    uint64_t swapped = sum_words(w, 32);
    cr_assert_eq((uint32_t)swapped, (uint32_t)good);   /* the same sum of words */
    cr_assert_neq(swapped, good);
}
