#include "libraries.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

// Debian 12's sonames and the packages that install them.
static const struct {
  const char *soname, *package;
} names[] = {
    [CIMG_LIBRARY_PNG] = {"libpng16.so.16", "libpng16-16"},
    [CIMG_LIBRARY_JPEG] = {"libjpeg.so.62", "libjpeg62-turbo"},
    [CIMG_LIBRARY_GIF] = {"libgif.so.7", "libgif7"},
    [CIMG_LIBRARY_WEBP] = {"libwebp.so.7", "libwebp7"},
    [CIMG_LIBRARY_WEBPDEMUX] = {"libwebpdemux.so.2", "libwebpdemux2"},
};

static int known(cimg_library library) {
  return library > CIMG_LIBRARY_NONE && library <= CIMG_LIBRARY_WEBPDEMUX;
}

const char *cimg_library_soname(cimg_library library) {
  return known(library) ? names[library].soname : "";
}

const char *cimg_library_package(cimg_library library) {
  return known(library) ? names[library].package : "";
}

// Resolves every function of a table from an opened library, or names the first one missing.
#define CIMG_RESOLVE(function)                                                                 \
  table->function = (__typeof__(function) *)dlsym(handle, #function);                          \
  if (table->function == NULL) {                                                               \
    snprintf(reason, size, "%s has no %s", soname, #function);                                 \
    return -1;                                                                                 \
  }
#define CIMG_RESOLVER(lib, LIST)                                                               \
  static int resolve_##lib(void *handle, const char *soname, void *untyped, char *reason,      \
                           size_t size) {                                                      \
    cimg_##lib##_functions *table = untyped;                                                   \
    LIST(CIMG_RESOLVE)                                                                         \
    return 0;                                                                                  \
  }
CIMG_RESOLVER(png, CIMG_PNG_FUNCTIONS)
CIMG_RESOLVER(jpeg, CIMG_JPEG_FUNCTIONS)
CIMG_RESOLVER(gif, CIMG_GIF_FUNCTIONS)
CIMG_RESOLVER(webp, CIMG_WEBP_FUNCTIONS)
CIMG_RESOLVER(webpdemux, CIMG_WEBPDEMUX_FUNCTIONS)
#undef CIMG_RESOLVER
#undef CIMG_RESOLVE

typedef int (*resolver)(void *handle, const char *soname, void *table, char *reason,
                        size_t size);

// Opens soname and fills table; on failure keeps nothing open and says why in reason.
static int open_library(const char *soname, resolver resolve, void *table, char *reason,
                        size_t size) {
  void *handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    const char *error = dlerror();
    snprintf(reason, size, "%s", error != NULL ? error : soname);
    return -1;
  }
  if (resolve(handle, soname, table, reason, size) != 0) {
    dlclose(handle);
    return -1;
  }
  return 0;  // the library stays open for the life of the process
}

// The process's tables: each library is tried once, by the first decode that needs it, and the
// answer (a table, or why not) kept. A missing library is not looked for again.
static cimg_png_functions png_table;
static cimg_jpeg_functions jpeg_table;
static cimg_gif_functions gif_table;
static cimg_webp_functions webp_table;
static cimg_webpdemux_functions webpdemux_table;

static struct {
  pthread_once_t once;
  void *table;
  resolver resolve;
  int loaded;
  char reason[CIMG_ERROR_LENGTH];
} process[] = {
    [CIMG_LIBRARY_PNG] = {PTHREAD_ONCE_INIT, &png_table, resolve_png, 0, ""},
    [CIMG_LIBRARY_JPEG] = {PTHREAD_ONCE_INIT, &jpeg_table, resolve_jpeg, 0, ""},
    [CIMG_LIBRARY_GIF] = {PTHREAD_ONCE_INIT, &gif_table, resolve_gif, 0, ""},
    [CIMG_LIBRARY_WEBP] = {PTHREAD_ONCE_INIT, &webp_table, resolve_webp, 0, ""},
    [CIMG_LIBRARY_WEBPDEMUX] = {PTHREAD_ONCE_INIT, &webpdemux_table, resolve_webpdemux, 0, ""},
};

