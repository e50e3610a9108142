/* test_bodyfile.c - body files (state CSVs for model: file): every kind of
 * bad file is NB_EINPUT with one message naming PATH:LINE and the column;
 * directories, FIFOs, sockets, empty and unreadable files are named for what
 * they are (at the scene's file: key when loaded through a scene) and a FIFO
 * never blocks; known-good files give exact values; --dry-run refuses what
 * the run refuses.
 *
 * Run: make CUDA=0 BUILD=build-cpu build-cpu/tests/test_bodyfile &&
 *      NB_BIN=build-cpu/nbody-render build-cpu/tests/test_bodyfile */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "sim/sim.h"
#include "sim/table.h"

#define HDR "id,component,mass,x,y,z,vx,vy,vz\n"

static char tmpdir[64];
static char msg[8192];

static void make_tmpdir(void)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/nb-test-bodyfile-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "chmod -R u+rwx '%s'; rm -rf '%s'", tmpdir, tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

/* tmpdir/name, holding the len bytes at data. */
static const char *write_bytes(const char *name, const char *data, size_t len)
{
	static char path[256];
	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
	return path;
}

static FILE *cap_file;
static int cap_saved;

static void cap_begin(void)
{
	fflush(stderr);
	cap_file = tmpfile();
	ck_assert_ptr_nonnull(cap_file);
	cap_saved = dup(2);
	dup2(fileno(cap_file), 2);
}

static void cap_end(void)
{
	fflush(stderr);
	dup2(cap_saved, 2);
	close(cap_saved);
	rewind(cap_file);
	size_t n = fread(msg, 1, sizeof msg - 1, cap_file);
	msg[n] = '\0';
	fclose(cap_file);
}

/* Count-only read of path with stderr captured into msg. A FIFO must not
 * block: the alarm kills the test if the reader waits for a writer. */
static int read_path(const char *path, size_t *n)
{
	cap_begin();
	alarm(10);
	int rc = sim_state_read_csv(path, NULL, NULL, 0, n);
	alarm(0);
	cap_end();
	return rc;
}

static int count_errors(const char *s)
{
	int k = 0;
	for (const char *p = s; (p = strstr(p, "error:")) != NULL; p++)
		k++;
	return k;
}

