/* fuzz_h5.h - the HDF5 snapshot recipe shared by the harnesses that read
 * GADGET-style HDF5 files (fuzz_snaph5.c, and the full-loader harnesses
 * fuzz_snapload.c and fuzz_snapseries.c).
 *
 * The input bytes are a recipe, and libhdf5 writes the file they describe
 * (which groups exist; each Header, Parameters, Units and Cosmology
 * attribute absent, scalar, a list of 0..7 values, integers, a string or
 * 2-D; each PartTypeN dataset absent or of 0..7 rows, of 1, 2 or 3
 * columns, float, int or uint64, with NaN, infinities, huge and negative
 * values; SWIFT exponents or not). So every input is a valid HDF5 file
 * whose layout and values are hostile: raw bytes are never handed to
 * libhdf5, whose own parser is not this project's code. A recipe file
 * holds at most FUZZ_H5_MAX_ROWS rows per particle type. */
#ifndef NB_FUZZ_H5_H
#define NB_FUZZ_H5_H

#include <hdf5.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/sim.h"
#include "fuzz_files.h"

#define FUZZ_H5_MAX_ROWS 7

struct recipe {
	const uint8_t *d;
	size_t n, i;
};

static inline unsigned rb(struct recipe *r)
{
	return r->i < r->n ? r->d[r->i++] : 0;
}

static inline double rval(struct recipe *r)
{
	static const double special[] = {0, 1, 2, 3, 6, -1, 0.5, 0.7, 1e300, -1e300,
					 4294967296.0, 1e-300, 3.085678e21, 1.989e43, 1e5, 0.25};
	unsigned b = rb(r);
	if (b < 128)
		return special[b % 16];
	if (b < 240)
		return (double)(b - 128);
	return b == 240 ? NAN : b == 241 ? INFINITY : b == 242 ? -INFINITY : -(double)(b - 242);
}

static inline void put_attr(struct recipe *r, hid_t loc, const char *name)
{
	unsigned mode = rb(r) % 8;
	if (mode == 0)
		return;
	double v[8];
	hsize_t d[2] = {mode == 1 ? 1 : mode == 3 || mode == 5 ? 6 : rb(r) % 8, 2};
	for (int i = 0; i < 8; i++)
		v[i] = rval(r);
	hid_t sp = mode == 1 || mode == 4 ? H5Screate(H5S_SCALAR) : H5Screate_simple(mode == 7 ? 2 : 1, d, NULL);
	hid_t ty = mode == 3 ? H5T_NATIVE_UINT : mode == 5 ? H5T_NATIVE_INT : H5T_NATIVE_DOUBLE;
	if (mode == 4) {
		ty = H5Tcopy(H5T_C_S1);
		H5Tset_size(ty, 4);
	}
	if (sp < 0)
		goto end;
	hid_t a = H5Acreate2(loc, name, ty, sp, H5P_DEFAULT, H5P_DEFAULT);
	if (a >= 0) {
		if (mode == 4) {
			H5Awrite(a, ty, "abcd");
		} else if (ty == H5T_NATIVE_DOUBLE) {
			if (d[0] * (mode == 7 ? 2 : 1) <= 8)
				H5Awrite(a, ty, v);
		} else {
			int iv[8];
			for (int i = 0; i < 8; i++)
				iv[i] = isfinite(v[i]) && fabs(v[i]) < 2e9 ? (int)v[i] : -7;
			H5Awrite(a, ty, iv);
		}
		H5Aclose(a);
	}
	H5Sclose(sp);
end:
	if (mode == 4)
		H5Tclose(ty);
}

