/* tree_walk.cu - the GPU tree's force walk: one warp per group of up to
 * 32 * NB consecutive tree-ordered bodies (lane l holds bodies l, l+32, ...),
 * all of the group's bodies sharing one walk. The groups come from the
 * build (tree_build.cu): chunks of nodes of at most group_max bodies, so no
 * group straddles a coarse cell boundary.
 *
 * A cell is tested against the group's bounding box: d = distance from the
 * cell's centre of mass to the nearest point of the box, accepted when
 * d^2 > rcrit^2 (tree_build.cu sets rcrit per criterion). That is at least
 * as strict for every body as the per-body test, and keeps the warp on one
 * path. Work per iteration of the walk:
 *   pop up to 32 cells (whole sibling ranges) off a per-warp stack in shared
 *   memory, one per lane; test them; accepted cells go to a pending cell
 *   list, opened leaves' bodies to a pending body list, opened internal
 *   nodes push their child range. When a list holds 32 entries, its entries
 *   are staged in shared memory and every lane applies all 32 to its
 *   bodies (broadcast reads: one LDS per source for NB targets).
 *   Accepted cells far from the group for its size (rho < local_ratio R,
 *   tree_far.cuh) go to a third list instead: 32 at a time, each lane adds
 *   one of them to the group's local expansion, which every body evaluates
 *   once at the end (about half of the body-cell interactions at theta 0.5,
 *   ~1/6 of the cost each). Accepted near leaves of at most leaf_p2p bodies
 *   join the body list: exact, and cheaper than a quadrupole.
 *   Variant (tuning mono_factor F > 0, quadrupole walks with one Plummer
 *   length): accepted near cells beyond F times their opening radius go to
 *   a fourth list and take the monopole only (12 + 1 rsqrt instead of 30 +
 *   1); the cells accepted and opened are the same.
 * Individual time steps (la > 0): the active bodies are first packed into
 * groups of their own, group node by group node (tree_pack_kernel), and the
 * walk reads its targets through that list (pk_slot).
 * Everything is warp-cooperative with explicit masks (__shfl_sync,
 * __ballot_sync, __reduce_or_sync, __syncwarp): no warp-synchronous
 * assumptions, no spinning. Groups are handed out by an atomic counter to a
 * persistent grid, so dense groups do not stall a block.
 *
 * Stack bound: ranges pushed in one iteration form a generation (<= 32
 * ranges). While a generation survives on the stack, every later pop takes
 * cells from it or from generations above it, so the next surviving
 * generation holds only strict descendants of its cells; surviving
 * generations therefore lie at strictly increasing depths 1..21, and the
 * stack never holds more than 21 * 32 ranges plus the root.
 *
 * Cost per interaction and target (FP32 lane instructions):
 *   body-body 13 + 1 rsqrt (+1 with potential), 16 B broadcast LDS per NB;
 *   body-cell monopole 12 + 1 rsqrt; quadrupole 30 + 1 rsqrt, 48 B LDS per NB.
 *   Quadrupole, r = x - com, s^2 = |r|^2 + eps^2, Q traceless, T = tr S
 *   with S = sum m y y^T the second moment about the com: the Taylor
 *   expansion of the softened potential -sum m/|x - com - y|_eps to second
 *   order, since d_a d_b (1/s) = (3 r_a r_b - s^2 delta_ab)/s^5, gives
 *     phi = -M/s - (1/2)(r.Q.r - T eps^2)/s^5
 *     a   = -M r/s^3 + Q.r/s^5 - (5/2)(r.Q.r - T eps^2) r/s^7.
 *   The T eps^2 term matters for cells within a few eps (it halves the
 *   median error of a 1M-body Plummer sphere at eps = 0.05, theta = 0.5). */
#include "tree_internal.cuh"
#include "tree_far.cuh"
#include "../../sim/soften.h"

#define WALK_WARPS 4
#define WALK_THREADS (WALK_WARPS * TREE_WARP)
#define FULL 0xffffffffu

struct walk_smem {
	uint32_t stack[TREE_STACK_CAP]; /* packed ranges: first << 3 | (count - 1) */
	int cells[64];                  /* accepted near cells waiting for a flush */
	int far[64];                    /* accepted far cells waiting for a flush */
	float4 bodies[64];              /* opened leaves' bodies waiting for a flush */
	float4 stage[3][32];            /* accepted cells' data during a flush */
};

__device__ __forceinline__ int warp_incl_scan(int v, int lane)
{
#pragma unroll
	for (int off = 1; off < 32; off <<= 1) {
		int u = __shfl_up_sync(FULL, v, off);
		if (lane >= off)
			v += u;
	}
	return v;
}

/* Each flush sums its (at most 32) terms into fresh partial sums and adds
 * those to the body's totals: blocked summation, so the rounding error of a
 * body's force grows with the number of flushes, not of terms (at theta = 0
 * that is n/32 instead of n additions into one float). */
template <int NB, bool POT>
__device__ __forceinline__ void walk_p2p(const float4 *src, int cnt, const float *px,
					 const float *py, const float *pz, float *ax, float *ay,
					 float *az, float *phi, float eps2)
{
	float sx[NB], sy[NB], sz[NB], sp[NB];
#pragma unroll
	for (int k = 0; k < NB; k++)
		sx[k] = sy[k] = sz[k] = sp[k] = 0.0f;
#pragma unroll 4
	for (int j = 0; j < cnt; j++) {
		float4 s = src[j];
#pragma unroll
		for (int k = 0; k < NB; k++) {
			float dx = s.x - px[k], dy = s.y - py[k], dz = s.z - pz[k];
			float r2 = fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, eps2)));
			float rinv = rsqrtf(r2);
			float mr = s.w * rinv;
			float mr3 = mr * rinv * rinv;
			sx[k] = fmaf(dx, mr3, sx[k]);
			sy[k] = fmaf(dy, mr3, sy[k]);
			sz[k] = fmaf(dz, mr3, sz[k]);
			if (POT)
				sp[k] -= mr;
		}
	}