/* Each bad file: rc NB_EINPUT, n 0, one message with the path and want. */
START_TEST(bad_body_files_name_file_line_and_column)
{
	/* Out of range numbers (1e400, -1e999) are the input under test: strtod
	 * raises the overflow flag on them before the reader refuses them. */
	nb_untrap_fpe();
	static const struct {
		const char *text, *want;
	} cases[] = {
		{HDR "0,a,1.5abc,0,0,0,0,0,0\n", ":2: column 'mass': expected a decimal number, got '1.5abc'"},
		{HDR "0,a,1,,0,0,0,0,0\n", ":2: column 'x': expected a decimal number, got ''"},
		{HDR "0,a,1,0,0,0,0x10,0,0\n", ":2: column 'vx': expected a decimal number, got '0x10'"},
		{HDR "0,a,1,0,0,0,0x1p3,0,0\n", ":2: column 'vx': expected a decimal number, got '0x1p3'"},
		{HDR "0,a,1,0, 1,0,0,0,0\n", ":2: column 'y': expected a decimal number, got ' 1'"},
		{HDR "0,a,1,0,1 ,0,0,0,0\n", ":2: column 'y': expected a decimal number, got '1 '"},
		{HDR "0,a,1,0,0,1e,0,0,0\n", ":2: column 'z': expected a decimal number, got '1e'"},
		{HDR "0,a,1,0,0,.,0,0,0\n", ":2: column 'z': expected a decimal number, got '.'"},
		{HDR "0,a,1,0,0,1.2.3,0,0,0\n", ":2: column 'z': expected a decimal number, got '1.2.3'"},
		{HDR "0,a,1,0,0,\"1\",0,0,0\n", ":2: column 'z': expected a decimal number, got '\"1\"'"},
		{HDR "0,a,1,0,0,0,0,nan,0\n", ":2: column 'vy': expected a finite number, got 'nan'"},
		{HDR "0,a,1,0,0,0,0,-inf,0\n", ":2: column 'vy': expected a finite number, got '-inf'"},
		{HDR "0,a,1,0,0,0,0,Infinity,0\n", ":2: column 'vy': expected a finite number, got 'Infinity'"},
		{HDR "0,a,1,0,0,0,0,0,1e400\n", ":2: column 'vz': expected a finite number (|x| < 1.8e308), got '1e400'"},
		{HDR "0,a,-1e999,0,0,0,0,0,0\n", ":2: column 'mass': expected a finite number"},
		{HDR "0,a,0,0,0,0,0,0,0\n", ":2: column 'mass': expected a mass > 0, got '0'"},
		{HDR "0,a,1,2e15,0,0,0,0,0\n", ":2: column 'x': expected a number in [-1e15, 1e15]"},
		{HDR "0,a,1,0,0,0,0,-1e300,0\n", ":2: column 'vy': expected a number in [-1e15, 1e15]"},
		{HDR "0,a,-0,0,0,0,0,0,0\n", ":2: column 'mass': expected a mass > 0, got '-0'"},
		{HDR "0,a,-2.5,0,0,0,0,0,0\n", ":2: column 'mass': expected a mass > 0, got '-2.5'"},
		{HDR "0,a,1e-400,0,0,0,0,0,0\n", ":2: column 'mass': expected a mass > 0, got '1e-400'"},
		{HDR "-1,a,1,0,0,0,0,0,0\n", ":2: column 'id': expected an integer in [0, 4294967295], got '-1'"},
		{HDR "+1,a,1,0,0,0,0,0,0\n", ":2: column 'id': expected an integer in [0, 4294967295], got '+1'"},
		{HDR "1.0,a,1,0,0,0,0,0,0\n", ":2: column 'id': expected an integer in [0, 4294967295], got '1.0'"},
		{HDR "4294967296,a,1,0,0,0,0,0,0\n", ":2: column 'id': expected an integer in [0, 4294967295], got '4294967296'"},
		{HDR "99999999999999999999999,a,1,0,0,0,0,0,0\n", ":2: column 'id': expected an integer"},
		{HDR ",a,1,0,0,0,0,0,0\n", ":2: column 'id': expected an integer in [0, 4294967295], got ''"},
		{HDR "0,,1,0,0,0,0,0,0\n", ":2: column 'component': expected a name of 1 to 71 characters"},
		{HDR "0,a b,1,0,0,0,0,0,0\n", ":2: column 'component': expected a name of 1 to 71 characters A-Z a-z 0-9 _ . -, got 'a b'"},
		{HDR "0,abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrst,1,0,0,0,0,0,0\n",
		 ":2: column 'component': expected a name of 1 to 71 characters"},
		{HDR "0,a,1,0,0,0,0,0\n", ":2: expected 9 columns (id,component,mass,x,y,z,vx,vy,vz), got 8"},
		{HDR "0,a,1,0,0,0,0,0,0,\n", ":2: expected 9 columns (id,component,mass,x,y,z,vx,vy,vz), got 10"},
		{HDR "0 a 1 0 0 0 0 0 0\n", ":2: expected 9 columns (id,component,mass,x,y,z,vx,vy,vz), got 1"},
		{HDR "0,a,1,0,0,0,0,0,0\n1,a,1,0,0,0,0,0,0\n0,a,1,0,0,0,0,0,0\n",
		 ":4: column 'id': expected an id not used before, got 0 (also on line 2)"},
		/* the first repeat in file order is named, not the smallest id */
		{HDR "9,a,1,0,0,0,0,0,0\n1,a,1,0,0,0,0,0,0\n1,a,1,0,0,0,0,0,0\n9,a,1,0,0,0,0,0,0\n",
		 ":4: column 'id': expected an id not used before, got 1 (also on line 3)"},
		{HDR "0,a,1\r,0,0,0,0,0,0\n", ":2: column 'mass': expected a decimal number, got '1\\x0d'"},
		{HDR "0,a,1,0,0,0,0,0,0\r\r\n", ":2: column 'vz': expected a decimal number, got '0\\x0d'"},
		{"0,a,1,0,0,0,0,0,0\n", ":1: expected the header line 'id,component,mass,x,y,z,vx,vy,vz', got '0,a,1"},
		{"\xef\xbb\xbf" HDR "0,a,1,0,0,0,0,0,0\n", ":1: expected the header line 'id,component,mass,x,y,z,vx,vy,vz', got '\\xef\\xbb\\xbfid,"},
		{"id,component,mass,x,y,z,vx,vy,vz \n0,a,1,0,0,0,0,0,0\n", ":1: expected the header line"},
		{"ID,COMPONENT,MASS,X,Y,Z,VX,VY,VZ\n0,a,1,0,0,0,0,0,0\n", ":1: expected the header line"},
		{"\x01\x02\x03\n", ":1: expected the header line 'id,component,mass,x,y,z,vx,vy,vz', got '\\x01\\x02\\x03'"},
		{HDR, ": no bodies: the file has only the header line"},
		{HDR "\n\n", ": no bodies: the file has only the header line"},
		{"\n", ":1: expected the header line"},
		{HDR "0,a,1,0,0,0,0,0,0\n\n1,a,1,0,0,0,0,0,0\n",
		 ":4: expected only blank lines after the blank line 3, got a body"},
	};
	size_t n;
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		const char *path = write_bytes("bad.csv", cases[c].text, strlen(cases[c].text));
		n = 99;
		int rc = read_path(path, &n);
		ck_assert_msg(rc == NB_EINPUT, "case %zu: rc %d, message '%s'", c, rc, msg);
		ck_assert_msg(strstr(msg, path) && strstr(msg, cases[c].want),
			      "case %zu: message '%s' lacks '%s'", c, msg, cases[c].want);
		ck_assert_msg(count_errors(msg) == 1, "case %zu: not one message: '%s'", c, msg);
		ck_assert_uint_eq(n, 0);
	}
}
END_TEST

