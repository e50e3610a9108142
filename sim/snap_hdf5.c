/* snap_hdf5.c - GADGET-style HDF5 snapshots (GADGET-3/4, AREPO, GIZMO,
 * SWIFT) through libhdf5 (serial): the Header group's attributes, the
 * PartType0..5 groups' Coordinates, Velocities, ParticleIDs, Masses (or
 * SWIFT's DynamicalMasses, where its black holes keep theirs) and
 * SmoothingLength datasets, the code units where the file gives them
 * (SWIFT's Units group; GADGET-4's Parameters group; older AREPO and GIZMO
 * write them as Header attributes), and SWIFT's per-dataset scale-factor
 * and h exponents.
 *
 * Every dataset is checked at open (shape [N,3] or [N], N equal to the
 * header's NumPart_ThisFile, floating-point values, integer IDs) and read
 * by hyperslab: h5_read reads only the rows asked for, converted
 * by libhdf5 to double (or uint64 for IDs). libhdf5's own error printing
 * is off: each failure is one message of ours naming the file and the
 * dataset.
 *
 * The format table's row sim_snap_fmt_gadget_hdf5 (snap_internal.h;
 * bodies.*.format: gadget-hdf5). */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "snap_internal.h"

#define H5_MAX_TYPES 16 /* NumPart_* arrays may list more types (SWIFT: 7); extra ones are ignored */

static void h5_quiet(void)
{
	static int done;
	if (!done) {
		H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
		done = 1;
	}
}

/* Where a type's masses are, first found: GADGET's Masses, then SWIFT's
 * DynamicalMasses (its black holes, PartType5, keep their gravitating mass
 * there; SubgridMasses is the accretion model's and is not read). */
static const char *const h5_mass_names[] = {"Masses", "DynamicalMasses"};
#define H5_NMASS_NAMES (int)(sizeof h5_mass_names / sizeof h5_mass_names[0])

/* The row's state: the open file and each type's masses dataset. */
struct h5_state {
	hid_t f; /* 0 until open: H5Fopen never returns 0 */
	const char *mass[SIM_SNAP_NTYPES]; /* h5_mass_names row, or NULL: none */
	double off[3]; /* our own snapshots' NbodyRender/CoordinateOffset, else 0 */
};

static hid_t h5_file(const struct sim_snap *s)
{
	return ((const struct h5_state *)s->priv)->f;
}

static const unsigned char h5_sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

/* The HDF5 signature at byte 0, or anywhere libhdf5 looks for it. */
static int h5_probe(const struct sim_snap *s)
{
	unsigned char b[8];
	if (pread(s->fd, b, 8, 0) == 8 && memcmp(b, h5_sig, 8) == 0)
		return 1;
	h5_quiet();
	return H5Fis_hdf5(s->path) > 0;
}

/* Close a type and a dataspace, each when open (>= 0). */
static void h5_close_type_space(hid_t ty, hid_t sp)
{
	if (ty >= 0)
		H5Tclose(ty);
	if (sp >= 0)
		H5Sclose(sp);
}

/* Attribute NAME of LOC (described as WHERE) as up to max doubles: 1 and
 * *n set when present, 0 when absent, NB_EINPUT when not numeric or not
 * scalar / 1-D with 1..max values. */
