/* tree_migrate.c - the CPU twin of sim/cuda/tree_migrate.cu: the tree's body
 * order kept between steps by moving only the bodies that left their branch
 * (simulation.reorder: migrate; contract in sim.h). Serial and in the GPU's
 * order of steps, so the two give the same permutation wherever the GPU's
 * atomics cannot reorder equal keys; the tests hold both to a full sort. */
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#define MIG_MAX_BR 4096 /* sim/cuda/tree_internal.cuh: TREE_MIG_MAX_BR */

int sim_tree_mig_branches(size_t n, int branch_bodies)
{
	size_t bb = branch_bodies > 0 ? (size_t)branch_bodies : 1024;
	size_t k = n / bb;
	if (k < 1)
		k = 1;
	if (k > MIG_MAX_BR)
		k = MIG_MAX_BR;
	return (int)k;
}

void sim_tree_mig_free(struct sim_tree_mig *m)
{
	free(m->spl);
	free(m->off);
	free(m->br);
	free(m->buf);
	free(m->stay);
	free(m->fill);
	free(m->cnt);
	free(m->noff);
	free(m->key2);
	free(m->val2);
	memset(m, 0, sizeof *m);
}

int sim_tree_mig_init(struct sim_tree_mig *m, size_t n, int nbr)
{
	memset(m, 0, sizeof *m);
	size_t nn = n ? n : 1, b = nbr > 0 ? (size_t)nbr : 1;
	m->n = n;
	m->nbr = (int)b;
	m->spl = malloc((b + 1) * sizeof *m->spl);
	m->off = calloc(b + 1, sizeof *m->off);
	m->noff = calloc(b + 1, sizeof *m->noff);
	m->br = calloc(nn, sizeof *m->br);
	m->buf = malloc(nn * sizeof *m->buf);
	m->stay = calloc(b, sizeof *m->stay);
	m->fill = calloc(b, sizeof *m->fill);
	m->cnt = calloc(b, sizeof *m->cnt);
	m->key2 = malloc(nn * sizeof *m->key2);
	m->val2 = malloc(nn * sizeof *m->val2);
	if (!m->spl || !m->off || !m->noff || !m->br || !m->buf || !m->stay || !m->fill ||
	    !m->cnt || !m->key2 || !m->val2) {
		log_error("tree migration: out of memory for %zu bodies", n);
		return NB_ERUNTIME;
	}
	return 0;
}

/* Largest b in [0, nbr) with spl[b] <= k (spl[0] = 0): as the GPU's. */
static int mig_branch_of(const uint64_t *spl, int nbr, uint64_t k)
{
	int lo = 0, hi = nbr;
	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;
		if (spl[mid] <= k)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static int mig_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Stable merge sort of (k, v)[0, n) by k, through scratch (tk, tv). */
static void mig_sort_pairs(uint64_t *k, uint32_t *v, size_t n, uint64_t *tk, uint32_t *tv)
{
	for (size_t w = 1; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t i = lo, j = mid, o = lo;
			while (i < mid && j < hi) {
				if (k[j] < k[i])
					tk[o] = k[j], tv[o++] = v[j++];
				else
					tk[o] = k[i], tv[o++] = v[i++];
			}
			while (i < mid)
				tk[o] = k[i], tv[o++] = v[i++];
			while (j < hi)
				tk[o] = k[j], tv[o++] = v[j++];
		}
		memcpy(k, tk, n * sizeof *k);
		memcpy(v, tv, n * sizeof *v);
	}
}

/* Detect: the bodies whose key left their branch (m->buf, appended) and
 * their new branches' counts (m->cnt, zeroed first). Returns how many. */
static size_t mig_detect(struct sim_tree_mig *m, const uint64_t *keys)
{
	const int nbr = m->nbr;
	size_t moved = 0;
	for (size_t i = 0; i < m->n; i++) {
		uint32_t ob = m->br[i];
		if (m->spl[ob] <= keys[i] && keys[i] < m->spl[ob + 1])
			continue;
		m->buf[moved++] = (uint32_t)i;
		m->cnt[mig_branch_of(m->spl, nbr, keys[i])]++;
	}
	return moved;
}

/* Plan a rebuild: provisional splitters, every body a mover. They only
 * cut the rebuild's sort into branches: the current order is not
 * key-sorted (random at first, then out of place where bodies crossed), so
 * these samples are not quantiles; the exact ones come after the sort
 * (mig_quantile). 0 or NB_ERUNTIME. */
static int mig_plan(struct sim_tree_mig *m, const uint64_t *keys)
{
	const size_t n = m->n;
	const int nbr = m->nbr;
	uint64_t *s = malloc((size_t)nbr * sizeof *s);
	if (!s) {
		log_error("tree migration: out of memory");
		return NB_ERUNTIME;
	}
	for (int j = 0; j < nbr; j++)
		s[j] = keys[(size_t)j * n / (size_t)nbr];
	qsort(s, (size_t)nbr, sizeof *s, mig_cmp_u64);
	m->spl[0] = 0;
	for (int j = 1; j < nbr; j++)
		m->spl[j] = s[j];
	m->spl[nbr] = UINT64_MAX;
	free(s);
	memset(m->cnt, 0, (size_t)nbr * sizeof *m->cnt);
	for (size_t i = 0; i < n; i++) {
		m->buf[i] = (uint32_t)i;
		m->br[i] = (uint32_t)mig_branch_of(m->spl, nbr, keys[i]);
		m->cnt[m->br[i]]++;
	}
	return 0;
}