/* NUL bytes and over-long lines, which text literals cannot hold or show. */
START_TEST(nul_bytes_and_long_lines_are_refused)
{
	static const char nul[] = HDR "0,a,1,0,0,0,0,0,0\n1,a,1,0\0,0,0,0,0,0\n";
	size_t n = 99;
	const char *path = write_bytes("nul.csv", nul, sizeof nul - 1);
	ck_assert_int_eq(read_path(path, &n), NB_EINPUT);
	ck_assert_msg(strstr(msg, "nul.csv:3: byte 8 of the line is a NUL byte"), "%s", msg);
	ck_assert_uint_eq(n, 0);
	/* a NUL in the header */
	path = write_bytes("nul1.csv", "id\0", 3);
	ck_assert_int_eq(read_path(path, &n), NB_EINPUT);
	ck_assert_msg(strstr(msg, "nul1.csv:1: byte 3 of the line is a NUL byte"), "%s", msg);

	/* 1024 bytes, then CRLF: accepted (the line end is not counted); one
	 * byte more is refused, with or without the CR */
	static char text[4096];
	char mass[1100];
	const size_t fixed = strlen("0,a,,0,0,0,0,0,0");
	memset(mass, '0', sizeof mass);
	mass[0] = '1';
	mass[1] = '.';
	mass[SIM_CSV_LINE_MAX - fixed] = '\0';
	int len = snprintf(text, sizeof text, HDR "0,a,%s,0,0,0,0,0,0\r\n", mass);
	ck_assert_int_eq(len, (int)strlen(HDR) + SIM_CSV_LINE_MAX + 2);
	path = write_bytes("long.csv", text, (size_t)len);
	ck_assert_int_eq(read_path(path, &n), 0);
	ck_assert_uint_eq(n, 1);
	for (int crlf = 0; crlf < 2; crlf++) {
		mass[SIM_CSV_LINE_MAX - fixed] = '0';
		mass[SIM_CSV_LINE_MAX - fixed + 1] = '\0';
		len = snprintf(text, sizeof text, HDR "0,a,%s,0,0,0,0,0,0%s", mass, crlf ? "\r\n" : "\n");
		path = write_bytes("long.csv", text, (size_t)len);
		ck_assert_int_eq(read_path(path, &n), NB_EINPUT);
		ck_assert_msg(strstr(msg, "long.csv:2: expected a line of at most 1024 bytes"), "%s", msg);
	}
	/* a 1 MB line without any newline: refused, not swallowed */
	size_t big = 1u << 20;
	char *huge = malloc(big);
	ck_assert_ptr_nonnull(huge);
	memcpy(huge, HDR, strlen(HDR));
	memset(huge + strlen(HDR), '7', big - strlen(HDR));
	path = write_bytes("huge.csv", huge, big);
	free(huge);
	ck_assert_int_eq(read_path(path, &n), NB_EINPUT);
	ck_assert_msg(strstr(msg, "huge.csv:2: expected a line of at most 1024 bytes"), "%s", msg);
}
END_TEST

struct body {
	double m, x[3], v[3];
};

/* Read text (written as name) into a fresh state; compare exactly. */
static void expect_bodies(const char *name, const char *text, const struct body *want, size_t nw)
{
	struct sim_units u;
	scene_units_of(SCENE_UNITS_NBODY, &u);
	const char *path = write_bytes(name, text, strlen(text));
	size_t n = 0;
	ck_assert_msg(read_path(path, &n) == 0, "%s: %s", name, msg);
	ck_assert_uint_eq(n, nw);
	struct sim_state st;
	ck_assert_int_eq(sim_state_alloc(&st, n + 2, 1), 0);
	ck_assert_int_eq(sim_state_read_csv(path, &u, &st, 2, &n), 0);
	ck_assert_uint_eq(n, nw);
	for (size_t i = 0; i < nw; i++) {
		ck_assert_msg(st.mass[2 + i] == want[i].m, "%s body %zu mass %.17g", name, i, st.mass[2 + i]);
		for (int a = 0; a < 3; a++) {
			ck_assert_msg(st.pos[3 * (2 + i) + a] == want[i].x[a], "%s body %zu x%d", name, i, a);
			ck_assert_msg(st.vel[3 * (2 + i) + a] == want[i].v[a], "%s body %zu v%d", name, i, a);
		}
	}
	ck_assert(st.mass[0] == 0 && st.mass[1] == 0); /* first = 2: left alone */
	/* the memory reader agrees */
	ck_assert_int_eq(sim_state_read_csv_mem(name, text, strlen(text), SIM_CSV_MAX_BODIES, NULL, NULL, 0, &n), 0);
	ck_assert_uint_eq(n, nw);
	sim_state_free(&st);
}

START_TEST(good_files_load_exact_values)
{
	static const struct body two[2] = {
		{0.25, {1, -2, 3e-3}, {0.5, -0, 1e10}},
		{2.5e-7, {-250, 5, 5}, {3, 1e-310, -1.25}},
	};
	expect_bodies("lf.csv",
		      HDR "0,a,0.25,1,-2,3e-3,.5,-0,1E+10\n"
			  "1,a,2.5e-7,-2.5E2,5.,+5,3,1e-310,-1.25\n",
		      two, 2);
	expect_bodies("crlf.csv",
		      "id,component,mass,x,y,z,vx,vy,vz\r\n"
		      "0,a,0.25,1,-2,3e-3,.5,-0,1E+10\r\n"
		      "1,a,2.5e-7,-2.5E2,5.,+5,3,1e-310,-1.25\r\n",
		      two, 2);
	/* no final newline; trailing blank lines; ids in any order, up to
	 * 2^32 - 1, leading zeros; component names as the writer writes them
	 * (NAME.disk) or integers, 71 characters at most */
	expect_bodies("nonl.csv", HDR "0,a,0.25,1,-2,3e-3,.5,-0,1E+10\n1,a,2.5e-7,-2.5E2,5.,+5,3,1e-310,-1.25",
		      two, 2);
	expect_bodies("blank.csv",
		      HDR "4294967295,milky-way.disk,0.25,1,-2,3e-3,.5,-0,1E+10\n"
			  "007,"
			  "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrs"
			  ",2.5e-7,-2.5E2,5.,+5,3,1e-310,-1.25\n\r\n\n",
		      two, 2);
	expect_bodies("order.csv",
		      HDR "5,0,0.25,1,-2,3e-3,.5,-0,1E+10\n3,1,2.5e-7,-2.5E2,5.,+5,3,1e-310,-1.25\n", two, 2);
}
END_TEST