#pragma unroll
	for (int k = 0; k < NB; k++) {
		ax[k] += sx[k], ay[k] += sy[k], az[k] += sz[k];
		if (POT)
			phi[k] += sp[k];
	}
}

/* One cell (c0 = com, mass; c1 = Qxx Qyy Qzz Qxy; qxz, qyz; teps2 = T eps^2)
 * on one target at (x, y, z) with softening eps2: the sums s* grow. */
template <int MP, bool POT>
__device__ __forceinline__ void walk_m2p_one(float4 c0, float4 c1, float qxz, float qyz, float teps2,
					     float x, float y, float z, float eps2, float *sx,
					     float *sy, float *sz, float *sp)
{
	float rx = x - c0.x, ry = y - c0.y, rz = z - c0.z;
	float r2 = fmaf(rx, rx, fmaf(ry, ry, fmaf(rz, rz, eps2)));
	float rinv = rsqrtf(r2);
	float rinv2 = rinv * rinv;
	float rinv3 = rinv * rinv2;
	float f = c0.w * rinv3; /* M / s^3 */
	if (MP >= 2) {
		float qx = fmaf(c1.x, rx, fmaf(c1.w, ry, qxz * rz));
		float qy = fmaf(c1.w, rx, fmaf(c1.y, ry, qyz * rz));
		float qz = fmaf(qxz, rx, fmaf(qyz, ry, c1.z * rz));
		float rqr = fmaf(rx, qx, fmaf(ry, qy, fmaf(rz, qz, -teps2)));
		float rinv5 = rinv3 * rinv2;
		float t = rqr * rinv5;
		f = fmaf(t, 2.5f * rinv2, f);
		*sx = fmaf(rinv5, qx, *sx);
		*sy = fmaf(rinv5, qy, *sy);
		*sz = fmaf(rinv5, qz, *sz);
		if (POT)
			*sp = fmaf(-0.5f, t, *sp);
	}
	*sx = fmaf(-f, rx, *sx);
	*sy = fmaf(-f, ry, *sy);
	*sz = fmaf(-f, rz, *sz);
	if (POT)
		*sp = fmaf(-c0.w, rinv, *sp);
}

template <int NB, int MP, bool POT>
__device__ __forceinline__ void walk_m2p(const struct walk_smem *sm, int cnt, const float *px,
					 const float *py, const float *pz, float *ax, float *ay,
					 float *az, float *phi, float eps2)
{
	float sx[NB], sy[NB], sz[NB], sp[NB];
#pragma unroll
	for (int k = 0; k < NB; k++)
		sx[k] = sy[k] = sz[k] = sp[k] = 0.0f;
#pragma unroll 2
	for (int j = 0; j < cnt; j++) {
		float4 c0 = sm->stage[0][j]; /* com, mass */
		float4 c1 = make_float4(0, 0, 0, 0), c2 = c1;
		if (MP >= 2) {
			c1 = sm->stage[1][j]; /* Qxx Qyy Qzz Qxy */
			c2 = sm->stage[2][j]; /* Qxz Qyz T eps^2 */
		}
#pragma unroll
		for (int k = 0; k < NB; k++)
			walk_m2p_one<MP, POT>(c0, c1, c2.x, c2.y, c2.z, px[k], py[k], pz[k], eps2, &sx[k],
					      &sy[k], &sz[k], &sp[k]);
	}
#pragma unroll
	for (int k = 0; k < NB; k++) {
		ax[k] += sx[k], ay[k] += sy[k], az[k] += sz[k];
		if (POT)
			phi[k] += sp[k];
	}
}

/* ---- the general softening (docs/PHYSICS.md "Softening"): spline kernel
 * or lengths per body; the SOFT instances of the walk only ---------------- */
struct walk_soft {
	const float *beps;       /* each slot's length (NULL: eps for all) */
	const float2 *node_soft; /* each cell's (eps_max, eps2_mean) (NULL: one length) */
	const float *node_bmax;
	float eps;
	int spline;
};

/* a flush's partial sums into the body's totals */
template <int NB, bool POT>
__device__ __forceinline__ void walk_add_sums(const float *sx, const float *sy, const float *sz,
					      const float *sp, float *ax, float *ay, float *az, float *phi)
{
#pragma unroll
	for (int k = 0; k < NB; k++) {
		ax[k] += sx[k], ay[k] += sy[k], az[k] += sz[k];
		if (POT)
			phi[k] += sp[k];
	}
}

/* the pair's force factor f (a = m f d) and potential per unit mass p */
__device__ __forceinline__ void walk_soft_pair(int spline, float r2, float ep, float *f, float *p)
{
	if (spline) {
		*f = sim_soft_splinef(r2, ep);
		*p = sim_soft_spline_phif(r2, ep);
	} else {
		*f = sim_soft_plummerf(r2, ep);
		*p = sim_soft_plummer_phif(r2, ep);
	}
}

/* walk_p2p with each source's length se[j] and each target's pe[k]: a pair
 * takes the larger (sim_soft_pairf). The self pair adds no force (d = 0)
 * and walk_soft_pair(0, pe) to the potential, taken out at the end. */
template <int NB, bool POT>
__device__ __forceinline__ void walk_p2p_soft(const float4 *src, const float *se, int cnt,
					      const float *px, const float *py, const float *pz,
					      const float *pe, float *ax, float *ay, float *az,
					      float *phi, int spline)
{
	float sx[NB], sy[NB], sz[NB], sp[NB];
#pragma unroll
	for (int k = 0; k < NB; k++)
		sx[k] = sy[k] = sz[k] = sp[k] = 0.0f;
	for (int j = 0; j < cnt; j++) {
		const float4 s = src[j];
		const float ej = se[j];
#pragma unroll
		for (int k = 0; k < NB; k++) {
			const float dx = s.x - px[k], dy = s.y - py[k], dz = s.z - pz[k];
			const float r2 = fmaf(dx, dx, fmaf(dy, dy, dz * dz));
			float f, p;
			walk_soft_pair(spline, r2, sim_soft_pairf(pe[k], ej), &f, &p);
			const float mf = s.w * f;
			sx[k] = fmaf(dx, mf, sx[k]);
			sy[k] = fmaf(dy, mf, sy[k]);
			sz[k] = fmaf(dz, mf, sz[k]);
			if (POT)
				sp[k] = fmaf(s.w, p, sp[k]);
		}
	}
	walk_add_sums<NB, POT>(sx, sy, sz, sp, ax, ay, az, phi);
}

