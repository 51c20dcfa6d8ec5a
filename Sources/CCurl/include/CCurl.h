#ifndef FORUM_CCURL_H
#define FORUM_CCURL_H

// HTTPS requests for the remote engine, made by libcurl. forum does not link libcurl: it is
// opened with dlopen when an https:// board is first asked something (like libpq for a
// postgresql:// board), so `forum --version` and a local board never map it or the TLS library
// under it. The request is made whole here, in C, because curl_easy_setopt is variadic.

#include <stddef.h>

typedef struct {
  const char *method;
  /// https:// only; no redirect is followed.
  const char *url;
  /// "Name: value" lines.
  const char *const *headers;
  int headerCount;
  const unsigned char *body;
  size_t bodyLength;
  /// PEM file of the certificate authorities to trust; NULL: the system's.
  const char *caFile;
  long connectTimeoutMilliseconds;
  /// The whole request, answer included.
  long timeoutMilliseconds;
  /// An answer longer than this stops the transfer (FORUM_HTTP_TOO_LARGE).
  size_t maximumResponseBytes;
  /// Asked while waiting; nonzero stops the transfer (FORUM_HTTP_INTERRUPTED).
  int (*interrupted)(void);
} ForumHTTPRequest;

enum {
  FORUM_HTTP_OK = 0,
  FORUM_HTTP_TOO_LARGE = 1,
  FORUM_HTTP_INTERRUPTED = 2,
  /// The network or TLS failed: `reason` says how, in libcurl's words.
  FORUM_HTTP_FAILED = 3,
  /// libcurl could not be opened: `reason` says why.
  FORUM_HTTP_NO_LIBRARY = 4,
  FORUM_HTTP_TIMED_OUT = 5,
  /// The server's certificate was refused.
  FORUM_HTTP_CERTIFICATE = 6,
  FORUM_HTTP_CONNECT = 7,
};

typedef struct {
  long status;
  /// malloc'd; free with forum_http_free.
  unsigned char *body;
  size_t length;
} ForumHTTPResponse;

int forum_http_perform(const ForumHTTPRequest *request, ForumHTTPResponse *response, char *reason,
                       unsigned long reasonSize);

void forum_http_free(ForumHTTPResponse *response);

/// Starts opening libcurl (and TLS under it) on a thread of its own, for a command about to ask
/// an https board something; the first request waits for it. Once a process.
void forum_http_prepare(void);

/// Waits for forum_http_prepare's thread, if one was started: called before the process exits.
void forum_http_settle(void);

#endif
