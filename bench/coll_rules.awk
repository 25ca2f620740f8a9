# coll_rules.awk: coll_tune's measurements (CSV) -> an Open MPI coll/tuned dynamic rules file.
#
#   awk -F, -v margin=0.10 -v title="..." [-v skip="COLL:ALG ..."] \
#       [-v base=RULES -v from=BYTES] -f coll_rules.awk \
#       measure-*.csv [confirm-default-*.csv confirm-rules-*.csv]
#
# Input rows: coll,ranks,bytes,choice,ran,calls,best_us,median_us (bench/coll_tune.c), where
# choice "default" is Open MPI's own pick and "ALG" or "ALG:SEG" an algorithm forced (other
# choices, bench/coll_mesh.h's, are not coll/tuned's and are left out).
# At each measured size a rule keeps Open MPI's default (algorithm 0: the fixed rules) unless the
# fastest forced algorithm beats it by MARGIN in the best time and also in the median time, and
# is not the algorithm the default ran anyway ("-": not known, e.g. on macOS, where Open MPI's
# calls to its algorithms cannot be interposed). The choices in SKIP are never picked. With the
# confirmation files (the default against these rules' draft, in other jobs: a busy machine can
# make one job's winner a fluke), a change is kept only where the draft ran faster than the
# default by the margin there too. A size's rule holds from halfway (geometrically)
# between it and the size below; equal neighbours merge into one rule. Communicator sizes that
# were not measured get algorithm 0 for every message size: 2 when 2 was not measured, and the
# size above each measured one when that was not measured (coll/tuned uses the rule of the
# nearest communicator size at or below, or the first one). A run that stopped below 64 MiB
# leaves the sizes above its largest one (from twice it) to the default.
# With BASE and FROM (a run that measured only from some size up, coll_tune.sh --min), below FROM
# bytes every communicator size keeps BASE's rules (an earlier rules file of this format, one
# message rule a line, as this script writes them), comments and all; from FROM up the new ones.
#
# The file format (Open MPI 4.1 and 5.0, coll_tuned_dynamic_file.c; '#' to the end of a line is
# a comment): the number of collectives; for each, its id, the number of communicator sizes; for
# each, the size and the number of message sizes; for each, "bytes algorithm fan-in/out segsize".
# Collective ids (COLLTYPE in coll_base_functions.h): allgather 0, allreduce 2, alltoall 3,
# bcast 7, reduce_scatter 12. fan-in/out 4 is coll/tuned's default tree and chain fan-out, the
# one the forced runs used.

BEGIN {
    id["allgather"] = 0; id["allreduce"] = 2; id["alltoall"] = 3; id["bcast"] = 7
    id["reduce_scatter"] = 12
    order = "allgather allreduce alltoall bcast reduce_scatter"
    if (margin == "") margin = 0.10
    n = split(skip, sk, " ")
    for (i = 1; i <= n; i++) skipped[sk[i]] = 1
    from += 0
    if (base != "" && from <= 0) { print "coll_rules.awk: base needs from (bytes)" > "/dev/stderr"; exit 2 }
    if (base != "") read_base(base)
}

# Fails with a message naming the base file's line.
function base_error(what) {
    printf "coll_rules.awk: %s line %d: %s\n", base, bline, what > "/dev/stderr"
    exit 2
}

