/* The seeded coin `shifts.rng.chance` draws, in C: `_random.Random(derive_seed(...)).random()`,
 * the first draw of CPython's Mersenne Twister seeded with the 64-bit BLAKE2b digest of the
 * keys' text. A first load under a new seed draws one for every element it may wrap, and in
 * Python each costs a hash object, a generator and a memo's tuple.
 *
 * BLAKE2b follows RFC 7693 (unkeyed, an 8-byte digest); the generator follows CPython's
 * `_randommodule.c` (`init_by_array` with the seed's 32-bit words, least significant first,
 * then `random()`'s two draws). The tests compare `coin` with `rng.chance` on generated keys. */

#ifndef SKILLSHIFT_NATIVE_COIN_H
#define SKILLSHIFT_NATIVE_COIN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static const uint64_t blake2b_iv[8] = {
    0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL, 0xa54ff53a5f1d36f1ULL,
    0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL, 0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL,
};

static const uint8_t blake2b_sigma[12][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
    {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
    {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
    {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
    {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
};

static inline uint64_t rotate_right(uint64_t x, int n) { return (x >> n) | (x << (64 - n)); }

static inline uint64_t load_little_endian(const uint8_t *p) {
    uint64_t x = 0;
    for (int i = 7; i >= 0; i--) x = (x << 8) | p[i];
    return x;
}

#define BLAKE2B_G(a, b, c, d, x, y)              \
    do {                                         \
        v[a] = v[a] + v[b] + (x);                \
        v[d] = rotate_right(v[d] ^ v[a], 32);    \
        v[c] = v[c] + v[d];                      \
        v[b] = rotate_right(v[b] ^ v[c], 24);    \
        v[a] = v[a] + v[b] + (y);                \
        v[d] = rotate_right(v[d] ^ v[a], 16);    \
        v[c] = v[c] + v[d];                      \
        v[b] = rotate_right(v[b] ^ v[c], 63);    \
    } while (0)

/* One block into the state `h`: `counted`, the bytes read so far with it; `last`, the final. */
static void blake2b_compress(uint64_t h[8], const uint8_t block[128], uint64_t counted, int last) {
    uint64_t v[16], m[16];
    for (int i = 0; i < 16; i++) m[i] = load_little_endian(block + 8 * i);
    for (int i = 0; i < 8; i++) {
        v[i] = h[i];
        v[i + 8] = blake2b_iv[i];
    }
    v[12] ^= counted; /* (the counter's high word stays 0: no key text is 2^64 bytes) */
    if (last) v[14] = ~v[14];
    for (int round = 0; round < 12; round++) {
        const uint8_t *s = blake2b_sigma[round];
        BLAKE2B_G(0, 4, 8, 12, m[s[0]], m[s[1]]);
        BLAKE2B_G(1, 5, 9, 13, m[s[2]], m[s[3]]);
        BLAKE2B_G(2, 6, 10, 14, m[s[4]], m[s[5]]);
        BLAKE2B_G(3, 7, 11, 15, m[s[6]], m[s[7]]);
        BLAKE2B_G(0, 5, 10, 15, m[s[8]], m[s[9]]);
        BLAKE2B_G(1, 6, 11, 12, m[s[10]], m[s[11]]);
        BLAKE2B_G(2, 7, 8, 13, m[s[12]], m[s[13]]);
        BLAKE2B_G(3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
    for (int i = 0; i < 8; i++) h[i] ^= v[i] ^ v[i + 8];
}

/* BLAKE2b-64 of `prefix` then `text` (read as one message), as the integer
 * `int.from_bytes(hashlib.blake2b(prefix + text, digest_size=8).digest(), "big")`. */
static uint64_t blake2b_64(const uint8_t *prefix, size_t prefix_length, const uint8_t *text,
                           size_t text_length) {
    uint64_t h[8];
    memcpy(h, blake2b_iv, sizeof h);
    h[0] ^= 0x01010000ULL ^ 8; /* (fanout 1, depth 1, no key, an 8-byte digest) */
    uint8_t block[128];
    size_t filled = 0, total = prefix_length + text_length;
    uint64_t counted = 0;
    for (size_t at = 0; at < total; at++) {
        if (filled == sizeof block) { /* (a full block is compressed once more bytes follow) */
            counted += sizeof block;
            blake2b_compress(h, block, counted, 0);
            filled = 0;
        }
        block[filled++] = at < prefix_length ? prefix[at] : text[at - prefix_length];
    }
    memset(block + filled, 0, sizeof block - filled);
    blake2b_compress(h, block, counted + filled, 1);
    /* (the digest is h[0]'s bytes, little-endian; read big-endian, they are h[0] swapped) */
    uint64_t swapped = 0;
    for (int i = 0; i < 8; i++) swapped = (swapped << 8) | ((h[0] >> (8 * i)) & 0xff);
    return swapped;
}

#define MT_N 624
#define MT_M 397

/* The state `init_genrand(19650218)` makes, where every seeding starts: made once. */
static const uint32_t *mt_start(void) {
    static uint32_t start[MT_N];
    static int made = 0; /* (the GIL is held: one caller at a time) */
    if (!made) {
        start[0] = 19650218U;
        for (int i = 1; i < MT_N; i++)
            start[i] = 1812433253U * (start[i - 1] ^ (start[i - 1] >> 30)) + i;
        made = 1;
    }
    return start;
}

/* CPython's `random.Random(seed)`'s state for a non-negative `seed` below 2^64 (init_by_array
 * of the seed's 32-bit words, least significant first), before its first twist. */
static void seeded_state(uint64_t seed, uint32_t mt[MT_N]) {
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    size_t key_length = seed >> 32 ? 2 : 1; /* (the seed's words: at least one) */
    memcpy(mt, mt_start(), MT_N * sizeof *mt); /* then init_by_array(key) */
    int i = 1;
    size_t j = 0;
    for (int k = MT_N; k; k--) { /* (N > key_length) */
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525U)) + key[j] + (uint32_t)j;
        i++;
        j++;
        if (i >= MT_N) {
            mt[0] = mt[MT_N - 1];
            i = 1;
        }
        if (j >= key_length) j = 0;
    }
    for (int k = MT_N - 1; k; k--) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941U)) - i;
        i++;
        if (i >= MT_N) {
            mt[0] = mt[MT_N - 1];
            i = 1;
        }
    }
    mt[0] = 0x80000000U;
}

/* The `index`th word `genrand_uint32` draws from a state seeded (`seeded_state`, or a lane of
 * `seeded_states`: word `i` at `mt[i * stride]`), for `index` from 0 up to MT_N - 1, each
 * asked once and in turn: its word is twisted in place as it is drawn (the twist reads the
 * next word, not yet twisted, and the one M on, not yet twisted below N - M, twisted before it
 * past that), then tempered. The seeding is the cost: the twist of the whole state, which the
 * first draws do not read, is not done. */
static uint32_t drawn_word(uint32_t *mt, size_t stride, int index) {
    uint32_t y = (mt[(size_t)index * stride] & 0x80000000U) |
                 (mt[(size_t)((index + 1) % MT_N) * stride] & 0x7fffffffU);
    y = mt[(size_t)((index + MT_M) % MT_N) * stride] ^ (y >> 1) ^ (y & 1U ? 0x9908b0dfU : 0U);
    mt[(size_t)index * stride] = y;
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= y >> 18;
    return y;
}

/* `random()`: its first draw, of a state just seeded (word `i` at `mt[i * stride]`). */
static double random_of(uint32_t *mt, size_t stride) {
    uint32_t a = drawn_word(mt, stride, 0) >> 5, b = drawn_word(mt, stride, 1) >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

/* CPython's `random.Random(seed).random()` for a non-negative `seed` below 2^64. */
static double first_draw(uint64_t seed) {
    uint32_t mt[MT_N];
    seeded_state(seed, mt);
    return random_of(mt, 1);
}

/* How many states `seeded_states` seeds at once. A seeding is a chain of 1,247 steps, each
 * reading the one before (a multiply, shifts): one chain leaves the processor waiting on each
 * step, where independent chains side by side (which the compiler's vector code runs several
 * of per instruction) cost 2,250 ns a state alone and 360 ns in a group of 32 here. */
#define LANES 32

/* `seeded_state` of LANES seeds at once, into `mt`, MT_N * LANES words: word `i` of lane
 * `lane` at `mt[i * LANES + lane]`. The same steps, each taken for every lane before the
 * next: the key's words alternate (a 32-bit seed's one word every step). */
static void seeded_states(const uint64_t seeds[LANES], uint32_t *mt) {
    const uint32_t *start = mt_start();
    uint32_t even[LANES], odd[LANES], last[LANES]; /* (the key's word and index; the last word) */
    for (int lane = 0; lane < LANES; lane++) {
        uint64_t seed = seeds[lane];
        even[lane] = (uint32_t)seed;
        odd[lane] = seed >> 32 ? (uint32_t)(seed >> 32) + 1U : (uint32_t)seed;
        last[lane] = start[0];
    }
    /* init_by_array's first loop: words 1 to MT_N - 1 from the start's, then word 1 again
     * (word 0 is then the last one, which only that step reads: `last`) */
    for (int i = 1; i < MT_N; i++) {
        const uint32_t *key = (i - 1) & 1 ? odd : even, word = start[i];
        uint32_t *row = mt + (size_t)i * LANES;
        for (int lane = 0; lane < LANES; lane++) {
            uint32_t before = last[lane];
            row[lane] = last[lane] = (word ^ ((before ^ (before >> 30)) * 1664525U)) + key[lane];
        }
    }
    const uint32_t *key = (MT_N - 1) & 1 ? odd : even; /* (the step after the wrap) */
    for (int lane = 0; lane < LANES; lane++) {
        uint32_t before = last[lane];
        mt[LANES + lane] = last[lane] =
            (mt[LANES + lane] ^ ((before ^ (before >> 30)) * 1664525U)) + key[lane];
    }
    /* the second loop: words 2 to MT_N - 1, then word 1 after the wrap */
    for (int i = 2; i < MT_N; i++) {
        uint32_t *row = mt + (size_t)i * LANES;
        for (int lane = 0; lane < LANES; lane++) {
            uint32_t before = last[lane];
            row[lane] = last[lane] =
                (row[lane] ^ ((before ^ (before >> 30)) * 1566083941U)) - (uint32_t)i;
        }
    }
    for (int lane = 0; lane < LANES; lane++) {
        uint32_t before = last[lane];
        mt[LANES + lane] = (mt[LANES + lane] ^ ((before ^ (before >> 30)) * 1566083941U)) - 1U;
        mt[lane] = 0x80000000U;
    }
}

/* The fewest keys drawn in lockstep: a group costs LANES seedings side by side, about six
 * alone (fewer keys are seeded one by one). */
#define FEWEST_IN_LOCKSTEP 6

/* What is read of one seeded state (word `i` at `mt[i * stride]`), the `index`th of a call of
 * `each_state`'s: 0, or -1 to stop there. */
typedef int (*ReadState)(uint32_t *mt, size_t stride, size_t index, void *into);

/* `read` of the state of each of `count` seeds, in order, seeded LANES at a time where there
 * are enough (`workspace`: MT_N * LANES words), one by one where there are not: 0, or -1 where
 * a `read` stopped it. */
static int each_state(const uint64_t *seeds, size_t count, uint32_t *workspace, ReadState read,
                      void *into) {
    size_t at = 0;
    for (; count - at >= FEWEST_IN_LOCKSTEP; at += LANES) {
        uint64_t group[LANES] = {0};
        size_t taken = count - at < LANES ? count - at : LANES;
        memcpy(group, seeds + at, taken * sizeof *seeds);
        seeded_states(group, workspace);
        for (size_t lane = 0; lane < taken; lane++)
            if (read(workspace + lane, LANES, at + lane, into) < 0) return -1;
        if (taken < LANES) return 0;
    }
    for (; at < count; at++) {
        uint32_t mt[MT_N];
        seeded_state(seeds[at], mt);
        if (read(mt, 1, at, into) < 0) return -1;
    }
    return 0;
}

static int read_coin(uint32_t *mt, size_t stride, size_t index, void *coins) {
    ((double *)coins)[index] = random_of(mt, stride);
    return 0;
}

/* `first_draw` of each of `count` seeds into `coins` (`each_state`). */
static void first_draws(const uint64_t *seeds, size_t count, double *coins, uint32_t *workspace) {
    each_state(seeds, count, workspace, read_coin, coins);
}

/* `rng._token_read`'s token of `length` characters, drawn from a state just seeded (word `i`
 * at `mt[i * stride]`): a letter, then letters or digits, each drawn as `random.Random.choice`
 * draws (`getrandbits` of the fewest bits that hold the alphabet's size, drawn again while past
 * it). Written to `out` (`length` bytes, no terminator): 0, or -1 where the draws would pass
 * one twist of the state (never seen: each needs fewer than 2 on average), which the Python
 * then makes. */
static int token_of(uint32_t *mt, size_t stride, size_t length, char *out) {
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    int drawn = 0;
    for (size_t at = 0; at < length; at++) {
        uint32_t size = at == 0 ? 26 : 36, width = at == 0 ? 5 : 6, pick;
        do {
            if (drawn == MT_N) return -1;
            pick = drawn_word(mt, stride, drawn++) >> (32 - width);
        } while (pick >= size);
        out[at] = alphabet[pick];
    }
    return 0;
}

typedef struct {
    size_t length; /* each token's */
    char *out;     /* token `i` at `out + i * length` */
} Tokens;

static int read_token(uint32_t *mt, size_t stride, size_t index, void *tokens) {
    Tokens *made = tokens;
    return token_of(mt, stride, made->length, made->out + index * made->length);
}

/* `token_of` of each of `count` seeds: token `i` at `out + i * length` (`each_state`). 0, or
 * -1 as `token_of`. */
static int tokens_of(const uint64_t *seeds, size_t count, size_t length, char *out,
                     uint32_t *workspace) {
    Tokens made = {length, out};
    return each_state(seeds, count, workspace, read_token, &made);
}

/* `rng.chance`'s coin for the keys' text `prefix` + `text` ("{seed}\x1f{key}\x1f..." in UTF-8). */
static inline double seeded_coin(const uint8_t *prefix, size_t prefix_length, const uint8_t *text,
                                 size_t text_length) {
    return first_draw(blake2b_64(prefix, prefix_length, text, text_length));
}

#endif
