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
 * One simulation over the ranks (dist_run_over_ranks; not a batch, whose
 * ranks each own their runs) is ended by rank 0, which writes every
 * output, never from under it (dist.h, "Ending a run over ranks"): rank 0
 * turns a failed exchange into an error its caller returns (the run
 * fails and removes its outputs), the other ranks tell rank 0 of their
 * own failure (TAG_FAIL) and leave stopping to it, and a stop of rank 0
 * (a signal) is an interrupt only when every rank still answers
 * (dist_stop_status: TAG_PING, TAG_PONG).
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
static double g_wait_s; /* seconds spent waiting for exchanges (comm_wait) */
static int g_single;   /* dist_run_over_ranks: rank 0 ends the run */
static int g_broken;   /* rank 0 of such a run: an exchange could not complete */
static int g_together; /* dist_agree ended the run on every rank at once */

#ifdef NB_HAVE_MPI
/* Seconds rank 0, stopped, waits for the other ranks' answer. */
static double comm_stop_grace(void)
{
	const char *s = getenv("NB_DIST_STOP_GRACE");
	double t = s ? atof(s) : 0;
	return t > 0 ? t : 0.5;
}
#endif

void dist_run_over_ranks(void)
{
	g_single = g_size > 1;
}

int dist_defers_stop(void)
{
	return g_single && g_rank != 0;
}

int dist_broken(void)
{
	return g_broken ? NB_ERUNTIME : 0;
}

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

