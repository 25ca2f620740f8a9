/*
 * tb_p2p: point-to-point beyond ping-pong, every message checked byte by byte:
 *   - many messages outstanding: each rank posts TB_OUT non-blocking receives from and sends to
 *     every other rank at once (sizes 0 B .. 192 KiB, mixed), then waits for all;
 *   - MPI_ANY_SOURCE: rank 0 receives a burst from every rank in arrival order and tells the
 *     senders apart by status and content;
 *   - MPI_Probe / MPI_Iprobe with MPI_Get_count, then a receive of exactly that size;
 *   - MPI_Cancel of a receive nobody matches (MPI_Test_cancelled must say so);
 *   - communicators: MPI_Comm_dup and MPI_Comm_split (even/odd ranks), with traffic on each,
 *     the same tags in flight on different communicators.
 */
#include "tb_common.h"

#define TB_OUT 64

static size_t tb_p2p_len(int src, int dst, int k)
{
    static const size_t sizes[] = {0, 1, 100, 4000, 4100, 20000, 65536, 70000, 196608};

    return sizes[(size_t) (src * 7 + dst * 3 + k) % (sizeof(sizes) / sizeof(sizes[0]))];
}

static uint64_t tb_p2p_seed(int src, int dst, int k, int salt)
{
    return ((uint64_t) src << 40) ^ ((uint64_t) dst << 24) ^ ((uint64_t) k << 4) ^ (uint64_t) salt;
}

static void tb_p2p_many(MPI_Comm comm, int salt)
{
    int rank, size, n = 0;
    unsigned char **sbuf, **rbuf;
    MPI_Request *req;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    sbuf = tb_malloc(sizeof(*sbuf) * (size_t) size * TB_OUT);
    rbuf = tb_malloc(sizeof(*rbuf) * (size_t) size * TB_OUT);
    req = tb_malloc(sizeof(*req) * 2 * (size_t) size * TB_OUT);
    for (int p = 0; p < size; p++) {
        for (int k = 0; k < TB_OUT && p != rank; k++) {
            size_t rl = tb_p2p_len(p, rank, k);
            rbuf[p * TB_OUT + k] = tb_malloc(rl);
            MPI_Irecv(rbuf[p * TB_OUT + k], (int) rl, MPI_BYTE, p, k, comm, &req[n++]);
        }
    }
    for (int p = 0; p < size; p++) {
        for (int k = 0; k < TB_OUT && p != rank; k++) {
            size_t sl = tb_p2p_len(rank, p, k);
            sbuf[p * TB_OUT + k] = tb_malloc(sl);
            tb_fill(sbuf[p * TB_OUT + k], sl, tb_p2p_seed(rank, p, k, salt));
            MPI_Isend(sbuf[p * TB_OUT + k], (int) sl, MPI_BYTE, p, k, comm, &req[n++]);
        }
    }
    MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    for (int p = 0; p < size; p++) {
        for (int k = 0; k < TB_OUT && p != rank; k++) {
            char what[64];
            snprintf(what, sizeof(what), "outstanding message %d from rank %d", k, p);
            tb_verify(rbuf[p * TB_OUT + k], tb_p2p_len(p, rank, k), tb_p2p_seed(p, rank, k, salt),
                      what);
            free(rbuf[p * TB_OUT + k]);
            free(sbuf[p * TB_OUT + k]);
        }
    }
    free(sbuf);
    free(rbuf);
    free(req);
}

static void tb_p2p_any_source(void)
{
    enum { BURST = 20, LEN = 5000 };
    unsigned char *buf = tb_malloc(LEN);
    int got[64] = {0};

    if (0 != tb_rank) {
        for (int k = 0; k < BURST; k++) {
            tb_fill(buf, LEN, tb_p2p_seed(tb_rank, 0, got[0]++, 77));
            MPI_Send(buf, LEN, MPI_BYTE, 0, 5, MPI_COMM_WORLD);
        }
    } else {
        for (int m = 0; m < BURST * (tb_size - 1); m++) {
            MPI_Status st;
            char what[64];

            MPI_Recv(buf, LEN, MPI_BYTE, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &st);
            snprintf(what, sizeof(what), "ANY_SOURCE message %d of rank %d", got[st.MPI_SOURCE],
                     st.MPI_SOURCE);
            tb_verify(buf, LEN, tb_p2p_seed(st.MPI_SOURCE, 0, got[st.MPI_SOURCE]++, 77), what);
        }
        for (int r = 1; r < tb_size; r++) {
            tb_check(BURST == got[r], "ANY_SOURCE: %d messages from rank %d", got[r], r);
        }
    }
    free(buf);
}

static void tb_p2p_probe(void)
{
    int peer = (tb_rank + 1) % tb_size, from = (tb_rank + tb_size - 1) % tb_size;
    size_t len = 3000 + 4096 * (size_t) tb_rank, flen = 3000 + 4096 * (size_t) from;
    unsigned char *out = tb_malloc(len), *in;
    MPI_Request req;
    MPI_Status st;
    int count = -1, flag = 0;

    tb_fill(out, len, tb_p2p_seed(tb_rank, peer, 1, 9));
    MPI_Isend(out, (int) len, MPI_BYTE, peer, 9, MPI_COMM_WORLD, &req);
    while (!flag) {
        MPI_Iprobe(from, 9, MPI_COMM_WORLD, &flag, &st);
    }
    MPI_Probe(from, 9, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_BYTE, &count);
    tb_check((size_t) count == flen, "probe: count %d, expected %zu", count, flen);
    in = tb_malloc((size_t) count);
    MPI_Recv(in, count, MPI_BYTE, from, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    tb_verify(in, flen, tb_p2p_seed(from, tb_rank, 1, 9), "probed message");
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    free(in);
    free(out);
}

static void tb_p2p_cancel(void)
{
    int buf = 0, cancelled = 0;
    MPI_Request req;
    MPI_Status st;

    MPI_Irecv(&buf, 1, MPI_INT, (tb_rank + 1) % tb_size, 999, MPI_COMM_WORLD, &req);
    MPI_Cancel(&req);
    MPI_Wait(&req, &st);
    MPI_Test_cancelled(&st, &cancelled);
    tb_check(cancelled, "cancel: an unmatched receive was not cancelled");
}

static void tb_p2p_comms(void)
{
    MPI_Comm dup, half;
    int sum = 0, hsize = 0, want = 0;

    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, tb_rank % 2, tb_rank, &half);
    tb_p2p_many(dup, 1);
    tb_p2p_many(half, 2);
    MPI_Comm_size(half, &hsize);
    MPI_Allreduce(&tb_rank, &sum, 1, MPI_INT, MPI_SUM, half);
    for (int r = tb_rank % 2; r < tb_size; r += 2) {
        want += r;
    }
    tb_check(sum == want, "split: sum of ranks %d, expected %d", sum, want);
    tb_check(hsize == (tb_size + 1 - tb_rank % 2) / 2, "split: size %d", hsize);
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
}

int main(int argc, char **argv)
{
    tb_init(&argc, &argv, "p2p");
    tb_p2p_many(MPI_COMM_WORLD, 0);
    tb_p2p_any_source();
    tb_p2p_probe();
    tb_p2p_cancel();
    tb_p2p_comms();
    return tb_finish();
}
