/*
 * tb_zcopy: the messages zero-copy must carry, and the memory tricks it must survive, between
 * rank pairs (r, r xor 1), every byte checked.
 *
 *   tb_zcopy sizes MIN CHUNK
 *       both directions, one after the other and at once (MPI_Sendrecv): sizes around the switch
 *       point MIN and the chunk CHUNK (one byte either side), several chunks with a short tail,
 *       16 MiB + 1; 8 messages of 1 MiB + 4097 in flight at once (MPI_Isend/Irecv); a strided
 *       datatype above MIN (ob1 copies non-contiguous data); MPI_Ssend. Each rank prints
 *       "tbtest zcopy: rank R expects E zero-copy bytes": the bytes it received in contiguous
 *       messages of at least MIN bytes, which zero-copy must carry, all of them and no others.
 *   tb_zcopy realloc ROUNDS LEN
 *       large buffers (LEN bytes, allocated by mmap: M_MMAP_THRESHOLD is fixed) freed and
 *       allocated again, which usually gives the same address with new pages, and grown with
 *       realloc; each incarnation with its own content, sent twice (the second time from a cached
 *       registration). A registration cache that missed the free would send the old pages.
 *       Prints "tbtest zcopy: rank R: K of N buffers came back at the same address".
 */
#include "tb_common.h"

#include <malloc.h>

#define TB_INFLIGHT 8

static long tb_expect; /* zero-copy bytes this rank must receive */

