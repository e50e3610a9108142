/* galaxy_potential.h - the mass model of one disk galaxy (exponential disk,
 * Hernquist bulge and halo) in internal units (G = 1), as the simulation's
 * softened gravity will feel it: each part's profile (galaxy_profile.c),
 * the thick disk's forces (galaxy_disk_force.c), the spherically averaged
 * and softened gravity (galaxy_soften.c), the whole model's circular speed,
 * epicyclic frequency and disk dispersions (galaxy_potential.c), the
 * bulge/halo distribution function the sampler draws from (galaxy_df.c),
 * and the Jeans table the tests check that function against. Calls run
 * one way: profile <- disk_force, soften <- potential <- df, young, the
 * sampler (galaxy.c) and the report.
 *
 * Used by galaxy.c (sampling), galaxy_report.c (dry-run table) and
 * tests/test_galaxy.c. Private to sim/: not part of the public sim.h
 * contract. */
#ifndef NB_GALAXY_POTENTIAL_H
#define NB_GALAXY_POTENTIAL_H

#include "../scene/scene.h"

/* Disk sampling stops at this many scale lengths (redraw beyond). */
#define SIM_GALAXY_DISK_RMAX 10.0
/* Toomre Q is imposed at this many scale lengths (scene.h: toomre_q). */
#define SIM_GALAXY_Q_RADIUS 2.5
/* Bulge/halo truncation in units of their own scale when the entry's rmax
 * is not set (> 0); the scene loader sets 20 for disk galaxies. */
#define SIM_GALAXY_SPHERE_RMAX 50.0

struct sim_galaxy_disk_table; /* galaxy_disk_force.c */
struct sim_galaxy_soft;       /* galaxy_soften.c */

/* One galaxy, internal units. A part with count 0 has mass 0 here. */
struct sim_galaxy_model {
	double md, h, z0, q; /* disk mass, scale length, sech^2 height, Toomre Q at 2.5 h */
	double mb, ab, rtb;  /* bulge mass, Hernquist a, truncation radius */
	double mh, ah, rth;  /* halo mass, Hernquist a, truncation radius */
	double sigr0;        /* disk sigma_R at R = 0 (sigma_R^2 = sigr0^2 exp(-R/h)) */
	double eps;          /* Plummer softening the forces include (0: none) */
	struct sim_galaxy_disk_table *tab; /* thick-disk forces, or NULL: thin disk */
	struct sim_galaxy_soft *soft;      /* softened sphere masses, or NULL */
};

/* Fill *m from entry b (model disk-galaxy) converted with u, with the
 * razor-thin disk and no softening (tab = soft = NULL; nothing to free).
 * Computes sigr0 from the Q normalisation. */
void sim_galaxy_model_init(const struct scene_body *b, const struct sim_units *u,
			   struct sim_galaxy_model *m);
/* The same with the thick (sech^2) disk's force table and the gravity
 * softened by eps (internal length units; 0 for none), as the simulation
 * will feel it: what the sampler and the report use. 0 or NB_ERUNTIME
 * (logged); free with sim_galaxy_model_free. */
int sim_galaxy_model_build(const struct scene_body *b, const struct sim_units *u, double eps,
			   struct sim_galaxy_model *m);
void sim_galaxy_model_free(struct sim_galaxy_model *m);

/* Thick-disk table (galaxy_disk_force.c): build sets m->tab (left NULL when
 * the disk is absent); v2 is the disk's R dPhi/dR at (R, z), kappa2 its
 * midplane kappa^2, both for R <= table_rmax (10 h). */
int sim_galaxy_disk_table_build(struct sim_galaxy_model *m);
void sim_galaxy_disk_table_free(struct sim_galaxy_model *m);
double sim_galaxy_disk_table_v2(const struct sim_galaxy_model *m, double R, double z);
double sim_galaxy_disk_table_kappa2(const struct sim_galaxy_model *m, double R);
/* The disk's own share of sigma_z^2 at (R, z) (vertical Jeans equation). */
double sim_galaxy_disk_table_sigz2(const struct sim_galaxy_model *m, double R, double z);
double sim_galaxy_disk_table_rmax(const struct sim_galaxy_model *m);

/* ---- profiles (galaxy_profile.c) ----
 * Modified Bessel functions of integer order 0 and 1, x > 0
 * (Abramowitz & Stegun 9.8.1-9.8.8, relative error < ~2e-7). The _e forms
 * are scaled: i0e = e^{-x} I0(x), k0e = e^{x} K0(x), so products I*K never
 * overflow. */
double sim_galaxy_i0e(double x);
double sim_galaxy_i1e(double x);
double sim_galaxy_k0e(double x);
double sim_galaxy_k1e(double x);

/* Truncated Hernquist sphere of total (sampled) mass M, scale a, truncated
 * at rt and renormalised so that M(rt) = M: enclosed mass and density. */
double sim_galaxy_hernquist_mass(double M, double a, double rt, double r);
double sim_galaxy_hernquist_density(double M, double a, double rt, double r);

/* Exponential disk: surface density (untruncated formula) and the mass
 * inside cylinder R, renormalised to the 10 h truncation. */
