/*
 * make check: loads the built plugin the way Open MPI does, but binding every symbol now
 * (RTLD_NOW), from a program linked with the Open MPI the plugin was built for. The plugin is
 * linked without libopen-pal (see config/tbrdma_platform.m4), so this is what proves that each
 * of its Open MPI symbols exists there, and that it exports its component.
 */
#include <dlfcn.h>
#include <stdio.h>

/* The component the plugin must export (the BTL's unless told). */
#ifndef PLUGIN_COMPONENT
#define PLUGIN_COMPONENT "mca_btl_tbrdma_component"
#endif

/* Any libopen-pal symbol, referenced so the linker keeps libopen-pal in the process. */
extern const char opal_version_string[];
#ifdef PLUGIN_NEEDS_LIBMPI
/* And a libmpi one, for a coll component. */
int MPI_Initialized(int *flag);
int (*volatile plugin_keep_libmpi)(int *) = MPI_Initialized;
#endif

int main(void)
{
    void *plugin, *component;

    printf("open mpi %s\n", opal_version_string);
    plugin = dlopen(PLUGIN_PATH, RTLD_NOW | RTLD_GLOBAL);
    if (NULL == plugin) {
        printf("FAIL: dlopen %s: %s\n", PLUGIN_PATH, dlerror());
        return 1;
    }
    component = dlsym(plugin, PLUGIN_COMPONENT);
    if (NULL == component) {
        printf("FAIL: %s exports no %s\n", PLUGIN_PATH, PLUGIN_COMPONENT);
        return 1;
    }
    printf("ok: %s loads with every symbol bound and exports %s\n", PLUGIN_PATH, PLUGIN_COMPONENT);
    dlclose(plugin);
    return 0;
}
