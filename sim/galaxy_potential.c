/* galaxy_potential.c - mass model of a disk galaxy (exponential disk +
 * Hernquist bulge + Hernquist halo) in internal units, G = 1: the whole
 * model as the simulation feels it, built from the profiles
 * (galaxy_profile.c), the thick disk's force table (galaxy_disk_force.c)
 * and the softened spherical gravity (galaxy_soften.c), which call only
 * the profiles: the files form a tree with this one at the top.
 *
 * References: Hernquist (1993, ApJS 86, 389) and Springel, Di Matteo &
 * Hernquist (2005) for the disk kinematics. */
#include "galaxy_potential.h"

#include <math.h>
#include <stdlib.h>

#include "../scene/log.h"

#define JEANS_N 2048

static double spheres_vc2(const struct sim_galaxy_model *m, double R)
{
	return sim_galaxy_spheres_meff(m, R) / R;
}

static int use_table(const struct sim_galaxy_model *m, double R)
{
	return m->tab && R <= sim_galaxy_disk_table_rmax(m);
}

double sim_galaxy_vc2(const struct sim_galaxy_model *m, double R)
{
	if (R <= 0)
		return 0;
	double d = use_table(m, R) ? sim_galaxy_disk_table_v2(m, R, 0) : sim_galaxy_disk_vc2(m, R);
	return d + spheres_vc2(m, R);
}

/* Spheres at (R, z): R F_R = M(r) R^2 / r^3. */
double sim_galaxy_vc2_at(const struct sim_galaxy_model *m, double R, double z)
{
	if (R <= 0)
		return 0;
	double r = sqrt(R * R + z * z);
	double d = use_table(m, R) ? sim_galaxy_disk_table_v2(m, R, z) : sim_galaxy_disk_vc2(m, R);
	return d + spheres_vc2(m, r) * R * R / (r * r);
}

/* kappa^2 = R dOmega^2/dR + 4 Omega^2 = (1/R) dv_c^2/dR + 2 v_c^2/R^2,
 * additive over the parts. Spheres and the thin disk: central differences
 * (step 1e-3 R: the Bessel approximations' 2e-7 error then costs ~1e-4);
 * the thick disk: its table. */
static double kappa2_fd(const struct sim_galaxy_model *m, double R, int disk)
{
	double d = 1e-3 * R;
	double vp = spheres_vc2(m, R + d), vm = spheres_vc2(m, R - d), v0 = spheres_vc2(m, R);
	if (disk) {
		vp += sim_galaxy_disk_vc2(m, R + d);
		vm += sim_galaxy_disk_vc2(m, R - d);
		v0 += sim_galaxy_disk_vc2(m, R);
	}
	return (vp - vm) / (2 * d * R) + 2 * v0 / (R * R);
}

double sim_galaxy_kappa2(const struct sim_galaxy_model *m, double R)
{
	double scale = m->h > 0 ? m->h : (m->ab > 0 ? m->ab : m->ah);
	if (R < 1e-6 * scale)
		R = 1e-6 * scale;
	if (use_table(m, R))
		return sim_galaxy_disk_table_kappa2(m, R) + kappa2_fd(m, R, 0);
	return kappa2_fd(m, R, 1);
}

/* The bulge and halo's share of sigma_z^2 at (R, z) for a sech^2 layer:
 * (1/rho) int_z^inf rho dPhi_sph/dz' dz', with dPhi/dz = G M(r) z / r^3,
 * in u = z/z0, w = u - |z|/z0: rho(u)/rho(u0) = cosh^2(u0)/cosh^2(u0 + w),
 * written with exponentials so it never overflows; Simpson on w in [0, 12]
 * (the weight falls as e^{-2w}). */
static double sphere_sigz2(const struct sim_galaxy_model *m, double R, double z)
{
	if (!(m->z0 > 0) || (m->mb <= 0 && m->mh <= 0))
		return 0;
	const int n = 96;
	const double wmax = 12, dw = wmax / n;
	double u0 = fabs(z) / m->z0, e0 = exp(-2 * u0), sum = 0;
	for (int i = 0; i <= n; i++) {
		double w = i * dw, zz = (u0 + w) * m->z0;
		double q = (1 + e0) / (1 + e0 * exp(-2 * w));
		double wt = exp(-2 * w) * q * q;
		double r = sqrt(R * R + zz * zz);
		double g = r > 0 ? sim_galaxy_spheres_meff(m, r) * zz / (r * r * r) : 0;
		double c = (i == 0 || i == n) ? 1 : (i % 2 ? 4 : 2);
		sum += c * wt * g;
	}
	return sum * dw / 3 * m->z0;
}

