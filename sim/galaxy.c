/* galaxy.c - sampling one disk galaxy (exponential disk, Hernquist bulge,
 * Hernquist halo) in equilibrium, after Hernquist (1993) and Springel,
 * Di Matteo & Hernquist (2005).
 *
 *  - Disk: Sigma(R) = M/(2 pi h^2) exp(-R/h), rho ~ sech^2(z/z0). R from
 *    the gamma(2) distribution R = -h ln(u1 u2), redrawn beyond 10 h;
 *    z = z0 artanh(2u - 1). Velocities: Gaussian about the mean rotation with
 *    the dispersions of galaxy_potential.c (Toomre Q, vertical Jeans
 *    equation, epicyclic ratio, asymmetric drift), using the thick, softened
 *    disk's own forces (galaxy_disk_force.c).
 *  - Bulge and halo: Hernquist spheres truncated at rmax * a (renormalised),
 *    r from the inverse cumulative mass; isotropic velocities drawn from
 *    the Eddington distribution function in the COMBINED (spherically
 *    averaged) potential of all three parts (galaxy_df.c). The combined
 *    potential, not each sphere's own, is what keeps the halo in
 *    equilibrium around the disk; the exact f(E) rather than Gaussians with
 *    the Jeans dispersion is what keeps the cusp and the virial ratio.
 *
 * Bodies 2p and 2p+1 of a part are mirror images (x, v) and (-x, -v), a
 * "quiet start" that puts each part's centre of mass exactly at rest at the
 * origin. Every draw of pair p of part j is a pure function of
 * (seed, stream, p, d) (sim_rng_uniform), so the result does not depend on
 * thread count. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "galaxy_potential.h"
#include "ic_range.h"
#include "sim.h"
#include "soften_assign.h"

/* Draws per mirror pair: pair p of a part uses counters [p * DRAWS, (p+1) * DRAWS). */
#define DRAWS 256
/* Rejection tries for a bulge/halo speed (acceptance is ~40%). */
#define MAX_VEL_TRIES 100

struct draw {
	uint64_t seed, stream, base;
	int d;
};

static double uni(struct draw *r)
{
	double x = sim_rng_uniform(r->seed, r->stream, r->base + (uint64_t)r->d);
	if (r->d < DRAWS - 1)
		r->d++;
	return x;
}