static int h5_attr(const struct sim_snap *s, hid_t loc, const char *where, const char *name,
		   double *out, int max, int *n)
{
	int ret = NB_EINPUT;
	hid_t a = -1, sp = -1, ty = -1;
	htri_t ex = H5Aexists(loc, name);
	if (ex == 0)
		return 0;
	if (ex < 0 || (a = H5Aopen(loc, name, H5P_DEFAULT)) < 0) {
		log_error("%s: %s: attribute %s cannot be read", s->path, where, name);
		return NB_EINPUT;
	}
	sp = H5Aget_space(a);
	ty = H5Aget_type(a);
	int rank = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
	hssize_t cnt = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
	H5T_class_t cl = ty >= 0 ? H5Tget_class(ty) : H5T_NO_CLASS;
	if (cl != H5T_INTEGER && cl != H5T_FLOAT) {
		log_error("%s: %s: attribute %s: expected numbers, got another type", s->path, where,
			  name);
		goto end;
	}
	if (rank < 0 || rank > 1 || cnt < 1 || cnt > max) {
		log_error("%s: %s: attribute %s: expected %s, got %lld values of rank %d", s->path,
			  where, name, max == 1 ? "one number" : "a list of numbers", (long long)cnt, rank);
		goto end;
	}
	if (H5Aread(a, H5T_NATIVE_DOUBLE, out) < 0) {
		log_error("%s: %s: attribute %s: cannot be read as numbers", s->path, where, name);
		goto end;
	}
	for (hssize_t i = 0; i < cnt; i++) {
		if (!isfinite(out[i])) {
			log_error("%s: %s: attribute %s: value %lld is %g, expected a finite number",
				  s->path, where, name, (long long)i, out[i]);
			goto end;
		}
	}
	*n = (int)cnt;
	ret = 1;
end:
	h5_close_type_space(ty, sp);
	H5Aclose(a);
	return ret;
}

/* A scalar attribute; *out unchanged when absent. 1, 0 or NB_EINPUT. */
static int h5_attr1(const struct sim_snap *s, hid_t loc, const char *where, const char *name,
		    double *out)
{
	double v[1];
	int n = 0, r = h5_attr(s, loc, where, name, v, 1, &n);
	if (r == 1)
		*out = v[0];
	return r;
}

/* Group NAME of the file, or -1 when there is none (absent, or another
 * kind of object: not an error here; the callers say what is missing).
 * H5Gopen2 refuses a dataset, so no H5Oget_info (whose signature differs
 * between libhdf5 1.10 and 1.12+) is needed. */
static hid_t h5_group(const struct sim_snap *s, const char *name)
{
	htri_t ex = H5Lexists(h5_file(s), name, H5P_DEFAULT);
	if (ex <= 0)
		return -1;
	return H5Gopen2(h5_file(s), name, H5P_DEFAULT);
}

/* A per-type count list NAME of the Header: up to H5_MAX_TYPES whole
 * numbers >= 0. 1 present, 0 absent, NB_EINPUT. */
static int h5_counts(const struct sim_snap *s, hid_t hdr, const char *name,
		     uint64_t out[SIM_SNAP_NTYPES])
{
	double v[H5_MAX_TYPES];
	int n = 0, r = h5_attr(s, hdr, "Header", name, v, H5_MAX_TYPES, &n);
	if (r <= 0)
		return r;
	for (int t = 0; t < n; t++) {
		if (v[t] < 0 || v[t] != floor(v[t]) || v[t] > 9.007199254740992e15) {
			log_error("%s: Header: %s[%d] is %g, expected a whole number >= 0", s->path, name,
				  t, v[t]);
			return NB_EINPUT;
		}
		if (t < SIM_SNAP_NTYPES)
			out[t] = (uint64_t)v[t];
		else if (v[t] > 0)
			log_warn("%s: Header: %s[%d] is %g: particle types above 5 are not read", s->path,
				 name, t, v[t]);
	}
	return 1;
}

/* Code units in cgs from group G (WHERE) under GADGET's three names, or
 * SWIFT's. 1 found, 0 none, NB_EINPUT (some but not all, or not > 0). */
static int h5_units(struct sim_snap *s, hid_t g, const char *where, int swift)
{
	static const char *const gad[3] = {"UnitLength_in_cm", "UnitMass_in_g",
					   "UnitVelocity_in_cm_per_s"};
	static const char *const swf[3] = {"Unit length in cgs (U_L)", "Unit mass in cgs (U_M)",
					   "Unit time in cgs (U_t)"};
	const char *const *names = swift ? swf : gad;
	double v[3] = {0, 0, 0};
	int got = 0;
	for (int i = 0; i < 3; i++) {
		int r = h5_attr1(s, g, where, names[i], &v[i]);
		if (r < 0)
			return r;
		got += r;
	}
	if (got == 0)
		return 0;
	for (int i = 0; i < 3; i++) {
		if (!(v[i] > 0)) {
			log_error("%s: %s: attribute %s is %s, expected a unit > 0 (the other unit "
				  "attributes are given)",
				  s->path, where, names[i], got < 3 && v[i] == 0 ? "missing" : "not > 0");
			return NB_EINPUT;
		}
	}
	s->h.unit_length_cm = v[0];
	s->h.unit_mass_g = v[1];
	s->h.unit_velocity_cm_s = swift ? v[0] / v[2] : v[2];
	snprintf(s->h.units_from, sizeof s->h.units_from, "%s", where);
	return 1;
}

