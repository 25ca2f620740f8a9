/*
 * tb_pingpong: ping-pong between rank pairs (r, r xor 1) of every size from 0 B to 64 MiB that
 * matters to tbrdma: powers of two and one byte either side, and every size within 48 bytes of
 * each frame and fragment boundary (the 1-frame payload, a frame, the longest train, K-1 frames +
 * 1 byte (where bulk padding stops), a bulk message and its payload (ob1's eager limit and
 * largest fragment), two bulk messages; for the default K = 17 frames and for K = 16), so that
 * every protocol change of ob1 and every tail length of tbrdma's frame rule is crossed. Both
 * directions carry their own pattern, and every byte and the received count are checked.
 *
 * Usage: tb_pingpong [max_bytes] (default 64 MiB; no message is larger).
 */
#include "tb_common.h"

#define TB_MAX_DEFAULT (64u << 20)
#define TB_AROUND      48

static const size_t tb_boundaries[] = {4056,  4096,  8192,  32448, 36504, 61440,  61441,
                                       65496, 65536, 65537, 69592, 69632, 131072, 139264};

/* One exchange of len bytes with peer; the initiator sends first. */
static void tb_exchange(unsigned char *buf, size_t len, int peer, int initiator, int round)
{
    uint64_t seed_out = ((uint64_t) len << 20) ^ ((uint64_t) tb_rank << 8) ^ (uint64_t) round;
    uint64_t seed_in = ((uint64_t) len << 20) ^ ((uint64_t) peer << 8) ^ (uint64_t) round;
    char what[96];
    MPI_Status st;
    int count = -1;

    snprintf(what, sizeof(what), "%zu bytes from rank %d (round %d)", len, peer, round);
    for (int step = 0; step < 2; step++) {
        if ((0 == step) == initiator) {
            tb_fill(buf, len, seed_out);
            MPI_Send(buf, (int) len, MPI_BYTE, peer, round, MPI_COMM_WORLD);
        } else {
            memset(buf, 0, len);
            MPI_Recv(buf, (int) len, MPI_BYTE, peer, round, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_BYTE, &count);
            tb_check((size_t) count == len, "%s: received count %d", what, count);
            tb_verify(buf, len, seed_in, what);
        }
    }
}

int main(int argc, char **argv)
{
    size_t max = (argc > 1) ? strtoul(argv[1], NULL, 0) : TB_MAX_DEFAULT;
    unsigned char *buf;
    int peer, initiator, round = 0;

    tb_init(&argc, &argv, "pingpong");
    peer = tb_rank ^ 1;
    initiator = 0 == (tb_rank & 1);
    buf = tb_malloc(max + TB_AROUND);
    if (peer < tb_size) {
        tb_exchange(buf, 0, peer, initiator, round++);
        for (size_t p = 1; p <= max; p <<= 1) {
            for (size_t len = p - 1; len <= p + 1 && len <= max; len++) {
                tb_exchange(buf, len, peer, initiator, round++);
            }
        }
        for (size_t b = 0; b < sizeof(tb_boundaries) / sizeof(tb_boundaries[0]); b++) {
            if (tb_boundaries[b] > max) {
                continue; /* the buffer holds max + TB_AROUND bytes */
            }
            for (size_t len = tb_boundaries[b] - TB_AROUND; len <= tb_boundaries[b] + TB_AROUND;
                 len++) {
                tb_exchange(buf, len, peer, initiator, round++);
            }
        }
    }
    free(buf);
    return tb_finish();
}