double dist_wait_seconds(void)
{
	return g_wait_s;
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
	dist_finish(1);
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

#ifdef NB_HAVE_MPI
static double comm_now(void);
static void comm_tell_owner(int status);
#endif

int dist_finish(int status)
{
#ifdef NB_HAVE_MPI
	if (!g_mpi)
		return status;
	if (status != 0 && g_size > 1 && !g_together) {
		/* the other ranks may be waiting for this one: end them all,
		 * by rank 0 when it writes the outputs (it removes them first) */
		fflush(stdout);
		fflush(stderr);
		if (g_single && g_rank != 0)
			comm_tell_owner(status);
		MPI_Abort(MPI_COMM_WORLD, status);
	}
	MPI_Finalize();
#endif
	return status;
}

int dist_agree(int rc, int *who)
{
	int *all = malloc((size_t)g_size * sizeof *all);
	size_t *bytes = malloc(2 * (size_t)g_size * sizeof *bytes);
	if (!all || !bytes)
		dist_fail("out of memory for %d ranks", g_size);
	size_t *off = bytes + g_size;
	for (int r = 0; r < g_size; r++) {
		bytes[r] = sizeof *all;
		off[r] = (size_t)r * sizeof *all;
	}
	dist_allgatherv(&rc, all, bytes, off, "input checks");
	int out = 0;
	*who = -1;
	for (int r = 0; r < g_size && !out; r++)
		if (all[r] != 0) {
			out = all[r];
			*who = r;
		}
	free(all);
	free(bytes);
	g_together = out != 0;
	return out;
}

#ifdef NB_HAVE_MPI
/* Message tags: one per kind of exchange, so two in flight never mix;
 * the last three end a run over ranks (dist_run_over_ranks). */
enum { TAG_GATHER = 19001, TAG_SUM, TAG_GATHER0, TAG_PING, TAG_PONG, TAG_FAIL, TAG_A2A };

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

/* Rank 0 of a run over ranks: an exchange cannot complete. Say why once
 * (as dist_fail would) and fail every later exchange at once (no more MPI
 * calls: the pending requests are left to MPI_Abort), so the caller's
 * error reaches the run, which removes its outputs before rank 0 ends the
 * job (dist_finish). */
static void comm_break(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void comm_break(const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (!g_broken)
		log_error("rank %d of %d: %s", g_rank, g_size, msg);
	g_broken = 1;
}

/* A run over ranks, while this rank waits: rank 0 takes a failed rank's
 * note (TAG_FAIL: it logged its error) and fails the run; another rank
 * answers rank 0's question (TAG_PING: still alive?). */
static void comm_service(void)
{
	static int pong; /* the answer's buffer: must outlive its send */
	int flag = 0, note = 0;
	MPI_Status stat;
	if (!g_single)
		return;
	if (g_rank == 0) {
		if (MPI_Iprobe(MPI_ANY_SOURCE, TAG_FAIL, MPI_COMM_WORLD, &flag, &stat) == MPI_SUCCESS &&
		    flag) {
			MPI_Recv(&note, 1, MPI_INT, stat.MPI_SOURCE, TAG_FAIL, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			comm_break("rank %d failed (exit status %d, its message above): the run fails",
				   stat.MPI_SOURCE, note);
		}
		return;
	}
	if (MPI_Iprobe(0, TAG_PING, MPI_COMM_WORLD, &flag, &stat) == MPI_SUCCESS && flag) {
		MPI_Request req;
		MPI_Recv(&note, 1, MPI_INT, 0, TAG_PING, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		pong = g_rank;
		if (MPI_Isend(&pong, 1, MPI_INT, 0, TAG_PONG, MPI_COMM_WORLD, &req) == MPI_SUCCESS)
			MPI_Request_free(&req);
	}
}

/* Another rank of a run over ranks, failing with STATUS: tell rank 0,
 * which removes the run's outputs and then ends every rank, and wait for
 * that (at most NB_DIST_TIMEOUT seconds; the caller then aborts). */
static void comm_tell_owner(int status)
{
	static int note;
	MPI_Request req;
	note = status;
	if (MPI_Isend(&note, 1, MPI_INT, 0, TAG_FAIL, MPI_COMM_WORLD, &req) != MPI_SUCCESS)
		return;
	const double deadline = comm_now() + dist_timeout_s();
	int flag = 0;
	while (comm_now() < deadline) {
		if (MPI_Test(&req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			return;
		usleep(1000);
	}
}

/* Wait for nreq requests (peer[k]: the rank request k talks to; recv[k]:
 * a receive), polling, until all complete or the deadline passes. Rank 0
 * of a run over ranks returns early with the exchange broken (comm_break)
 * instead of ending every rank: on a deadline, an MPI error, a failed
 * rank's note, or a stop request (a signal) that the other ranks do not
 * answer within comm_stop_grace() seconds. */
static void comm_wait_loop(MPI_Request *req, const int *peer, const int *recv, int nreq,
			   const char *what)
{
	const int owner = g_single && g_rank == 0;
	double deadline = comm_now() + dist_timeout_s();
	char err[MPI_MAX_ERROR_STRING];
	long spins = 0;
	int stopping = 0;
	for (;;) {
		int left = 0;
		for (int k = 0; k < nreq; k++) {
			if (req[k] == MPI_REQUEST_NULL)
				continue;
			int flag = 0;
			MPI_Status stat;
			int rc = MPI_Test(&req[k], &flag, &stat);
			if (rc != MPI_SUCCESS && owner) {
				comm_break("%s: MPI error %s rank %d: %s (rank %d died?)", what,
					   recv[k] ? "receiving from" : "sending to", peer[k],
					   comm_errtext(rc, err), peer[k]);
				return;
			}
			if (rc != MPI_SUCCESS)
				dist_fail("%s: MPI error %s rank %d: %s (rank %d died?)", what,
					  recv[k] ? "receiving from" : "sending to", peer[k],
					  comm_errtext(rc, err), peer[k]);
			left += !flag;
		}
		if (!left)
			return;
		comm_service();
		if (g_broken)
			return;
		if (owner && !stopping && sim_stop_requested()) {
			/* stopped: the other ranks (which leave stopping to rank 0)
			 * answer within a step if they are alive */
			stopping = 1;
			if (deadline > comm_now() + comm_stop_grace())
				deadline = comm_now() + comm_stop_grace();
		}
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
			if (owner && stopping) {
				comm_break("%s: stopped by a signal while waiting for rank %s, which did "
					   "not answer within %.1f s: it died or hangs; the run fails",
					   what, who, comm_stop_grace());
				return;
			}
			if (owner) {
				comm_break("%s: nothing from rank %s for %.0f s (NB_DIST_TIMEOUT): that "
					   "rank died or hangs; stopping every rank",
					   what, who, dist_timeout_s());
				return;
			}
			dist_fail("%s: nothing from rank %s for %.0f s (NB_DIST_TIMEOUT): that rank "
				  "died or hangs; stopping every rank",
				  what, who, dist_timeout_s());
		}
		if (++spins > 1000)
			usleep(spins > 100000 ? 1000 : 50); /* do not steal the cores the force uses */
	}
}

/* comm_wait_loop, its time counted (dist_wait_seconds) */
static void comm_wait(MPI_Request *req, const int *peer, const int *recv, int nreq,
		      const char *what)
{
	const double t0 = comm_now();
	comm_wait_loop(req, peer, recv, nreq, what);
	g_wait_s += comm_now() - t0;
}

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
			if (g_single && g_rank == 0) {
				req[k] = MPI_REQUEST_NULL;
				comm_break("%s: MPI error posting a message %s rank %d: %s", what,
					   send ? "to" : "from", peer_rank, comm_errtext(rc, err));
				continue;
			}
			dist_fail("%s: MPI error posting a message %s rank %d: %s", what,
				  send ? "to" : "from", peer_rank, comm_errtext(rc, err));
		}
	}
}
#endif

int dist_stop_status(void)
{
	if (g_broken)
		return NB_ERUNTIME;
#ifdef NB_HAVE_MPI
	if (!g_single || g_rank != 0)
		return NB_EINTR;
	static int ping; /* the question's buffer: must outlive its sends */
	MPI_Request *req;
	int *peer, *isrecv, nreq = 0;
	int *pong = calloc((size_t)g_size, sizeof *pong);
	void *mem = comm_reqs(2 * g_size, &req, &peer, &isrecv);
	if (!pong)
		dist_fail("out of memory");
	for (int r = 1; r < g_size; r++) {
		comm_post(0, &pong[r], sizeof pong[r], r, TAG_PONG, req, peer, isrecv, &nreq, "stop");
		comm_post(1, &ping, sizeof ping, r, TAG_PING, req, peer, isrecv, &nreq, "stop");
	}
	const double deadline = comm_now() + comm_stop_grace();
	int left = 1;
	while (!g_broken && left) {
		left = 0;
		for (int k = 0; k < nreq; k++) {
			int flag = 1;
			if (req[k] != MPI_REQUEST_NULL && isrecv[k] &&
			    MPI_Test(&req[k], &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
				flag = 0;
			left += !flag;
		}
		comm_service();
		if (!left || g_broken)
			break;
		if (comm_now() > deadline) {
			char who[512] = "";
			size_t len = 0;
			for (int k = 0; k < nreq && len < sizeof who - 16; k++)
				if (req[k] != MPI_REQUEST_NULL && isrecv[k])
					len += (size_t)snprintf(who + len, sizeof who - len, "%s%d",
								len ? ", " : "", peer[k]);
			comm_break("stopped by a signal, and rank %s did not answer within %.1f s: it "
				   "died or hangs; the run fails",
				   who, comm_stop_grace());
			break;
		}
		usleep(1000);
	}
	if (g_broken) /* requests still pending: their buffers stay */
		return NB_ERUNTIME;
	free(pong);
	free(mem);
#endif
	return NB_EINTR;
}

void dist_allgatherv(const void *send, void *recv, const size_t *bytes, const size_t *off,
		     const char *what)
{
	if ((char *)recv + off[g_rank] != send)
		memmove((char *)recv + off[g_rank], send, bytes[g_rank]);
#ifdef NB_HAVE_MPI
	if (g_size == 1 || g_broken)
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
	if (!g_broken) /* broken: requests still pending */
		free(mem);
#else
	(void)what;
#endif
}

void dist_sum_floats(float *buf, size_t n, const char *what)
{
#ifdef NB_HAVE_MPI
	if (g_size == 1 || g_broken)
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
		if (g_broken) /* the run fails; tmp may still be written into */
			return;
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

/* Every rank's n doubles v, on every rank (malloc'd, P x n, the caller
 * frees; rank r's row r). */
static double *comm_all_doubles(const double *v, int n, const char *what)
{
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
	free(bytes);
	return all;
}

void dist_max_doubles(double *v, int n, const char *what)
{
	if (g_size == 1)
		return;
	double *all = comm_all_doubles(v, n, what);
	for (int r = 0; r < g_size; r++)
		for (int k = 0; k < n; k++)
			if (all[(size_t)r * (size_t)n + (size_t)k] > v[k])
				v[k] = all[(size_t)r * (size_t)n + (size_t)k];
	free(all);
}

void dist_gather(const void *send, size_t bytes, void *recv, const char *what)
{
	if (g_rank == 0 && recv)
		memcpy(recv, send, bytes);
#ifdef NB_HAVE_MPI
	if (g_size == 1 || g_broken)
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
	if (!g_broken)
		free(mem);
#else
	(void)what;
#endif
}

void dist_sum_doubles(double *v, int n, const char *what)
{
	if (g_size == 1)
		return;
	double *all = comm_all_doubles(v, n, what);
	for (int k = 0; k < n; k++) { /* in rank order: the same sum on every rank */
		double s = 0;
		for (int r = 0; r < g_size; r++)
			s += all[(size_t)r * (size_t)n + (size_t)k];
		v[k] = s;
	}
	free(all);
}

void dist_sum_u64(uint64_t *v, int n, const char *what)
{
	if (g_size == 1)
		return;
	/* the doubles' allgather moves bytes: 8 of a uint64 as 8 of a double */
	_Static_assert(sizeof(uint64_t) == sizeof(double), "a uint64 in a double's bytes");
	uint64_t *all = (uint64_t *)comm_all_doubles((const double *)v, n, what);
	for (int k = 0; k < n; k++) {
		uint64_t s = 0;
		for (int r = 0; r < g_size; r++)
			s += all[(size_t)r * (size_t)n + (size_t)k];
		v[k] = s;
	}
	free(all);
}

/* Every rank's row of block sizes (P each) to every rank: *matrix (P x P,
 * malloc'd; row r: what rank r sends to each rank). */
static size_t *comm_size_matrix(const size_t *sbytes, const char *what)
{
	const size_t P = (size_t)g_size;
	size_t *m = malloc(P * P * sizeof *m), *bytes = calloc(2 * P, sizeof *bytes);
	if (!m || !bytes)
		dist_fail("%s: out of memory for %zu ranks' sizes", what, P);
	for (size_t r = 0; r < P; r++) {
		bytes[r] = P * sizeof *m;
		bytes[P + r] = r * P * sizeof *m;
	}
	dist_allgatherv(sbytes, m, bytes, bytes + P, what);
	free(bytes);
	return m;
}

void *dist_alltoallv(const void *send, const size_t *sbytes, const size_t *soff, size_t *rbytes,
		     size_t *roff, const char *what)
{
	const int P = g_size;
	size_t *m = comm_size_matrix(sbytes, what);
	if (g_broken) { /* rank 0: the sizes never came */
		free(m);
		return NULL;
	}
	size_t total = 0;
	for (int r = 0; r < P; r++) {
		rbytes[r] = m[(size_t)r * (size_t)P + (size_t)g_rank];
		roff[r] = total;
		total += rbytes[r];
	}
	free(m);
	char *recv = malloc(total ? total : 1);
	if (!recv)
		dist_fail("%s: out of memory for %zu bytes", what, total);
	memcpy(recv + roff[g_rank], (const char *)send + soff[g_rank], rbytes[g_rank]);
#ifdef NB_HAVE_MPI
	if (P == 1)
		return recv;
	int n = 0;
	for (int r = 0; r < P; r++)
		if (r != g_rank)
			n += comm_pieces(sbytes[r]) + comm_pieces(rbytes[r]);
	MPI_Request *req;
	int *peer, *isrecv, nreq = 0;
	void *mem = comm_reqs(n ? n : 1, &req, &peer, &isrecv);
	for (int r = 0; r < P; r++) {
		if (r == g_rank)
			continue;
		comm_post(0, recv + roff[r], rbytes[r], r, TAG_A2A, req, peer, isrecv, &nreq, what);
		g_received += rbytes[r];
	}
	for (int s = 1; s < P; s++) { /* stagger the sends: rank r + s first */
		int r = (g_rank + s) % P;
		comm_post(1, (char *)send + soff[r], sbytes[r], r, TAG_A2A, req, peer, isrecv, &nreq,
			  what);
		g_sent += sbytes[r];
	}
	comm_wait(req, peer, isrecv, nreq, what);
	if (g_broken) /* requests still pending: recv and mem may still be written */
		return NULL;
	free(mem);
#else
	(void)what;
#endif
	return recv;
}

void dist_bcast(void *buf, size_t bytes, const char *what)
{
	if (g_size == 1)
		return;
	size_t *b = calloc(2 * (size_t)g_size, sizeof *b);
	if (!b)
		dist_fail("%s: out of memory", what);
	b[0] = bytes; /* rank 0's block only, at offset 0 on every rank */
	dist_allgatherv(buf, buf, b, b + g_size, what);
	free(b);
}

/* ---- a run's collective steps as callbacks (output.h's struct
 * out_snap_comm has this shape; dist/ does not include output/) ---- */
int dist_cb_sum_u64(void *ctx, uint64_t *v, int n)
{
	(void)ctx;
	double *d = malloc((size_t)(n > 0 ? n : 1) * sizeof *d);
	if (!d)
		dist_fail("out of memory");
	for (int k = 0; k < n; k++)
		d[k] = (double)v[k]; /* exact below 2^53 */
	dist_sum_doubles(d, n, "sum");
	for (int k = 0; k < n; k++)
		v[k] = (uint64_t)d[k];
	free(d);
	return dist_broken();
}

int dist_cb_max_f64(void *ctx, double *v, int n)
{
	(void)ctx;
	dist_max_doubles(v, n, "maximum");
	return dist_broken();
}

int dist_cb_bcast_u64(void *ctx, uint64_t *v, int n)
{
	(void)ctx;
	dist_bcast(v, (size_t)n * sizeof *v, "broadcast");
	return dist_broken();
}

int dist_cb_min_int(void *ctx, int *v)
{
	(void)ctx;
	double d = -(double)*v;
	dist_max_doubles(&d, 1, "agreement");
	*v = (int)-d;
	return dist_broken();
}