/* sim_snap_h5_stored (snap_internal.h): the storage a dataset claims. */
#define SNAP_H5_MAX_RATIO 65536.0
int sim_snap_h5_stored(int64_t dset, int64_t type, const char *path, const char *dn,
		       uint64_t nval, int64_t fsize)
{
	const hid_t d = (hid_t)dset, ty = (hid_t)type;
	if (nval == 0)
		return 0;
	const double need = (double)nval * (double)H5Tget_size(ty);
	const double have = (double)H5Dget_storage_size(d);
	hid_t dcpl = H5Dget_create_plist(d);
	int nfilt = dcpl >= 0 ? H5Pget_nfilters(dcpl) : 0;
	/* a virtual dataset (SWIFT's virtual snapshot file, stitching the
	 * parts) and external storage hold their bytes in other files: their
	 * reads say when those are missing or short */
	H5D_layout_t lay = dcpl >= 0 ? H5Pget_layout(dcpl) : H5D_LAYOUT_ERROR;
	int ext = dcpl >= 0 ? H5Pget_external_count(dcpl) : 0;
	if (dcpl >= 0)
		H5Pclose(dcpl);
	if (lay == H5D_VIRTUAL || ext > 0)
		return 0;
	const double least = nfilt > 0 ? need / SNAP_H5_MAX_RATIO : need;
	if (have >= least && (fsize <= 0 || have <= 2.0 * (double)fsize + 1e6))
		return 0;
	log_error("%s: %s: its shape claims %.0f values (%.4g bytes), but the file stores %.0f "
		  "bytes of it%s (file of %lld bytes): the header and the dataset claim more "
		  "particles than the file holds (truncated, or a dataset never written)",
		  path, dn, (double)nval, need, have, nfilt > 0 ? ", too few even compressed" : "",
		  (long long)fsize);
	return NB_EINPUT;
}

/* Dataset PartTypeT/NAME: must exist when required (else 0 returned when
 * absent), hold floats (or integers for IDs), shape [npart] or [npart, 3]. */
static int h5_check_dataset(struct sim_snap *s, int t, const char *name, int cols, int integer,
			    int required)
{
	char dn[64];
	snprintf(dn, sizeof dn, "PartType%d/%s", t, name);
	htri_t ex = H5Lexists(h5_file(s), dn, H5P_DEFAULT);
	if (ex <= 0) {
		if (!required)
			return 0;
		log_error("%s: %s: missing dataset (the Header says %llu particles of type %d)", s->path,
			  dn, (unsigned long long)s->h.npart[t], t);
		return NB_EINPUT;
	}
	int ret = NB_EINPUT;
	hid_t d = H5Dopen2(h5_file(s), dn, H5P_DEFAULT), sp = -1, ty = -1;
	if (d < 0) {
		log_error("%s: %s: not a dataset that can be opened", s->path, dn);
		return NB_EINPUT;
	}
	sp = H5Dget_space(d);
	ty = H5Dget_type(d);
	hsize_t dims[4] = {0, 0, 0, 0};
	int rank = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
	if (rank >= 1 && rank <= 4)
		H5Sget_simple_extent_dims(sp, dims, NULL);
	H5T_class_t cl = ty >= 0 ? H5Tget_class(ty) : H5T_NO_CLASS;
	if (cl != (integer ? H5T_INTEGER : H5T_FLOAT)) {
		log_error("%s: %s: expected %s values, got another type", s->path, dn,
			  integer ? "integer" : "floating-point");
		goto end;
	}
	int want_rank = cols > 1 ? 2 : 1;
	if (rank != want_rank || (cols > 1 && dims[1] != (hsize_t)cols)) {
		log_error("%s: %s: expected shape [%llu%s], got rank %d [%llu, %llu]", s->path, dn,
			  (unsigned long long)s->h.npart[t], cols > 1 ? ", 3" : "", rank,
			  (unsigned long long)dims[0], (unsigned long long)dims[1]);
		goto end;
	}
	if (dims[0] != s->h.npart[t]) {
		log_error("%s: %s: %llu rows, but the Header's NumPart_ThisFile[%d] says %llu", s->path,
			  dn, (unsigned long long)dims[0], t, (unsigned long long)s->h.npart[t]);
		goto end;
	}
	if (sim_snap_h5_stored((int64_t)d, (int64_t)ty, s->path, dn, dims[0] * (hsize_t)cols,
			       s->fsize))
		goto end;
	ret = 1;
end:
	h5_close_type_space(ty, sp);
	H5Dclose(d);
	return ret;
}

