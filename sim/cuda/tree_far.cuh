/* tree_far.cuh - far cells of the GPU tree walk (tree_walk.cu) through one
 * local expansion per walk group: the float twin of sim/tree_local.c.
 *
 * A cell that the walk accepts and that is far from the group for the
 * group's size (rho < ratio R: rho the half diagonal of the group's box, R
 * the distance from the box centre g to the cell's centre of mass, ratio
 * gpu_tree_tuning.local_ratio) is not applied to every body. One lane adds
 * the cell's Taylor expansion about g to its own coefficients; when the
 * walk ends the warp sums the lanes' coefficients and every body evaluates
 * the polynomial at y = x - g (PKDGRAV does the same with its distant
 * cells). Work per far cell: ~170 FP instructions on one lane, where
 * applying it body by body costs ~35 on each of the group's 32 lanes.
 *
 * The cell's potential is phi(r) = -M D(r) - (1/2) S_ab D_ab(r), D = 1/s,
 * s^2 = |r|^2 + eps^2, r = x - com, S the second moment about the com,
 * S = (Q + T I)/3 (Q traceless, T = tr S): the walk's softened quadrupole.
 * Its derivatives at r = g - com, with q = Q r, u = r.Q.r - T eps^2:
 *   P0    = -M/s - u/(2 s^5)
 *   P1_a  = B r_a - q_a/s^5,                 B = M/s^3 + 5u/(2 s^7)
 *   P2_ab = A r_a r_b + B d_ab + C (q_a r_b + r_a q_b) - Q_ab/s^5,
 *           A = -3M/s^5 - 35u/(2 s^9), C = 5/s^7
 *   P3    = E r_a r_b r_c + F (d_ab r_c + d_ac r_b + d_bc r_a),
 *           E = 15M/s^7, F = -3M/s^5
 *   P4    = G r_a r_b r_c r_d + H (d_ab r_c r_d + 5 more) + K (d_ab d_cd + 2 more),
 *           G = -105M/s^9, H = 15M/s^7, K = -3M/s^5
 * (P3 and P4 are the monopole's: the quadrupole's S D_abcde and beyond are
 * left out), and
 *   phi(g + y) = P0 + P1.y + P2 yy/2 + P3 yyy/6 + P4 yyyy/24,  a = -grad phi.
 * What is left out is O((rho/R)^4) of the monopole and O((b/R)^2 (rho/R)^2)
 * of the quadrupole (b the cell's size), against the multipole expansion's
 * own O((b/R)^3). Host emulation (1M Plummer and two galaxies, theta 0.5,
 * bmax): ratio 0.1 takes 52-60 % of the body-cell interactions to the
 * expansion at the same median error as applying every cell body by body.
 *
 * A symmetric tensor component is named by its index counts (n0, n1, n2)
 * (how many x, y, z indices) and stored at far_idx(n1, n2) within its
 * rank: k (k + 1)/2 + n2 with k = n1 + n2. Ranks 0..4 follow one another
 * in c[FAR_NC]: P0 at 0, P1 at 1, P2 at 4, P3 at 10, P4 at 20. */
#ifndef NB_TREE_FAR_CUH
#define NB_TREE_FAR_CUH

#define FAR_NC 35

__host__ __device__ constexpr int far_idx(int n1, int n2)
{
	return (n1 + n2) * (n1 + n2 + 1) / 2 + n2;
}
__host__ __device__ constexpr int far_base(int rank)
{
	return rank == 0 ? 0 : rank == 1 ? 1 : rank == 2 ? 4 : rank == 3 ? 10 : 20;
}
__host__ __device__ constexpr int far_choose2(int n)
{
	return n * (n - 1) / 2;
}
__host__ __device__ constexpr int far_fact(int n)
{
	return n <= 1 ? 1 : n * far_fact(n - 1);
}
/* pairings of 4 indices into equal pairs: 3 for xxxx, 1 for xxyy */
__host__ __device__ constexpr int far_pairings(int n0, int n1, int n2)
{
	return (n0 % 2 || n1 % 2 || n2 % 2) ? 0
					    : (n0 == 4 || n1 == 4 || n2 == 4) ? 3 : 1;
}

/* rp[a][k] = r_a^k, k = 0..4 */
__device__ __forceinline__ void far_powers(float x, float y, float z, float rp[3][5])
{
	rp[0][0] = rp[1][0] = rp[2][0] = 1.0f;
	rp[0][1] = x, rp[1][1] = y, rp[2][1] = z;
#pragma unroll
	for (int a = 0; a < 3; a++) {
		rp[a][2] = rp[a][1] * rp[a][1];
		rp[a][3] = rp[a][2] * rp[a][1];
		rp[a][4] = rp[a][2] * rp[a][2];
	}
}