/* Disk kinematics (Hernquist 1993, sec. 2.2.3):
 *  - sigma_z^2 from the vertical Jeans equation for the sech^2(z/z0)
 *    layer in the full potential (Springel, Di Matteo & Hernquist 2005):
 *    the disk's own pull from its force table (pi G Sigma z0, the
 *    isothermal sheet, for the thin model), plus the bulge and halo's.
 *    Without the spheres the layer starts too cold, collapses, and the
 *    thinner disk then pulls itself radially inward.
 *  - sigma_R^2 proportional to Sigma (so exp(-R/h)), normalised so that
 *    Toomre's Q = sigma_R kappa / (3.36 G Sigma) equals toomre_q at
 *    R = 2.5 h. This is Hernquist's choice (he fixes Q at the solar radius,
 *    2.4 h). It keeps sigma_R/sigma_z constant, and it is the profile the
 *    asymmetric-drift formula below assumes (d ln(Sigma sigma_R^2)/d ln R =
 *    -2R/h). Q then has its minimum near 2-2.5 h and rises inward (kappa
 *    grows) and outward (Sigma falls), so the disk is stable everywhere when
 *    it is at 2.5 h; imposing Q at every R instead would make the outer
 *    disk as marginal as the middle.
 *  - sigma_phi^2 = sigma_R^2 kappa^2 / (4 Omega^2) (epicyclic approximation).
 *  - mean v_phi^2 = v_c^2 + sigma_R^2 (1 - kappa^2/(4 Omega^2) - 2R/h),
 *    clamped at 0 (asymmetric drift), with v_c^2 = R dPhi/dR at the star's
 *    own height (Springel, Di Matteo & Hernquist 2005): above the plane the
 *    radial pull is weaker. */
void sim_galaxy_disk_kinematics(const struct sim_galaxy_model *m, double R, double z,
				struct sim_galaxy_disk_kin *k)
{
	double scale = m->h > 0 ? m->h : 1;
	if (R < 1e-6 * scale)
		R = 1e-6 * scale;
	double sig = sim_galaxy_disk_sigma(m, R);
	k->vc2 = sim_galaxy_vc2_at(m, R, z);
	k->kappa2 = sim_galaxy_kappa2(m, R);
	double om2 = sim_galaxy_vc2(m, R) / (R * R);
	double ratio = om2 > 0 ? k->kappa2 / (4 * om2) : 1;
	k->sigz2 = (use_table(m, R) ? sim_galaxy_disk_table_sigz2(m, R, z) : M_PI * sig * m->z0) +
		   sphere_sigz2(m, R, z);
	k->sigr2 = m->sigr0 * m->sigr0 * exp(-R / scale);
	k->sigp2 = k->sigr2 * ratio;
	double vp2 = k->vc2 + k->sigr2 * (1 - ratio - 2 * R / scale);
	k->vphi = vp2 > 0 ? sqrt(vp2) : 0;
	k->q = sig > 0 && k->kappa2 > 0 ? sqrt(k->sigr2 * k->kappa2) / (3.36 * sig) : 0;
}

/* sigma_R(2.5 h) from Q, then sigma_R(0) = sigma_R(2.5 h) e^{1.25}. */
static void normalise_q(struct sim_galaxy_model *m)
{
	m->sigr0 = 0;
	if (m->md > 0 && m->h > 0) {
		double rq = SIM_GALAXY_Q_RADIUS * m->h;
		double kap = sqrt(sim_galaxy_kappa2(m, rq));
		double sr = m->q * 3.36 * sim_galaxy_disk_sigma(m, rq) / kap;
		m->sigr0 = sr * exp(rq / (2 * m->h));
	}
}

void sim_galaxy_model_init(const struct scene_body *b, const struct sim_units *u,
			   struct sim_galaxy_model *m)
{
	double rmax = b->rmax > 0 ? b->rmax : SIM_GALAXY_SPHERE_RMAX;
	m->md = b->disk.count > 0 ? b->disk.mass * u->mass : 0;
	m->h = b->disk.scale * u->length;
	m->z0 = b->disk.scale_height * u->length;
	m->q = b->disk.toomre_q;
	m->mb = b->bulge.count > 0 ? b->bulge.mass * u->mass : 0;
	m->ab = b->bulge.scale * u->length;
	m->rtb = rmax * m->ab;
	m->mh = b->halo.count > 0 ? b->halo.mass * u->mass : 0;
	m->ah = b->halo.scale * u->length;
	m->rth = rmax * m->ah;
	m->eps = 0;
	m->tab = NULL;
	m->soft = NULL;
	normalise_q(m);
}