/* SWIFT's exponents on PartTypeT/NAME into *a, *h. 1 both present, 0 not. */
static int h5_exponents(struct sim_snap *s, int t, const char *name, double *a, double *h)
{
	char dn[64];
	snprintf(dn, sizeof dn, "PartType%d/%s", t, name);
	hid_t d = H5Dopen2(h5_file(s), dn, H5P_DEFAULT);
	if (d < 0)
		return 0;
	int ra = h5_attr1(s, d, dn, "a-scale exponent", a);
	int rh = h5_attr1(s, d, dn, "h-scale exponent", h);
	H5Dclose(d);
	return ra == 1 && rh == 1;
}

static int h5_types(struct sim_snap *s)
{
	int err, ex_all = 1, any = 0;
	for (int t = 0; t < SIM_SNAP_NTYPES; t++) {
		if (s->h.npart[t] == 0)
			continue;
		char gn[24];
		snprintf(gn, sizeof gn, "PartType%d", t);
		hid_t g = h5_group(s, gn);
		if (g < 0) {
			log_error("%s: %s: missing group (the Header's NumPart_ThisFile[%d] says %llu "
				  "particles)",
				  s->path, gn, t, (unsigned long long)s->h.npart[t]);
			return NB_EINPUT;
		}
		H5Gclose(g);
		if ((err = h5_check_dataset(s, t, "Coordinates", 3, 0, 1)) < 0 ||
		    (err = h5_check_dataset(s, t, "Velocities", 3, 0, 1)) < 0 ||
		    (err = h5_check_dataset(s, t, "ParticleIDs", 1, 1, 1)) < 0)
			return err;
		struct h5_state *hs = s->priv;
		hs->mass[t] = NULL;
		for (int k = 0; k < H5_NMASS_NAMES && !hs->mass[t]; k++) {
			if ((err = h5_check_dataset(s, t, h5_mass_names[k], 1, 0, 0)) < 0)
				return err;
			hs->mass[t] = err == 1 ? h5_mass_names[k] : NULL;
		}
		s->h.has_mass[t] = hs->mass[t] != NULL;
		if ((err = h5_check_dataset(s, t, "SmoothingLength", 1, 0, 0)) < 0)
			return err;
		s->h.has_hsml[t] = err == 1;
		double a[3], h[3];
		int ok = h5_exponents(s, t, "Coordinates", &a[0], &h[0]) &&
			 h5_exponents(s, t, "Velocities", &a[1], &h[1]);
		if (ok && s->h.has_mass[t])
			ok = h5_exponents(s, t, hs->mass[t], &a[2], &h[2]);
		else
			a[2] = h[2] = 0; /* MassTable masses: SWIFT's have no h either */
		if (ok && !any)
			for (int i = 0; i < 3; i++)
				s->h.a_exp[i] = a[i], s->h.h_exp[i] = h[i];
		ex_all = ex_all && ok;
		any = 1;
	}
	s->h.has_exponents = any && ex_all;
	return 0;
}