# The next line of the base file with something before its comment, split into T; its count.
function base_next(t,    line, raw) {
    while ((getline raw < base) > 0) {
        bline++
        line = raw; sub(/#.*/, "", line)
        if (split(line, t, " ") > 0) { base_raw = raw; return length(t) }
    }
    base_error("ends too early")
}

# BASE's message rules: base_lo[CID, RANKS, I], base_line[CID, RANKS, I], base_n[CID, RANKS].
function read_base(file,    t, nc, c, cid, ncomm, j, r, nm, m) {
    if ((getline base_title < file) <= 0) { bline = 0; base_error("cannot be read") }
    sub(/^# */, "", base_title)
    close(file)
    if (base_next(t) != 1) base_error("expected the number of collectives")
    nc = t[1]
    for (c = 0; c < nc; c++) {
        if (base_next(t) != 2) base_error("expected a collective id and its communicator sizes")
        cid = t[1]; ncomm = t[2]
        for (j = 0; j < ncomm; j++) {
            if (base_next(t) != 2) base_error("expected a communicator size and its message rules")
            r = t[1]; nm = t[2]; base_n[cid, r] = nm
            for (m = 1; m <= nm; m++) {
                if (base_next(t) != 4) base_error("expected a message rule (4 numbers)")
                base_lo[cid, r, m] = t[1]; base_line[cid, r, m] = base_raw
            }
        }
    }
    close(file)
}

# BASE's rules of collective C at communicator size R below FROM, into LINES from index M + 1;
# the new count.
function base_rules(c, r, lines, m,    i) {
    if (!((id[c], r) in base_n))
        lines[++m] = sprintf("0 0 0 0    # below %s: no rules for %d ranks in %s, default", human(from), r, base)
    for (i = 1; i <= base_n[id[c], r]; i++)
        if (base_lo[id[c], r, i] + 0 < from) lines[++m] = base_line[id[c], r, i]
    return m
}

FILENAME ~ /confirm-(default|rules)-/ && $1 in id && $7 ~ /^[0-9.]+$/ {
    k = $1 SUBSEP $2 SUBSEP $3
    if (FILENAME ~ /confirm-rules-/) { if (!(k in crules) || $7 + 0 < crules[k]) crules[k] = $7 + 0 }
    else if (!(k in cdefault) || $7 + 0 < cdefault[k]) cdefault[k] = $7 + 0
    next
}

$1 in id && $4 ~ /^(default|[0-9]+(:[0-9]+)?)$/ && $5 != "refused" && $7 != "-" && !(($1 ":" $4) in skipped) {
    k = $1 SUBSEP $2 SUBSEP $3
    if (!(($1, $2) in has_r)) { has_r[$1, $2] = 1; rlist[$1] = rlist[$1] " " $2 }
    if (!(k in has_s)) { has_s[k] = 1; slist[$1, $2] = slist[$1, $2] " " $3 }
    if ($4 == "default") {
        dbest[k] = $7; dmed[k] = $8; dran[k] = $5
    } else if (!((k) in cbest) || $7 + 0 < cbest[k] + 0) {
        cbest[k] = $7; cmed[k] = $8; cran[k] = $5; cchoice[k] = $4
    }
}

function human(b) {
    if (b >= 1048576 && b % 1048576 == 0) return (b / 1048576) " MiB"
    if (b >= 1024 && b % 1024 == 0) return (b / 1024) " KiB"
    if (b >= 1048576) return sprintf("%.2f MiB", b / 1048576)
    return b " B"
}

# The rule at size key K: "alg seg|comment".
function pick(k,    alg, seg, parts) {
    if (!(k in dbest)) return "0 0|not measured by default"
    if (!(k in cbest) || cbest[k] + 0 >= dbest[k] * (1 - margin) || cmed[k] + 0 >= dmed[k] + 0)
        return "0 0|default " dran[k]
    split(cchoice[k], parts, ":"); alg = parts[1]; seg = parts[2] + 0
    if (cran[k] == dran[k] && cran[k] != "-" && seg == 0) return "0 0|default " dran[k]
    if ((k in crules) && (k in cdefault) && crules[k] >= cdefault[k] * (1 - margin))
        return "0 0|default " dran[k] sprintf(" (%s was %.2fx in the confirmation: not kept)", cran[k], cdefault[k] / crules[k])
    return alg " " seg "|" cran[k] (seg ? " seg " seg : "") sprintf(" %.2fx faster than default %s", dbest[k] / cbest[k], dran[k]) \
        ((k in crules) ? sprintf(", %.2fx in the confirmation", cdefault[k] / crules[k]) : "")
}

# The numbers of the space-separated LIST, ascending, into OUT; their count.
function sorted(list, out,    n, i, j, t) {
    n = split(list, out, " ")
    for (i = 1; i <= n; i++) out[i] += 0
    for (i = 2; i <= n; i++)
        for (j = i; j > 1 && out[j - 1] > out[j]; j--) { t = out[j]; out[j] = out[j - 1]; out[j - 1] = t }
    return n
}

# The rules of collective C at communicator size R into LINES (count returned).
function msg_rules(c, r, lines,    sz, n, i, lo, rule, prev, m, parts, ap) {
    n = sorted(slist[c, r], sz)
    m = (base != "") ? base_rules(c, r, lines, 0) : 0
    prev = ""
    for (i = 1; i <= n; i++) {
        rule = pick(c SUBSEP r SUBSEP sz[i])
        split(rule, parts, "|")
        lo = (i == 1) ? ((base != "") ? from : 0) : int(sqrt(sz[i - 1] * sz[i]))
        if (parts[1] == prev) { lines[m] = lines[m] ", " human(sz[i]) ": " parts[2]; continue }
        prev = parts[1]
        split(parts[1], ap, " ")
        lines[++m] = sprintf("%d %d %d %d    # from %s; at %s: %s", lo, ap[1], ap[1] ? 4 : 0, ap[2],
                             human(lo), human(sz[i]), parts[2])
    }
    # A run cut short of 64 MiB: above its largest size (from halfway to the next one) the default.
    if (n && sz[n] < 67108864 && prev != "0 0")
        lines[++m] = sprintf("%d 0 0 0    # from %s: not measured (largest size measured: %s), default",
                             2 * sz[n], human(2 * sz[n]), human(sz[n]))
    return m
}

END {
    ncoll = split(order, colls, " ")
    n = 0
    for (i = 1; i <= ncoll; i++) if (colls[i] in rlist) n++
    if (title != "") print "# " title
    print "# Generated by bench/coll_tune.sh (bench/coll_rules.awk, margin " margin "); format: coll_tuned_dynamic_file.c"
    if (base != "") print "# Below " from " B (" human(from) "): the rules of the file of this first line, kept with their comments: " base_title
    print n "    # collectives"
    for (i = 1; i <= ncoll; i++) {
        c = colls[i]
        if (!(c in rlist)) continue
        nr = sorted(rlist[c], rk)
        delete comm
        ncomm = 0
        if (rk[1] > 2) comm[++ncomm] = 2 " -"
        for (j = 1; j <= nr; j++) {
            comm[++ncomm] = rk[j] " m"
            if (j == nr || rk[j + 1] > rk[j] + 1) comm[++ncomm] = (rk[j] + 1) " -"
        }
        print id[c] " " ncomm "    # " c ": " ncomm " communicator sizes"
        for (j = 1; j <= ncomm; j++) {
            split(comm[j], cp, " ")
            if (cp[2] == "-") {
                print cp[1] " 1    # " cp[1] " ranks (not measured): Open MPI's default"
                print "0 0 0 0"
                continue
            }
            delete lines
            m = msg_rules(c, cp[1], lines)
            print cp[1] " " m "    # " cp[1] " ranks"
            for (l = 1; l <= m; l++) print lines[l]
        }
    }
}