/* walk_m2p with the cell's length per target (the rule of docs/PHYSICS.md):
 * spline: cells are accepted only beyond h of every pair (walk_soft_accept),
 * where the kernel is Newtonian: eps2 = 0; plummer: eps_i^2 when eps_i >=
 * the cell's eps_max (exact), else max(eps_i^2, eps2_mean). stage[2][j].z
 * holds T itself and ss[j] the cell's (eps_max, eps2_mean). */
template <int NB, int MP, bool POT>
__device__ __forceinline__ void walk_m2p_soft(const struct walk_smem *sm, const float2 *ss, int cnt,
					      const float *px, const float *py, const float *pz,
					      const float *pe, float *ax, float *ay, float *az,
					      float *phi, int spline)
{
	float sx[NB], sy[NB], sz[NB], sp[NB];
#pragma unroll
	for (int k = 0; k < NB; k++)
		sx[k] = sy[k] = sz[k] = sp[k] = 0.0f;
	for (int j = 0; j < cnt; j++) {
		float4 c0 = sm->stage[0][j];
		float4 c1 = make_float4(0, 0, 0, 0), c2 = c1;
		if (MP >= 2) {
			c1 = sm->stage[1][j];
			c2 = sm->stage[2][j];
		}
		const float2 cs = ss[j];
#pragma unroll
		for (int k = 0; k < NB; k++) {
			const float ei2 = pe[k] * pe[k];
			const float e2 = spline ? 0.0f : pe[k] >= cs.x ? ei2 : fmaxf(ei2, cs.y);
			walk_m2p_one<MP, POT>(c0, c1, c2.x, c2.y, c2.z * e2, px[k], py[k], pz[k], e2,
					      &sx[k], &sy[k], &sz[k], &sp[k]);
		}
	}
	walk_add_sums<NB, POT>(sx, sy, sz, sp, ax, ay, az, phi);
}

/* May cell c, accepted by the opening criterion at distance d2 (squared)
 * from the group's box, stay accepted under the softening rule? gmax, gmin:
 * the group's largest and smallest length. spline: only when every body of
 * it lies beyond h = 2.8 eps of every target for the pair's length (d -
 * bmax >= 2.8 max(eps_max, gmax)): the Newtonian expansion is then exact;
 * plummer with lengths per body: open within 5 eps_max when a target's
 * length is below the cell's eps_max. */
__device__ __forceinline__ bool walk_soft_accept(const struct walk_soft &ws, int c, float d2,
						 float gmax, float gmin)
{
	const float emax = ws.node_soft ? ws.node_soft[c].x : ws.eps;
	const float d = sqrtf(d2);
	if (ws.spline)
		return d - ws.node_bmax[c] >= (float)SIM_SOFT_SPLINE_H * fmaxf(emax, gmax);
	return ws.node_soft == NULL || gmin >= emax || d >= 5.0f * emax;
}

/* One far cell per lane (node index c, where have) into the group's local
 * expansion: warp-wide when DIST (every lane must call), else into this
 * lane's own coefficients. */
template <int MP, bool POT, bool DIST>
__device__ __forceinline__ void far_cell(float *fc, int c, bool have,
					 const float4 *__restrict__ node_open,
					 const float4 *__restrict__ node_mq0,
					 const float4 *__restrict__ node_mq1, float gx, float gy, float gz,
					 float eps2, int lane)
{
	float v[FAR_NC];
#pragma unroll
	for (int k = 0; k < FAR_NC; k++)
		v[k] = 0.0f;
	if (have) {
		float4 op = node_open[c], q0 = node_mq0[c];
		float4 c1 = make_float4(0, 0, 0, 0), c2 = c1;
		if (MP >= 2) {
			float4 q1 = node_mq1[c];
			c1 = make_float4(q0.y, q0.z, q0.w, q1.x);
			c2 = make_float4(q1.y, q1.z, q1.w * eps2, 0.0f);
		}
		const float4 c0 = make_float4(op.x, op.y, op.z, q0.x);
		if (DIST) /* two calls: a pointer picked at run time would put v in memory */
			far_add<MP, POT>(v, gx - op.x, gy - op.y, gz - op.z, c0, c1, c2, eps2);
		else
			far_add<MP, POT>(fc, gx - op.x, gy - op.y, gz - op.z, c0, c1, c2, eps2);
	}
	if (DIST)
		far_scatter_add(v, fc, lane);
}

/* The first cnt monopole-only cells' (com, mass) into the stage (lane's own). */
__device__ __forceinline__ void walk_mono_stage(struct walk_smem *sm, const int *list,
						const float4 *__restrict__ node_open,
						const float4 *__restrict__ node_mq0, int lane, int cnt)
{
	if (lane < cnt) {
		const int c = list[lane];
		const float4 op = node_open[c];
		sm->stage[0][lane] = make_float4(op.x, op.y, op.z, node_mq0[c].x);
	}
}

/* LOC: far cells through the group's local expansion (tree_far.cuh):
 * 0 never (local_ratio 0), 1 with the coefficients in every lane's
 * registers, 2 spread over the lanes (DIST). LOC 2 is asked for 6 blocks
 * of 128 per multiprocessor (80 registers, ptxas spills 12 bytes; it would
 * take 86 and fit 5). */
