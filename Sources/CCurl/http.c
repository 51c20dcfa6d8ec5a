#include "CCurl.h"

#include <curl/curl.h>
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The libcurl functions used, resolved once from the library opened on first use.
typedef struct {
  CURLcode (*global_init)(long);
  CURL *(*easy_init)(void);
  CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
  CURLcode (*easy_perform)(CURL *);
  CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
  void (*easy_reset)(CURL *);
  void (*easy_cleanup)(CURL *);
  const char *(*easy_strerror)(CURLcode);
  struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
  void (*slist_free_all)(struct curl_slist *);
} Curl;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static Curl curl;
static int loaded = 0;
static char loadFailure[256];

// Handles kept between requests, so that one command's requests share a TLS connection.
enum { kept = 4 };
static CURL *idle[kept];
static int idleCount = 0;

// The system's authorities as OpenSSL's hashed directory (`SSL_CERT_DIR`, else Debian's
// /etc/ssl/certs), when it holds hash links (`5ad8a5d6.0`): libcurl's default bundle file is then
// not used. A handshake with the bundle parsed every certificate in it (Debian's 139: 227 million
// instructions, ~60 ms, each command); the directory is read only for the issuers a server's
// chain names. Empty: no such directory, and libcurl's default stands.
static char authorityDirectory[1024];

static void findAuthorityDirectory(void) {
  const char *given = getenv("SSL_CERT_DIR");
  const char *path = given != NULL && given[0] != '\0' ? given : "/etc/ssl/certs";
  if (strlen(path) >= sizeof authorityDirectory) return;
  DIR *directory = opendir(path);
  if (directory == NULL) return;
  struct dirent *entry;
  while ((entry = readdir(directory)) != NULL) {
    const char *name = entry->d_name;
    int hexDigits = 0;
    while (hexDigits < 8 && isxdigit((unsigned char)name[hexDigits])) hexDigits++;
    if (hexDigits == 8 && name[8] == '.' && isdigit((unsigned char)name[9])) {
      snprintf(authorityDirectory, sizeof authorityDirectory, "%s", path);
      break;
    }
  }
  closedir(directory);
}

// libcurl's functions from `library`: its own names, or those libForumCurl.so hands out.
static int resolve(void *library) {
  void *(*named)(const char *) = (void *(*)(const char *))dlsym(library, "forum_curl_function");
#define RESOLVE(field, symbol)                                                                   \
  *(void **)(&curl.field) = named != NULL ? named(symbol) : dlsym(library, symbol);            \
  if (curl.field == NULL) {                                                                      \
    snprintf(loadFailure, sizeof loadFailure, "libcurl has no %s", symbol);                      \
    return 0;                                                                                    \
  }
  RESOLVE(global_init, "curl_global_init")
  RESOLVE(easy_init, "curl_easy_init")
  RESOLVE(easy_setopt, "curl_easy_setopt")
  RESOLVE(easy_perform, "curl_easy_perform")
  RESOLVE(easy_getinfo, "curl_easy_getinfo")
  RESOLVE(easy_reset, "curl_easy_reset")
  RESOLVE(easy_cleanup, "curl_easy_cleanup")
  RESOLVE(easy_strerror, "curl_easy_strerror")
  RESOLVE(slist_append, "curl_slist_append")
  RESOLVE(slist_free_all, "curl_slist_free_all")
#undef RESOLVE
  return 1;
}

// OpenSSL 3 fetches every cipher, digest and group the first time a TLS context is made (~1.2 ms);
// made and dropped here, on the loading thread, the connection's own costs a tenth of that.
static void warmTLS(void *library) {
  const void *(*method)(void) = (const void *(*)(void))dlsym(library, "TLS_client_method");
  void *(*make)(const void *) = (void *(*)(const void *))dlsym(library, "SSL_CTX_new");
  void (*drop)(void *) = (void (*)(void *))dlsym(library, "SSL_CTX_free");
  if (method == NULL || make == NULL || drop == NULL) return;
  void *context = make(method());
  if (context != NULL) drop(context);
}

