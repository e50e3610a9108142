/* comm.c - the ranks: MPI set-up and the few exchanges dist/ uses, each
 * bounded in time so a rank that died or hangs is named instead of
 * waited for (dist.h).
 *
 * Every exchange is made of point-to-point messages (MPI_Isend/Irecv)
 * waited for by polling with a deadline: a collective (MPI_Allgatherv)
 * cannot say which rank it waits for, these can. The communicator returns
 * errors (MPI_ERRORS_RETURN) and every call's code is checked; a failure is
 * a message naming this rank and the peer, then MPI_Abort(1), which ends
 * every rank (mpirun exits 1). Messages for P ranks cost P - 1 sends a
 * rank: right for the tens of ranks this is for; a tree or ring would be
 * the next step past that (docs/BENCHMARKS.md).
 *
 * Built without MPI (NB_HAVE_MPI undefined) there is one rank and the
 * exchanges copy the caller's own block. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef NB_HAVE_MPI
#include <mpi.h>
#endif

#include "dist.h"

static int g_rank, g_size = 1, g_local_rank, g_local_size = 1;
#ifdef NB_HAVE_MPI
static int g_mpi;
#endif
static uint64_t g_sent, g_received;

int dist_have_mpi(void)
{
#ifdef NB_HAVE_MPI
	return 1;
#else
	return 0;
#endif
}

int dist_local_rank(void)
{
	return g_local_rank;
}

int dist_local_size(void)
{
	return g_local_size;
}

int dist_rank(void)
{
	return g_rank;
}

int dist_size(void)
{
	return g_size;
}

double dist_timeout_s(void)
{
	const char *s = getenv("NB_DIST_TIMEOUT");
	double t = s ? atof(s) : 0;
	return t > 0 ? t : 120.0;
}

void dist_bytes(uint64_t *sent, uint64_t *received)
{
	*sent = g_sent;
	*received = g_received;
}

void dist_fail(const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	log_error("rank %d of %d: %s", g_rank, g_size, msg);
	fflush(stderr);
#ifdef NB_HAVE_MPI
	if (g_mpi && g_size > 1)
		MPI_Abort(MPI_COMM_WORLD, 1);
#endif
	_exit(1);
}

int dist_init(int *argc, char ***argv)
{
#ifdef NB_HAVE_MPI
	/* Started by mpirun (OpenMPI sets OMPI_COMM_WORLD_SIZE; PMI/PMIx
	 * launchers set PMI_SIZE or PMIX_RANK): join the job. Started alone:
	 * one rank, no MPI at all (no singleton start-up, and batch children
	 * fork freely). */
	if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMI_SIZE") && !getenv("PMIX_RANK"))
		return 0;
	/* batch mode forks a child per run after MPI_Init; the children use
	 * no MPI, so OpenMPI's warning about fork says nothing useful */
	setenv("OMPI_MCA_mpi_warn_on_fork", "0", 0);
	int provided = 0;
	if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
		log_error("MPI_Init failed: is this run under mpirun?");
		return NB_ERUNTIME;
	}
	g_mpi = 1;
	if (MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN) != MPI_SUCCESS ||
	    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank) != MPI_SUCCESS ||
	    MPI_Comm_size(MPI_COMM_WORLD, &g_size) != MPI_SUCCESS) {
		log_error("MPI: cannot set up MPI_COMM_WORLD");
		return NB_ERUNTIME;
	}
	MPI_Comm local;
	if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL,
				&local) == MPI_SUCCESS) {
		if (MPI_Comm_rank(local, &g_local_rank) != MPI_SUCCESS ||
		    MPI_Comm_size(local, &g_local_size) != MPI_SUCCESS)
			g_local_rank = 0, g_local_size = 1;
		MPI_Comm_free(&local);
	}
#else
	(void)argc;
	(void)argv;
#endif
	return 0;
}

int dist_finish(int status)
{
#ifdef NB_HAVE_MPI
	if (!g_mpi)
		return status;
	if (status != 0 && g_size > 1) {
		/* the other ranks may be waiting for this one: end them all */
		fflush(stdout);
		fflush(stderr);
		MPI_Abort(MPI_COMM_WORLD, status);
	}
	MPI_Finalize();
#endif
	return status;
}

#ifdef NB_HAVE_MPI
static double comm_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *comm_errtext(int code, char *buf)
{
	int len = 0;
	if (MPI_Error_string(code, buf, &len) != MPI_SUCCESS)
		snprintf(buf, MPI_MAX_ERROR_STRING, "MPI error %d", code);
	return buf;
}