static inline void put_dataset(struct recipe *r, hid_t g, const char *name)
{
	unsigned mode = rb(r) % 6;
	if (mode == 0)
		return;
	hsize_t d[2] = {rb(r) % 8, mode == 1 || mode == 3 ? 3 : mode == 5 ? 2 : 1};
	int rank = d[1] > 1 ? 2 : 1;
	hid_t ty = mode == 3 ? H5T_NATIVE_INT : mode == 4 ? H5T_NATIVE_UINT64 : H5T_NATIVE_DOUBLE;
	double v[24];
	int iv[24];
	uint64_t uv[24];
	for (int i = 0; i < 24; i++) {
		v[i] = rval(r);
		iv[i] = isfinite(v[i]) && fabs(v[i]) < 2e9 ? (int)v[i] : 3;
		uv[i] = isfinite(v[i]) && v[i] >= 0 && v[i] < 1e18 ? (uint64_t)v[i] : 11;
	}
	hid_t sp = H5Screate_simple(rank, d, NULL);
	hid_t ds = H5Dcreate2(g, name, ty, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	if (ds >= 0) {
		if (d[0] > 0)
			H5Dwrite(ds, ty, H5S_ALL, H5S_ALL, H5P_DEFAULT,
				 ty == H5T_NATIVE_INT ? (void *)iv : ty == H5T_NATIVE_UINT64 ? (void *)uv : (void *)v);
		if (rb(r) & 1) {
			put_attr(r, ds, "a-scale exponent");
			put_attr(r, ds, "h-scale exponent");
		}
		H5Dclose(ds);
	}
	H5Sclose(sp);
}

static inline void put_group(struct recipe *r, hid_t f, const char *name, const char *const *attrs)
{
	hid_t g = H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	if (g < 0)
		return;
	for (int i = 0; attrs[i]; i++)
		put_attr(r, g, attrs[i]);
	H5Gclose(g);
}

static inline int write_recipe(const char *path, const uint8_t *data, size_t size)
{
	static const char *const header[] = {"NumPart_ThisFile", "NumPart_Total", "NumPart_Total_HighWord",
					     "MassTable", "Time", "Redshift", "BoxSize",
					     "NumFilesPerSnapshot", "HubbleParam", "Scale-factor",
					     "UnitLength_in_cm", NULL};
	static const char *const params[] = {"UnitLength_in_cm", "UnitMass_in_g",
					     "UnitVelocity_in_cm_per_s", "HubbleParam",
					     "ComovingIntegrationOn", NULL};
	static const char *const units[] = {"Unit length in cgs (U_L)", "Unit mass in cgs (U_M)",
					    "Unit time in cgs (U_t)", NULL};
	static const char *const cosmo[] = {"h", "Cosmological run", NULL};
	static const char *const dsets[] = {"Coordinates", "Velocities", "ParticleIDs", "Masses",
					    "SmoothingLength"};
	struct recipe r = {data, size, 0};
	hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	if (f < 0)
		return -1;
	unsigned flags = rb(&r);
	if (!(flags & 1))
		put_group(&r, f, "Header", header);
	if (flags & 2)
		put_group(&r, f, "Parameters", params);
	if (flags & 4)
		put_group(&r, f, "Units", units);
	if (flags & 8)
		put_group(&r, f, "Cosmology", cosmo);
	for (int t = 0; t < SIM_SNAP_NTYPES; t++) {
		if (!(rb(&r) & 1))
			continue;
		char gn[24];
		snprintf(gn, sizeof gn, "PartType%d", t);
		hid_t g = H5Gcreate2(f, gn, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
		for (int k = 0; k < 5 && g >= 0; k++)
			put_dataset(&r, g, dsets[k]);
		if (g >= 0)
			H5Gclose(g);
	}
	H5Fclose(f);
	return 0;
}

/* The full-loader harnesses' start (fuzz_snapload.c, fuzz_snapseries.c):
 * libhdf5 quiet, the option bytes o (missing ones 0) and the files pt cut
 * from the rest of the input. */
static inline void fuzz_snap_input(const uint8_t *data, size_t size, uint8_t o[FUZZ_NOPT],
				   struct fuzz_parts *pt)
{
	static int once;
	if (!once) {
		once = 1;
		H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	}
	const size_t skip = size < FUZZ_NOPT ? size : FUZZ_NOPT;
	memset(o, 0, FUZZ_NOPT);
	memcpy(o, data, skip);
	fuzz_split(data + skip, size - skip, pt);
}

/* File i of pt written as names[i] in dir: with hdf5, the HDF5 file its
 * recipe describes; else its bytes, an HDF5 signature spoiled so that the
 * binary reader is the one that gets them. */
static inline void fuzz_write_snaps(const char *dir, const struct fuzz_parts *pt, int hdf5,
				    char names[][32])
{
	static const uint8_t sig[4] = {0x89, 'H', 'D', 'F'};
	for (int i = 0; i < pt->count; i++) {
		if (hdf5) {
			char path[600];
			fuzz_path(path, sizeof path, dir, names[i]);
			if (write_recipe(path, pt->p[i], pt->n[i]))
				abort();
		} else if (pt->n[i] >= 4 && memcmp(pt->p[i], sig, 4) == 0) {
			uint8_t *c = malloc(pt->n[i]);
			if (!c)
				abort();
			memcpy(c, pt->p[i], pt->n[i]);
			c[0] = 0;
			fuzz_write(dir, names[i], c, pt->n[i]);
			free(c);
		} else {
			fuzz_write(dir, names[i], pt->p[i], pt->n[i]);
		}
	}
}

#endif