/* The body limit, shown with a small one through the memory reader. */
START_TEST(body_limit_is_enforced)
{
	static const char text[] = HDR "0,a,1,0,0,0,0,0,0\n1,a,1,0,0,0,0,0,0\n2,a,1,0,0,0,0,0,0\n";
	size_t n = 0;
	cap_begin();
	int rc3 = sim_state_read_csv_mem("mem.csv", text, sizeof text - 1, 3, NULL, NULL, 0, &n);
	size_t n3 = n;
	int rc2 = sim_state_read_csv_mem("mem.csv", text, sizeof text - 1, 2, NULL, NULL, 0, &n);
	cap_end();
	ck_assert_int_eq(rc3, 0);
	ck_assert_uint_eq(n3, 3);
	ck_assert_int_eq(rc2, NB_EINPUT);
	ck_assert_uint_eq(n, 0);
	ck_assert_msg(strstr(msg, "mem.csv:4: expected at most 2 bodies in a file, got more"), "%s", msg);
	ck_assert_int_eq(SIM_CSV_MAX_BODIES, 1000000000); /* as bodies.*.count */
	/* an empty buffer is an empty file */
	cap_begin();
	rc2 = sim_state_read_csv_mem("mem.csv", "", 0, 3, NULL, NULL, 0, &n);
	cap_end();
	ck_assert_int_eq(rc2, NB_EINPUT);
	ck_assert_msg(strstr(msg, "mem.csv: the file is empty"), "%s", msg);
}
END_TEST

/* Every prefix of a good file and seeded random bytes: the file and memory
 * readers agree, and the answer is 0 or NB_EINPUT, never a crash. */
START_TEST(any_bytes_give_an_answer)
{
	static const char good[] = HDR "0,a,0.25,1,-2,3e-3,.5,-0,1E+10\r\n1,b.disk,2,-2.5E2,5.,+5,3,1e-310,-1.25\n";
	char buf[256];
	uint64_t s = 12345;
	size_t ok = 0;
	cap_begin();
	for (size_t k = 0; k < 400; k++) {
		size_t len;
		if (k < sizeof good) {
			len = k;
			memcpy(buf, good, len);
		} else { /* the good file with a few bytes changed */
			len = sizeof good - 1;
			memcpy(buf, good, len);
			for (int j = 0; j < 3; j++) {
				s = s * 6364136223846793005ull + 1442695040888963407ull;
				buf[(s >> 33) % len] = (char)(s >> 25);
			}
		}
		const char *path = write_bytes("fuzz.csv", buf, len);
		size_t nf = 99, nm = 99;
		int rf = sim_state_read_csv(path, NULL, NULL, 0, &nf);
		int rm = sim_state_read_csv_mem("fuzz.csv", buf, len, SIM_CSV_MAX_BODIES, NULL, NULL, 0, &nm);
		ck_assert_msg(rf == rm && nf == nm, "input %zu: file %d/%zu, memory %d/%zu", k, rf, nf, rm, nm);
		ck_assert_msg(rf == 0 || rf == NB_EINPUT, "input %zu: rc %d", k, rf);
		ok += rf == 0;
		if (rf != 0)
			ck_assert_uint_eq(nf, 0);
	}
	cap_end();
	/* prefixes that end inside the second body's last field load 2 or 1 bodies */
	ck_assert_uint_gt(ok, 3);
}
END_TEST

static void make_socket(const char *path)
{
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_ge(fd, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	ck_assert_uint_lt(strlen(path), sizeof a.sun_path);
	memcpy(a.sun_path, path, strlen(path) + 1);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
	close(fd);
}

START_TEST(special_files_are_named_and_never_block)
{
	static const struct {
		const char *name, *why;
	} cases[] = {
		{"dir.csv", "it is a directory"},
		{"fifo.csv", "it is a FIFO (named pipe)"},
		{"sock.csv", "it is a socket"},
		{"empty.csv", "the file is empty"},
		{"none.csv", "it cannot be opened: No such file or directory"},
	};
	char path[128], want[256], why[256];
	snprintf(path, sizeof path, "%s/dir.csv", tmpdir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof path, "%s/fifo.csv", tmpdir);
	ck_assert_int_eq(mkfifo(path, 0644), 0);
	snprintf(path, sizeof path, "%s/sock.csv", tmpdir);
	make_socket(path);
	write_bytes("empty.csv", "", 0);
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		snprintf(path, sizeof path, "%s/%s", tmpdir, cases[c].name);
		size_t n = 99;
		ck_assert_int_eq(read_path(path, &n), NB_EINPUT);
		snprintf(want, sizeof want, "%s: %s; expected a state CSV file", path, cases[c].why);
		ck_assert_msg(strstr(msg, want), "message '%s' lacks '%s'", msg, want);
		ck_assert_int_eq(count_errors(msg), 1);
		ck_assert_uint_eq(n, 0);
		ck_assert_int_eq(sim_state_csv_check_file(path, why, sizeof why), NB_EINPUT);
		ck_assert_str_eq(why, cases[c].why);
	}
	/* unreadable: root reads anything, so only checked as another user */
	const char *p = write_bytes("secret.csv", HDR "0,a,1,0,0,0,0,0,0\n", strlen(HDR) + 18);
	ck_assert_int_eq(chmod(p, 0), 0);
	if (geteuid() != 0) {
		ck_assert_int_eq(sim_state_csv_check_file(p, why, sizeof why), NB_EINPUT);
		ck_assert_str_eq(why, "it cannot be opened: Permission denied");
	}
	ck_assert_int_eq(sim_state_csv_check_file(write_bytes("ok.csv", "x", 1), why, sizeof why), 0);
}
END_TEST