#define WALK_MIN_BLOCKS(LOC) ((LOC) == 2 ? 6 : (LOC) == 1 ? 5 : 0)
/* SOFT: the general softening (struct walk_soft): separate instances, so
 * the uniform Plummer walk is today's code. Their LOC is 0, or 1 for the
 * spline only (walk_loc): its accepted cells lie beyond h of every pair,
 * where the kernel is Newtonian, so a far cell's expansion takes eps = 0
 * for the whole group, exactly; with Plummer lengths per body a far cell's
 * length would differ from body to body of the group. */
/* MONO (quadrupole walks, one Plummer length: tuning mono_factor > 0):
 * separate instances, so that the default walk is today's code. */
template <int NB, int MP, bool POT, int LOC, bool SOFT = false, bool MONO = false>
__global__ void __launch_bounds__(WALK_THREADS, WALK_MIN_BLOCKS(LOC))
	tree_walk_kernel(const float4 *__restrict__ pos, const int2 *__restrict__ groups,
			 const int2 *__restrict__ node_kids,
			 const float4 *__restrict__ node_open, const float4 *__restrict__ node_mq0,
			 const float4 *__restrict__ node_mq1, float4 *__restrict__ acc,
			 struct tree_ctl *ctl, float eps2, int count, float far2, int small_leaf,
			 const uint8_t *__restrict__ lev, int la, unsigned slot_lo, unsigned slot_hi,
			 const int *__restrict__ pk_slot, struct walk_soft ws, float mono2)
{
	constexpr bool DIST = LOC == 2;
	static_assert(!MONO || (MP == 2 && !SOFT), "monopole-only cells: quadrupole walks only");
	/* MONO: accepted near cells with d^2 > mono2 rcrit^2 (mono2 the tuning's
	 * mono_factor^2) take the monopole only, from a list of their own */
	__shared__ int mono_list[MONO ? WALK_WARPS : 1][64];
	int *sml = mono_list[MONO ? threadIdx.x >> 5 : 0];
	const float far_eps2 = SOFT ? 0.0f : eps2; /* the local expansion's (SOFT: spline only) */
	__shared__ struct walk_smem smem[WALK_WARPS];
	/* SOFT: the pending bodies' lengths, the staged cells' (eps_max, eps2_mean) */
	__shared__ float soft_be[SOFT ? WALK_WARPS : 1][64];
	__shared__ float2 soft_cs[SOFT ? WALK_WARPS : 1][32];
	float *sbe = soft_be[SOFT ? threadIdx.x >> 5 : 0];
	float2 *scs = soft_cs[SOFT ? threadIdx.x >> 5 : 0];
	const int lane = threadIdx.x & 31;
	struct walk_smem *sm = &smem[threadIdx.x >> 5];
	const unsigned lt_mask = (1u << lane) - 1u;
	/* packed (pk_slot != NULL): groups are ranges of pk_slot, every listed
	 * slot active (tree_pack_kernel); else ranges of slots */
	const unsigned ngroups = (unsigned)(pk_slot ? ctl->pk_groups : ctl->group_count);
	unsigned *next = pk_slot ? &ctl->pk_next : &ctl->group_next;

	for (;;) {
		unsigned g = 0;
		if (lane == 0)
			g = atomicAdd(next, 1u);
		g = __shfl_sync(FULL, g, 0);
		if (g >= ngroups)
			break;

		/* this lane's targets; slots past the group's end copy its first body */
		const int2 gr = groups[g];
		const int first = gr.x, gcount = gr.y - gr.x;
		int slot_of[NB];
		const int slot0 = pk_slot ? pk_slot[first] : first;
#pragma unroll
		for (int k = 0; k < NB; k++) {
			const int e = first + 32 * k + lane;
			slot_of[k] = 32 * k + lane < gcount ? (pk_slot ? pk_slot[e] : e) : slot0;
		}
		float px[NB], py[NB], pz[NB], pm[NB], ax[NB], ay[NB], az[NB], phi[NB];
		float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
		/* only active bodies' acc is written, and a group without one is
		 * not walked: over MPI ranks the slots [slot_lo, slot_hi); with
		 * lev (not used by tree_stage_walk, which packs instead) the
		 * slots of level >= la, the box still every body's as in the CPU
		 * twin's walk */
		bool act[NB];
		bool any_act = false;
#pragma unroll
		for (int k = 0; k < NB; k++) {
			const unsigned slot = (unsigned)slot_of[k];
			act[k] = 32 * k + lane < gcount && (lev == NULL || lev[slot] >= la) &&
				 slot - slot_lo < slot_hi - slot_lo;
			any_act |= act[k];
		}
		if (!__any_sync(FULL, any_act))
			continue;
#pragma unroll
		for (int k = 0; k < NB; k++) {
			float4 p = pos[slot_of[k]];
			px[k] = p.x, py[k] = p.y, pz[k] = p.z, pm[k] = p.w;
			ax[k] = ay[k] = az[k] = phi[k] = 0.0f;
			lo[0] = fminf(lo[0], p.x), hi[0] = fmaxf(hi[0], p.x);
			lo[1] = fminf(lo[1], p.y), hi[1] = fmaxf(hi[1], p.y);
			lo[2] = fminf(lo[2], p.z), hi[2] = fmaxf(hi[2], p.z);
		}
#pragma unroll
		for (int off = 16; off > 0; off >>= 1) {
#pragma unroll
			for (int a = 0; a < 3; a++) {
				lo[a] = fminf(lo[a], __shfl_xor_sync(FULL, lo[a], off));
				hi[a] = fmaxf(hi[a], __shfl_xor_sync(FULL, hi[a], off));
			}
		}
		/* SOFT: each target's length, the group's largest and smallest */
		float pe[NB], gmax = 0.0f, gmin = INFINITY;
		if (SOFT) {
#pragma unroll
			for (int k = 0; k < NB; k++) {
				pe[k] = ws.beps ? ws.beps[slot_of[k]] : ws.eps;
				gmax = fmaxf(gmax, pe[k]), gmin = fminf(gmin, pe[k]);
			}
#pragma unroll
			for (int off = 16; off > 0; off >>= 1) {
				gmax = fmaxf(gmax, __shfl_xor_sync(FULL, gmax, off));
				gmin = fminf(gmin, __shfl_xor_sync(FULL, gmin, off));
			}
		}
		const float gcx = 0.5f * (lo[0] + hi[0]), gcy = 0.5f * (lo[1] + hi[1]),
			    gcz = 0.5f * (lo[2] + hi[2]);
		const float ghx = 0.5f * (hi[0] - lo[0]), ghy = 0.5f * (hi[1] - lo[1]),
			    ghz = 0.5f * (hi[2] - lo[2]);
		const float rho2 = fmaf(ghx, ghx, fmaf(ghy, ghy, ghz * ghz));
		/* the group's local expansion: this lane's own sums (DIST) or all
		 * of its cells' coefficients */
		float fc[DIST ? 4 : FAR_NC];
#pragma unroll
		for (int k = 0; k < (DIST ? 4 : FAR_NC); k++)
			fc[k] = 0.0f;

		int sp = 1, nc = 0, nb = 0, nf = 0, nm = 0;
		unsigned long long n_p2p = 0, n_m2p = 0, n_m2l = 0;
		if (lane == 0)
			sm->stack[0] = 0u << 3 | 0u; /* the root, a range of one */
		__syncwarp();
		while (sp > 0) {
			/* pop whole ranges from the top while they fit in 32 lanes */
			uint32_t e = 0;
			int cnt = 0;
			if (lane < sp) {
				e = sm->stack[sp - 1 - lane];
				cnt = (int)(e & 7u) + 1;
			}
			int incl = warp_incl_scan(cnt, lane);
			int k = __popc(__ballot_sync(FULL, lane < sp && incl <= 32));
			int total = __shfl_sync(FULL, incl, k - 1);
			sp -= k;
			int excl = incl - cnt;
			unsigned starts = __reduce_or_sync(FULL, lane < k ? 1u << excl : 0u);
			int r = __popc(starts & ((2u << lane) - 1u)) - 1;
			uint32_t er = __shfl_sync(FULL, e, r);
			int exr = __shfl_sync(FULL, excl, r);
			const bool have = lane < total;
			const int cell = (int)(er >> 3) + (lane - exr);
			__syncwarp(); /* pops read before pushes overwrite */

			bool accept = false, far = false, open_leaf = false, open_int = false;
			bool mono = false;
			int2 kid = make_int2(0, 0);
			if (have) {
				float4 op = node_open[cell];
				kid = node_kids[cell];
				float ex = op.x - gcx, ey = op.y - gcy, ez = op.z - gcz;
				float dx = fmaxf(fabsf(ex) - ghx, 0.0f);
				float dy = fmaxf(fabsf(ey) - ghy, 0.0f);
				float dz = fmaxf(fabsf(ez) - ghz, 0.0f);
				const float d2 = fmaf(dx, dx, fmaf(dy, dy, dz * dz));
				accept = d2 > op.w;
				if (SOFT && accept)
					accept = walk_soft_accept(ws, cell, d2, gmax, gmin);
				/* far: through the group's local expansion (tree_far.cuh);
				 * near leaves of a few bodies: body by body, exact and
				 * cheaper than a quadrupole */
				far = LOC > 0 && accept && far2 * fmaf(ex, ex, fmaf(ey, ey, ez * ez)) > rho2;
				if (accept && !far && kid.y < 0 && -kid.y <= small_leaf)
					accept = false;
				mono = MONO && accept && !far && mono2 * d2 > op.w;
				open_leaf = !accept && kid.y < 0;
				open_int = !accept && kid.y > 0;
			}

			/* opened internal nodes push their children's range */
			unsigned mi = __ballot_sync(FULL, open_int);
			int slot = sp + __popc(mi & lt_mask);
			if (open_int) {
				if (slot < TREE_STACK_CAP)
					sm->stack[slot] = (uint32_t)kid.x << 3 | (uint32_t)(kid.y - 1);
				else
					ctl->stack_overflow = 1; /* impossible by the bound above */
			}
			sp = min(sp + __popc(mi), TREE_STACK_CAP);

			/* accepted cells join the pending lists */
			unsigned ma = __ballot_sync(FULL, accept && !far && !mono);
			if (accept && !far && !mono)
				sm->cells[nc + __popc(ma & lt_mask)] = cell;
			nc += __popc(ma);
			if (MONO) {
				unsigned mm = __ballot_sync(FULL, mono);
				if (mono)
					sml[nm + __popc(mm & lt_mask)] = cell;
				nm += __popc(mm);
			}
			if (LOC > 0) {
				unsigned mf = __ballot_sync(FULL, far);
				if (far)
					sm->far[nf + __popc(mf & lt_mask)] = cell;
				nf += __popc(mf);
			}
			__syncwarp();
			if (LOC > 0 && nf >= 32) {
				far_cell<MP, POT, DIST>(fc, sm->far[lane], true, node_open, node_mq0,
							node_mq1, gcx, gcy, gcz, far_eps2, lane);
				int rest = lane < nf - 32 ? sm->far[32 + lane] : 0;
				__syncwarp();
				if (lane < nf - 32)
					sm->far[lane] = rest;
				nf -= 32;
				n_m2l += 32;
				__syncwarp();
			}
			if (nc >= 32) {
				int c = sm->cells[lane];
				float4 op = node_open[c], q0 = node_mq0[c];
				sm->stage[0][lane] = make_float4(op.x, op.y, op.z, q0.x);
				if (MP >= 2) {
					float4 q1 = node_mq1[c];
					sm->stage[1][lane] = make_float4(q0.y, q0.z, q0.w, q1.x);
					sm->stage[2][lane] = make_float4(q1.y, q1.z, q1.w * (SOFT ? 1.0f : eps2), 0.0f);
				}
				if (SOFT)
					scs[lane] = ws.node_soft ? ws.node_soft[c] : make_float2(ws.eps, ws.eps * ws.eps);
				int rest = lane < nc - 32 ? sm->cells[32 + lane] : 0;
				__syncwarp();
				if (lane < nc - 32)
					sm->cells[lane] = rest;
				if (SOFT)
					walk_m2p_soft<NB, MP, POT>(sm, scs, 32, px, py, pz, pe, ax, ay, az, phi,
								   ws.spline);
				else
					walk_m2p<NB, MP, POT>(sm, 32, px, py, pz, ax, ay, az, phi, eps2);
				nc -= 32;
				n_m2p += 32;
				__syncwarp();
			}
			if (MONO && nm >= 32) {
				walk_mono_stage(sm, sml, node_open, node_mq0, lane, 32);
				int rest = lane < nm - 32 ? sml[32 + lane] : 0;
				__syncwarp();
				if (lane < nm - 32)
					sml[lane] = rest;
				walk_m2p<NB, 1, POT>(sm, 32, px, py, pz, ax, ay, az, phi, eps2);
				nm -= 32;
				n_m2p += 32;
				__syncwarp();
			}

			/* opened leaves' bodies join the pending body list, 32 at a time */
			if (!__any_sync(FULL, open_leaf))
				continue;
			int lcnt = open_leaf ? -kid.y : 0;
			int lincl = warp_incl_scan(lcnt, lane);
			int lexcl = lincl - lcnt;
			int T = __shfl_sync(FULL, lincl, 31);
			for (int base = 0; base < T; base += 32) {
				int q = base + lane;
				int rl = 0; /* lanes whose leaves end at or before q */
#pragma unroll
				for (int step = 16; step > 0; step >>= 1) {
					int v = __shfl_sync(FULL, lincl, rl + step - 1);
					if (v <= q)
						rl += step;
				}
				int lf = __shfl_sync(FULL, kid.x, rl);
				int lx = __shfl_sync(FULL, lexcl, rl);
				int add = min(32, T - base);
				if (lane < add) {
					sm->bodies[nb + lane] = pos[lf + (q - lx)];
					if (SOFT)
						sbe[nb + lane] = ws.beps ? ws.beps[lf + (q - lx)] : ws.eps;
				}
				nb += add;
				__syncwarp();
				if (nb >= 32) {
					if (SOFT)
						walk_p2p_soft<NB, POT>(sm->bodies, sbe, 32, px, py, pz, pe, ax,
								       ay, az, phi, ws.spline);
					else
						walk_p2p<NB, POT>(sm->bodies, 32, px, py, pz, ax, ay, az, phi, eps2);
					__syncwarp();
					float4 rest = sm->bodies[32 + lane];
					const float rest_e = SOFT ? sbe[32 + lane] : 0.0f;
					__syncwarp();
					if (lane < nb - 32) {
						sm->bodies[lane] = rest;
						if (SOFT)
							sbe[lane] = rest_e;
					}
					nb -= 32;
					n_p2p += 32;
					__syncwarp();
				}
			}
		}
		/* what is left in the lists */
		if (nc > 0) {
			if (lane < nc) {
				int c = sm->cells[lane];
				float4 op = node_open[c], q0 = node_mq0[c];
				sm->stage[0][lane] = make_float4(op.x, op.y, op.z, q0.x);
				if (MP >= 2) {
					float4 q1 = node_mq1[c];
					sm->stage[1][lane] = make_float4(q0.y, q0.z, q0.w, q1.x);
					sm->stage[2][lane] = make_float4(q1.y, q1.z, q1.w * (SOFT ? 1.0f : eps2), 0.0f);
				}
				if (SOFT)
					scs[lane] = ws.node_soft ? ws.node_soft[c] : make_float2(ws.eps, ws.eps * ws.eps);
			}
			__syncwarp();
			if (SOFT)
				walk_m2p_soft<NB, MP, POT>(sm, scs, nc, px, py, pz, pe, ax, ay, az, phi, ws.spline);
			else
				walk_m2p<NB, MP, POT>(sm, nc, px, py, pz, ax, ay, az, phi, eps2);
			n_m2p += nc;
		}
		if (MONO && nm > 0) {
			__syncwarp(); /* the last flush has read the stage */
			walk_mono_stage(sm, sml, node_open, node_mq0, lane, nm);
			__syncwarp();
			walk_m2p<NB, 1, POT>(sm, nm, px, py, pz, ax, ay, az, phi, eps2);
			n_m2p += nm;
		}
		if (nb > 0) {
			if (SOFT)
				walk_p2p_soft<NB, POT>(sm->bodies, sbe, nb, px, py, pz, pe, ax, ay, az, phi,
						       ws.spline);
			else
				walk_p2p<NB, POT>(sm->bodies, nb, px, py, pz, ax, ay, az, phi, eps2);
			n_p2p += nb;
		}
		if (LOC > 0 && nf > 0) {
			far_cell<MP, POT, DIST>(fc, lane < nf ? sm->far[lane] : 0, lane < nf, node_open,
						node_mq0, node_mq1, gcx, gcy, gcz, far_eps2, lane);
			n_m2l += nf;
		}
		__syncwarp(); /* the next group reuses the lists */
		if (LOC > 0 && n_m2l > 0) { /* the same on every lane */
			float c[FAR_NC];
			if (DIST) {
				far_gather(fc, c);
			} else {
				far_warp_sum(fc, POT ? 0 : 1);
#pragma unroll
				for (int k = 0; k < FAR_NC; k++)
					c[k] = fc[k];
			}
#pragma unroll
			for (int k = 0; k < NB; k++)
				far_eval<POT>(c, px[k] - gcx, py[k] - gcy, pz[k] - gcz, &ax[k], &ay[k],
					      &az[k], &phi[k]);
		}

#pragma unroll
		for (int k = 0; k < NB; k++) {
			const int i = slot_of[k];
			if (act[k]) {
				/* the walk summed the body's own softened self term
				 * -m/eps into phi exactly once (its leaf always opens);
				 * the same float expression takes it out again */
				float w = POT ? phi[k] + pm[k] * rsqrtf(eps2) : 0.0f;
				if (SOFT && POT) { /* the same expression as the self pair's */
					float f0, p0;
					walk_soft_pair(ws.spline, 0.0f, pe[k], &f0, &p0);
					w = phi[k] - pm[k] * p0;
				}
				acc[i] = make_float4(ax[k], ay[k], az[k], w);
			}
		}
		if (count && lane == 0) {
			atomicAdd(&ctl->p2p, n_p2p * (unsigned long long)gcount);
			atomicAdd(&ctl->m2p, n_m2p * (unsigned long long)gcount);
			atomicAdd(&ctl->m2l, n_m2l * (unsigned long long)gcount);
		}
	}
}