/* The Header's per-type counts (high words applied) and MassTable. */
static int h5_header_counts(struct sim_snap *s, hid_t hdr)
{
	struct sim_snap_header *h = &s->h;
	int err, n = 0;
	if ((err = h5_counts(s, hdr, "NumPart_ThisFile", h->npart)) < 0)
		return err;
	if (err == 0) {
		log_error("%s: Header: missing attribute NumPart_ThisFile", s->path);
		return NB_EINPUT;
	}
	uint64_t hi[SIM_SNAP_NTYPES] = {0};
	if ((err = h5_counts(s, hdr, "NumPart_Total", h->npart_total)) < 0 ||
	    (err = h5_counts(s, hdr, "NumPart_Total_HighWord", hi)) < 0)
		return err;
	for (int t = 0; t < SIM_SNAP_NTYPES; t++) {
		if (hi[t] >= 1u << 31) {
			log_error("%s: Header: NumPart_Total_HighWord[%d] is %llu, too large", s->path, t,
				  (unsigned long long)hi[t]);
			return NB_EINPUT;
		}
		h->npart_total[t] += hi[t] << 32;
	}
	double mt[H5_MAX_TYPES] = {0};
	if ((err = h5_attr(s, hdr, "Header", "MassTable", mt, H5_MAX_TYPES, &n)) < 0)
		return err;
	for (int t = 0; t < SIM_SNAP_NTYPES; t++) {
		if (mt[t] < 0) {
			log_error("%s: Header: MassTable[%d] is %g, expected a mass >= 0", s->path, t, mt[t]);
			return NB_EINPUT;
		}
		h->mass_table[t] = mt[t];
	}
	return 0;
}

/* The Header's time, box and file count; the Hubble parameter and the
 * comoving flag from Parameters (GADGET-4) and Cosmology (SWIFT), either
 * group -1 when absent. */
static int h5_header_run(struct sim_snap *s, hid_t hdr, hid_t par, hid_t cos)
{
	struct sim_snap_header *h = &s->h;
	int err, n = 0;
	double box[3] = {0, 0, 0}, nf = 1, flag = -1;
	if ((err = h5_attr1(s, hdr, "Header", "Time", &h->time)) < 0 ||
	    (err = h5_attr1(s, hdr, "Header", "Redshift", &h->redshift)) < 0 ||
	    (err = h5_attr(s, hdr, "Header", "BoxSize", box, 3, &n)) < 0 ||
	    (err = h5_attr1(s, hdr, "Header", "NumFilesPerSnapshot", &nf)) < 0 ||
	    (err = h5_attr1(s, hdr, "Header", "Scale-factor", &h->scale_factor)) < 0 ||
	    (err = h5_attr1(s, hdr, "Header", "HubbleParam", &h->hubble)) < 0)
		return err;
	for (int i = 0; i < 3; i++)
		h->box_size = box[i] > h->box_size ? box[i] : h->box_size;
	if (nf < 0 || nf > 1 << 20 || nf != floor(nf)) {
		log_error("%s: Header: NumFilesPerSnapshot is %g, expected a whole number in [0, %d]",
			  s->path, nf, 1 << 20);
		return NB_EINPUT;
	}
	h->num_files = nf >= 1 ? (int)nf : 1;
	if (par >= 0 && ((err = h5_attr1(s, par, "Parameters", "HubbleParam", &h->hubble)) < 0 ||
			 (err = h5_attr1(s, par, "Parameters", "ComovingIntegrationOn", &flag)) < 0))
		return err;
	if (cos >= 0 && ((err = h5_attr1(s, cos, "Cosmology", "h", &h->hubble)) < 0 ||
			 (err = h5_attr1(s, cos, "Cosmology", "Cosmological run", &flag)) < 0))
		return err;
	h->cosmo_flag = flag < 0 ? -1 : flag != 0;
	if (!(h->hubble >= 0)) {
		log_error("%s: HubbleParam is %g, expected a number >= 0", s->path, h->hubble);
		return NB_EINPUT;
	}
	return 0;
}