/* Add one cell (com and mass c0, quadrupole Qxx Qyy Qzz Qxy in c1, Qxz Qyz
 * T eps^2 in c2, as the walk stages them) seen from g: r = g - com. */
template <int MP, bool POT>
__device__ __forceinline__ void far_add(float *c, float rx, float ry, float rz, float4 c0,
					float4 c1, float4 c2, float eps2)
{
	const float s2 = fmaf(rx, rx, fmaf(ry, ry, fmaf(rz, rz, eps2)));
	const float si = rsqrtf(s2), si2 = si * si;
	const float s3 = si * si2, s5 = s3 * si2, s7 = s5 * si2, s9 = s7 * si2;
	const float M = c0.w;
	float qx = 0.0f, qy = 0.0f, qz = 0.0f, u = 0.0f;
	if (MP >= 2) {
		qx = fmaf(c1.x, rx, fmaf(c1.w, ry, c2.x * rz));
		qy = fmaf(c1.w, rx, fmaf(c1.y, ry, c2.y * rz));
		qz = fmaf(c2.x, rx, fmaf(c2.y, ry, c1.z * rz));
		u = fmaf(rx, qx, fmaf(ry, qy, fmaf(rz, qz, -c2.z)));
	}
	const float Ms5 = M * s5, Ms7 = M * s7;
	const float B = fmaf(2.5f * u, s7, M * s3);
	if (POT)
		c[0] -= fmaf(0.5f * u, s5, M * si);
	const float r[3] = {rx, ry, rz}, q[3] = {qx, qy, qz};
#pragma unroll
	for (int a = 0; a < 3; a++)
		c[1 + a] += fmaf(B, r[a], -q[a] * s5);
	/* P2 */
	const float A = fmaf(-17.5f * u, s9, -3.0f * Ms5), C = 5.0f * s7;
	{
		float Qm[3][3];
		if (MP >= 2) {
			Qm[0][0] = c1.x, Qm[1][1] = c1.y, Qm[2][2] = c1.z;
			Qm[0][1] = Qm[1][0] = c1.w, Qm[0][2] = Qm[2][0] = c2.x, Qm[1][2] = Qm[2][1] = c2.y;
		}
#pragma unroll
		for (int a = 0; a < 3; a++)
#pragma unroll
			for (int b = a; b < 3; b++) {
				float v = A * r[a] * r[b];
				if (a == b)
					v += B;
				if (MP >= 2) {
					v = fmaf(C, fmaf(q[a], r[b], r[a] * q[b]), v);
					v = fmaf(-Qm[a][b], s5, v);
				}
				const int n1 = (a == 1) + (b == 1), n2 = (a == 2) + (b == 2);
				c[4 + far_idx(n1, n2)] += v;
			}
	}
	float rp[3][5];
	far_powers(rx, ry, rz, rp);
	/* P3: E r^n + F sum over equal pairs */
	const float E = 15.0f * Ms7, F = -3.0f * Ms5;
#pragma unroll
	for (int n2 = 0; n2 <= 3; n2++)
#pragma unroll
		for (int n1 = 0; n1 <= 3 - n2; n1++) {
			const int n0 = 3 - n1 - n2;
			float v = E * (rp[0][n0] * rp[1][n1] * rp[2][n2]);
			if (n0 >= 2)
				v = fmaf(F * far_choose2(n0), rp[0][n0 >= 2 ? n0 - 2 : 0] * rp[1][n1] * rp[2][n2], v);
			if (n1 >= 2)
				v = fmaf(F * far_choose2(n1), rp[0][n0] * rp[1][n1 >= 2 ? n1 - 2 : 0] * rp[2][n2], v);
			if (n2 >= 2)
				v = fmaf(F * far_choose2(n2), rp[0][n0] * rp[1][n1] * rp[2][n2 >= 2 ? n2 - 2 : 0], v);
			c[10 + far_idx(n1, n2)] += v;
		}
	/* P4: G r^n + H sum over equal pairs + K pairings */
	const float G = -105.0f * M * s9, H = 15.0f * Ms7, K = -3.0f * Ms5;
#pragma unroll
	for (int n2 = 0; n2 <= 4; n2++)
#pragma unroll
		for (int n1 = 0; n1 <= 4 - n2; n1++) {
			const int n0 = 4 - n1 - n2;
			float v = G * (rp[0][n0] * rp[1][n1] * rp[2][n2]);
			if (n0 >= 2)
				v = fmaf(H * far_choose2(n0), rp[0][n0 >= 2 ? n0 - 2 : 0] * rp[1][n1] * rp[2][n2], v);
			if (n1 >= 2)
				v = fmaf(H * far_choose2(n1), rp[0][n0] * rp[1][n1 >= 2 ? n1 - 2 : 0] * rp[2][n2], v);
			if (n2 >= 2)
				v = fmaf(H * far_choose2(n2), rp[0][n0] * rp[1][n1] * rp[2][n2 >= 2 ? n2 - 2 : 0], v);
			if (far_pairings(n0, n1, n2))
				v = fmaf(K, (float)far_pairings(n0, n1, n2), v);
			c[20 + far_idx(n1, n2)] += v;
		}
}