double sim_galaxy_disk_sigma(const struct sim_galaxy_model *m, double R);
double sim_galaxy_disk_mass(const struct sim_galaxy_model *m, double R);

/* Razor-thin exponential disk's v_c^2 (Freeman 1970), whatever m->tab. */
double sim_galaxy_disk_vc2(const struct sim_galaxy_model *m, double R);
/* R dPhi/dR of disk (thick if m->tab) + bulge + halo, in the midplane and
 * at height z. */
double sim_galaxy_vc2(const struct sim_galaxy_model *m, double R);
double sim_galaxy_vc2_at(const struct sim_galaxy_model *m, double R, double z);
/* kappa^2 = R dOmega^2/dR + 4 Omega^2 in the midplane. */
double sim_galaxy_kappa2(const struct sim_galaxy_model *m, double R);

/* Disk kinematics at (R, z) (see galaxy_potential.c for the choices):
 * v_c^2 at (R, z), kappa^2 (midplane), sigma_R^2, sigma_z^2, sigma_phi^2,
 * mean v_phi (>= 0), and Toomre Q. */
struct sim_galaxy_disk_kin {
	double vc2, kappa2, sigr2, sigz2, sigp2, vphi, q;
};
void sim_galaxy_disk_kinematics(const struct sim_galaxy_model *m, double R, double z,
				struct sim_galaxy_disk_kin *k);
/* The young stars (sim/galaxy_young.c): k, the disk's kinematics at (R,
 * z), made those of the thinner, colder young layer (scale height
 * SIM_GALAXY_YOUNG_HEIGHT z0, dispersions as written there). */
#define SIM_GALAXY_YOUNG_HEIGHT 0.5 /* g(x) in galaxy_young.c assumes 1/2 */
#define SIM_GALAXY_YOUNG_SIGMA 0.5
void sim_galaxy_young_kinematics(const struct sim_galaxy_model *m, double R, double z,
				 struct sim_galaxy_disk_kin *k);

/* Spherically averaged gravity (galaxy_soften.c): build sets m->soft.
 * disk_mass_sph is the thick disk's mass inside the sphere r (the
 * cylinder's M_d(<R = r) without the table); the _meff forms are effective
 * enclosed masses r^2 |dPhi/dr| with softening m->eps, of bulge + halo and
 * of the disk averaged over spheres. */
int sim_galaxy_soft_build(struct sim_galaxy_model *m);
void sim_galaxy_soft_free(struct sim_galaxy_model *m);
double sim_galaxy_disk_mass_sph(const struct sim_galaxy_model *m, double r);
double sim_galaxy_spheres_meff(const struct sim_galaxy_model *m, double r);
double sim_galaxy_disk_sph_meff(const struct sim_galaxy_model *m, double r);

/* Spherically averaged model: effective enclosed mass of all parts at r,
 * used for the bulge/halo Jeans equation and distribution function. */
double sim_galaxy_mass_sph(const struct sim_galaxy_model *m, double r);

/* Jeans table of one spherical part (bulge or halo) in the combined,
 * spherically averaged potential: sigma_r^2(r) = (1/rho) int_r^rt rho G M(r')/r'^2 dr',
 * and Phi(r), on a log grid. */
struct sim_galaxy_jeans {
	int n;
	double lnr0, dlnr;   /* grid: ln r_i = lnr0 + i dlnr */
	double *sig2, *phi;  /* n each */
};
/* which: 1 bulge, 2 halo. Returns 0 or NB_ERUNTIME (allocation, logged). */
int sim_galaxy_jeans_build(const struct sim_galaxy_model *m, int which,
			   struct sim_galaxy_jeans *t);
void sim_galaxy_jeans_free(struct sim_galaxy_jeans *t);
/* Interpolated sigma_r^2(r) and Phi(r) (Phi = -M_tot/r beyond the grid). */
double sim_galaxy_jeans_sig2(const struct sim_galaxy_jeans *t, double r);
double sim_galaxy_jeans_phi(const struct sim_galaxy_jeans *t, const struct sim_galaxy_model *m,
			    double r);

/* Isotropic distribution function f(E) of the bulge (which 1) or halo
 * (which 2) in the combined, spherically averaged potential (Eddington;
 * galaxy_df.c). psi: relative potential -Phi on the grid ln r_i = lnr0 +
 * i dlnr; f[j] at energies eps[j] (decreasing). */
struct sim_galaxy_df {
	int n;
	double lnr0, dlnr;
	double *psi;      /* n */
	double *eps, *f;  /* n - 1 */
	double *gmax;     /* n: max over v of v^2 f(psi_i - v^2/2) (sampling bound) */
};
/* 0 or NB_ERUNTIME (logged). */
int sim_galaxy_df_build(const struct sim_galaxy_model *m, int which, struct sim_galaxy_df *df);
void sim_galaxy_df_free(struct sim_galaxy_df *df);
double sim_galaxy_df_psi(const struct sim_galaxy_df *df, double r);
/* f(e), 0 for e at or below the grid's smallest energy. */
double sim_galaxy_df_f(const struct sim_galaxy_df *df, double e);
/* Bound on v^2 f(psi(r) - v^2/2) over v at radius r (before any margin). */
double sim_galaxy_df_gmax(const struct sim_galaxy_df *df, double r);

#endif