static int load(void) {
  if (loaded) return loaded > 0;
  findAuthorityDirectory();
  // FORUM_LIBCURL names the one library to open (libcurl.so.4: the system's). Otherwise forum's
  // own libForumCurl.so, found beside the program (its run path), then Debian's OpenSSL flavour,
  // then its GnuTLS one.
  const char *chosen = getenv("FORUM_LIBCURL");
  const char *names[] = {"libForumCurl.so", "libcurl.so.4", "libcurl-gnutls.so.4"};
  size_t count = 3;
  if (chosen != NULL && chosen[0] != '\0') {
    names[0] = chosen;
    count = 1;
  }
  void *library = NULL;
  for (size_t index = 0; index < count && library == NULL; index++) {
    // Lazy: libForumCurl.so's stubs and OpenSSL's functions are bound as they are first called.
    library = dlopen(names[index], RTLD_LAZY | RTLD_LOCAL);
  }
  if (library == NULL) {
    const char *error = dlerror();
    snprintf(loadFailure, sizeof loadFailure, "%s", error != NULL ? error : "libcurl.so.4");
    loaded = -1;
    return 0;
  }
  if (!resolve(library)) {
    loaded = -1;
    return 0;
  }
  if (curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    snprintf(loadFailure, sizeof loadFailure, "libcurl could not start");
    loaded = -1;
    return 0;
  }
  warmTLS(library);
  loaded = 1;
  return 1;
}

// Opens libcurl on a thread of its own while the command gets ready, so that the first request
// finds it open, or waits only for the rest of it.
static void *loadInBackground(void *unused) {
  (void)unused;
  pthread_mutex_lock(&lock);
  load();
  pthread_mutex_unlock(&lock);
  return NULL;
}

static pthread_t loader;
// 0: none started; 1: running or done, not joined; 2: joined.
static int loaderState = 0;

void forum_http_prepare(void) {
  pthread_mutex_lock(&lock);
  int start = !loaded && loaderState == 0;
  if (start) loaderState = 1;
  pthread_mutex_unlock(&lock);
  if (start && pthread_create(&loader, NULL, loadInBackground, NULL) != 0) {
    pthread_mutex_lock(&lock);
    loaderState = 0;
    pthread_mutex_unlock(&lock);
  }
}

void forum_http_settle(void) {
  pthread_mutex_lock(&lock);
  int join = loaderState == 1;
  if (join) loaderState = 2;
  pthread_mutex_unlock(&lock);
  // Joined before the process exits: OpenSSL's exit handler must not run beside its start.
  if (join) pthread_join(loader, NULL);
}

typedef struct {
  unsigned char *bytes;
  size_t length;
  size_t capacity;
  size_t maximum;
  int tooLarge;
} Buffer;

static size_t receive(char *data, size_t size, size_t count, void *context) {
  Buffer *buffer = context;
  size_t length = size * count;
  if (length > buffer->maximum - buffer->length) {
    buffer->tooLarge = 1;
    return 0;  // stops the transfer: CURLE_WRITE_ERROR
  }
  if (buffer->length + length > buffer->capacity) {
    size_t capacity = buffer->capacity == 0 ? 16384 : buffer->capacity;
    while (capacity < buffer->length + length) capacity *= 2;
    if (capacity > buffer->maximum) capacity = buffer->maximum;
    unsigned char *bytes = realloc(buffer->bytes, capacity);
    if (bytes == NULL) {
      buffer->tooLarge = 1;
      return 0;
    }
    buffer->bytes = bytes;
    buffer->capacity = capacity;
  }
  memcpy(buffer->bytes + buffer->length, data, length);
  buffer->length += length;
  return length;
}

static int progress(void *context, curl_off_t downloadTotal, curl_off_t downloaded,
                    curl_off_t uploadTotal, curl_off_t uploaded) {
  (void)downloadTotal, (void)downloaded, (void)uploadTotal, (void)uploaded;
  int (*interrupted)(void) = context;
  return interrupted != NULL && interrupted() ? 1 : 0;
}