static int h5_header(struct sim_snap *s)
{
	int err = 0;
	hid_t hdr = h5_group(s, "Header"), par = h5_group(s, "Parameters");
	hid_t cos = h5_group(s, "Cosmology"), un = h5_group(s, "Units");
	if (hdr < 0) {
		log_error("%s: Header: missing group, expected a GADGET-style HDF5 snapshot", s->path);
		err = NB_EINPUT;
		goto end;
	}
	if ((err = h5_header_counts(s, hdr)) || (err = h5_header_run(s, hdr, par, cos)))
		goto end;
	/* units: SWIFT's Units group, then Parameters, then Header */
	err = un >= 0 ? h5_units(s, un, "Units group", 1) : 0;
	if (err == 0 && par >= 0)
		err = h5_units(s, par, "Parameters group", 0);
	if (err == 0)
		err = h5_units(s, hdr, "Header", 0);
	if (err < 0)
		goto end;
	err = h5_types(s);
end:
	if (hdr >= 0)
		H5Gclose(hdr);
	if (par >= 0)
		H5Gclose(par);
	if (cos >= 0)
		H5Gclose(cos);
	if (un >= 0)
		H5Gclose(un);
	return err < 0 ? err : 0;
}

/* NbodyRender/SetId of a part of a set this program wrote (a scalar
 * 64-bit integer, output/snap_set.c) into h.set_id; 0 when absent. */
static int h5_set_id(struct sim_snap *s, hid_t f)
{
	const char *own = "NbodyRender", *name = "SetId";
	s->h.set_id = 0;
	if (H5Lexists(f, own, H5P_DEFAULT) <= 0 || H5Aexists_by_name(f, own, name, H5P_DEFAULT) <= 0)
		return 0;
	hid_t a = H5Aopen_by_name(f, own, name, H5P_DEFAULT, H5P_DEFAULT);
	hid_t sp = a >= 0 ? H5Aget_space(a) : -1, ty = a >= 0 ? H5Aget_type(a) : -1;
	unsigned long long v = 0;
	int ok = sp >= 0 && ty >= 0 && H5Tget_class(ty) == H5T_INTEGER &&
		 H5Sget_simple_extent_npoints(sp) == 1 && H5Aread(a, H5T_NATIVE_ULLONG, &v) >= 0;
	if (ty >= 0)
		H5Tclose(ty);
	if (sp >= 0)
		H5Sclose(sp);
	if (a >= 0)
		H5Aclose(a);
	if (!ok) {
		log_error("%s: %s/%s: expected one integer", s->path, own, name);
		return NB_EINPUT;
	}
	s->h.set_id = v;
	return 0;
}

