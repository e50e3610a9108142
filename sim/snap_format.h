/* snap_format.h - the layout of the HDF5 snapshots nbody-render writes
 * (output.snapshots; output/snap_write.c) and reads back for --restart
 * (sim/snap_restart.c): the names and unit factors both sides share.
 * docs/snapshots.md, "Writing snapshots, restart and FITS", describes it
 * for users. No functions: constants and one inline helper.
 *
 * A snapshot is a GADGET-2 style HDF5 file:
 *   /Header         GADGET attributes (NumPart_*, MassTable (all 0: masses
 *                   per particle), Time, Redshift 0, BoxSize (a cube about
 *                   the bodies), NumFilesPerSnapshot 1 (a multi-file set,
 *                   output/snap_set.c: its parts K, NumPart_ThisFile the
 *                   part's, NumPart_Total the set's), Omega0 0, OmegaLambda 0,
 *                   HubbleParam 1, Flag_*), plus Code, Time_SceneUnits,
 *                   SceneTimeUnit, GravitationalConstant (G in the stored
 *                   units: 43007.1 for GADGET's, 1 for nbody) and
 *                   GravitationalConstant_cgs (SNAP_G_CGS)
 *   /Units          SWIFT's five "Unit ... in cgs (U_x)" attributes and the
 *                   OWLS/GADGET names (UnitLength_in_cm, ...), the same
 *                   system twice
 *   /Parameters     GADGET-4 style: UnitLength_in_cm, UnitMass_in_g,
 *                   UnitVelocity_in_cm_per_s (yt merges it into its header)
 *   /PartType1..4   Coordinates (n x 3), Velocities (n x 3), Masses (n),
 *                   ParticleIDs (n, uint32, or uint64 when an ID needs it:
 *                   the body's ID in its snapshot file, else its id), double
 *                   precision; attribute ComponentNames
 *   /NbodyRender    this program's own: the frame, step, exact internal
 *                   time, the simulation keys a restart must match, the
 *                   components, the resolved scene (YAML text), and
 *                   InternalVelocities (n x 3, body order) when the stored
 *                   velocity unit is not the internal one; a part of a set
 *                   also SetId (the same in every part) and FileIndex.
 *
 * Stored units: galactic scenes use GADGET's conventional system, which
 * yt's GADGET reader assumes when a file does not say otherwise: 1 kpc,
 * 1 km/s, 1e10 M_sun, time unit kpc / (km/s) (977.8 Myr). units:
 * snapshot scenes store their own units, the code units of the snapshot
 * they read (sc->units_cgs), so that a GADGET run continued here writes
 * in its own units. nbody scenes store the internal G = 1 values as they
 * are (factors 1). */
#ifndef NB_SNAP_FORMAT_H
#define NB_SNAP_FORMAT_H

#include <math.h>

#include "sim.h"

#define SNAP_GROUP_OWN "NbodyRender"
#define SNAP_NTYPES 6 /* GADGET's PartType0..5 */
/* GADGET's convention: halo 1, disk 2, bulge 3, every other component 4 */
#define SNAP_TYPE_HALO 1
#define SNAP_TYPE_DISK 2
#define SNAP_TYPE_BULGE 3
#define SNAP_TYPE_OTHER 4
/* The format's version (NbodyRender/FormatVersion): a reader refuses others. */
#define SNAP_FORMAT_VERSION 1

/* CGS values of the stored units. */
#define SNAP_KPC_CM 3.0856775814913673e21
#define SNAP_KMS_CMS 1e5
#define SNAP_MSUN_G 1.98841e33 /* IAU 2015 nominal GM_sun / CODATA 2018 G */
#define SNAP_G_CGS 6.6743e-8

/* How the stored values relate to the internal ones (sim.h: internal =
 * scene value x sim_units factor): stored = internal / to_internal, and
 * the CGS size of each stored unit. */
struct snap_units {
	double length, velocity, mass, time; /* to_internal factors */
	double length_cgs, velocity_cgs, mass_cgs, time_cgs;
	const char *system;    /* "galactic", "snapshot" or "nbody" */
	const char *time_name; /* the scene's time unit: "Myr", "code" or "nbody" */
};

/* The stored units of a scene of SYSTEM. units: snapshot: the factors of
 * GADGET's defaults; snap_units_scene gives a scene's own. */
static inline void snap_units_of(enum scene_units su, struct snap_units *s)
{
	struct sim_units u;
	scene_units_of(su, &u);
	if (su == SCENE_UNITS_SNAPSHOT) {
		/* the scene's units are the stored ones: kpc, 1e10 M_sun, km/s */
		*s = (struct snap_units){
			.length = u.length, .velocity = u.velocity, .mass = u.mass, .time = u.time,
			.length_cgs = 3.085678e21, .mass_cgs = 1.989e43, .velocity_cgs = 1e5,
			.time_cgs = 3.085678e21 / 1e5,
			.system = "snapshot", .time_name = "code",
		};
		return;
	}
	if (su == SCENE_UNITS_GALACTIC) {
		/* kpc (the internal length), km/s, 1e10 M_sun; the time unit
		 * 1 kpc / (1 km/s) is u.length / u.velocity internal units */
		*s = (struct snap_units){
			.length = u.length,
			.velocity = u.velocity,
			.mass = 1e10 * u.mass,
			.time = u.length / u.velocity,
			.length_cgs = SNAP_KPC_CM,
			.velocity_cgs = SNAP_KMS_CMS,
			.mass_cgs = 1e10 * SNAP_MSUN_G,
			.time_cgs = SNAP_KPC_CM / SNAP_KMS_CMS,
			.system = "galactic",
			.time_name = "Myr",
		};
		return;
	}
	/* nbody: G = 1 with no physical scale, declared as 1 cm and 1 g, whose
	 * G = 1 time unit is 1 / sqrt(G_cgs) s (3871 s) */
	*s = (struct snap_units){
		.length = 1, .velocity = 1, .mass = 1, .time = 1,
		.length_cgs = 1, .mass_cgs = 1,
		.time_cgs = 1.0 / sqrt(SNAP_G_CGS),
		.velocity_cgs = sqrt(SNAP_G_CGS),
		.system = "nbody", .time_name = "nbody",
	};
}

/* The stored units of scene SC: snap_units_of, and for units: snapshot the
 * scene's own code units (sc->units_cgs; scene_units). */
static inline void snap_units_scene(const struct scene *sc, struct snap_units *s)
{
	snap_units_of(sc->units, s);
	double L, M, V;
	if (sc->units != SCENE_UNITS_SNAPSHOT || scene_units_cgs(sc, &L, &M, &V))
		return;
	struct sim_units u;
	scene_units(sc, &u);
	s->length = u.length, s->velocity = u.velocity, s->mass = u.mass, s->time = u.time;
	s->length_cgs = L, s->mass_cgs = M, s->velocity_cgs = V, s->time_cgs = L / V;
}

/* G in the stored units: G_cgs M T^2 / L^3 (43007.1 for kpc, 1e10 M_sun
 * and km/s; exactly 1 for nbody's declared system). */
static inline double snap_g_stored(const struct snap_units *s)
{
	return SNAP_G_CGS * s->mass_cgs * s->time_cgs * s->time_cgs /
	       (s->length_cgs * s->length_cgs * s->length_cgs);
}

#endif