int forum_http_perform(const ForumHTTPRequest *request, ForumHTTPResponse *response, char *reason,
                       unsigned long reasonSize) {
  memset(response, 0, sizeof *response);
  pthread_mutex_lock(&lock);
  if (!load()) {
    snprintf(reason, reasonSize, "%s", loadFailure);
    pthread_mutex_unlock(&lock);
    return FORUM_HTTP_NO_LIBRARY;
  }
  CURL *handle = idleCount > 0 ? idle[--idleCount] : curl.easy_init();
  pthread_mutex_unlock(&lock);
  if (handle == NULL) {
    snprintf(reason, reasonSize, "libcurl could not make a request");
    return FORUM_HTTP_FAILED;
  }

  struct curl_slist *headers = NULL;
  for (int index = 0; index < request->headerCount; index++) {
    headers = curl.slist_append(headers, request->headers[index]);
  }
  // libcurl's own "Expect: 100-continue" would add a round trip to every large upload.
  headers = curl.slist_append(headers, "Expect:");
  Buffer buffer = {.maximum = request->maximumResponseBytes};

  curl.easy_setopt(handle, CURLOPT_URL, request->url);
  curl.easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "https");
  // HTTP/1.1 (all forum serve speaks) and answers as sent: libForumCurl.so has neither nghttp2
  // nor a brotli or zstd decoder, and a decoded answer's size would not be bounded before it was.
  curl.easy_setopt(handle, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
  curl.easy_setopt(handle, CURLOPT_HTTP_CONTENT_DECODING, 0L);
  curl.easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 0L);
  curl.easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
  curl.easy_setopt(handle, CURLOPT_SSL_VERIFYPEER, 1L);
  curl.easy_setopt(handle, CURLOPT_SSL_VERIFYHOST, 2L);
  if (request->caFile != NULL) {
    curl.easy_setopt(handle, CURLOPT_CAINFO, request->caFile);
  } else if (authorityDirectory[0] != '\0') {
    curl.easy_setopt(handle, CURLOPT_CAINFO, NULL);
    curl.easy_setopt(handle, CURLOPT_CAPATH, authorityDirectory);
  }
  curl.easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, request->connectTimeoutMilliseconds);
  curl.easy_setopt(handle, CURLOPT_TIMEOUT_MS, request->timeoutMilliseconds);
  curl.easy_setopt(handle, CURLOPT_CUSTOMREQUEST, request->method);
  if (strcmp(request->method, "GET") == 0) {
    curl.easy_setopt(handle, CURLOPT_HTTPGET, 1L);
  } else {
    curl.easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)request->bodyLength);
    curl.easy_setopt(handle, CURLOPT_POSTFIELDS, request->bodyLength > 0 ? (const char *)request->body : "");
  }
  curl.easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
  curl.easy_setopt(handle, CURLOPT_WRITEFUNCTION, receive);
  curl.easy_setopt(handle, CURLOPT_WRITEDATA, &buffer);
  curl.easy_setopt(handle, CURLOPT_NOPROGRESS, 0L);
  curl.easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, progress);
  curl.easy_setopt(handle, CURLOPT_XFERINFODATA, (void *)request->interrupted);

  CURLcode code = curl.easy_perform(handle);
  int outcome = FORUM_HTTP_OK;
  if (code == CURLE_OK) {
    curl.easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &response->status);
    response->body = buffer.bytes;
    response->length = buffer.length;
    buffer.bytes = NULL;
  } else {
    if (buffer.tooLarge) {
      outcome = FORUM_HTTP_TOO_LARGE;
    } else if (code == CURLE_ABORTED_BY_CALLBACK) {
      outcome = FORUM_HTTP_INTERRUPTED;
    } else if (code == CURLE_OPERATION_TIMEDOUT) {
      outcome = FORUM_HTTP_TIMED_OUT;
    } else if (code == CURLE_PEER_FAILED_VERIFICATION || code == CURLE_SSL_CACERT_BADFILE
               || code == CURLE_SSL_CERTPROBLEM) {
      outcome = FORUM_HTTP_CERTIFICATE;
    } else if (code == CURLE_COULDNT_CONNECT || code == CURLE_COULDNT_RESOLVE_HOST) {
      outcome = FORUM_HTTP_CONNECT;
    } else {
      outcome = FORUM_HTTP_FAILED;
    }
    snprintf(reason, reasonSize, "%s", curl.easy_strerror(code));
  }
  free(buffer.bytes);
  curl.easy_setopt(handle, CURLOPT_HTTPHEADER, NULL);
  curl.slist_free_all(headers);

  pthread_mutex_lock(&lock);
  if (outcome == FORUM_HTTP_OK && idleCount < kept) {
    idle[idleCount++] = handle;
    handle = NULL;
  }
  pthread_mutex_unlock(&lock);
  // A handle whose transfer was cut is not reused: its connection may be half-read.
  if (handle != NULL) curl.easy_cleanup(handle);
  return outcome;
}

void forum_http_free(ForumHTTPResponse *response) {
  free(response->body);
  response->body = NULL;
  response->length = 0;
}
