/*
 * tb_collrules: which coll/tuned algorithm Open MPI runs for a collective at a size, checked
 * against a coll/tuned dynamic rules file (test/mpi/coll_rules.sh reads the file).
 *
 * Usage: tb_collrules COLL:BYTES:ALG...
 *   COLL   allreduce, bcast, allgather, alltoall or reduce_scatter; BYTES a coll/tuned rules
 *          size (tb_collcall.h); ALG the algorithm number the rules give there, or 0 when they
 *          leave Open MPI's default (not checked here: the script compares it with a run
 *          without the rules)
 * For each: one call on MPI_COMM_WORLD, its result checked, the algorithm that ran
 * (tb_collalg.h) printed as "tb_collrules: COLL RANKS BYTES ran ID NAME" and checked against
 * ALG when ALG > 0. Ends with tb_common.h's OK line when every check passed.
 */
#include "tb_common.h"

#include "tb_collcall.h"

/* One COLL:BYTES:ALG point. */
static void point(const char *spec)
{
    char name[32];
    unsigned long bytes = 0;
    int want = -1, coll, rc, ran, salt = (int) (strlen(spec) % 7);
    size_t bad;

    if (sscanf(spec, "%31[a-z_]:%lu:%d", name, &bytes, &want) != 3
        || (coll = tb_coll_index(name)) < 0 || want < 0 || 0 == bytes
        || 0 != bytes % tb_coll_unit(coll)) {
        tb_check(0, "point '%s' is not COLL:BYTES:ALG with BYTES a multiple of %zu", spec,
                 (coll = tb_coll_index(name)) < 0 ? 0 : tb_coll_unit(coll));
        return;
    }
    tb_coll_fill(coll, bytes, salt);
    tb_alg_reset();
    rc = tb_coll_call(coll, bytes, MPI_COMM_WORLD);
    ran = (tb_alg_coll == coll) ? tb_alg_id : 0;
    bad = tb_coll_wrong(coll, bytes, salt);
    tb_check(MPI_SUCCESS == rc && 0 == bad, "%s of %lu B: error %d, %zu wrong values", name, bytes,
             rc, bad);
    if (0 == tb_rank) {
        printf("tb_collrules: %s %d %lu ran %d %s\n", name, tb_size, bytes, ran,
               tb_alg_name(coll, ran));
    }
    tb_check(ran > 0, "%s of %lu B: no algorithm of coll/tuned ran", name, bytes);
    tb_check(0 == want || ran == want,
             "%s of %lu B on %d ranks: ran %s (%d), the rules say %s (%d)", name, bytes, tb_size,
             tb_alg_name(coll, ran), ran, tb_alg_name(coll, want), want);
}

int main(int argc, char **argv)
{
    unsigned long max = 8;

    tb_init(&argc, &argv, "collrules");
    for (int i = 1; i < argc; i++) {
        const char *b = strchr(argv[i], ':');
        unsigned long v = b ? strtoul(b + 1, NULL, 10) : 0;

        max = v > max ? v : max;
    }
    if (tb_coll_init(max)) {
        tb_check(0, "no memory for %lu bytes", max);
    } else {
        for (int i = 1; i < argc; i++) {
            point(argv[i]);
        }
    }
    tb_check(argc > 1, "no point given");
    return tb_finish();
}
