/* test_galaxy_encounter.c - sim_ic_placement (sim/encounter.c): two bodies
 * put on the requested Kepler orbit and integrated as point masses must
 * reach the pericentre and keep the orbit's energy; bad requests are input
 * errors; the disks' spin axes follow Toomre & Toomre's angles.
 *
 *   make BUILD=/tmp/b CUDA=0 /tmp/b/tests/test_galaxy_encounter && /tmp/b/tests/test_galaxy_encounter */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "../sim/sim.h"

static const struct sim_units UNIT = {1, 1, 1, 1, 1};

static void encounter_scene(struct scene *sc, double e, double rp, double r0)
{
	memset(sc, 0, sizeof *sc);
	sc->units = SCENE_UNITS_NBODY;
	sc->nbodies = 2;
	for (int k = 0; k < 2; k++) {
		sprintf(sc->bodies[k].name, "p%d", k);
		sc->bodies[k].model = SCENE_MODEL_PLUMMER;
		sc->bodies[k].count = 1;
	}
	sc->bodies[0].mass = 1.0;
	sc->bodies[1].mass = 0.3;
	sc->encounter.enabled = 1;
	sc->encounter.eccentricity = e;
	sc->encounter.pericenter = rp;
	sc->encounter.separation = r0;
}

/* Integrate two point masses placed by sim_ic_placement with leapfrog; return
 * the smallest and largest separations seen over time T. */
static void two_body_extremes(const struct scene *sc, double T, double dt, double *rmin,
			      double *rmax, double *energy)
{
	double R[9], x[2][3], v[2][3], m[2] = {sc->bodies[0].mass, sc->bodies[1].mass};
	for (int k = 0; k < 2; k++)
		ck_assert_int_eq(sim_ic_placement(sc, k, &UNIT, R, x[k], v[k]), 0);
	/* Centre of mass at rest at the origin. */
	for (int d = 0; d < 3; d++) {
		ck_assert_close(m[0] * x[0][d] + m[1] * x[1][d], 0, 1e-12, 0);
		ck_assert_close(m[0] * v[0][d] + m[1] * v[1][d], 0, 1e-12, 0);
	}
	double r = 0, v2 = 0;
	for (int d = 0; d < 3; d++) {
		r += pow(x[1][d] - x[0][d], 2);
		v2 += pow(v[1][d] - v[0][d], 2);
	}
	*energy = 0.5 * m[0] * m[1] / (m[0] + m[1]) * v2 - m[0] * m[1] / sqrt(r);
	*rmin = HUGE_VAL, *rmax = 0;
	long steps = (long)(T / dt);
	double a[2][3];
	for (long s = 0; s <= steps; s++) {
		double dx[3], rr = 0;
		for (int d = 0; d < 3; d++) {
			dx[d] = x[1][d] - x[0][d];
			rr += dx[d] * dx[d];
		}
		double ri = sqrt(rr);
		if (ri < *rmin)
			*rmin = ri;
		if (ri > *rmax)
			*rmax = ri;
		double f = 1 / (rr * ri);
		for (int d = 0; d < 3; d++) {
			a[0][d] = m[1] * dx[d] * f;
			a[1][d] = -m[0] * dx[d] * f;
		}
		if (s > 0) /* finish the previous step's kick */
			for (int k = 0; k < 2; k++)
				for (int d = 0; d < 3; d++)
					v[k][d] += 0.5 * dt * a[k][d];
		if (s == steps)
			break;
		for (int k = 0; k < 2; k++)
			for (int d = 0; d < 3; d++) {
				v[k][d] += 0.5 * dt * a[k][d];
				x[k][d] += dt * v[k][d];
			}
	}
}

START_TEST(parabolic_encounter_reaches_pericenter)
{
	struct scene sc;
	encounter_scene(&sc, 1.0, 1.0, 20.0);
	double rmin, rmax, e;
	/* Barker: t_peri = 0.5 sqrt(p^3/GM) (D + D^3/3), D = tan(f0/2) = sqrt(19). */
	double D = sqrt(19.0), tp = 0.5 * sqrt(8 / 1.3) * (D + D * D * D / 3);
	two_body_extremes(&sc, tp + 5, 2e-4, &rmin, &rmax, &e);
	ck_assert_close(rmin, 1.0, 0, 0.02);
	ck_assert_close(rmax, 20.0, 0, 1e-9);
	ck_assert_close(e, 0, 1e-12 * 1.0 * 0.3 / 20, 0);
}
END_TEST

