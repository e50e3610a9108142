/* rng.c - counter-based random numbers: draw k of stream s under seed is a
 * pure function of (seed, s, k), so initial conditions are bit-identical for
 * every thread count and machine.
 *
 * The mixing function is the SplitMix64 finaliser (Steele, Lea & Flood 2014,
 * "Fast splittable pseudorandom number generators"), applied in two rounds so
 * that nearby (stream, counter) pairs decorrelate. All arithmetic is unsigned
 * 64-bit, where overflow wraps by definition. */
#include "sim.h"

static uint64_t rng_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t sim_rng_u64(uint64_t seed, uint64_t stream, uint64_t counter)
{
	/* golden-ratio increments as in SplitMix64's state update */
	uint64_t k = rng_mix(seed + 0x9e3779b97f4a7c15ULL);
	k = rng_mix(k ^ (stream * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL));
	return rng_mix(k + (counter + 1) * 0x9e3779b97f4a7c15ULL);
}

double sim_rng_uniform(uint64_t seed, uint64_t stream, uint64_t counter)
{
	/* top 52 bits, offset by half a step: (r + 0.5) / 2^52 lies in
	 * [2^-53, 1 - 2^-53], exactly representable, never 0 or 1 (with 53
	 * bits, 2^53 - 0.5 would round up to 2^53 and give 1.0) */
	uint64_t r = sim_rng_u64(seed, stream, counter) >> 12;
	return ((double)r + 0.5) * (1.0 / 4503599627370496.0);
}
