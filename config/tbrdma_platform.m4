# tbrdma platform, compiler and helper-library checks.
# Everything that differs between Linux and macOS at build time is decided here; the C side
# keeps its differences in plugin/btl_tbrdma_compat.h.

# TBRDMA_SETUP_PLATFORM: sets TBRDMA_PLATFORM (linux|darwin) and PLUGIN_PLATFORM_LDFLAGS.
# The plugin is linked WITHOUT libopen-pal/libpmix: its Open MPI symbols resolve against the
# Open MPI that loads it. A plugin that pulled in its own libopen-pal would, when loaded by
# another Open MPI version, bring a second libopen-pal into the process, whose destructors
# crash it at exit before the version guard can help. plugin/plugin_load_check (make check)
# proves instead that every symbol resolves against the Open MPI it was built for.
AC_DEFUN([TBRDMA_SETUP_PLATFORM], [
    AC_REQUIRE([AC_CANONICAL_HOST])
    PLUGIN_PLATFORM_LDFLAGS=
    AS_CASE([$host_os],
        [darwin*], [TBRDMA_PLATFORM=darwin
                    PLUGIN_PLATFORM_LDFLAGS="-Wl,-undefined,dynamic_lookup"],
        [linux*], [TBRDMA_PLATFORM=linux],
        [AC_MSG_ERROR([tbrdma builds on Linux and macOS only, not on $host_os])])
    AM_CONDITIONAL([TBRDMA_DARWIN], [test "x$TBRDMA_PLATFORM" = "xdarwin"])
    AM_CONDITIONAL([TBRDMA_LINUX], [test "x$TBRDMA_PLATFORM" = "xlinux"])
    AC_SUBST([PLUGIN_PLATFORM_LDFLAGS])
])

# TBRDMA_CC_FLAG(FLAG, VAR): appends FLAG to VAR when the compiler accepts it.
AC_DEFUN([TBRDMA_CC_FLAG], [
    AC_MSG_CHECKING([whether $CC accepts $1])
    tbrdma_save_CFLAGS=$CFLAGS
    CFLAGS="$CFLAGS -Werror $1"
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [])],
        [AC_MSG_RESULT([yes])
         $2="$$2 $1"],
        [AC_MSG_RESULT([no])])
    CFLAGS=$tbrdma_save_CFLAGS
])

# TBRDMA_SETUP_CFLAGS: C dialect, warnings and symbol visibility.
#   TBRDMA_CFLAGS      gnu99 + warnings; also the default AM_CFLAGS of every directory
#   VISIBILITY_CFLAGS  -fvisibility=hidden (the plugin exports its component symbol only)
AC_DEFUN([TBRDMA_SETUP_CFLAGS], [
    AC_ARG_ENABLE([werror],
        [AS_HELP_STRING([--enable-werror], [treat compiler warnings as errors (CI)])],
        [], [enable_werror=no])
    TBRDMA_CFLAGS=
    TBRDMA_CC_FLAG([-std=gnu99], [TBRDMA_CFLAGS])
    TBRDMA_CC_FLAG([-Wall], [TBRDMA_CFLAGS])
    TBRDMA_CC_FLAG([-Wextra], [TBRDMA_CFLAGS])
    AS_IF([test "x$enable_werror" = "xyes"], [TBRDMA_CFLAGS="$TBRDMA_CFLAGS -Werror"])
    VISIBILITY_CFLAGS=
    TBRDMA_CC_FLAG([-fvisibility=hidden], [VISIBILITY_CFLAGS])
    AC_SUBST([TBRDMA_CFLAGS])
    AC_SUBST([VISIBILITY_CFLAGS])
    AC_SUBST([AM_CFLAGS], ['$(TBRDMA_CFLAGS)'])
])

# TBRDMA_CHECK_DL: the library that has dlopen (none on macOS and glibc >= 2.34) -> DL_LIBS.
AC_DEFUN([TBRDMA_CHECK_DL], [
    tbrdma_save_LIBS=$LIBS
    AC_SEARCH_LIBS([dlopen], [dl], [],
        [AC_MSG_ERROR([dlopen() not found: tbrdma loads the verbs library at run time])])
    DL_LIBS=${LIBS%"$tbrdma_save_LIBS"}
    LIBS=$tbrdma_save_LIBS
    AC_SUBST([DL_LIBS])
])

# TBRDMA_CHECK_CUNIT: CUnit for the unit tests (optional: without it they are skipped).
#   HAVE_CUNIT (automake conditional), CUNIT_CPPFLAGS, CUNIT_LIBS
AC_DEFUN([TBRDMA_CHECK_CUNIT], [
    AC_ARG_WITH([cunit],
        [AS_HELP_STRING([--with-cunit=DIR], [CUnit install prefix (default: system)])])
    CUNIT_CPPFLAGS=
    CUNIT_LDFLAGS=
    AS_IF([test -n "$with_cunit" && test "x$with_cunit" != "xyes" && test "x$with_cunit" != "xno"],
        [CUNIT_CPPFLAGS="-I$with_cunit/include"
         CUNIT_LDFLAGS="-L$with_cunit/lib"])
    tbrdma_have_cunit=no
    AS_IF([test "x$with_cunit" != "xno"], [
        tbrdma_save_CPPFLAGS=$CPPFLAGS
        tbrdma_save_LDFLAGS=$LDFLAGS
        CPPFLAGS="$CPPFLAGS $CUNIT_CPPFLAGS"
        LDFLAGS="$LDFLAGS $CUNIT_LDFLAGS"
        AC_CHECK_HEADER([CUnit/Basic.h],
            [AC_CHECK_LIB([cunit], [CU_initialize_registry], [tbrdma_have_cunit=yes])])
        CPPFLAGS=$tbrdma_save_CPPFLAGS
        LDFLAGS=$tbrdma_save_LDFLAGS
    ])
    AS_IF([test "x$tbrdma_have_cunit" = "xyes"], [CUNIT_LIBS="$CUNIT_LDFLAGS -lcunit"],
        [CUNIT_LIBS=
         AS_IF([test "x$with_cunit" != "xno" && test -n "$with_cunit"],
            [AC_MSG_ERROR([CUnit not found (Debian: apt-get install libcunit1-dev)])])
         AC_MSG_WARN([CUnit not found: unit tests will be skipped (Debian: apt-get install libcunit1-dev)])])
    AM_CONDITIONAL([HAVE_CUNIT], [test "x$tbrdma_have_cunit" = "xyes"])
    AC_SUBST([CUNIT_CPPFLAGS])
    AC_SUBST([CUNIT_LIBS])
])
