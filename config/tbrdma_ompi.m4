# tbrdma: find the Open MPI to build the plugin against and where to install it.
#
# Three ways to find the opal headers (libopen-pal's, not mpi.h):
#   default             `mpicc --showme:incdirs` / `--showme:libdirs` (an install with devel
#                       headers, e.g. Debian's libopenmpi-dev)
#   --with-ompi=PREFIX  the same from PREFIX/include, PREFIX/include/openmpi, PREFIX/lib
#   --with-ompi-source=DIR
#                       a configured source tree of the SAME version and configure options
#                       (Homebrew ships no devel headers); libraries from --with-ompi or mpicc
# Open MPI 5.0 headers include <pmix.h> and its modex macros call PMIx directly:
#   --with-pmix=DIR, else the flags mpicc gives, else `pkg-config pmix`.
#
# Output: OMPI_CPPFLAGS, OMPI_LDFLAGS, OMPI_LIBS, TBRDMA_OMPI_VERSION (x.y.z),
#         TBRDMA_OMPI_BTL_VERSION (310|330), OMPI_INFO (path, may be empty)

# TBRDMA_OMPI_FIND_FLAGS: the -I and -L flags of the chosen Open MPI.
AC_DEFUN([TBRDMA_OMPI_FIND_FLAGS], [
    OMPI_CPPFLAGS=
    OMPI_LDFLAGS=
    tbrdma_ompi_libdirs=
    AS_IF([test -n "$with_ompi" && test "x$with_ompi" != "xyes"], [
        AS_IF([test ! -d "$with_ompi"], [AC_MSG_ERROR([--with-ompi=$with_ompi: no such directory])])
        tbrdma_ompi_how="--with-ompi=$with_ompi"
        tbrdma_ompi_incdirs="$with_ompi/include $with_ompi/include/openmpi"
        tbrdma_ompi_libdirs="$with_ompi/lib"
        AS_IF([test ! -d "$with_ompi/lib" && test -d "$with_ompi/lib64"],
            [tbrdma_ompi_libdirs="$with_ompi/lib64"])
        tbrdma_ompi_bindir="$with_ompi/bin"
    ], [
        AC_PATH_PROG([MPICC], [mpicc])
        AS_IF([test -z "$MPICC"],
            [AC_MSG_ERROR([mpicc not found: put Open MPI's bin directory on PATH, set MPICC=, or pass --with-ompi=PREFIX])])
        tbrdma_ompi_how="$MPICC"
        AC_MSG_CHECKING([Open MPI include directories from $MPICC])
        tbrdma_ompi_incdirs=`$MPICC --showme:incdirs 2>/dev/null`
        AC_MSG_RESULT([$tbrdma_ompi_incdirs])
        AC_MSG_CHECKING([Open MPI library directories from $MPICC])
        tbrdma_ompi_libdirs=`$MPICC --showme:libdirs 2>/dev/null`
        AC_MSG_RESULT([$tbrdma_ompi_libdirs])
        AS_IF([test -z "$tbrdma_ompi_libdirs"],
            [AC_MSG_ERROR([$MPICC --showme:libdirs printed nothing: is $MPICC Open MPI's wrapper?])])
        tbrdma_ompi_bindir=`AS_DIRNAME(["$MPICC"])`
    ])
    AS_IF([test -n "$with_ompi_source" && test "x$with_ompi_source" != "xyes"], [
        AS_IF([test ! -r "$with_ompi_source/opal/include/opal_config.h"],
            [AC_MSG_ERROR([--with-ompi-source=$with_ompi_source: no opal/include/opal_config.h there; run Open MPI's ./configure in that tree first (docs/building.md)])])
        tbrdma_ompi_how="--with-ompi-source=$with_ompi_source (libraries: $tbrdma_ompi_how)"
        tbrdma_ompi_incdirs="$with_ompi_source $with_ompi_source/opal/include $with_ompi_source/ompi/include"
    ])
    for tbrdma_dir in $tbrdma_ompi_incdirs; do
        OMPI_CPPFLAGS="$OMPI_CPPFLAGS -I$tbrdma_dir"
    done
    for tbrdma_dir in $tbrdma_ompi_libdirs; do
        OMPI_LDFLAGS="$OMPI_LDFLAGS -L$tbrdma_dir -R$tbrdma_dir"
    done
    AS_IF([test -n "$with_pmix" && test "x$with_pmix" != "xyes" && test "x$with_pmix" != "xno"], [
        OMPI_CPPFLAGS="$OMPI_CPPFLAGS -I$with_pmix/include"
        OMPI_LDFLAGS="$OMPI_LDFLAGS -L$with_pmix/lib -R$with_pmix/lib"
    ])
])

# TBRDMA_OMPI_NOT_FOUND(WHAT): stops with what to install.
AC_DEFUN([TBRDMA_OMPI_NOT_FOUND], [
    AC_MSG_ERROR([$1 not found with $tbrdma_ompi_how (flags: $OMPI_CPPFLAGS).
tbrdma is built against Open MPI's internal (opal) headers, which only an install with
devel headers or a configured source tree provides:
  Debian/Ubuntu: apt-get install libopenmpi-dev
  Homebrew/MacPorts (no devel headers): pass --with-ompi-source=DIR, a configured source tree
    of the same Open MPI version (docs/building.md explains)
  own build: configure Open MPI --with-devel-headers and pass --with-ompi=PREFIX])
])

# TBRDMA_OMPI_CHECK_VERSION: opal_config.h present; its major.minor -> tbrdma_ompi_major/minor.
AC_DEFUN([TBRDMA_OMPI_CHECK_VERSION], [
    AC_CHECK_HEADER([opal_config.h], [], [TBRDMA_OMPI_NOT_FOUND([opal_config.h])])
    AC_COMPUTE_INT([tbrdma_ompi_major], [OPAL_MAJOR_VERSION], [#include "opal_config.h"],
        [AC_MSG_ERROR([cannot read OPAL_MAJOR_VERSION from opal_config.h])])
    AC_COMPUTE_INT([tbrdma_ompi_minor], [OPAL_MINOR_VERSION], [#include "opal_config.h"],
        [AC_MSG_ERROR([cannot read OPAL_MINOR_VERSION from opal_config.h])])
    AC_COMPUTE_INT([tbrdma_ompi_release], [OPAL_RELEASE_VERSION], [#include "opal_config.h"],
        [AC_MSG_ERROR([cannot read OPAL_RELEASE_VERSION from opal_config.h])])
    TBRDMA_OMPI_VERSION="$tbrdma_ompi_major.$tbrdma_ompi_minor.$tbrdma_ompi_release"
    AC_MSG_CHECKING([Open MPI version])
    AC_MSG_RESULT([$TBRDMA_OMPI_VERSION])
])

# TBRDMA_OMPI_CHECK_PMIX: Open MPI >= 5 needs <pmix.h> for its headers and -lpmix at link.
AC_DEFUN([TBRDMA_OMPI_CHECK_PMIX], [
    AC_CHECK_HEADER([pmix.h], [], [
        AC_PATH_PROG([PKG_CONFIG], [pkg-config])
        AS_IF([test -n "$PKG_CONFIG" && $PKG_CONFIG --exists pmix], [
            OMPI_CPPFLAGS="$OMPI_CPPFLAGS `$PKG_CONFIG --cflags-only-I pmix`"
            tbrdma_pmix_L=`$PKG_CONFIG --libs-only-L pmix`
            OMPI_LDFLAGS="$OMPI_LDFLAGS $tbrdma_pmix_L `echo $tbrdma_pmix_L | sed 's/-L/-R/g'`"
        ])
        CPPFLAGS="$tbrdma_save_CPPFLAGS $OMPI_CPPFLAGS"
        AS_UNSET([ac_cv_header_pmix_h])
        AC_CHECK_HEADER([pmix.h], [],
            [AC_MSG_ERROR([pmix.h not found: Open MPI $TBRDMA_OMPI_VERSION headers need PMIx's.
  Debian/Ubuntu: apt-get install libpmix-dev; Homebrew: brew install pmix;
  or pass --with-pmix=DIR (the PMIx prefix Open MPI was built with)])])
    ])
])

# TBRDMA_OMPI_CHECK_BTL: opal/mca/btl/btl.h compiles; BTL_VERSION is 310 (4.1) or 330 (5.0).
AC_DEFUN([TBRDMA_OMPI_CHECK_BTL], [
    AC_CHECK_HEADER([opal/mca/btl/btl.h], [], [TBRDMA_OMPI_NOT_FOUND([opal/mca/btl/btl.h])],
        [#include "opal_config.h"])
    AC_COMPUTE_INT([TBRDMA_OMPI_BTL_VERSION], [BTL_VERSION],
        [#include "opal_config.h"
#include "opal/mca/btl/btl.h"],
        [AC_MSG_ERROR([cannot read BTL_VERSION from opal/mca/btl/btl.h])])
    AC_MSG_CHECKING([whether tbrdma supports Open MPI $TBRDMA_OMPI_VERSION (BTL API $TBRDMA_OMPI_BTL_VERSION)])
    AS_CASE(["$tbrdma_ompi_major.$tbrdma_ompi_minor/$TBRDMA_OMPI_BTL_VERSION"],
        [4.1/310|5.0/330], [AC_MSG_RESULT([yes])],
        [AC_MSG_RESULT([no])
         AC_MSG_ERROR([found Open MPI $TBRDMA_OMPI_VERSION with BTL API $TBRDMA_OMPI_BTL_VERSION ($tbrdma_ompi_how);
tbrdma supports Open MPI 4.1 (BTL API 310) and 5.0 (BTL API 330): install Open MPI 4.1 or 5.0
with devel headers and point configure at it with --with-ompi=PREFIX])])
])

# TBRDMA_OMPI_CHECK_LINK: libopen-pal (+ libpmix on 5.0) links -> OMPI_LIBS.
AC_DEFUN([TBRDMA_OMPI_CHECK_LINK], [
    OMPI_LIBS="-lopen-pal"
    AS_IF([test "$tbrdma_ompi_major" -ge 5], [OMPI_LIBS="$OMPI_LIBS -lpmix"])
    LIBS="$OMPI_LIBS $LIBS"
    AC_MSG_CHECKING([whether $OMPI_LIBS links])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include "opal_config.h"
#include "opal/util/output.h"
#include "opal/runtime/opal.h"]],
            [[opal_output(0, "%s", opal_version_string);]])],
        [AC_MSG_RESULT([yes])],
        [AC_MSG_RESULT([no])
         AC_MSG_ERROR([cannot link $OMPI_LIBS with $OMPI_LDFLAGS: the Open MPI libraries of $tbrdma_ompi_how are missing or not the version of its headers (see config.log)])])
])

# TBRDMA_CHECK_OMPI: the whole Open MPI check, in the order the headers need.
AC_DEFUN([TBRDMA_CHECK_OMPI], [
    AC_ARG_WITH([ompi],
        [AS_HELP_STRING([--with-ompi=PREFIX],
            [Open MPI install with devel headers (PREFIX/include/openmpi/opal_config.h;
             Debian: /usr/lib/x86_64-linux-gnu/openmpi). Default: ask mpicc])])
    AC_ARG_WITH([ompi-source],
        [AS_HELP_STRING([--with-ompi-source=DIR],
            [configured Open MPI source tree of the same version and options as the
             installed Open MPI (for installs without devel headers, e.g. Homebrew)])])
    AC_ARG_WITH([pmix],
        [AS_HELP_STRING([--with-pmix=DIR], [PMIx prefix (Open MPI 5.0 only; default: as mpicc, then pkg-config)])])
    AC_ARG_VAR([MPICC], [Open MPI's C wrapper compiler, asked for include and library dirs])

    TBRDMA_OMPI_FIND_FLAGS
    tbrdma_save_CPPFLAGS=$CPPFLAGS
    tbrdma_save_LDFLAGS=$LDFLAGS
    tbrdma_save_LIBS=$LIBS
    CPPFLAGS="$CPPFLAGS $OMPI_CPPFLAGS"
    LDFLAGS="$LDFLAGS `echo $OMPI_LDFLAGS | sed 's/-R\([[^ ]]*\)/-Wl,-rpath,\1/g'`"
    TBRDMA_OMPI_CHECK_VERSION
    AS_IF([test "$tbrdma_ompi_major" -ge 5], [TBRDMA_OMPI_CHECK_PMIX])
    TBRDMA_OMPI_CHECK_BTL
    LDFLAGS="$tbrdma_save_LDFLAGS `echo $OMPI_LDFLAGS | sed 's/-R\([[^ ]]*\)/-Wl,-rpath,\1/g'`"
    TBRDMA_OMPI_CHECK_LINK
    CPPFLAGS=$tbrdma_save_CPPFLAGS
    LDFLAGS=$tbrdma_save_LDFLAGS
    LIBS=$tbrdma_save_LIBS

    AC_PATH_PROG([OMPI_INFO], [ompi_info], [], [$tbrdma_ompi_bindir$PATH_SEPARATOR$PATH])
    AC_DEFINE_UNQUOTED([TBRDMA_OMPI_VERSION], ["$TBRDMA_OMPI_VERSION"],
        [Open MPI version the plugin is built against])
    AC_SUBST([OMPI_CPPFLAGS])
    AC_SUBST([OMPI_LDFLAGS])
    AC_SUBST([OMPI_LIBS])
    AC_SUBST([TBRDMA_OMPI_VERSION])
    AC_SUBST([TBRDMA_OMPI_BTL_VERSION])
])

# TBRDMA_SETUP_COMPONENT_DIR: where `make install` puts mca_btl_tbrdma.so.
#   --with-ompi-component-dir=DIR; else $libdir/openmpi when --prefix was given; else Open
#   MPI's own component directory (ompi_info --path pkglibdir), so it is found without setup.
AC_DEFUN([TBRDMA_SETUP_COMPONENT_DIR], [
    AC_ARG_WITH([ompi-component-dir],
        [AS_HELP_STRING([--with-ompi-component-dir=DIR],
            [install the plugin into DIR (default: LIBDIR/openmpi with --prefix,
             else Open MPI's component directory, e.g. /usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3)])])
    AC_MSG_CHECKING([where to install mca_btl_tbrdma])
    AS_IF([test -n "$with_ompi_component_dir" && test "x$with_ompi_component_dir" != "xyes" && test "x$with_ompi_component_dir" != "xno"],
        [TBRDMA_COMPONENT_DIR=$with_ompi_component_dir],
        [test "x$prefix" != "xNONE"],
        [TBRDMA_COMPONENT_DIR='${libdir}/openmpi'],
        [TBRDMA_COMPONENT_DIR=
         AS_IF([test -n "$OMPI_INFO"],
            [TBRDMA_COMPONENT_DIR=`$OMPI_INFO --path pkglibdir --parsable 2>/dev/null | sed -n 's/^path:pkglibdir://p'`])
         AS_IF([test -z "$TBRDMA_COMPONENT_DIR"],
            [for tbrdma_dir in $tbrdma_ompi_libdirs; do
                 TBRDMA_COMPONENT_DIR="$tbrdma_dir/openmpi"
                 break
             done])
         AS_IF([test -z "$TBRDMA_COMPONENT_DIR"], [TBRDMA_COMPONENT_DIR='${libdir}/openmpi'])])
    AC_MSG_RESULT([$TBRDMA_COMPONENT_DIR])
    AC_SUBST([TBRDMA_COMPONENT_DIR])
])

# TBRDMA_EXPAND(VAR, VALUE): VAR = VALUE with ${prefix}, ${libdir}, ... expanded (for display).
AC_DEFUN([TBRDMA_EXPAND], [
    tbrdma_save_prefix=$prefix
    tbrdma_save_exec_prefix=$exec_prefix
    test "x$prefix" = "xNONE" && prefix=$ac_default_prefix
    test "x$exec_prefix" = "xNONE" && exec_prefix=$prefix
    $1=$2
    for tbrdma_i in 1 2 3 4 5; do
        eval $1=\"$$1\"
    done
    prefix=$tbrdma_save_prefix
    exec_prefix=$tbrdma_save_exec_prefix
])

# TBRDMA_SUMMARY: what configure chose, printed last.
AC_DEFUN([TBRDMA_SUMMARY], [
    TBRDMA_EXPAND([tbrdma_show_compdir], [$TBRDMA_COMPONENT_DIR])
    TBRDMA_EXPAND([tbrdma_show_helpdir], ['${datadir}/tbrdma'])
    cat <<TBRDMA_EOF

tbrdma configuration
  platform ............. $TBRDMA_PLATFORM ($host)
  Open MPI ............. $TBRDMA_OMPI_VERSION (BTL API $TBRDMA_OMPI_BTL_VERSION) via $tbrdma_ompi_how
  Open MPI cppflags .... $OMPI_CPPFLAGS
  Open MPI libs ........ $OMPI_LDFLAGS $OMPI_LIBS
  verbs cppflags ....... ${VERBS_CPPFLAGS:-(system)}
  component dir ........ $tbrdma_show_compdir
  help file dir ........ $tbrdma_show_helpdir
  unit tests (CUnit) ... $tbrdma_have_cunit
  CFLAGS ............... $CFLAGS $TBRDMA_CFLAGS
TBRDMA_EOF
])
