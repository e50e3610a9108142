/* units.c - conversion factors from a scene's unit system to the internal
 * G = 1 system (see scene_units_of in scene.h).
 *
 * Galactic scenes are written in kpc, km/s, M_sun and Myr. The internal
 * system keeps G = 1 with length 1 kpc and velocity 100 km/s, so
 *   mass unit = V^2 L / G = 1e4 / 4.30091727e-6 M_sun = 2.32509e9 M_sun
 *   time unit = L / V = 3.0857e16 km / (100 km/s) = 9.7779 Myr.
 * A factor multiplies a scene value to give the internal value.
 *
 * units: snapshot scenes are in a snapshot's code units (GADGET's default
 * 1 kpc, 1e10 M_sun, 1 km/s: time unit kpc / (km/s) = 977.79 Myr, G =
 * 43009.1 in them), converted into the same internal system as galactic
 * scenes, so that the solvers see the same magnitudes either way. */
#include <stdio.h>

#include "scene.h"

/* G in kpc (km/s)^2 / M_sun (IAU 2015 nominal GM_sun and the IAU parsec). */
#define UNITS_G_GALACTIC 4.30091727e-6
#define UNITS_KPC_KM 3.0856775814913673e16 /* 1 kpc in km */
#define UNITS_MYR_S 3.15576e13              /* 1 Myr (Julian years) in s */

/* GADGET's default code units (its own constants, as GADGET-2 writes
 * them in its parameter files): 1 kpc, 1e10 M_sun, 1 km/s. */
#define UNITS_GADGET_L_CM 3.085678e21
#define UNITS_GADGET_M_G 1.989e43
#define UNITS_GADGET_V_CM_S 1e5
static void units_code(double L, double M, double V, struct sim_units *out);

void scene_units_of(enum scene_units u, struct sim_units *out)
{
	if (u == SCENE_UNITS_SNAPSHOT) {
		units_code(UNITS_GADGET_L_CM, UNITS_GADGET_M_G, UNITS_GADGET_V_CM_S, out);
		return;
	}
	if (u == SCENE_UNITS_GALACTIC) {
		double v_unit = 100.0;                               /* km/s */
		double m_unit = v_unit * v_unit / UNITS_G_GALACTIC;  /* M_sun */
		double t_unit = UNITS_KPC_KM / v_unit / UNITS_MYR_S; /* Myr */
		out->length = 1.0;
		out->velocity = 1.0 / v_unit;
		out->mass = 1.0 / m_unit;
		out->time = 1.0 / t_unit;
		out->G_scene = UNITS_G_GALACTIC;
		return;
	}
	out->length = 1.0;
	out->velocity = 1.0;
	out->mass = 1.0;
	out->time = 1.0;
	out->G_scene = 1.0;
}

void scene_units(const struct scene *sc, struct sim_units *out)
{
	const double *c = sc->units_cgs;
	if (sc->units == SCENE_UNITS_SNAPSHOT && c[0] > 0 && c[1] > 0 && c[2] > 0)
		units_code(c[0], c[1], c[2], out);
	else
		scene_units_of(sc->units, out);
}

double scene_softening(const struct scene *sc)
{
	struct sim_units u;
	scene_units(sc, &u);
	return sc->simulation.softening * u.length;
}

/* G in cgs (CODATA 2018) and GM_sun (IAU 2015 nominal, cm^3 s^-2): the
 * M_sun that goes with UNITS_G_GALACTIC. */
#define UNITS_G_CGS 6.67430e-8
#define UNITS_GMSUN_CGS 1.3271244e26

static void galactic_cgs(double *length_cm, double *mass_g, double *velocity_cm_s)
{
	*length_cm = UNITS_KPC_KM * 1e5;
	*mass_g = UNITS_GMSUN_CGS / UNITS_G_CGS;
	*velocity_cm_s = 1e5;
}

/* Code units of L cm, M g, V cm/s in galactic's internal system: each
 * factor is the galactic one times the code unit in galactic units; time
 * is length / velocity (the internal time unit is the internal length
 * over the internal velocity), and G_scene = mass / (length velocity^2)
 * is the G that is exactly 1 internally (G ~ L V^2 / M). */
static void units_code(double L, double M, double V, struct sim_units *out)
{
	struct sim_units g;
	double gl, gm, gv;
	scene_units_of(SCENE_UNITS_GALACTIC, &g);
	galactic_cgs(&gl, &gm, &gv);
	out->length = L / gl * g.length;
	out->mass = M / gm * g.mass;
	out->velocity = V / gv * g.velocity;
	out->time = out->length / out->velocity;
	out->G_scene = out->mass / (out->length * out->velocity * out->velocity);
}

int scene_units_cgs(const struct scene *sc, double *length_cm, double *mass_g,
		    double *velocity_cm_s)
{
	if (sc->units == SCENE_UNITS_GALACTIC) {
		galactic_cgs(length_cm, mass_g, velocity_cm_s);
		return 0;
	}
	if (sc->units != SCENE_UNITS_SNAPSHOT)
		return -1;
	const double *c = sc->units_cgs;
	const int set = c[0] > 0 && c[1] > 0 && c[2] > 0;
	*length_cm = set ? c[0] : UNITS_GADGET_L_CM;
	*mass_g = set ? c[1] : UNITS_GADGET_M_G;
	*velocity_cm_s = set ? c[2] : UNITS_GADGET_V_CM_S;
	return 0;
}

int scene_units_snapshot_entry(struct scene *sc)
{
	for (int k = 0; k < sc->nbodies; k++) {
		const struct scene_body *b = &sc->bodies[k];
		if (b->model != SCENE_MODEL_SNAPSHOT)
			continue;
		const struct scene_snapshot *o = &b->snap;
		const int given = o->length_cm > 0 || o->mass_g > 0 || o->velocity_cm_s > 0;
		sc->units_entry = k;
		sc->units_cgs[0] = o->length_cm > 0 ? o->length_cm : UNITS_GADGET_L_CM;
		sc->units_cgs[1] = o->mass_g > 0 ? o->mass_g : UNITS_GADGET_M_G;
		sc->units_cgs[2] = o->velocity_cm_s > 0 ? o->velocity_cm_s : UNITS_GADGET_V_CM_S;
		if (given)
			snprintf(sc->units_from, sizeof sc->units_from,
				 "bodies.%d.units (GADGET's for any not given)", k);
		else
			snprintf(sc->units_from, sizeof sc->units_from, "GADGET's defaults");
		return k;
	}
	return -1;
}