typedef void (*walk_fn)(const float4 *, const int2 *, const int2 *, const float4 *, const float4 *,
			const float4 *, float4 *, struct tree_ctl *, float, int, float, int,
			const uint8_t *, int, unsigned, unsigned, const int *, struct walk_soft, float);

/* The walk instance; mono (tuning mono_factor > 0) takes effect with
 * multipoles 2 and one Plummer length only. */
static walk_fn walk_pick(int lanes, int mp, int pot, int loc, int soft, int mono)
{
#define MONO_FNS(NB)                                                                      \
	{{tree_walk_kernel<NB, 2, false, 0, false, true>,                                 \
	  tree_walk_kernel<NB, 2, false, 1, false, true>,                                 \
	  tree_walk_kernel<NB, 2, false, 2, false, true>},                                \
	 {tree_walk_kernel<NB, 2, true, 0, false, true>,                                  \
	  tree_walk_kernel<NB, 2, true, 1, false, true>,                                  \
	  tree_walk_kernel<NB, 2, true, 2, false, true>}}
	static const walk_fn mono_fns[2][2][3] = {MONO_FNS(1), MONO_FNS(2)};
#undef MONO_FNS
	if (mono && !soft && mp == 2)
		return mono_fns[lanes - 1][pot ? 1 : 0][loc];
#define SOFT_FNS(NB, MP)                                                                  \
	{{tree_walk_kernel<NB, MP, false, 0, true>, tree_walk_kernel<NB, MP, false, 1, true>},  \
	 {tree_walk_kernel<NB, MP, true, 0, true>, tree_walk_kernel<NB, MP, true, 1, true>}}
	static const walk_fn soft_fns[2][2][2][2] = {
		{SOFT_FNS(1, 1), SOFT_FNS(1, 2)},
		{SOFT_FNS(2, 1), SOFT_FNS(2, 2)},
	};
#undef SOFT_FNS
	if (soft)
		return soft_fns[lanes - 1][mp - 1][pot ? 1 : 0][loc > 0 ? 1 : 0];
#define WALK_FNS(NB, MP)                                                                  \
	{{tree_walk_kernel<NB, MP, false, 0>, tree_walk_kernel<NB, MP, false, 1>,          \
	  tree_walk_kernel<NB, MP, false, 2>},                                              \
	 {tree_walk_kernel<NB, MP, true, 0>, tree_walk_kernel<NB, MP, true, 1>,            \
	  tree_walk_kernel<NB, MP, true, 2>}}
	static const walk_fn fns[2][2][2][3] = {
		{WALK_FNS(1, 1), WALK_FNS(1, 2)},
		{WALK_FNS(2, 1), WALK_FNS(2, 2)},
	};
#undef WALK_FNS
	return fns[lanes - 1][mp - 1][pot ? 1 : 0][loc];
}