/* ---- body tables (sim/table.c) ---- */

/* A column map from "x=3,mass=m" (quantities in enum scene_column order). */
static const char (*table_map(const char *spec))[SCENE_NAME_MAX]
{
	static const char *const qty[SCENE_NCOL] = {"x", "y", "z", "vx", "vy", "vz", "mass"};
	static char cols[SCENE_NCOL][SCENE_NAME_MAX];
	memset(cols, 0, sizeof cols);
	char buf[256];
	snprintf(buf, sizeof buf, "%s", spec);
	char *save = NULL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');
		ck_assert_ptr_nonnull(eq);
		*eq = '\0';
		int q = 0;
		while (q < SCENE_NCOL && strcmp(qty[q], t) != 0)
			q++;
		ck_assert_int_lt(q, SCENE_NCOL);
		snprintf(cols[q], sizeof cols[q], "%s", eq + 1);
	}
	return (const char(*)[SCENE_NAME_MAX])cols;
}

/* Read table text with map spec; compare every body exactly, and the
 * count pass's total mass; the memory reader agrees. */
static void expect_table(const char *name, const char *text, const char *spec,
			 const struct body *want, size_t nw)
{
	struct sim_units u;
	scene_units_of(SCENE_UNITS_NBODY, &u);
	const char *path = write_bytes(name, text, strlen(text));
	size_t n = 0;
	double lg = 0, total = 0;
	int bad = 7;
	cap_begin();
	int rc = sim_table_read(path, table_map(spec), NULL, NULL, 0, &n, &lg, &bad);
	cap_end();
	ck_assert_msg(rc == 0, "%s: rc %d: %s", name, rc, msg);
	ck_assert_uint_eq(n, nw);
	ck_assert_int_eq(bad, -1);
	for (size_t i = 0; i < nw; i++)
		total += want[i].m;
	ck_assert_msg(fabs(lg - log10(total)) < 1e-12, "%s: lg mass %g, want log10(%g)", name, lg,
		      total);
	struct sim_state st;
	ck_assert_int_eq(sim_state_alloc(&st, n + 1, 1), 0);
	ck_assert_int_eq(sim_table_read(path, table_map(spec), &u, &st, 1, &n, NULL, NULL), 0);
	ck_assert_uint_eq(n, nw);
	for (size_t i = 0; i < nw; i++) {
		ck_assert_msg(st.mass[1 + i] == want[i].m * u.mass, "%s body %zu mass %.17g", name, i,
			      st.mass[1 + i]);
		for (int a = 0; a < 3; a++) {
			ck_assert_msg(st.pos[3 * (1 + i) + a] == want[i].x[a] * u.length,
				      "%s body %zu x%d %g", name, i, a, st.pos[3 * (1 + i) + a]);
			ck_assert_msg(st.vel[3 * (1 + i) + a] == want[i].v[a] * u.velocity,
				      "%s body %zu v%d %g", name, i, a, st.vel[3 * (1 + i) + a]);
		}
	}
	ck_assert(st.mass[0] == 0); /* first = 1: left alone */
	ck_assert_int_eq(sim_table_read_mem(name, text, strlen(text), table_map(spec),
					    SIM_CSV_MAX_BODIES, NULL, NULL, 0, &n),
			 0);
	ck_assert_uint_eq(n, nw);
	sim_state_free(&st);
}

START_TEST(tables_with_other_columns_are_read)
{
	static const struct body three[3] = {
		{1, {0, 0, 0}, {0, 0, 0}}, {2, {1, 0, 0}, {0, 0, 0}}, {3.5, {0, -1, 2e-3}, {0, 0, 0}}};
	static const struct body unit[2] = {{1, {1, 2, 3}, {0, 0, 0}}, {1, {4, 5, 6}, {0, 0, 0}}};
	static const struct body moving[2] = {{0.5, {1, 2, 3}, {-1, 0.25, 9}},
					      {2, {4, 5, 6}, {7, 8, 1e-3}}};
	/* SPLASH-style ascii: comments anywhere, blanks and tabs, the last
	 * comment before the rows names the columns (numpy.savetxt's header) */
	expect_table("splash.txt",
		     "# SPLASH-style dump, t = 0\n#  x   y   z   m   h\n"
		     "  0 0 0 1 0.1\n1\t0  0   2 0.2\r\n\n# a comment among the rows\n"
		     "0 -1 2e-3 3.5 0.3\n\n",
		     "mass=m", three, 3);
	/* CSV with x,y,z,mass only (spaces after the commas) */
	expect_table("xyzm.csv", "x, y, z, mass\n0,0,0,1\n1, 0, 0 ,2\n0,-1,2e-3,3.5\n", "", three,
		     3);
	/* by name, whatever the case; the velocity columns by their default names */
	expect_table("names.csv",
		     "ID,Pos_X,Pos_Y,Pos_Z,VX,VY,VZ,M,comment\n"
		     "7,1,2,3,-1,.25,9,0.5,first\n8,4,5,6,7,8,1e-3,2,second\n",
		     "x=pos_x,y=POS_Y,z=Pos_Z,mass=m", moving, 2);
	/* by position, without a header: no mass column means 1 each */
	expect_table("pos.txt", "9 3 1 2\n9 6 4 5\n", "x=3,y=4,z=2", unit, 2);
	/* a state CSV's header with a map: read as a table (its columns by name) */
	expect_table("state.csv", HDR "0,a,0.5,1,2,3,-1,.25,9\n1,b,2,4,5,6,7,8,1e-3\n", "vx=7",
		     moving, 2);
}
END_TEST