/* Wait for nreq requests (peer[k]: the rank request k talks to; recv[k]:
 * a receive), polling, until all complete or the deadline passes. */
static void comm_wait(MPI_Request *req, const int *peer, const int *recv, int nreq,
		      const char *what)
{
	const double deadline = comm_now() + dist_timeout_s();
	char err[MPI_MAX_ERROR_STRING];
	long spins = 0;
	for (;;) {
		int left = 0;
		for (int k = 0; k < nreq; k++) {
			if (req[k] == MPI_REQUEST_NULL)
				continue;
			int flag = 0;
			MPI_Status stat;
			int rc = MPI_Test(&req[k], &flag, &stat);
			if (rc != MPI_SUCCESS)
				dist_fail("%s: MPI error %s rank %d: %s (rank %d died?)", what,
					  recv[k] ? "receiving from" : "sending to", peer[k],
					  comm_errtext(rc, err), peer[k]);
			left += !flag;
		}
		if (!left)
			return;
		if (comm_now() > deadline) {
			char who[512] = "";
			size_t len = 0;
			int any_recv = 0;
			for (int k = 0; k < nreq; k++)
				any_recv |= req[k] != MPI_REQUEST_NULL && recv[k];
			for (int k = 0; k < nreq && len < sizeof who - 16; k++)
				if (req[k] != MPI_REQUEST_NULL && (recv[k] || !any_recv))
					len += (size_t)snprintf(who + len, sizeof who - len, "%s%d",
								len ? ", " : "", peer[k]);
			dist_fail("%s: nothing from rank %s for %.0f s (NB_DIST_TIMEOUT): that rank "
				  "died or hangs; stopping every rank",
				  what, who, dist_timeout_s());
		}
		if (++spins > 1000)
			usleep(spins > 100000 ? 1000 : 50); /* do not steal the cores the force uses */
	}
}

/* Message tags: one per kind of exchange, so two in flight never mix. */
enum { TAG_GATHER = 19001, TAG_SUM, TAG_GATHER0 };

static void *comm_reqs(int n, MPI_Request **req, int **peer, int **recv)
{
	void *mem = calloc((size_t)n, sizeof **req + 2 * sizeof(int));
	if (!mem)
		dist_fail("out of memory for %d MPI requests", n);
	*req = mem;
	*peer = (int *)(*req + n);
	*recv = *peer + n;
	for (int k = 0; k < n; k++)
		(*req)[k] = MPI_REQUEST_NULL;
	return mem;
}

/* MPI counts are int: a block is sent in pieces of at most 1 GiB. */
#define COMM_CHUNK ((size_t)1 << 30)

static int comm_pieces(size_t bytes)
{
	return (int)((bytes + COMM_CHUNK - 1) / COMM_CHUNK);
}

static void comm_post(int send, void *buf, size_t bytes, int peer_rank, int tag,
		      MPI_Request *req, int *peer, int *recv, int *nreq, const char *what)
{
	for (size_t o = 0; o < bytes; o += COMM_CHUNK) {
		size_t b = bytes - o < COMM_CHUNK ? bytes - o : COMM_CHUNK;
		int k = (*nreq)++, rc;
		peer[k] = peer_rank;
		recv[k] = !send;
		if (send)
			rc = MPI_Isend((char *)buf + o, (int)b, MPI_BYTE, peer_rank, tag,
				       MPI_COMM_WORLD, &req[k]);
		else
			rc = MPI_Irecv((char *)buf + o, (int)b, MPI_BYTE, peer_rank, tag,
				       MPI_COMM_WORLD, &req[k]);
		if (rc != MPI_SUCCESS) {
			char err[MPI_MAX_ERROR_STRING];
			dist_fail("%s: MPI error posting a message %s rank %d: %s", what,
				  send ? "to" : "from", peer_rank, comm_errtext(rc, err));
		}
	}
}
#endif