/* LOC of the walk kernel for this tree. The general softening: 1 for the
 * spline when the tuning has a local expansion (spread or not), else 0:
 * Plummer lengths per body take every accepted cell through walk_m2p_soft
 * (see tree_walk_kernel's SOFT). */
static int walk_loc(const struct gpu_tree *t)
{
	if (t->soft)
		return t->spline && t->local_ratio > 0.0f ? 1 : 0;
	return t->local_ratio > 0.0f ? (t->local_dist ? 2 : 1) : 0;
}

/* the monopole-only variant (tuning mono_factor) is on */
static int walk_mono(const struct gpu_tree *t)
{
	return t->mono_factor > 0.0f;
}

int tree_walk_prepare(struct gpu_tree *t)
{
	for (int l = 1; l <= 2; l++)
		for (int mp = 1; mp <= 2; mp++)
			for (int pot = 0; pot <= 1; pot++) {
				int per_sm = 0;
				CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
					&per_sm, walk_pick(l, mp, pot, walk_loc(t), t->soft, walk_mono(t)),
					WALK_THREADS, 0));
				if (l == t->lanes && mp == t->multipoles && pot == 0)
					t->walk_fit_per_sm = per_sm;
				if (t->walk_blocks_per_sm > 0 && t->walk_blocks_per_sm < per_sm)
					per_sm = t->walk_blocks_per_sm;
				t->walk_blocks[l - 1][mp - 1][pot] = (per_sm > 0 ? per_sm : 1) * t->sm_count;
			}
	return 0;
}

