# tbrdma verbs header check. The plugin never links a verbs library: it dlopens
# libibverbs.so.1 (Linux) or librdma.dylib (macOS) at run time, so only the header matters.

# TBRDMA_CHECK_VERBS: --with-verbs=DIR; sets VERBS_CPPFLAGS.
AC_DEFUN([TBRDMA_CHECK_VERBS], [
    AC_ARG_WITH([verbs],
        [AS_HELP_STRING([--with-verbs=DIR],
            [directory holding infiniband/verbs.h, or a prefix with include/infiniband/verbs.h
             (default: the system headers; on macOS the SDK's)])])
    VERBS_CPPFLAGS=
    AS_IF([test -n "$with_verbs" && test "x$with_verbs" != "xyes" && test "x$with_verbs" != "xno"],
        [AS_IF([test -r "$with_verbs/include/infiniband/verbs.h"],
            [VERBS_CPPFLAGS="-I$with_verbs/include"],
            [VERBS_CPPFLAGS="-I$with_verbs"])])
    AS_IF([test "x$with_verbs" = "xno"],
        [AC_MSG_ERROR([tbrdma cannot be built without the verbs header])])
    tbrdma_save_CPPFLAGS=$CPPFLAGS
    CPPFLAGS="$CPPFLAGS $VERBS_CPPFLAGS"
    AC_CHECK_HEADER([infiniband/verbs.h], [],
        [AS_IF([test "x$TBRDMA_PLATFORM" = "xdarwin"],
            [tbrdma_verbs_fix="install Xcode or the Command Line Tools with the macOS 26.2 SDK or newer (it ships infiniband/verbs.h)"],
            [tbrdma_verbs_fix="on Debian/Ubuntu: apt-get install libibverbs-dev; on Fedora: dnf install rdma-core-devel"])
         AC_MSG_ERROR([infiniband/verbs.h not found${VERBS_CPPFLAGS:+ (with $VERBS_CPPFLAGS)}: $tbrdma_verbs_fix, or pass --with-verbs=DIR])])
    CPPFLAGS=$tbrdma_save_CPPFLAGS
    AC_SUBST([VERBS_CPPFLAGS])
])
