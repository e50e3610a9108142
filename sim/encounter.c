/* encounter.c - where each entry goes: its orientation, centre-of-mass
 * position and velocity (sim_ic_placement).
 *
 * Without an encounter an entry is tilted about +x by its inclination, then
 * turned about +z by its position angle, and put at its own position and
 * velocity. With scene.encounter enabled, entries 0 and 1 are put on a
 * Kepler orbit of the requested eccentricity and pericentre (Toomre &
 * Toomre 1972), and each disk is oriented relative to the orbit. */
#include <math.h>
#include <string.h>

#include "sim.h"

#define DEG (M_PI / 180.0)

static void mat_mul(const double a[9], const double b[9], double out[9])
{
	double t[9];
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			t[3 * i + j] = a[3 * i + 0] * b[0 + j] + a[3 * i + 1] * b[3 + j] +
				       a[3 * i + 2] * b[6 + j];
	memcpy(out, t, sizeof t);
}

static void rot_x(double ang, double R[9])
{
	double c = cos(ang), s = sin(ang);
	double m[9] = {1, 0, 0, 0, c, -s, 0, s, c};
	memcpy(R, m, sizeof m);
}

static void rot_z(double ang, double R[9])
{
	double c = cos(ang), s = sin(ang);
	double m[9] = {c, -s, 0, s, c, 0, 0, 0, 1};
	memcpy(R, m, sizeof m);
}

/* Total mass of an entry in scene units (a disk galaxy: the parts that have
 * bodies; a file entry: its mass key, since the file is not read here). */
static double entry_mass(const struct scene_body *b)
{
	if (b->model != SCENE_MODEL_DISK_GALAXY)
		return b->mass;
	double m = 0;
	if (b->disk.count > 0)
		m += b->disk.mass;
	if (b->bulge.count > 0)
		m += b->bulge.mass;
	if (b->halo.count > 0)
		m += b->halo.mass;
	return m;
}

/* Relative orbit of entry 1 about entry 0 in the xy plane, pericentre on +x,
 * moving counter-clockwise (orbital angular momentum along +z), started at
 * separation r0 before pericentre. Conic r = p / (1 + e cos f), p = r_p (1+e);
 * v_r = sqrt(GM/p) e sin f, v_t = sqrt(GM/p) (1 + e cos f); f < 0 while
 * approaching. Internal units. */
static int relative_orbit(const struct scene *sc, double gm, double rp, double r0, double x[3],
			  double v[3])
{
	double e = sc->encounter.eccentricity;
	if (!(rp > 0)) {
		log_error("encounter.pericenter: must be > 0, got %g", sc->encounter.pericenter);
		return NB_EINPUT;
	}
	if (!(e >= 0)) {
		log_error("encounter.eccentricity: must be >= 0, got %g", e);
		return NB_EINPUT;
	}
	if (r0 < rp * (1 - 1e-9)) {
		log_error("encounter.separation: must be >= encounter.pericenter (%g), got %g",
			  sc->encounter.pericenter, sc->encounter.separation);
		return NB_EINPUT;
	}
	double p = rp * (1 + e);
	double cf;
	if (e < 1) {
		double ra = p / (1 - e);
		if (r0 > ra * (1 + 1e-9)) {
			log_error("encounter.separation: must be <= the apocentre r_p (1+e)/(1-e) = %g "
				  "for eccentricity %g, got %g",
				  sc->encounter.pericenter * (1 + e) / (1 - e), e,
				  sc->encounter.separation);
			return NB_EINPUT;
		}
	}
	if (e == 0)
		cf = 1; /* circular: any point is the pericentre */
	else
		cf = (p / r0 - 1) / e;
	if (cf > 1)
		cf = 1;
	if (cf < -1)
		cf = -1;
	double f = -acos(cf);
	double r = p / (1 + e * cos(f));
	double vk = sqrt(gm / p);
	double vr = vk * e * sin(f), vt = vk * (1 + e * cos(f));
	double c = cos(f), s = sin(f);
	x[0] = r * c, x[1] = r * s, x[2] = 0;
	v[0] = vr * c - vt * s, v[1] = vr * s + vt * c, v[2] = 0;
	return 0;
}

/* Orientation of disk k relative to the orbit (Toomre & Toomre 1972):
 * inclination i is the angle between the disk and the orbital plane (0:
 * disk in the orbital plane, spinning with the orbit), omega the argument of
 * pericentre, measured in the orbital plane along the motion from the line
 * of nodes (where the disk crosses the orbital plane) to the companion's
 * pericentre as seen from this galaxy. The companion's pericentre lies on
 * +x seen from entry 0 and on -x seen from entry 1, hence the extra half
 * turn for entry 1. R = Rz(pi k) Rz(-omega) Rx(i) [Rx(pi) if retrograde]:
 * the line of nodes is Rz(-omega) x, and the spin +z tilts about it by i.
 * Retrograde flips the spin by a half turn about the disk's own x axis. */
static void encounter_orientation(const struct scene *sc, int k, double R[9])
{
	double a[9], b[9];
	rot_z(k == 1 ? M_PI : 0, R);
	rot_z(-sc->encounter.omega[k] * DEG, a);
	mat_mul(R, a, R);
	rot_x(sc->encounter.inclination[k] * DEG, b);
	mat_mul(R, b, R);
	if (sc->encounter.spin[k] == SCENE_SPIN_RETROGRADE) {
		rot_x(M_PI, b);
		mat_mul(R, b, R);
	}
}

int sim_ic_placement(const struct scene *sc, int k, const struct sim_units *u, double R[9],
		     double pos[3], double vel[3])
{
	if (k < 0 || k >= sc->nbodies) {
		log_error("bodies: no entry %d", k);
		return NB_EINPUT;
	}
	const struct scene_body *b = &sc->bodies[k];
	if (!sc->encounter.enabled || k > 1) {
		double a[9];
		rot_z(b->position_angle * DEG, R);
		rot_x(b->inclination * DEG, a);
		mat_mul(R, a, R);
		for (int d = 0; d < 3; d++) {
			pos[d] = b->position[d] * u->length;
			vel[d] = b->velocity[d] * u->velocity;
		}
		return 0;
	}
	if (sc->nbodies < 2) {
		log_error("encounter: needs two entries in bodies (the first two meet), got %d",
			  sc->nbodies);
		return NB_EINPUT;
	}
	double m0 = entry_mass(&sc->bodies[0]), m1 = entry_mass(&sc->bodies[1]);
	if (!(m0 > 0) || !(m1 > 0)) {
		log_error("encounter: bodies.%d (%s) has no mass", m0 > 0 ? 1 : 0,
			  sc->bodies[m0 > 0 ? 1 : 0].name);
		return NB_EINPUT;
	}
	double x[3], v[3];
	double gm = (m0 + m1) * u->mass; /* G = 1 */
	int rc = relative_orbit(sc, gm, sc->encounter.pericenter * u->length,
				sc->encounter.separation * u->length, x, v);
	if (rc)
		return rc;
	/* Split about the centre of mass at the origin: x_0 = -m1/M x, x_1 = m0/M x. */
	double w = k == 0 ? -m1 / (m0 + m1) : m0 / (m0 + m1);
	for (int d = 0; d < 3; d++) {
		pos[d] = w * x[d];
		vel[d] = w * v[d];
	}
	if (b->model == SCENE_MODEL_DISK_GALAXY) {
		encounter_orientation(sc, k, R);
	} else {
		double id[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
		memcpy(R, id, sizeof id);
	}
	return 0;
}