/* ---- individual time steps: the active slots packed into walk groups ----
 * One warp per group node (a run of groups that starts at a head,
 * tree_build.cu): its active slots (lev >= la, within [slot_lo, slot_hi)),
 * in slot order, go to pk_slot, cut into groups of gsize. Two passes over
 * the node's bodies (at most group_max of them, or a big leaf): a count to
 * reserve space with one atomic per node, then the list. */
__global__ void tree_pack_reset_kernel(struct tree_ctl *c)
{
	c->pk_next = 0;
	c->pk_groups = 0;
	c->pk_slots = 0;
}

__global__ void tree_pack_kernel(const int2 *__restrict__ groups, const uint8_t *__restrict__ head,
				 const uint8_t *__restrict__ lev, int la, unsigned slot_lo,
				 unsigned slot_hi, int gsize, int *pk_slot, int2 *pk_group,
				 struct tree_ctl *c)
{
	const int lane = threadIdx.x & 31;
	const int ng = c->group_count;
	const int warps = gridDim.x * (blockDim.x >> 5);
	for (int g = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); g < ng; g += warps) {
		if (!head[g])
			continue; /* the whole warp: g is the warp's */
		int ge = g + 1;
		while (ge < ng && !head[ge])
			ge++;
		const int b0 = groups[g].x, b1 = groups[ge - 1].y; /* the node's slots */
		int total = 0;
		for (int i = b0 + lane; __any_sync(FULL, i < b1); i += 32) {
			const bool a = i < b1 && lev[i] >= la && (unsigned)i - slot_lo < slot_hi - slot_lo;
			total += __popc(__ballot_sync(FULL, a));
		}
		if (total == 0)
			continue;
		const int npk = (total + gsize - 1) / gsize;
		int base = 0, gbase = 0;
		if (lane == 0) {
			base = atomicAdd(&c->pk_slots, total);
			gbase = atomicAdd(&c->pk_groups, npk);
		}
		base = __shfl_sync(FULL, base, 0);
		gbase = __shfl_sync(FULL, gbase, 0);
		int at = base;
		for (int i = b0 + lane; __any_sync(FULL, i < b1); i += 32) {
			const bool a = i < b1 && lev[i] >= la && (unsigned)i - slot_lo < slot_hi - slot_lo;
			const unsigned m = __ballot_sync(FULL, a);
			if (a)
				pk_slot[at + __popc(m & ((1u << lane) - 1u))] = i;
			at += __popc(m);
		}
		for (int j = lane; j < npk; j += 32)
			pk_group[gbase + j] = make_int2(base + j * gsize, min(base + (j + 1) * gsize, base + total));
	}
}