/* New offsets m->noff: stayers (old size minus leavers; none on a
 * rebuild) plus arrivals. Returns the largest branch. */
static int mig_offsets(struct sim_tree_mig *m, size_t moved, int rebuild)
{
	const int nbr = m->nbr;
	if (!rebuild) {
		for (int b = 0; b < nbr; b++)
			m->stay[b] = m->off[b + 1] - m->off[b];
		for (size_t k = 0; k < moved; k++)
			m->stay[m->br[m->buf[k]]]--;
	} else {
		memset(m->stay, 0, (size_t)nbr * sizeof *m->stay);
	}
	int largest = 0;
	m->noff[0] = 0;
	for (int b = 0; b < nbr; b++) {
		int c = m->stay[b] + m->cnt[b];
		m->noff[b + 1] = m->noff[b] + c;
		if (c > largest)
			largest = c;
		m->fill[b] = 0;
	}
	return largest;
}

/* Compact each branch's stayers in their old order (not on a rebuild),
 * insert the movers after them in buffer order, then sort each branch by
 * key (stable) and label the positions. */
static void mig_place(struct sim_tree_mig *m, const uint64_t *keys, size_t moved, int rebuild,
		      uint32_t *perm, uint64_t *keys_out)
{
	const int nbr = m->nbr;
	if (!rebuild) {
		for (int b = 0; b < nbr; b++) {
			int o = m->noff[b];
			for (int p = m->off[b]; p < m->off[b + 1]; p++) {
				if (keys[p] >= m->spl[b] && keys[p] < m->spl[b + 1]) {
					keys_out[o] = keys[p];
					perm[o++] = (uint32_t)p;
				}
			}
		}
	}
	for (size_t k = 0; k < moved; k++) {
		uint32_t i = m->buf[k];
		int nb = rebuild ? (int)m->br[i] : mig_branch_of(m->spl, nbr, keys[i]);
		int dst = m->noff[nb] + m->stay[nb] + m->fill[nb]++;
		keys_out[dst] = keys[i];
		perm[dst] = i;
	}
	for (int b = 0; b < nbr; b++) {
		int o = m->noff[b], c = m->noff[b + 1] - o;
		mig_sort_pairs(keys_out + o, perm + o, (size_t)c, m->key2, m->val2);
		for (int p = o; p < o + c; p++)
			m->br[p] = (uint32_t)b;
	}
}

/* Quantile (rebuild): keys_out is sorted; splitter b is its key b n / nbr,
 * branch b starts at that key's lower bound, positions relabelled. Every
 * branch then holds at most ceil(n/nbr) bodies (more only where keys
 * coincide), as sim/cuda/tree_migrate.cu's mig_quantile_kernel. Returns
 * the largest branch (also m->built_max). */
static int mig_quantile(struct sim_tree_mig *m, const uint64_t *keys_out)
{
	const size_t n = m->n;
	const int nbr = m->nbr;
	m->noff[0] = 0;
	m->noff[nbr] = (int)n;
	for (int b = 1; b < nbr; b++) {
		uint64_t v = keys_out[(size_t)b * n / (size_t)nbr];
		size_t lo = 0, hi = n;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (keys_out[mid] < v)
				lo = mid + 1;
			else
				hi = mid;
		}
		m->spl[b] = v;
		m->noff[b] = (int)lo;
	}
	int largest = 0;
	for (int b = 0; b < nbr; b++) {
		int c = m->noff[b + 1] - m->noff[b];
		if (c > largest)
			largest = c;
		for (int p = m->noff[b]; p < m->noff[b + 1]; p++)
			m->br[p] = (uint32_t)b;
	}
	m->built_max = largest;
	return largest;
}

int sim_tree_mig_step(struct sim_tree_mig *m, const uint64_t *keys, int force_rebuild,
		      uint32_t *perm, uint64_t *keys_out, struct sim_tree_mig_stats *st)
{
	const size_t n = m->n;
	const int nbr = m->nbr;
	size_t moved = 0;
	int rebuild = force_rebuild || !m->primed || m->rebalance;
	m->rebalance = 0;
	if (n == 0)
		return 0;
	memset(m->cnt, 0, (size_t)nbr * sizeof *m->cnt);
	if (!rebuild) {
		moved = mig_detect(m, keys);
		if (moved > n / 4 + 1) /* the GPU's buffer capacity */
			rebuild = 1;
	}
	if (rebuild) {
		if (mig_plan(m, keys))
			return NB_ERUNTIME;
		moved = n;
	}
	int largest = mig_offsets(m, moved, rebuild);
	mig_place(m, keys, moved, rebuild, perm, keys_out);
	if (rebuild)
		largest = mig_quantile(m, keys_out);
	memcpy(m->off, m->noff, ((size_t)nbr + 1) * sizeof *m->off);
	m->primed = 1;
	/* rebalance: a migrating step whose largest branch passed twice the
	 * mean (or twice what the last rebuild left, where coincident keys
	 * made a branch no rebuild can split) */
	int mean = (int)((n + (size_t)nbr - 1) / (size_t)nbr);
	if (mean < m->built_max)
		mean = m->built_max;
	if (!rebuild && nbr > 1 && largest > 2 * mean)
		m->rebalance = 1;
	if (st) {
		st->moved = moved;
		st->rebuilt = rebuild;
		st->max_branch = largest;
	}
	return 0;
}
