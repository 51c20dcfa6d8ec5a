#include <curl/curl.h>
#include <string.h>

// The library's one export: libcurl's functions by name. Linking without a Swift runtime
// (`-static-stdlib` with nothing of it used) hides every name taken from an archive, libcurl's
// included, so they are handed out here.
void *forum_curl_function(const char *name) {
  static const struct {
    const char *name;
    void *function;
  } functions[] = {
      {"curl_global_init", (void *)curl_global_init},
      {"curl_easy_init", (void *)curl_easy_init},
      {"curl_easy_setopt", (void *)curl_easy_setopt},
      {"curl_easy_perform", (void *)curl_easy_perform},
      {"curl_easy_getinfo", (void *)curl_easy_getinfo},
      {"curl_easy_reset", (void *)curl_easy_reset},
      {"curl_easy_cleanup", (void *)curl_easy_cleanup},
      {"curl_easy_strerror", (void *)curl_easy_strerror},
      {"curl_slist_append", (void *)curl_slist_append},
      {"curl_slist_free_all", (void *)curl_slist_free_all},
  };
  for (size_t index = 0; index < sizeof functions / sizeof functions[0]; index++) {
    if (strcmp(functions[index].name, name) == 0) return functions[index].function;
  }
  return NULL;
}