/* Standard normal by Box-Muller (one of the pair; simple and reproducible). */
static double gauss(struct draw *r)
{
	double u1 = uni(r), u2 = uni(r);
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

static uint64_t part_stream(uint64_t stream_base, int part)
{
	/* sim_ic_build spaces entries' bases 1 << 40 apart (ic.c), so parts
	 * 1 << 32 apart stay inside their entry's range. */
	return stream_base + ((uint64_t)(part + 1) << 32);
}

/* The disk's bodies; z0 the layer's sech^2 height and cold the ratio of its
 * velocity dispersions to the stars' (1: the stellar disk itself). The dust
 * layer (cold = z0_dust / z0 < 1) is a thin cold sub-disk: near the
 * midplane the vertical force is harmonic, so a layer's thickness scales
 * with its vertical dispersion, and every dispersion is scaled by that same
 * ratio; its mean rotation keeps the stars' circular speed with the
 * asymmetric drift, which goes as sigma^2, scaled by cold^2. A dust layer
 * thicker than the stars (cold > 1) keeps the stars' dispersions and
 * settles towards their thickness. young: the thinner, colder young layer
 * (sim/galaxy_young.c; z0 = SIM_GALAXY_YOUNG_HEIGHT x the disk's, cold 1). */
static void sample_disk(const struct sim_galaxy_model *m, double z0, double cold,
			struct sim_state *st, size_t first, long i0, long count, uint64_t seed,
			uint64_t stream, int young)
{
	double rmax = SIM_GALAXY_DISK_RMAX * m->h;
#pragma omp parallel for schedule(static)
	for (long i = i0; i < i0 + count; i++) {
		struct draw r = {seed, stream, (uint64_t)(i / 2) * DRAWS, 0};
		double sg = (i & 1) ? -1.0 : 1.0; /* mirror pairs, see sim_ic_disk_galaxy */
		double R;
		do {
			R = -m->h * log(uni(&r) * uni(&r));
		} while (R > rmax && r.d < DRAWS / 2);
		if (R > rmax)
			R = rmax * uni(&r);
		double ph = 2 * M_PI * uni(&r);
		double uz = uni(&r);
		double z = 0.5 * z0 * log(uz / (1 - uz)); /* z0 artanh(2u-1) */
		struct sim_galaxy_disk_kin k;
		sim_galaxy_disk_kinematics(m, R, z, &k);
		if (young)
			sim_galaxy_young_kinematics(m, R, z, &k);
		double vphi = k.vphi;
		if (cold < 1) {
			k.sigr2 *= cold * cold;
			k.sigz2 *= cold * cold;
			k.sigp2 *= cold * cold;
			double v2 = k.vc2 - cold * cold * (k.vc2 - k.vphi * k.vphi);
			vphi = v2 > 0 ? sqrt(v2) : k.vphi;
		}
		double vr = sqrt(k.sigr2) * gauss(&r);
		double vz = sqrt(k.sigz2) * gauss(&r);
		double vp = vphi + sqrt(k.sigp2) * gauss(&r);
		double c = cos(ph), s = sin(ph);
		size_t j = first + (size_t)(i - i0);
		st->pos[3 * j + 0] = sg * R * c;
		st->pos[3 * j + 1] = sg * R * s;
		st->pos[3 * j + 2] = sg * z;
		st->vel[3 * j + 0] = sg * (vr * c - vp * s);
		st->vel[3 * j + 1] = sg * (vr * s + vp * c);
		st->vel[3 * j + 2] = sg * vz;
	}
}

/* Speed at radius r from P(v) ~ v^2 f(psi - v^2/2), v < v_esc, by rejection
 * under 1.25 x the tabulated peak (sim_galaxy_df_gmax; the margin covers the
 * peak between its 64 samples and between grid radii). */
static double draw_speed(const struct sim_galaxy_df *df, double r, struct draw *rd)
{
	double psi = sim_galaxy_df_psi(df, r), vesc = sqrt(2 * psi);
	double gmax = 1.25 * sim_galaxy_df_gmax(df, r), best = 0, vbest = 0;
	if (!(gmax > 0))
		return 0;
	for (int tries = 0; tries < MAX_VEL_TRIES; tries++) {
		double v = vesc * uni(rd);
		double g = v * v * sim_galaxy_df_f(df, psi - 0.5 * v * v);
		if (uni(rd) * gmax <= g)
			return v;
		if (g > best)
			best = g, vbest = v;
	}
	return vbest;
}

static void sample_sphere(const struct sim_galaxy_df *df, double a, double rt,
			  struct sim_state *st, size_t first, long i0, long count, uint64_t seed,
			  uint64_t stream)
{
	double ft = rt * rt / ((rt + a) * (rt + a));
#pragma omp parallel for schedule(static)
	for (long i = i0; i < i0 + count; i++) {
		struct draw r = {seed, stream, (uint64_t)(i / 2) * DRAWS, 0};
		double sg = (i & 1) ? -1.0 : 1.0;
		double sq = sqrt(uni(&r) * ft);
		double rad = a * sq / (1 - sq);
		double ct = 2 * uni(&r) - 1, sth = sqrt(1 - ct * ct);
		double ph = 2 * M_PI * uni(&r);
		double vct = 2 * uni(&r) - 1, vst = sqrt(1 - vct * vct);
		double vph = 2 * M_PI * uni(&r);
		double v = draw_speed(df, rad, &r);
		size_t j = first + (size_t)(i - i0);
		st->pos[3 * j + 0] = sg * rad * sth * cos(ph);
		st->pos[3 * j + 1] = sg * rad * sth * sin(ph);
		st->pos[3 * j + 2] = sg * rad * ct;
		st->vel[3 * j + 0] = sg * v * vst * cos(vph);
		st->vel[3 * j + 1] = sg * v * vst * sin(vph);
		st->vel[3 * j + 2] = sg * v * vct;
	}
}

static int check_part(int k, const char *part, const struct scene_part *p, int disk)
{
	if (p->count <= 0)
		return 0;
	if (!(p->mass > 0) || !(p->scale > 0) || (disk && (!(p->scale_height > 0) ||
							   !(p->toomre_q > 0)))) {
		log_error("bodies.%d.%s: needs mass > 0, scale > 0%s (got mass %g, scale %g%s)", k,
			  part, disk ? ", scale_height > 0, toomre_q > 0" : "", p->mass, p->scale,
			  disk ? ", ..." : "");
		return NB_EINPUT;
	}
	return 0;
}

/* The bodies a disk galaxy makes, in this order: its three parts, then the
 * young stars and the dust carved out of the disk. */
enum { P_DISK, P_BULGE, P_HALO, P_YOUNG, P_DUST };
static const char *const part_names[5] = {"disk", "bulge", "halo", "young", "dust"};

/* Component c of galaxy b: part KIND, bodies [at, at + cnt). */
static void name_part(struct sim_component *c, const struct scene_body *b, int kind, long ndust,
		      size_t at, long cnt)
{
	const struct scene_part *parts[3] = {&b->disk, &b->bulge, &b->halo};
	snprintf(c->name, sizeof c->name, "%s.%s", b->name, part_names[kind]);
	if (kind < P_YOUNG) {
		memcpy(c->color, parts[kind]->color, sizeof c->color);
		c->brightness = (float)parts[kind]->brightness;
	} else if (kind == P_YOUNG) {
		memcpy(c->color, b->disk.young_color, sizeof c->color);
		c->brightness = (float)b->disk.young_brightness;
	} else {
		memset(c->color, 0, sizeof c->color);
		c->brightness = 0;
		double md = (double)ndust * b->disk.mass / (double)b->disk.count;
		c->kappa = b->dust.opacity * 2 * M_PI * b->disk.scale * b->disk.scale / md;
		c->dust_z = sim_dust_height(b);
	}
	c->first = at;
	c->count = (size_t)cnt;
}

/* Positions and velocities of part KIND's bodies [i0, i0 + cnt) (the
 * part's indices) into st at [at, at + cnt). */
static void sample_part(int kind, const struct sim_galaxy_model *m,
			const struct sim_galaxy_df df[3], const struct scene_body *b,
			const struct sim_units *u, struct sim_state *st, size_t at, long i0,
			long cnt, uint64_t seed, uint64_t stream)
{
	if (kind == P_DISK)
		sample_disk(m, m->z0, 1.0, st, at, i0, cnt, seed, stream, 0);
	else if (kind == P_BULGE)
		sample_sphere(&df[1], m->ab, m->rtb, st, at, i0, cnt, seed, stream);
	else if (kind == P_HALO)
		sample_sphere(&df[2], m->ah, m->rth, st, at, i0, cnt, seed, stream);
	else if (kind == P_YOUNG)
		sample_disk(m, SIM_GALAXY_YOUNG_HEIGHT * m->z0, 1.0, st, at, i0, cnt, seed, stream, 1);
	else
		sample_disk(m, sim_dust_height(b) * u->length,
			    sim_dust_height(b) / b->disk.scale_height, st, at, i0, cnt, seed, stream,
			    0);
}

/* Subtract the part's mean position and velocity (equal masses), so each
 * part, and therefore the galaxy, is centred with zero momentum. Bodies come
 * in mirror pairs (x, v) and (-x, -v), so this only moves anything when a
 * count is odd. Centring a random sample instead would shift it by
 * r_rms / sqrt(N), and a truncated Hernquist halo's r_rms is ~sqrt(2 a r_t):
 * for N = 6000, a shift of 0.1 a, which wrecks the inner rotation curve. The
 * point reflection keeps the disk's sense of rotation.
 *
 * The sum is the serial one over the part in index order, and it needs
 * none of the bodies but the last: a pair's two terms are exact negatives,
 * so the running sum returns to +0 after each pair, and it ends at +0
 * (even count) or +0 + the unpaired last body (odd). So a range [i0, i0 +
 * cnt) of a count-body part, sampled into st at `at`, is centred bit for
 * bit as the whole part is: the last body is drawn alone when the range
 * lacks it. */
static void centre_part(int kind, const struct sim_galaxy_model *m,
			const struct sim_galaxy_df df[3], const struct scene_body *b,
			const struct sim_units *u, struct sim_state *st, size_t at, long cnt,
			long count, uint64_t seed, uint64_t stream)
{
	if (count <= 0 || cnt <= 0)
		return;
	double c[6] = {0};
	if (count & 1) {
		double x[3], v[3];
		struct sim_state last = {.n = 1, .pos = x, .vel = v};
		sample_part(kind, m, df, b, u, &last, 0, count - 1, 1, seed, stream);
		for (int d = 0; d < 3; d++) {
			c[d] += x[d];
			c[3 + d] += v[d];
		}
	}
	for (long i = 0; i < cnt; i++)
		for (int d = 0; d < 3; d++) {
			st->pos[3 * (at + i) + d] -= c[d] / count;
			st->vel[3 * (at + i) + d] -= c[3 + d] / count;
		}
}

/* One galaxy's sampling: its model, the bulge's and halo's distribution
 * functions, and where the range goes. */
struct gal_fill {
	const struct scene *sc;
	const struct scene_body *b;
	const struct sim_units *u;
	struct sim_galaxy_model m;
	struct sim_galaxy_df df[3];
	struct sim_state *st;
	size_t first, lo, hi, at; /* the entry's first body; its range [lo, hi) into st at `at` */
	int comp0;
	uint64_t stream_base;
};

/* Part j (kind, cnt bodies, entry-local [off, off + cnt)): its component
 * named, and its bodies inside [g->lo, g->hi) sampled, centred, weighed. */
static void fill_part(const struct gal_fill *g, int j, int kind, long ndust, size_t off,
		      long cnt, double mi)
{
	const struct scene_part *parts[3] = {&g->b->disk, &g->b->bulge, &g->b->halo};
	struct sim_state *st = g->st;
	if (st->comps && g->comp0 + j < st->ncomp) {
		name_part(&st->comps[g->comp0 + j], g->b, kind, ndust, g->first + off, cnt);
		/* the young stars and the dust are the disk's bodies */
		st->comps[g->comp0 + j].softening =
			sim_soft_length(g->sc, g->b, parts[kind < P_YOUNG ? kind : P_DISK]->softening);
	}
	const size_t a = off > g->lo ? off : g->lo, e = off + (size_t)cnt;
	const size_t z = e < g->hi ? e : g->hi;
	if (cnt == 0 || a >= z)
		return;
	const size_t at = g->at + (a - g->lo);
	const long i0 = (long)(a - off), n = (long)(z - a);
	const uint64_t stream = part_stream(g->stream_base, j);
	sample_part(kind, &g->m, g->df, g->b, g->u, st, at, i0, n, g->sc->seed, stream);
	centre_part(kind, &g->m, g->df, g->b, g->u, st, at, n, cnt, g->sc->seed, stream);
	for (long i = 0; i < n; i++) {
		st->mass[at + (size_t)i] = mi;
		st->comp[at + (size_t)i] = (uint16_t)(g->comp0 + j);
		st->id[at + (size_t)i] = (uint32_t)(g->first + a + (size_t)i);
	}
}

/* The parts in order (see sim_ic_disk_galaxy's contract). */
static void fill_parts(const struct gal_fill *g)
{
	const struct scene_body *b = g->b;
	const struct scene_part *parts[3] = {&b->disk, &b->bulge, &b->halo};
	/* After the halo, carved out of the disk (each with the disk's body mass,
	 * so the disk's count and mass are kept): the young stars (sim/
	 * galaxy_young.c), then the dust (bodies.*.dust): the last ndust bodies
	 * and their mass become "NAME.dust", dark (colour and brightness 0),
	 * absorbing with kappa = tau0 2 pi h^2 / M_dust (scene units), so that
	 * the face-on column through the centre, Sigma_dust(0) = M_dust / (2 pi
	 * h^2), has optical depth tau0. Each extra takes the next component and
	 * stream slot (3, then 4); without them everything is as it was. */
	const long nyoung = sim_galaxy_young_count(&b->disk), ndust = scene_dust_count(b);
	const double mbody = parts[0]->count > 0 ? parts[0]->mass * g->u->mass / (double)parts[0]->count : 0;
	int kinds[5] = {P_DISK, P_BULGE, P_HALO, P_YOUNG, P_DUST}, nk = 3;
	if (nyoung > 0)
		kinds[nk++] = P_YOUNG;
	if (ndust > 0)
		kinds[nk++] = P_DUST;
	size_t off = 0;
	for (int j = 0; j < nk; j++) {
		const int kind = kinds[j];
		long cnt = kind == P_YOUNG ? nyoung : kind == P_DUST ? ndust
			 : parts[kind]->count > 0 ? parts[kind]->count : 0;
		if (kind == P_DISK)
			cnt -= nyoung + ndust;
		double mi = kind == P_DISK || kind >= P_YOUNG ? mbody
			  : cnt > 0 ? parts[kind]->mass * g->u->mass / (double)cnt : 0;
		fill_part(g, j, kind, ndust, off, cnt, mi);
		off += (size_t)cnt;
	}
}

int sim_ic_disk_galaxy_range(const struct scene *sc, int k, const struct sim_units *u,
			     struct sim_state *st, size_t first, int comp0, uint64_t stream_base,
			     size_t lo, size_t hi, size_t at)
{
	const struct scene_body *b = &sc->bodies[k];
	const struct scene_part *parts[3] = {&b->disk, &b->bulge, &b->halo};
	int rc = 0;
	if (b->model != SCENE_MODEL_DISK_GALAXY) {
		log_error("bodies.%d (%s): not a disk-galaxy entry", k, b->name);
		return NB_EINPUT;
	}
	for (int j = 0; j < 3; j++)
		if ((rc = check_part(k, part_names[j], parts[j], j == 0)))
			return rc;
	size_t n = 0;
	for (int j = 0; j < 3; j++)
		n += parts[j]->count > 0 ? (size_t)parts[j]->count : 0;
	if (lo > hi || hi > n || at + (hi - lo) > st->n) {
		log_error("bodies.%d (%s): bodies [%zu, %zu) of %zu do not fit the state (%zu from "
			  "%zu)", k, b->name, lo, hi, n, st->n, at);
		return NB_ERUNTIME;
	}
	struct gal_fill *g = calloc(1, sizeof *g);
	if (!g) {
		log_error("out of memory for bodies.%d (%s)", k, b->name);
		return NB_ERUNTIME;
	}
	*g = (struct gal_fill){.sc = sc, .b = b, .u = u, .st = st, .first = first, .lo = lo,
			       .hi = hi, .at = at, .comp0 = comp0, .stream_base = stream_base};
	if ((rc = sim_galaxy_model_build(b, u, scene_softening(sc), &g->m))) {
		free(g);
		return rc;
	}
	for (int j = 1; j < 3; j++)
		if (parts[j]->count > 0 && (rc = sim_galaxy_df_build(&g->m, j, &g->df[j])))
			goto cleanup;
	fill_parts(g);
cleanup:
	for (int j = 0; j < 3; j++)
		sim_galaxy_df_free(&g->df[j]);
	sim_galaxy_model_free(&g->m);
	free(g);
	return rc;
}

int sim_ic_disk_galaxy(const struct scene *sc, int k, const struct sim_units *u,
		       struct sim_state *st, size_t first, int comp0, uint64_t stream_base)
{
	const struct scene_body *b = &sc->bodies[k];
	size_t n = 0;
	if (b->model == SCENE_MODEL_DISK_GALAXY)
		for (int j = 0; j < 3; j++) {
			const struct scene_part *p = j == 0 ? &b->disk : j == 1 ? &b->bulge : &b->halo;
			n += p->count > 0 ? (size_t)p->count : 0;
		}
	return sim_ic_disk_galaxy_range(sc, k, u, st, first, comp0, stream_base, 0, n, first);
}

double sim_dust_height(const struct scene_body *b)
{
	return b->dust.scale_height > 0 ? b->dust.scale_height
					: SCENE_DUST_Z_RATIO * b->disk.scale_height;
}