static void load(cimg_library library) {
  process[library].loaded =
      open_library(names[library].soname, process[library].resolve, process[library].table,
                   process[library].reason, sizeof process[library].reason) == 0;
}

#define CIMG_ONCE(lib, LIBRARY)                                                                \
  static void load_##lib(void) { load(LIBRARY); }
CIMG_ONCE(png, CIMG_LIBRARY_PNG)
CIMG_ONCE(jpeg, CIMG_LIBRARY_JPEG)
CIMG_ONCE(gif, CIMG_LIBRARY_GIF)
CIMG_ONCE(webp, CIMG_LIBRARY_WEBP)
CIMG_ONCE(webpdemux, CIMG_LIBRARY_WEBPDEMUX)
#undef CIMG_ONCE

static void (*const loaders[])(void) = {
    [CIMG_LIBRARY_PNG] = load_png,   [CIMG_LIBRARY_JPEG] = load_jpeg,
    [CIMG_LIBRARY_GIF] = load_gif,   [CIMG_LIBRARY_WEBP] = load_webp,
    [CIMG_LIBRARY_WEBPDEMUX] = load_webpdemux,
};

int cimg_library_load(cimg_library library, char *reason, size_t size) {
  if (!known(library)) {
    snprintf(reason, size, "no such image library");
    return -1;
  }
  pthread_once(&process[library].once, loaders[library]);
  if (process[library].loaded) return 0;
  snprintf(reason, size, "%s", process[library].reason);
  return -1;
}

int cimg_library_probe(cimg_library library, const char *soname, char *reason, size_t size) {
  static const resolver resolvers[] = {
      [CIMG_LIBRARY_PNG] = resolve_png,   [CIMG_LIBRARY_JPEG] = resolve_jpeg,
      [CIMG_LIBRARY_GIF] = resolve_gif,   [CIMG_LIBRARY_WEBP] = resolve_webp,
      [CIMG_LIBRARY_WEBPDEMUX] = resolve_webpdemux,
  };
  if (!known(library)) {
    snprintf(reason, size, "no such image library");
    return -1;
  }
  union {
    cimg_png_functions png;
    cimg_jpeg_functions jpeg;
    cimg_gif_functions gif;
    cimg_webp_functions webp;
    cimg_webpdemux_functions webpdemux;
  } table;
  void *handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    const char *error = dlerror();
    snprintf(reason, size, "%s", error != NULL ? error : soname);
    return -1;
  }
  int status = resolvers[library](handle, soname, &table, reason, size);
  dlclose(handle);  // a probe keeps nothing
  return status;
}

// The decoders' way in: the table, or NULL with the decode's error and missing_library set.
#define CIMG_ACCESSOR(lib, LIBRARY)                                                            \
  const cimg_##lib##_functions *cimg_##lib(cimg_image *out) {                                  \
    char reason[CIMG_ERROR_LENGTH];                                                            \
    if (cimg_library_load(LIBRARY, reason, sizeof reason) == 0) return &lib##_table;           \
    if (out != NULL) {                                                                         \
      snprintf(out->error, sizeof out->error, "%s", reason);                                   \
      out->missing_library = LIBRARY;                                                          \
    }                                                                                          \
    return NULL;                                                                               \
  }
CIMG_ACCESSOR(png, CIMG_LIBRARY_PNG)
CIMG_ACCESSOR(jpeg, CIMG_LIBRARY_JPEG)
CIMG_ACCESSOR(gif, CIMG_LIBRARY_GIF)
CIMG_ACCESSOR(webp, CIMG_LIBRARY_WEBP)
CIMG_ACCESSOR(webpdemux, CIMG_LIBRARY_WEBPDEMUX)
#undef CIMG_ACCESSOR