/* One message of len bytes from the sender to the other (tag; MPI_Ssend when sync), checked. */
static void tb_one(unsigned char *buf, size_t len, int peer, int sender, int tag, size_t min,
                   int sync)
{
    int from = sender ? tb_rank : peer;
    uint64_t seed = ((uint64_t) len << 24) ^ ((uint64_t) tag << 8) ^ (uint64_t) from;
    char what[96];
    MPI_Status st;
    int count = -1;

    if (sender) {
        tb_fill(buf, len, seed);
        (sync ? MPI_Ssend : MPI_Send)(buf, (int) len, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
        return;
    }
    memset(buf, 0, len);
    MPI_Recv(buf, (int) len, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_BYTE, &count);
    snprintf(what, sizeof(what), "%zu bytes from rank %d (tag %d)", len, peer, tag);
    tb_check((size_t) count == len, "%s: received count %d", what, count);
    tb_verify(buf, len, seed, what);
    tb_expect += (len >= min) ? (long) len : 0;
}

/* Both directions at once. */
static void tb_both(unsigned char *out, unsigned char *in, size_t len, int peer, int tag,
                    size_t min)
{
    char what[96];

    tb_fill(out, len, (uint64_t) len ^ ((uint64_t) tb_rank << 40));
    memset(in, 0, len);
    MPI_Sendrecv(out, (int) len, MPI_BYTE, peer, tag, in, (int) len, MPI_BYTE, peer, tag,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    snprintf(what, sizeof(what), "%zu bytes both ways with rank %d", len, peer);
    tb_verify(in, len, (uint64_t) len ^ ((uint64_t) peer << 40), what);
    tb_expect += (len >= min) ? (long) len : 0;
}

/* TB_INFLIGHT messages of len bytes outstanding at once, from the even rank. */
static void tb_inflight(unsigned char *buf, size_t len, int peer, int tag, size_t min)
{
    MPI_Request req[TB_INFLIGHT];
    char what[96];

    for (int i = 0; i < TB_INFLIGHT; i++) {
        unsigned char *b = buf + (size_t) i * len;

        if (0 == (tb_rank & 1)) {
            tb_fill(b, len, (uint64_t) i * 977 + len);
            MPI_Isend(b, (int) len, MPI_BYTE, peer, tag + i, MPI_COMM_WORLD, &req[i]);
        } else {
            memset(b, 0, len);
            MPI_Irecv(b, (int) len, MPI_BYTE, peer, tag + i, MPI_COMM_WORLD, &req[i]);
        }
    }
    MPI_Waitall(TB_INFLIGHT, req, MPI_STATUSES_IGNORE);
    for (int i = 0; 1 == (tb_rank & 1) && i < TB_INFLIGHT; i++) {
        snprintf(what, sizeof(what), "in-flight message %d of %zu bytes", i, len);
        tb_verify(buf + (size_t) i * len, len, (uint64_t) i * 977 + len, what);
        tb_expect += (len >= min) ? (long) len : 0;
    }
}

/* A strided type (every other 4 KiB block) above the switch point: ob1 copies it. */
static void tb_strided(unsigned char *buf, size_t len, int peer, int tag)
{
    MPI_Datatype vec;
    int blocks = (int) (len / 8192);
    char what[96];

    MPI_Type_vector(blocks, 4096, 8192, MPI_BYTE, &vec);
    MPI_Type_commit(&vec);
    if (0 == (tb_rank & 1)) {
        tb_fill(buf, len, 4242);
        MPI_Send(buf, 1, vec, peer, tag, MPI_COMM_WORLD);
    } else {
        memset(buf, 0, len);
        MPI_Recv(buf, 1, vec, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int b = 0; b < blocks; b++) {
            snprintf(what, sizeof(what), "strided block %d", b);
            for (size_t i = 0; i < 4096; i++) {
                if (buf[(size_t) b * 8192 + i] != tb_byte(4242, (size_t) b * 8192 + i)) {
                    tb_check(0, "%s: byte %zu wrong", what, i);
                    break;
                }
            }
        }
    }
    MPI_Type_free(&vec);
}

static void tb_sizes(size_t min, size_t chunk)
{
    const size_t sizes[] = {min - 1, min,       min + 1,          chunk - 1,
                            chunk,   chunk + 1, 3 * chunk + 4097, (16u << 20) + 1};
    size_t big = (16u << 20) + 1 + TB_INFLIGHT * ((1u << 20) + 4097);
    unsigned char *a = tb_malloc(big), *b = tb_malloc(big);
    int peer = tb_rank ^ 1, tag = 0;

    if (peer >= tb_size) {
        free(a);
        free(b);
        return;
    }
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        for (int dir = 0; dir < 2; dir++) {
            tb_one(a, sizes[i], peer, (tb_rank & 1) == dir, tag++, min, 0);
        }
        tb_both(a, b, sizes[i], peer, tag++, min);
    }
    tb_inflight(a, (1u << 20) + 4097, peer, tag, min);
    tag += TB_INFLIGHT;
    tb_strided(a, 8 * min, peer, tag++);
    tb_one(a, 2 * min, peer, 0 == (tb_rank & 1), tag++, min, 1);
    free(a);
    free(b);
}

/* Both ranks send and receive len bytes of buf, twice (the second time, registrations hit). */
static void tb_realloc_use(unsigned char *buf, size_t len, int peer, int *tag)
{
    for (int i = 0; i < 4; i++) {
        tb_one(buf, len, peer, (tb_rank & 1) == (i & 1), (*tag)++, 0, 0);
    }
}

static void tb_realloc(int rounds, size_t len)
{
    int peer = tb_rank ^ 1, same = 0, tag = 1000;
    uintptr_t last = 0;

    if (peer >= tb_size) {
        return;
    }
    mallopt(M_MMAP_THRESHOLD, 256 * 1024); /* fixed: every large buffer is a mapping of its own */
    for (int r = 0; r < rounds; r++) {
        unsigned char *buf = tb_malloc(len);

        same += (uintptr_t) buf == last;
        last = (uintptr_t) buf;
        tb_realloc_use(buf, len, peer, &tag);
        if (1 == (r & 1)) { /* grown in place or moved: new pages either way for the tail */
            buf = realloc(buf, len + len / 2);
            tb_check(NULL != buf, "realloc to %zu bytes", len + len / 2);
            tb_realloc_use(buf, len + len / 2, peer, &tag);
        }
        free(buf);
    }
    printf("tbtest zcopy: rank %d: %d of %d buffers came back at the same address\n", tb_rank, same,
           rounds);
}

int main(int argc, char **argv)
{
    const char *mode = (argc > 1) ? argv[1] : "sizes";

    tb_init(&argc, &argv, "zcopy");
    if (0 == strcmp(mode, "sizes") && argc > 3) {
        tb_sizes(strtoul(argv[2], NULL, 0), strtoul(argv[3], NULL, 0));
        printf("tbtest zcopy: rank %d expects %ld zero-copy bytes\n", tb_rank, tb_expect);
    } else if (0 == strcmp(mode, "realloc") && argc > 3) {
        tb_realloc(atoi(argv[2]), strtoul(argv[3], NULL, 0));
    } else {
        tb_check(0, "usage: tb_zcopy sizes MIN CHUNK | realloc ROUNDS LEN");
    }
    return tb_finish();
}