static int h5_open(struct sim_snap *s)
{
	h5_quiet();
	close(s->fd); /* libhdf5 opens the file by its path */
	s->fd = -1;
	hid_t f = H5Fopen(s->path, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (f < 0) {
		log_error("%s: cannot be opened as an HDF5 file (not HDF5, or damaged)", s->path);
		return NB_EINPUT;
	}
	struct h5_state *hs = s->priv;
	hs->f = f;
	/* Our own snapshots store positions offset into their box
	 * (output/snap_write.c): the scene's frame is read back. */
	const char *own = "NbodyRender", *oa = "CoordinateOffset";
	hs->off[0] = hs->off[1] = hs->off[2] = 0;
	if (H5Lexists(f, own, H5P_DEFAULT) > 0 && H5Aexists_by_name(f, own, oa, H5P_DEFAULT) > 0) {
		hid_t a = H5Aopen_by_name(f, own, oa, H5P_DEFAULT, H5P_DEFAULT);
		hid_t sp = a >= 0 ? H5Aget_space(a) : -1;
		int ok = sp >= 0 && H5Sget_simple_extent_npoints(sp) == 3 &&
			 H5Aread(a, H5T_NATIVE_DOUBLE, hs->off) >= 0;
		if (sp >= 0)
			H5Sclose(sp);
		if (a >= 0)
			H5Aclose(a);
		if (!ok || !isfinite(hs->off[0] + hs->off[1] + hs->off[2])) {
			log_error("%s: %s/%s: expected 3 finite numbers", s->path, own, oa);
			return NB_EINPUT;
		}
	}
	int err = h5_set_id(s, f);
	return err ? err : h5_header(s);
}

static void h5_close(struct sim_snap *s)
{
	struct h5_state *st = s->priv;
	if (st->f > 0)
		H5Fclose(st->f);
	st->f = 0;
}

/* Rows [first, first+n) of PartTypeT/NAME (cols values a row) as MEMTYPE. */
static int h5_rows(struct sim_snap *s, int t, const char *name, uint64_t first, size_t n,
		   int cols, hid_t memtype, void *out)
{
	char dn[64];
	snprintf(dn, sizeof dn, "PartType%d/%s", t, name);
	int ret = NB_EINPUT;
	hid_t d = H5Dopen2(h5_file(s), dn, H5P_DEFAULT), fs = -1, ms = -1;
	if (d < 0) {
		log_error("%s: %s: cannot be opened", s->path, dn);
		return NB_EINPUT;
	}
	hsize_t start[2] = {first, 0}, count[2] = {n, (hsize_t)cols};
	fs = H5Dget_space(d);
	ms = H5Screate_simple(cols > 1 ? 2 : 1, count, NULL);
	if (fs < 0 || ms < 0 ||
	    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
	    H5Dread(d, memtype, ms, fs, H5P_DEFAULT, out) < 0) {
		log_error("%s: %s: rows %llu to %llu cannot be read (damaged file?)", s->path, dn,
			  (unsigned long long)first, (unsigned long long)(first + n));
		goto end;
	}
	ret = 0;
end:
	if (ms >= 0)
		H5Sclose(ms);
	if (fs >= 0)
		H5Sclose(fs);
	H5Dclose(d);
	return ret;
}

static int h5_read(struct sim_snap *s, int t, uint64_t first, size_t n, uint64_t *id,
		   double *pos, double *vel, double *mass, double *hsml)
{
	int err = 0;
	if (n == 0)
		return 0;
	if (pos && (err = h5_rows(s, t, "Coordinates", first, n, 3, H5T_NATIVE_DOUBLE, pos)))
		return err;
	const double *off = ((const struct h5_state *)s->priv)->off;
	for (size_t i = 0; pos && i < 3 * n; i++)
		pos[i] -= off[i % 3];
	if (vel && (err = h5_rows(s, t, "Velocities", first, n, 3, H5T_NATIVE_DOUBLE, vel)))
		return err;
	if (id && (err = h5_rows(s, t, "ParticleIDs", first, n, 1, H5T_NATIVE_UINT64, id)))
		return err;
	const char *mn = ((const struct h5_state *)s->priv)->mass[t];
	if (mass && mn && (err = h5_rows(s, t, mn, first, n, 1, H5T_NATIVE_DOUBLE, mass)))
		return err;
	if (hsml)
		err = h5_rows(s, t, "SmoothingLength", first, n, 1, H5T_NATIVE_DOUBLE, hsml);
	return err;
}

/* Without the file at hand (the row's data_name has none), a black hole's
 * masses are named by both the names they may have. */
static void h5_data_name(int type, int data, char *out, size_t len)
{
	static const char *const names[3] = {"Coordinates", "Velocities", "Masses"};
	snprintf(out, len, "PartType%d/%s", type,
		 data == SIM_SNAP_DATA_MASS && type == 5 ? "Masses (or SWIFT's DynamicalMasses)" : names[data]);
}

const struct sim_snap_format sim_snap_fmt_gadget_hdf5 = {
	.name = "gadget-hdf5",
	.title = "GADGET-style HDF5",
	.priv_size = sizeof(struct h5_state),
	.probe = h5_probe,
	.open = h5_open,
	.read = h5_read,
	.close = h5_close,
	.data_name = h5_data_name,
};