START_TEST(elliptic_and_hyperbolic_orbits)
{
	struct scene sc;
	double rmin, rmax, e;
	encounter_scene(&sc, 0.5, 1.0, 2.0);
	/* Period 2 pi sqrt(a^3/GM), a = r_p/(1-e) = 2; run two. */
	two_body_extremes(&sc, 2 * 2 * M_PI * sqrt(8 / 1.3), 2e-4, &rmin, &rmax, &e);
	ck_assert_close(rmin, 1.0, 0, 0.02);
	ck_assert_close(rmax, 3.0, 0, 0.02); /* apocentre r_p (1+e)/(1-e) */
	ck_assert_close(e, -1.0 * 0.3 / (2 * 2.0), 0, 1e-9); /* E = -G m0 m1 / 2a */
	encounter_scene(&sc, 2.0, 1.0, 10.0);
	two_body_extremes(&sc, 30, 2e-4, &rmin, &rmax, &e);
	ck_assert_close(rmin, 1.0, 0, 0.02);
	ck_assert_close(e, 1.0 * 0.3 / (2 * 1.0), 0, 1e-9); /* E = G m0 m1 / 2|a|, |a| = r_p/(e-1) */
}
END_TEST

START_TEST(invalid_encounters_are_input_errors)
{
	struct scene sc;
	double R[9], x[3], v[3];
	encounter_scene(&sc, 1.0, 2.0, 1.0); /* separation < pericenter */
	ck_assert_int_eq(sim_ic_placement(&sc, 0, &UNIT, R, x, v), NB_EINPUT);
	encounter_scene(&sc, 0.5, 1.0, 3.5); /* beyond apocentre 3 */
	ck_assert_int_eq(sim_ic_placement(&sc, 1, &UNIT, R, x, v), NB_EINPUT);
	encounter_scene(&sc, 1.0, 1.0, 3.5);
	ck_assert_int_eq(sim_ic_placement(&sc, 1, &UNIT, R, x, v), 0);
}
END_TEST

/* R * (0,0,1): where the disk's spin axis points. */
static void spin_axis(const double R[9], double s[3])
{
	for (int i = 0; i < 3; i++)
		s[i] = R[3 * i + 2];
}

START_TEST(disk_orientation_follows_spin_and_inclination)
{
	struct scene sc;
	encounter_scene(&sc, 1.0, 1.0, 10.0);
	for (int k = 0; k < 2; k++) {
		sc.bodies[k].model = SCENE_MODEL_DISK_GALAXY;
		sc.bodies[k].disk = (struct scene_part){10, 1.0, 1, 0.1, 1.5, {1, 1, 1}, 1, 0, {0, 0, 0}, 0};
	}
	double R[9], x[3], v[3], s[3];
	sc.encounter.spin[1] = SCENE_SPIN_RETROGRADE;
	ck_assert_int_eq(sim_ic_placement(&sc, 0, &UNIT, R, x, v), 0);
	spin_axis(R, s);
	ck_assert_close(s[2], 1, 1e-12, 0); /* prograde, i = 0: along the orbit's L (+z) */
	ck_assert_int_eq(sim_ic_placement(&sc, 1, &UNIT, R, x, v), 0);
	spin_axis(R, s);
	ck_assert_close(s[2], -1, 1e-12, 0);
	/* Inclination 60: spin at 60 degrees from +z, for any omega. */
	sc.encounter.spin[1] = SCENE_SPIN_PROGRADE;
	sc.encounter.inclination[1] = 60;
	sc.encounter.omega[1] = 30;
	ck_assert_int_eq(sim_ic_placement(&sc, 1, &UNIT, R, x, v), 0);
	spin_axis(R, s);
	ck_assert_close(s[2], 0.5, 1e-12, 0);
	/* R is a rotation: R R^T = 1, det 1. */
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++) {
			double d = 0;
			for (int l = 0; l < 3; l++)
				d += R[3 * i + l] * R[3 * j + l];
			ck_assert_close(d, i == j, 1e-12, 0);
		}
	/* Without an encounter: tilt about +x, then about +z. */
	sc.encounter.enabled = 0;
	sc.bodies[0].inclination = 90;
	sc.bodies[0].position_angle = 90;
	ck_assert_int_eq(sim_ic_placement(&sc, 0, &UNIT, R, x, v), 0);
	spin_axis(R, s); /* Rx(90) z = -y, then Rz(90) (-y) = +x */
	ck_assert_close(s[0], 1, 1e-12, 0);
	ck_assert_close(s[2], 0, 1e-12, 0);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("galaxy_encounter");
	TCase *tc = tcase_create("encounter");
	tcase_add_checked_fixture(tc, nb_trap_fpe, NULL);
	tcase_add_test(tc, parabolic_encounter_reaches_pericenter);
	tcase_add_test(tc, elliptic_and_hyperbolic_orbits);
	tcase_add_test(tc, invalid_encounters_are_input_errors);
	tcase_add_test(tc, disk_orientation_follows_spin_and_inclination);
	suite_add_tcase(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