/* Each bad table: NB_EINPUT, one message with path:line and want, and the
 * map entry the refusal is about. */
START_TEST(table_errors_name_line_and_column)
{
	static const struct {
		const char *text, *spec, *want;
		int bad;
	} cases[] = {
		{"x,y,z,mass\n0,0,0,1\n0,0,abc,1\n", "",
		 ":3: column 3 'z' (z): expected a decimal number, got 'abc'", -1},
		{"# x y z m\n0 0 0 1\n0 0 0 -1\n", "mass=m", ":3: column 4 'm' (mass): expected a mass > 0, got '-1'", -1},
		{"1 2 3 4\n1 2 3 nan\n", "x=1,y=2,z=3,mass=4", ":2: column 4 (mass): expected a decimal number, got 'nan'", -1},
		{"x y z\n0 0 0\n0 0 2e15\n", "", ":3: column 3 'z' (z): expected a number in [-1e15, 1e15]", -1},
		{"x,y,z,mass\n0,0,0,1\n0,0,0\n", "",
		 ":3: expected 4 fields (as line 1), got 3: it lacks column 4 'mass' (mass)", -1},
		{"x,y,z,mass\n0,0,0,1\n0,0,0,1,5\n", "", ":3: expected 4 fields (as line 1), got 5", -1},
		{"x,y,z\n0,0,0\n", "mass=m", ":1: columns.mass: expected a column of the header, got 'm' (the header has: x, y, z)", SCENE_COL_MASS},
		{"a b c\n0 0 0\n", "", ":1: no column for x: the header has none named 'x' (it has: a, b, c)", SCENE_COL_X},
		{"# run 3\n0 0 0\n", "", ":2: no column for x: no header line names the columns (line 2 holds only numbers)", SCENE_COL_X},
		{"0 0 0\n", "x=1,y=2,z=4", ":1: columns.z: expected a position in [1, 3] (the rows have 3 fields), got 4", SCENE_COL_Z},
		{"0 0 0\n", "x=0", ":1: columns.x: expected a position in [1, 3]", SCENE_COL_X},
		{"0 0 0\n", "x=1,y=2,z=pos_z", ":1: columns.z: 'pos_z' names a column, but no header line names the columns (line 1 holds only numbers)", SCENE_COL_Z},
		{"x,y,z,m\n0,0,0,1\n", "y=x", ":1: columns.y: column 1 'x' (y) is already the column of x", SCENE_COL_Y},
		{"x,y,z,vx,vy\n0,0,0,1,1\n", "", ":1: no column for vz, but column 4 'vx' (vx) gives vx: give all three velocities or none", SCENE_COL_VZ},
		{"x,y,z,vz\n0,0,0,1\n", "", ":1: no column for vx, but column 4 'vz' (vz) gives vz", SCENE_COL_VX},
		{"# only comments\n\n", "", ": no bodies: the file holds only blank lines and comments", -1},
		{"# x y z\nx y z\n", "", ": no bodies: the file has only the header line 2", -1},
		/* a state CSV keeps its own rules with the default map */
		{HDR "0,a,1,0,0,0,0,0,0\n0,a,1,0,0,0,0,0,0\n", "", ":3: column 'id': expected an id not used before", -1},
		{HDR "0,a,1,0,0,0,0,0,0\n\n1,a,1,0,0,0,0,0,0\n", "", ":4: expected only blank lines after the blank line 3", -1},
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		const char *path = write_bytes("bad.tab", cases[c].text, strlen(cases[c].text));
		size_t n = 99;
		int bad = 99;
		cap_begin();
		int rc = sim_table_read(path, table_map(cases[c].spec), NULL, NULL, 0, &n, NULL, &bad);
		cap_end();
		ck_assert_msg(rc == NB_EINPUT, "case %zu: rc %d, message '%s'", c, rc, msg);
		ck_assert_msg(strstr(msg, path) && strstr(msg, cases[c].want),
			      "case %zu: message '%s' lacks '%s'", c, msg, cases[c].want);
		ck_assert_msg(count_errors(msg) == 1, "case %zu: not one message: '%s'", c, msg);
		ck_assert_uint_eq(n, 0);
		ck_assert_msg(bad == cases[c].bad, "case %zu: bad column %d, want %d", c, bad, cases[c].bad);
	}
}
END_TEST

