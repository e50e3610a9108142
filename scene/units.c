/* units.c - conversion factors from a scene's unit system to the internal
 * G = 1 system (see scene_units_of in scene.h).
 *
 * Galactic scenes are written in kpc, km/s, M_sun and Myr. The internal
 * system keeps G = 1 with length 1 kpc and velocity 100 km/s, so
 *   mass unit = V^2 L / G = 1e4 / 4.30091727e-6 M_sun = 2.32509e9 M_sun
 *   time unit = L / V = 3.0857e16 km / (100 km/s) = 9.7779 Myr.
 * A factor multiplies a scene value to give the internal value. */
#include "scene.h"

/* G in kpc (km/s)^2 / M_sun (IAU 2015 nominal GM_sun and the IAU parsec). */
#define UNITS_G_GALACTIC 4.30091727e-6
#define UNITS_KPC_KM 3.0856775814913673e16 /* 1 kpc in km */
#define UNITS_MYR_S 3.15576e13              /* 1 Myr (Julian years) in s */

void scene_units_of(enum scene_units u, struct sim_units *out)
{
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

double scene_softening(const struct scene *sc)
{
	struct sim_units u;
	scene_units_of(sc->units, &u);
	return sc->simulation.softening * u.length;
}

/* G in cgs (CODATA 2018) and GM_sun (IAU 2015 nominal, cm^3 s^-2): the
 * M_sun that goes with UNITS_G_GALACTIC. */
#define UNITS_G_CGS 6.67430e-8
#define UNITS_GMSUN_CGS 1.3271244e26

int scene_units_cgs(enum scene_units u, double *length_cm, double *mass_g, double *velocity_cm_s)
{
	if (u != SCENE_UNITS_GALACTIC)
		return -1;
	*length_cm = UNITS_KPC_KM * 1e5;
	*mass_g = UNITS_GMSUN_CGS / UNITS_G_CGS;
	*velocity_cm_s = 1e5;
	return 0;
}