int sim_galaxy_model_build(const struct scene_body *b, const struct sim_units *u, double eps,
			   struct sim_galaxy_model *m)
{
	sim_galaxy_model_init(b, u, m);
	m->eps = eps > 0 ? eps : 0;
	int rc = sim_galaxy_soft_build(m);
	if (!rc)
		rc = sim_galaxy_disk_table_build(m);
	if (rc) {
		sim_galaxy_model_free(m);
		return rc;
	}
	normalise_q(m);
	return 0;
}

void sim_galaxy_model_free(struct sim_galaxy_model *m)
{
	sim_galaxy_disk_table_free(m);
	sim_galaxy_soft_free(m);
}

double sim_galaxy_mass_sph(const struct sim_galaxy_model *m, double r)
{
	return sim_galaxy_disk_sph_meff(m, r) + sim_galaxy_spheres_meff(m, r);
}

/* ---- Jeans table ---- */

static double grid_rhi(const struct sim_galaxy_model *m)
{
	double r = m->md > 0 ? SIM_GALAXY_DISK_RMAX * m->h : 0;
	if (m->mb > 0 && m->rtb > r)
		r = m->rtb;
	if (m->mh > 0 && m->rth > r)
		r = m->rth;
	return r * 1.001;
}

static double grid_rlo(const struct sim_galaxy_model *m)
{
	double s = HUGE_VAL;
	if (m->md > 0 && m->h < s)
		s = m->h;
	if (m->mb > 0 && m->ab < s)
		s = m->ab;
	if (m->mh > 0 && m->ah < s)
		s = m->ah;
	return 1e-4 * s;
}

/* Isotropic Jeans equation d(rho sigma^2)/dr = -rho dPhi/dr with
 * rho sigma^2 -> 0 at the truncation, integrated by the trapezoid rule in
 * ln r from the outside in; Phi likewise from Phi(r_hi) = -M_tot / r_hi. */
int sim_galaxy_jeans_build(const struct sim_galaxy_model *m, int which,
			   struct sim_galaxy_jeans *t)
{
	double M = which == 1 ? m->mb : m->mh;
	double a = which == 1 ? m->ab : m->ah;
	double rt = which == 1 ? m->rtb : m->rth;
	t->n = JEANS_N;
	t->sig2 = calloc(JEANS_N, sizeof(double));
	t->phi = calloc(JEANS_N, sizeof(double));
	if (!t->sig2 || !t->phi) {
		log_error("disk galaxy: out of memory for the Jeans table");
		sim_galaxy_jeans_free(t);
		return NB_ERUNTIME;
	}
	double rlo = grid_rlo(m), rhi = grid_rhi(m);
	t->lnr0 = log(rlo);
	t->dlnr = (log(rhi) - t->lnr0) / (JEANS_N - 1);
	double f_prev = 0, g_prev = 0, flux = 0;
	for (int i = JEANS_N - 1; i >= 0; i--) {
		double r = exp(t->lnr0 + i * t->dlnr);
		double gr = sim_galaxy_mass_sph(m, r) / r; /* g r, g = M(r)/r^2 */
		double rho = sim_galaxy_hernquist_density(M, a, rt, r);
		double f = rho * gr; /* rho g r: the integrand in ln r */
		if (i == JEANS_N - 1) {
			t->phi[i] = -sim_galaxy_mass_sph(m, r) / r;
		} else {
			flux += 0.5 * t->dlnr * (f + f_prev);
			t->phi[i] = t->phi[i + 1] - 0.5 * t->dlnr * (gr + g_prev);
		}
		t->sig2[i] = rho > 0 ? flux / rho : 0;
		f_prev = f;
		g_prev = gr;
	}
	return 0;
}

void sim_galaxy_jeans_free(struct sim_galaxy_jeans *t)
{
	free(t->sig2);
	free(t->phi);
	t->sig2 = t->phi = NULL;
	t->n = 0;
}

static double interp(const struct sim_galaxy_jeans *t, const double *y, double r)
{
	double x = (log(r) - t->lnr0) / t->dlnr;
	if (!(x > 0))
		return y[0];
	if (x >= t->n - 1)
		return y[t->n - 1];
	int i = (int)x;
	double w = x - i;
	return (1 - w) * y[i] + w * y[i + 1];
}

double sim_galaxy_jeans_sig2(const struct sim_galaxy_jeans *t, double r)
{
	return interp(t, t->sig2, r);
}

double sim_galaxy_jeans_phi(const struct sim_galaxy_jeans *t, const struct sim_galaxy_model *m,
			    double r)
{
	double rhi = exp(t->lnr0 + (t->n - 1) * t->dlnr);
	if (r >= rhi)
		return -sim_galaxy_mass_sph(m, r) / r;
	return interp(t, t->phi, r);
}