/* A state CSV read as a table (default map) gives the state CSV reader's
 * bodies exactly; its count pass its total mass. */
START_TEST(state_csv_reads_the_same_as_a_table)
{
	static const char text[] = HDR "0,a,0.25,1,-2,3e-3,.5,-0,1E+10\n1,b,2.5e-7,-2.5E2,5.,+5,3,1e-310,-1.25\n";
	const char *path = write_bytes("same.csv", text, sizeof text - 1);
	struct sim_units u;
	scene_units_of(SCENE_UNITS_GALACTIC, &u);
	struct sim_state a, b;
	size_t na = 0, nb = 0;
	double lg = 0;
	ck_assert_int_eq(sim_state_alloc(&a, 2, 1), 0);
	ck_assert_int_eq(sim_state_alloc(&b, 2, 1), 0);
	ck_assert_int_eq(sim_state_read_csv(path, &u, &a, 0, &na), 0);
	ck_assert_int_eq(sim_table_read(path, table_map(""), &u, &b, 0, &nb, NULL, NULL), 0);
	ck_assert_uint_eq(na, 2);
	ck_assert_uint_eq(nb, 2);
	ck_assert_int_eq(memcmp(a.pos, b.pos, 6 * sizeof *a.pos), 0);
	ck_assert_int_eq(memcmp(a.vel, b.vel, 6 * sizeof *a.vel), 0);
	ck_assert_int_eq(memcmp(a.mass, b.mass, 2 * sizeof *a.mass), 0);
	ck_assert_int_eq(sim_table_read(path, NULL, NULL, NULL, 0, &nb, &lg, NULL), 0);
	ck_assert(fabs(lg - log10(0.25 + 2.5e-7)) < 1e-12);
	sim_state_free(&a);
	sim_state_free(&b);
}
END_TEST

/* Through a scene: the error is at the file: key (t.yaml:1:39). */
START_TEST(scene_names_bad_body_file_at_its_key)
{
	static const char *const names[] = {"dir.csv", "fifo.csv", "empty.csv"};
	static const char *const whys[] = {"it is a directory", "it is a FIFO (named pipe)",
					   "the file is empty"};
	char path[128], text[256], want[512];
	snprintf(path, sizeof path, "%s/dir.csv", tmpdir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof path, "%s/fifo.csv", tmpdir);
	ck_assert_int_eq(mkfifo(path, 0644), 0);
	write_bytes("empty.csv", "", 0);
	static struct scene sc;
	for (int c = 0; c < 3; c++) {
		snprintf(text, sizeof text, "bodies: [{name: a, model: file, file: %s}]\n", names[c]);
		cap_begin();
		alarm(10);
		int rc = scene_load_string(text, "t.yaml", tmpdir, NULL, 0, &sc);
		alarm(0);
		cap_end();
		ck_assert_int_eq(rc, NB_EINPUT);
		snprintf(want, sizeof want,
			 "t.yaml:1:39: bodies.0.file: cannot use '%s/%s' as a state CSV: %s", tmpdir,
			 names[c], whys[c]);
		ck_assert_msg(strstr(msg, want), "message '%s' lacks '%s'", msg, want);
	}
}
END_TEST

/* Run the CLI in tmpdir on scene s.yaml; stderr into msg; exit status. */
static int run_cli(const char *args)
{
	char bin[4096], cmd[8192], errpath[128];
	ck_assert_ptr_nonnull(realpath(nb_bin(), bin));
	snprintf(errpath, sizeof errpath, "%s/cli.err", tmpdir);
	snprintf(cmd, sizeof cmd, "cd '%s' && timeout 20 '%s' s.yaml %s > cli.out 2> cli.err", tmpdir,
		 bin, args);
	int st = system(cmd);
	ck_assert(WIFEXITED(st));
	FILE *f = fopen(errpath, "r");
	ck_assert_ptr_nonnull(f);
	size_t n = fread(msg, 1, sizeof msg - 1, f);
	msg[n] = '\0';
	fclose(f);
	return WEXITSTATUS(st);
}

/* --dry-run refuses the body files the run refuses, with the same message;
 * a good file passes both. */