static int tree_stage_pack(struct gpu_tree *t, const struct gpu_bodies *b, int la, cudaStream_t s)
{
	tree_pack_reset_kernel<<<1, 1, 0, s>>>(t->ctl);
	CUDA_CHECK(cudaGetLastError());
	/* one warp per group; most are not heads and leave at once */
	const size_t groups = (b->n + 31) / 32 + 1;
	const unsigned blocks = (unsigned)((groups + 7) / 8);
	tree_pack_kernel<<<blocks, 256, 0, s>>>(t->groups, t->group_head, b->lev, la, t->slot_lo,
						 t->slot_hi, 32 * t->lanes, t->pk_slot, t->pk_group,
						 t->ctl);
	CUDA_CHECK(cudaGetLastError());
	return 0;
}

int tree_stage_walk(struct gpu_tree *t, struct gpu_bodies *b, int need_pot, int la, cudaStream_t s)
{
	int lanes = t->lanes, mp = t->multipoles, pot = need_pot ? 1 : 0;
	int blocks = t->walk_blocks[lanes - 1][mp - 1][pot];
	const int packed = la > 0 && b->lev != NULL;
	if (packed) {
		int rc = tree_stage_pack(t, b, la, s);
		if (rc)
			return rc;
	}
	/* the group count is on the device; n/(32 lanes) is about it */
	size_t groups = (b->n + 32 * lanes - 1) / (32 * lanes);
	size_t want = (groups + WALK_WARPS - 1) / WALK_WARPS + 1;
	if ((size_t)blocks > want)
		blocks = (int)want;
	t->walk_last_blocks = blocks;
	struct walk_soft ws = {b->eps, t->node_soft, t->node_bmax, t->eps, t->spline};
	walk_pick(lanes, mp, pot, walk_loc(t), t->soft, walk_mono(t))<<<blocks, WALK_THREADS, 0, s>>>(
		b->pos, packed ? t->pk_group : t->groups, t->node_kids, t->node_open, t->node_mq0,
		t->node_mq1, b->acc, t->ctl, t->eps * t->eps, t->count_interactions,
		t->local_ratio * t->local_ratio, t->leaf_p2p, packed || la <= 0 ? NULL : b->lev, la,
		t->slot_lo, t->slot_hi, packed ? t->pk_slot : NULL, ws,
		t->mono_factor * t->mono_factor);
	CUDA_CHECK(cudaGetLastError());
	return 0;
}

int tree_stage_walk_src(struct gpu_tree *t, const float4 *pos, size_t n, const uint8_t *lev, int la,
			const struct tree_src *src, float4 *acc, int need_pot, cudaStream_t s)
{
	if (t->soft) {
		log_error("barnes-hut (GPU): a received tree's walk takes one Plummer length only "
			  "(internal)");
		return NB_ERUNTIME;
	}
	int lanes = t->lanes, mp = t->multipoles, pot = need_pot ? 1 : 0;
	int blocks = t->walk_blocks[lanes - 1][mp - 1][pot];
	size_t groups = (n + 32 * lanes - 1) / (32 * lanes);
	size_t want = (groups + WALK_WARPS - 1) / WALK_WARPS + 1;
	if ((size_t)blocks > want)
		blocks = (int)want;
	struct walk_soft ws = {NULL, NULL, NULL, t->eps, 0};
	int rc = tree_stage_refit_reset(t, s); /* the group counter back to 0 */
	if (rc)
		return rc;
	walk_pick(lanes, mp, pot, walk_loc(t), 0, walk_mono(t))<<<blocks, WALK_THREADS, 0, s>>>(
		pos, t->groups, src->kids, src->open, src->mq0, src->mq1, acc, t->ctl,
		t->eps * t->eps, t->count_interactions, t->local_ratio * t->local_ratio, t->leaf_p2p,
		lev, lev ? la : 0, 0u, UINT_MAX, NULL, ws, t->mono_factor * t->mono_factor);
	CUDA_CHECK(cudaGetLastError());
	return 0;
}