void dist_allgatherv(const void *send, void *recv, const size_t *bytes, const size_t *off,
		     const char *what)
{
	if ((char *)recv + off[g_rank] != send)
		memmove((char *)recv + off[g_rank], send, bytes[g_rank]);
#ifdef NB_HAVE_MPI
	if (g_size == 1)
		return;
	int n = 0;
	for (int r = 0; r < g_size; r++)
		if (r != g_rank)
			n += comm_pieces(bytes[g_rank]) + comm_pieces(bytes[r]);
	MPI_Request *req;
	int *peer, *isrecv, nreq = 0;
	void *mem = comm_reqs(n ? n : 1, &req, &peer, &isrecv);
	for (int r = 0; r < g_size; r++) {
		if (r == g_rank)
			continue;
		comm_post(0, (char *)recv + off[r], bytes[r], r, TAG_GATHER, req, peer, isrecv, &nreq,
			  what);
		g_received += bytes[r];
	}
	for (int s = 1; s < g_size; s++) { /* stagger the sends: rank r + s first */
		int r = (g_rank + s) % g_size;
		comm_post(1, (char *)recv + off[g_rank], bytes[g_rank], r, TAG_GATHER, req, peer,
			  isrecv, &nreq, what);
		g_sent += bytes[g_rank];
	}
	comm_wait(req, peer, isrecv, nreq, what);
	free(mem);
#else
	(void)what;
#endif
}

void dist_sum_floats(float *buf, size_t n, const char *what)
{
#ifdef NB_HAVE_MPI
	if (g_size == 1)
		return;
	const size_t bytes = n * sizeof *buf;
	MPI_Request *req;
	int *peer, *isrecv, nreq = 0;
	if (g_rank != 0) {
		void *mem = comm_reqs(comm_pieces(bytes) + 1, &req, &peer, &isrecv);
		comm_post(1, buf, bytes, 0, TAG_SUM, req, peer, isrecv, &nreq, what);
		g_sent += bytes;
		comm_wait(req, peer, isrecv, nreq, what);
		free(mem);
		return;
	}
	/* rank 0 adds the ranks' images in rank order: the sum's rounding is
	 * the same on every run */
	float *tmp = malloc(bytes ? bytes : 1);
	if (!tmp)
		dist_fail("%s: out of memory for %zu bytes", what, bytes);
	for (int r = 1; r < g_size; r++) {
		void *mem = comm_reqs(comm_pieces(bytes) + 1, &req, &peer, &isrecv);
		nreq = 0;
		comm_post(0, tmp, bytes, r, TAG_SUM, req, peer, isrecv, &nreq, what);
		g_received += bytes;
		comm_wait(req, peer, isrecv, nreq, what);
		free(mem);
		for (size_t k = 0; k < n; k++)
			buf[k] += tmp[k];
	}
	free(tmp);
#else
	(void)buf;
	(void)n;
	(void)what;
#endif
}

void dist_max_doubles(double *v, int n, const char *what)
{
	if (g_size == 1)
		return;
	size_t *bytes = malloc((size_t)g_size * 2 * sizeof *bytes);
	double *all = malloc((size_t)g_size * (size_t)n * sizeof *all);
	if (!bytes || !all)
		dist_fail("%s: out of memory", what);
	size_t *off = bytes + g_size;
	for (int r = 0; r < g_size; r++) {
		bytes[r] = (size_t)n * sizeof *v;
		off[r] = (size_t)r * bytes[r];
	}
	dist_allgatherv(v, all, bytes, off, what);
	for (int r = 0; r < g_size; r++)
		for (int k = 0; k < n; k++)
			if (all[(size_t)r * (size_t)n + (size_t)k] > v[k])
				v[k] = all[(size_t)r * (size_t)n + (size_t)k];
	free(all);
	free(bytes);
}

void dist_gather(const void *send, size_t bytes, void *recv, const char *what)
{
	if (g_rank == 0 && recv)
		memcpy(recv, send, bytes);
#ifdef NB_HAVE_MPI
	if (g_size == 1)
		return;
	int n = g_rank == 0 ? (g_size - 1) * comm_pieces(bytes) : comm_pieces(bytes);
	MPI_Request *req;
	int *peer, *isrecv, nreq = 0;
	void *mem = comm_reqs(n ? n : 1, &req, &peer, &isrecv);
	if (g_rank == 0) {
		for (int r = 1; r < g_size; r++) {
			comm_post(0, (char *)recv + (size_t)r * bytes, bytes, r, TAG_GATHER0, req, peer,
				  isrecv, &nreq, what);
			g_received += bytes;
		}
	} else {
		comm_post(1, (void *)send, bytes, 0, TAG_GATHER0, req, peer, isrecv, &nreq, what);
		g_sent += bytes;
	}
	comm_wait(req, peer, isrecv, nreq, what);
	free(mem);
#else
	(void)what;
#endif
}