START_TEST(dry_run_refuses_what_the_run_refuses)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{HDR "0,a,1,0,0,0,0,0,0\n0,a,1,1,0,0,0,0,0\n", "b.csv:3: column 'id': expected an id not used before"},
		{HDR "0,a,0x1,0,0,0,0,0,0\n", "b.csv:2: column 'mass': expected a decimal number, got '0x1'"},
		{HDR "0,a,1,0,0,0,0,0,0\n1,a,0,1,0,0,0,0,0\n", "b.csv:3: column 'mass': expected a mass > 0"},
		{"", "s.yaml:4:11: bodies.0.file: cannot use"},
	};
	static const char scene[] = "bodies:\n  - name: a\n    model: file\n    file: b.csv\n"
				    "output: {frames: 2}\nrender: {width: 32, height: 32}\n"
				    "simulation: {backend: cpu}\n";
	write_bytes("s.yaml", scene, strlen(scene));
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		write_bytes("b.csv", cases[c].text, strlen(cases[c].text));
		for (int dry = 1; dry >= 0; dry--) {
			int rc = run_cli(dry ? "--dry-run" : "--quiet");
			ck_assert_msg(rc == 2, "case %zu dry %d: exit %d, stderr '%s'", c, dry, rc, msg);
			ck_assert_msg(strstr(msg, cases[c].want), "case %zu dry %d: '%s' lacks '%s'", c,
				      dry, msg, cases[c].want);
		}
	}
	/* a FIFO in its place: refused at once by both */
	char path[128];
	snprintf(path, sizeof path, "%s/b.csv", tmpdir);
	ck_assert_int_eq(remove(path), 0);
	ck_assert_int_eq(mkfifo(path, 0644), 0);
	for (int dry = 1; dry >= 0; dry--) {
		ck_assert_int_eq(run_cli(dry ? "--dry-run" : "--quiet"), 2);
		ck_assert_msg(strstr(msg, "s.yaml:4:11: bodies.0.file: cannot use") &&
				      strstr(msg, "it is a FIFO"),
			      "%s", msg);
	}
	/* a good file: the dry run counts its bodies */
	ck_assert_int_eq(remove(path), 0);
	write_bytes("b.csv", HDR "0,a,1,0,0,0,0,0,0\n1,a,1,1,0,0,0,0,0\n2,a,1,0,1,0,0,0,0\n", strlen(HDR) + 54);
	ck_assert_msg(run_cli("--dry-run") == 0, "%s", msg);
	char out[256];
	snprintf(out, sizeof out, "grep -qx '# bodies: 3' '%s/cli.out'", tmpdir);
	ck_assert_int_eq(system(out), 0);
}
END_TEST

/* A body table through the CLI: the dry run and the run refuse the same
 * table errors, a column map's at its key; a good table runs. */
START_TEST(dry_run_refuses_the_tables_the_run_refuses)
{
	static const struct {
		const char *text, *want, *at;
	} cases[] = {
		{"# x y z m\n0 0 0 1\n0 0 0 one\n", "b.txt:3: column 4 'm' (mass): expected a decimal number, got 'one'",
		 "bodies.0.file: the body table"},
		{"# x y z w\n0 0 0 1\n", "b.txt:1: columns.mass: expected a column of the header, got 'm'",
		 "bodies.0.columns.mass: the body table"},
		{"# x y z m\n0 0 0 1\n0 0\n", "b.txt:3: expected 4 fields (as line 2), got 2: it lacks column 3 'z' (z)",
		 "bodies.0.file: the body table"},
	};
	static const char scene[] = "bodies:\n  - name: a\n    model: file\n    file: b.txt\n"
				    "    columns: {mass: m}\n"
				    "output: {frames: 2}\nrender: {width: 32, height: 32}\n"
				    "simulation: {backend: cpu}\n";
	write_bytes("s.yaml", scene, strlen(scene));
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		write_bytes("b.txt", cases[c].text, strlen(cases[c].text));
		for (int dry = 1; dry >= 0; dry--) {
			int rc = run_cli(dry ? "--dry-run" : "--quiet");
			ck_assert_msg(rc == 2, "case %zu dry %d: exit %d, stderr '%s'", c, dry, rc, msg);
			ck_assert_msg(strstr(msg, cases[c].want) && strstr(msg, cases[c].at),
				      "case %zu dry %d: '%s' lacks '%s' or '%s'", c, dry, msg,
				      cases[c].want, cases[c].at);
		}
	}
	static const char good[] = "# x y z m\n0 0 0 1\n1 0 0 2\n0 1 0 3\n";
	write_bytes("b.txt", good, strlen(good));
	ck_assert_msg(run_cli("--dry-run") == 0, "%s", msg);
	char out[256];
	snprintf(out, sizeof out, "grep -qx '# bodies: 3' '%s/cli.out'", tmpdir);
	ck_assert_int_eq(system(out), 0);
	ck_assert_msg(run_cli("--quiet --set output.final_state=f.csv") == 0, "%s", msg);
	/* the run kept the masses and positions (the state CSV writes %.9g) */
	snprintf(out, sizeof out, "grep -q '^2,a,3,' '%s/f.csv'", tmpdir);
	ck_assert_msg(system(out) == 0, "f.csv lacks body 2 with mass 3");
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("bodyfile");
	TCase *tc = tcase_create("reader");
	tcase_add_checked_fixture(tc, make_tmpdir, remove_tmpdir);
	tcase_add_test(tc, bad_body_files_name_file_line_and_column);
	tcase_add_test(tc, nul_bytes_and_long_lines_are_refused);
	tcase_add_test(tc, good_files_load_exact_values);
	tcase_add_test(tc, body_limit_is_enforced);
	tcase_add_test(tc, any_bytes_give_an_answer);
	tcase_add_test(tc, special_files_are_named_and_never_block);
	tcase_add_test(tc, scene_names_bad_body_file_at_its_key);
	tcase_add_test(tc, tables_with_other_columns_are_read);
	tcase_add_test(tc, table_errors_name_line_and_column);
	tcase_add_test(tc, state_csv_reads_the_same_as_a_table);
	suite_add_tcase(s, tc);
	TCase *tcli = tcase_create("cli");
	tcase_add_checked_fixture(tcli, make_tmpdir, remove_tmpdir);
	tcase_add_test(tcli, dry_run_refuses_what_the_run_refuses);
	tcase_add_test(tcli, dry_run_refuses_the_tables_the_run_refuses);
	suite_add_tcase(s, tcli);
	return s;
}

NB_CHECK_MAIN(make_suite)
