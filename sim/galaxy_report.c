/* galaxy_report.c - the dry-run table of disk galaxies: masses, rotation
 * curve and Toomre Q at 1, 2 and 3 disk scale lengths, rotation period at
 * 2 scale lengths, and the encounter's Kepler timing (scene units). */
#include <math.h>
#include <stdio.h>

#include "galaxy_potential.h"
#include "sim.h"

/* Kepler time from separation r0 to pericentre rp, eccentricity e, for
 * G M = gm (any consistent units). Parabola: Barker's equation; ellipse and
 * hyperbola: eccentric / hyperbolic anomaly. */
static double time_to_pericenter(double gm, double rp, double e, double r0)
{
	double p = rp * (1 + e);
	if (e == 0 || r0 <= rp)
		return 0;
	double cf = (p / r0 - 1) / e;
	if (cf < -1)
		cf = -1;
	double f = acos(cf); /* time is symmetric about pericentre */
	double th = tan(f / 2);
	if (fabs(e - 1) < 1e-9)
		return 0.5 * sqrt(p * p * p / gm) * (th + th * th * th / 3);
	if (e < 1) {
		double a = rp / (1 - e);
		double E = 2 * atan(sqrt((1 - e) / (1 + e)) * th);
		return (E - e * sin(E)) * sqrt(a * a * a / gm);
	}
	double a = rp / (e - 1);
	double H = 2 * atanh(sqrt((e - 1) / (e + 1)) * th);
	return (e * sinh(H) - H) * sqrt(a * a * a / gm);
}

static double entry_mass_scene(const struct scene_body *b)
{
	if (b->model != SCENE_MODEL_DISK_GALAXY)
		return b->mass;
	return (b->disk.count > 0 ? b->disk.mass : 0) + (b->bulge.count > 0 ? b->bulge.mass : 0) +
	       (b->halo.count > 0 ? b->halo.mass : 0);
}

void sim_galaxy_report(const struct scene *sc, FILE *f)
{
	struct sim_units u;
	scene_units(sc, &u);
	int gal = sc->units == SCENE_UNITS_GALACTIC;
	const char *lu = gal ? "kpc" : "length", *vu = gal ? "km/s" : "velocity";
	const char *tu = gal ? "Myr" : "time", *mu = gal ? "M_sun" : "mass";
	int any = 0;

	for (int k = 0; k < sc->nbodies; k++) {
		const struct scene_body *b = &sc->bodies[k];
		if (b->model != SCENE_MODEL_DISK_GALAXY)
			continue;
		if (!any)
			fprintf(f, "%-16s %10s %10s %10s %10s %7s | %8s %8s %8s | %5s %5s %5s | %9s\n",
				"galaxy", "M_disk", "M_bulge", "M_halo", "M_total", "h",
				"v_c(1h)", "v_c(2h)", "v_c(3h)", "Q(1h)", "Q(2h)", "Q(3h)",
				"T_rot(2h)");
		any = 1;
		struct sim_galaxy_model m;
		if (sim_galaxy_model_build(b, &u, scene_softening(sc), &m))
			continue;
		double vc[3] = {0}, q[3] = {0};
		for (int j = 0; j < 3; j++) {
			if (!(m.h > 0))
				break;
			struct sim_galaxy_disk_kin kin;
			sim_galaxy_disk_kinematics(&m, (j + 1) * m.h, 0, &kin);
			vc[j] = sqrt(kin.vc2) / u.velocity;
			q[j] = kin.q;
		}
		sim_galaxy_model_free(&m);
		double t2 = vc[1] > 0 ? 2 * M_PI * 2 * b->disk.scale / vc[1] : 0;
		/* 2 pi R / v in scene length/velocity, then to scene time. */
		t2 = t2 * (u.length / u.velocity) / u.time;
		fprintf(f, "%-16s %10.4g %10.4g %10.4g %10.4g %7.4g | %8.4g %8.4g %8.4g | %5.2f %5.2f "
			   "%5.2f | %9.4g\n",
			b->name, b->disk.count > 0 ? b->disk.mass : 0.0,
			b->bulge.count > 0 ? b->bulge.mass : 0.0, b->halo.count > 0 ? b->halo.mass : 0.0,
			entry_mass_scene(b), b->disk.scale, vc[0], vc[1], vc[2], q[0], q[1], q[2], t2);
	}
	if (!any)
		fprintf(f, "no disk galaxies\n");
	else
		fprintf(f, "units: mass %s, h %s, v_c %s, T_rot %s; Q = sigma_R kappa / (3.36 G Sigma) "
			   "(toomre_q is imposed at 2.5 h)\n", mu, lu, vu, tu);

	if (sc->encounter.enabled && sc->nbodies >= 2) {
		double gm = (entry_mass_scene(&sc->bodies[0]) + entry_mass_scene(&sc->bodies[1])) *
			    u.mass;
		double rp = sc->encounter.pericenter * u.length;
		double r0 = sc->encounter.separation * u.length;
		double e = sc->encounter.eccentricity;
		double tp = time_to_pericenter(gm, rp, e, r0) / u.time;
		double vp = sqrt(gm * (1 + e) / rp) / u.velocity;
		fprintf(f, "encounter: %s-%s, e = %g, pericentre %g %s reached after %.4g %s "
			   "(Kepler, point masses) at relative speed %.4g %s\n",
			sc->encounter.spin[0] == SCENE_SPIN_PROGRADE ? "prograde" : "retrograde",
			sc->encounter.spin[1] == SCENE_SPIN_PROGRADE ? "prograde" : "retrograde", e,
			sc->encounter.pericenter, lu, tp, tu, vp, vu);
	}
}
