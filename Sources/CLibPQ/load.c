#include "CLibPQ.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

const ForumLibPQ *forum_libpq_load(const char *name, char *reason, unsigned long reasonSize) {
  void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    const char *error = dlerror();
    snprintf(reason, reasonSize, "%s", error != NULL ? error : name);
    return NULL;
  }
  ForumLibPQ *table = malloc(sizeof *table);
  if (table == NULL) {
    snprintf(reason, reasonSize, "out of memory");
    dlclose(library);
    return NULL;
  }
#define FORUM_LIBPQ_RESOLVE(function)                                                          \
  table->function = (__typeof__(function) *)dlsym(library, #function);                         \
  if (table->function == NULL) {                                                               \
    snprintf(reason, reasonSize, "%s has no %s", name, #function);                             \
    free(table);                                                                               \
    dlclose(library);                                                                          \
    return NULL;                                                                               \
  }
  FORUM_LIBPQ_FUNCTIONS(FORUM_LIBPQ_RESOLVE)
#undef FORUM_LIBPQ_RESOLVE
  return table;
}