/* One step of a reduce-scatter by recursive halving: of v[0, 2H) this lane
 * keeps the half its lane bit H picks, plus the partner's copy of it. */
template <int H>
__device__ __forceinline__ void far_halve(float *v, int lane)
{
	const bool upper = (lane & H) != 0;
#pragma unroll
	for (int j = 0; j < H; j++) {
		const float send = upper ? v[j] : v[j + H];
		const float keep = upper ? v[j + H] : v[j];
		v[j] = keep + __shfl_xor_sync(0xffffffffu, send, H);
	}
}

/* Distributed accumulation: lane L keeps coefficient L of the group's sum
 * in own[0] and every lane keeps coefficients 32..34 in own[1..3]. A flush
 * of up to 32 far cells (one per lane) computes each cell's coefficients
 * in v, then reduce-scatters them by recursive halving (31 shuffles) and
 * sums the last three (15): the 35 running sums do not occupy 35 registers
 * through the rest of the walk. v is clobbered. */
__device__ __forceinline__ void far_scatter_add(float *v, float own[4], int lane)
{
#pragma unroll
	for (int k = 32; k < FAR_NC; k++) {
		float x = v[k];
#pragma unroll
		for (int off = 16; off > 0; off >>= 1)
			x += __shfl_xor_sync(0xffffffffu, x, off);
		own[k - 31] += x;
	}
	far_halve<16>(v, lane);
	far_halve<8>(v, lane);
	far_halve<4>(v, lane);
	far_halve<2>(v, lane);
	far_halve<1>(v, lane);
	own[0] += v[0];
}

/* The group's coefficients, on every lane, from far_scatter_add's sums. */
__device__ __forceinline__ void far_gather(const float own[4], float *c)
{
#pragma unroll
	for (int k = 0; k < 32; k++)
		c[k] = __shfl_sync(0xffffffffu, own[0], k);
#pragma unroll
	for (int k = 32; k < FAR_NC; k++)
		c[k] = own[k - 31];
}

/* Sum of the warp's coefficients, on every lane. */
__device__ __forceinline__ void far_warp_sum(float *c, int from)
{
#pragma unroll
	for (int k = 0; k < FAR_NC; k++) {
		if (k < from)
			continue;
#pragma unroll
		for (int off = 16; off > 0; off >>= 1)
			c[k] += __shfl_xor_sync(0xffffffffu, c[k], off);
	}
}

/* The expansion at y (relative to g): acceleration added to a, potential
 * (POT) to phi. a_axis = -sum over ranks n >= 1 and counts m of rank n - 1
 * of y^m / (m0! m1! m2!) P_n[m + e_axis]; phi = sum over ranks n and counts
 * m of rank n of y^m / m! P_n[m]. */
template <bool POT>
__device__ __forceinline__ void far_eval(const float *c, float yx, float yy, float yz, float *ax,
					 float *ay, float *az, float *phi)
{
	float yp[3][5];
	far_powers(yx, yy, yz, yp);
	float gx = 0.0f, gy = 0.0f, gz = 0.0f, p = 0.0f;
#pragma unroll
	for (int n = 1; n <= 4; n++) {
		const int base = far_base(n);
#pragma unroll
		for (int m2 = 0; m2 <= n - 1; m2++)
#pragma unroll
			for (int m1 = 0; m1 <= n - 1 - m2; m1++) {
				const int m0 = n - 1 - m1 - m2;
				const float w = yp[0][m0] * yp[1][m1] * yp[2][m2] /
						(float)(far_fact(m0) * far_fact(m1) * far_fact(m2));
				gx = fmaf(w, c[base + far_idx(m1, m2)], gx);
				gy = fmaf(w, c[base + far_idx(m1 + 1, m2)], gy);
				gz = fmaf(w, c[base + far_idx(m1, m2 + 1)], gz);
			}
		if (POT) {
#pragma unroll
			for (int m2 = 0; m2 <= n; m2++)
#pragma unroll
				for (int m1 = 0; m1 <= n - m2; m1++) {
					const int m0 = n - m1 - m2;
					p = fmaf(yp[0][m0] * yp[1][m1] * yp[2][m2] /
							 (float)(far_fact(m0) * far_fact(m1) * far_fact(m2)),
						 c[base + far_idx(m1, m2)], p);
				}
		}
	}
	*ax -= gx, *ay -= gy, *az -= gz;
	if (POT)
		*phi += c[0] + p;
}

#endif
