/* galaxy_young.c - the young stars of a disk galaxy (bodies.*.disk.
 * young_fraction): a share of the disk's bodies, component NAME.young,
 * drawn thinner and colder than the rest of the disk (sim/galaxy.c draws
 * them with sample_disk and these kinematics).
 *
 * What we chose and why. Young stars are born in the gas layer, thin and
 * cold, and have not yet been heated by the disk's spiral arms and clumps;
 * a colder population responds more strongly to the same perturbations
 * (its Toomre Q is lower, so swing amplification of arms and tidal knots
 * is stronger), which is what makes arms and knots light up in the
 * picture. So:
 *  - the same exponential radial profile as the disk (same scale length),
 *    so the disk's surface density, rotation curve and the model's forces
 *    keep their shape;
 *  - half the scale height: sech^2(z / z_y), z_y = SIM_GALAXY_YOUNG_HEIGHT
 *    z0;
 *  - vertical dispersion from the vertical Jeans equation of such a tracer
 *    in the old disk's isothermal field (Phi = 2 s^2 ln cosh(z / z0),
 *    s^2 = the disk's sigma_z^2): for z_y = z0 / 2 the integral has a
 *    closed form, sigma_y^2(z) / s^2 = g(x) = cosh^2(2x) (2 / (1 + T) +
 *    ln((1 + T) / 2) - 1), x = |z| / z0, T = tanh^2 x, which runs from
 *    1 - ln 2 = 0.307 in the midplane to 1/2 far above it; we scale the
 *    disk's sigma_z^2(R, z) (which also holds the bulge's and halo's
 *    vertical pull) by g. Far out, x > 4, g = 1/2 (within 2.3e-4);
 *  - radial and azimuthal dispersions times SIM_GALAXY_YOUNG_SIGMA (1/2):
 *    Toomre Q of the young layer alone is half the disk's; the mean
 *    rotation from the same asymmetric-drift formula as the disk, with the
 *    smaller sigma_R^2, so the young stars lag the circular speed less.
 * Their mass is carved out of the disk: each young body has the disk's
 * body mass, disk.mass / disk.count, so disk + young = disk.mass and the
 * galaxy's total mass, the model's potential and energy stay as before (up
 * to the young layer being thinner: the model's vertical forces are the
 * disk's). */
#include <math.h>

#include "galaxy_potential.h"
#include "sim.h"

long sim_galaxy_young_count(const struct scene_part *disk)
{
	if (disk->count <= 0 || !(disk->young_fraction > 0))
		return 0;
	long n = (long)floor(disk->young_fraction * (double)disk->count + 0.5);
	return n < 0 ? 0 : n > disk->count ? disk->count : n;
}

void sim_galaxy_young_kinematics(const struct sim_galaxy_model *m, double R, double z,
				 struct sim_galaxy_disk_kin *k)
{
	double x = m->z0 > 0 ? fabs(z) / m->z0 : 0;
	double g = 0.5;
	if (x <= 4) {
		double t = tanh(x), T = t * t, c = cosh(2 * x);
		g = c * c * (2 / (1 + T) + log((1 + T) / 2) - 1);
	}
	k->sigz2 *= g;
	const double s2 = SIM_GALAXY_YOUNG_SIGMA * SIM_GALAXY_YOUNG_SIGMA;
	double scale = m->h > 0 ? m->h : 1;
	double ratio = k->sigr2 > 0 ? k->sigp2 / k->sigr2 : 1;
	double vp2 = k->vc2 + s2 * k->sigr2 * (1 - ratio - 2 * R / scale);
	k->sigr2 *= s2;
	k->sigp2 *= s2;
	k->vphi = vp2 > 0 ? sqrt(vp2) : 0;
	k->q *= SIM_GALAXY_YOUNG_SIGMA;
}
