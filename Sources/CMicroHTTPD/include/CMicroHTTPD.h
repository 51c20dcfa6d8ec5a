#ifndef FORUM_CMICROHTTPD_H
#define FORUM_CMICROHTTPD_H

// The HTTP server under `forum serve`: libmicrohttpd (GNU, with GnuTLS) parses requests, decodes
// multipart bodies and speaks TLS; this shim only moves a finished request to Swift and its
// answer back. forum does not link libmicrohttpd: it and GnuTLS's dozen libraries are opened with
// dlopen when a server starts, so no other command maps them (see StartupTests).

#include <stddef.h>
#include <stdint.h>

/// One request header, as sent (the name in the client's case).
typedef struct forum_http_header {
  const char *_Nonnull name;
  const char *_Nonnull value;
  size_t value_length;
} forum_http_header;

/// One part of a multipart/form-data body, decoded by libmicrohttpd's post processor.
typedef struct forum_http_part {
  const char *_Nonnull name;
  const char *_Nullable file_name;
  const char *_Nullable content_type;
  const uint8_t *_Nullable bytes;
  size_t length;
} forum_http_part;

/// A request, complete (or refused before its body was read: `body_too_large`). Valid only
/// during the call of `forum_http_respond`.
typedef struct forum_http_request {
  const char *_Nonnull method;
  /// The request target up to `?`, still percent-encoded, and what follows the `?`.
  const char *_Nonnull path;
  size_t path_length;
  const char *_Nonnull query;
  size_t query_length;
  const forum_http_header *_Nullable headers;
  size_t header_count;
  const uint8_t *_Nullable body;
  size_t body_length;
  const forum_http_part *_Nullable parts;
  size_t part_count;
  /// The body is over the limit (by Content-Length, or as it came): nothing of it is kept, and the
  /// connection is closed after the answer.
  int body_too_large;
  /// The bytes buffered for all connections' bodies would pass `buffer_budget`: nothing of the
  /// body is kept, and the connection is closed after the answer.
  int server_busy;
  /// A multipart/form-data body libmicrohttpd could not decode (no boundary, cut short).
  int form_malformed;
  /// The client's connection (-1 if unknown): polled for a hang-up while the request runs.
  int client_socket;
  /// The client's numeric address (IPv4 or IPv6, no port), "" if unknown.
  char client_address[64];
} forum_http_request;

typedef struct forum_http_exchange forum_http_exchange;

/// Called on the connection's thread, several at once, for every request. It answers with
/// `forum_http_answer` before returning (or the client gets a 500).
typedef void (*forum_http_respond)(
    void *_Nullable context, const forum_http_request *_Nonnull request,
    forum_http_exchange *_Nonnull exchange);

/// Called once the headers of a request that announces a body (a Content-Length above 0, or a
/// Transfer-Encoding) are in, before a byte of its body is read or `100 Continue` is sent:
/// `request` has no body. Answering with `forum_http_answer` refuses the request: the answer goes
/// out at once, the body is never read and the connection is closed. Not answering lets it in.
typedef void (*forum_http_admit)(
    void *_Nullable context, const forum_http_request *_Nonnull request,
    forum_http_exchange *_Nonnull exchange);

/// Says the request's body and parts were copied: their bytes are freed now (the request no longer
/// holds them), while what they took of `buffer_budget` stays taken until the request completes,
/// for the copy. The request's pointers are not to be read after.
void forum_http_copied(forum_http_exchange *_Nonnull exchange);

/// Answers the request: `headers` holds `name NUL value NUL` pairs. The bytes are copied.
/// Returns 0, or -1 when the answer is refused (a header with CR or LF, answered twice).
int forum_http_answer(
    forum_http_exchange *_Nonnull exchange, unsigned status, const uint8_t *_Nullable headers,
    size_t headers_length, const uint8_t *_Nullable body, size_t body_length);

/// Reads the next piece of a streamed body into `buffer` (at most `capacity` bytes), on the
/// connection's thread, which it may block: returns the count (above 0), or -1 to end the body.
typedef long (*forum_http_stream_read)(
    void *_Nullable context, uint8_t *_Nonnull buffer, size_t capacity);
/// The stream is done with (ended, or its client gone): called once, `read` never again.
typedef void (*forum_http_stream_finished)(void *_Nullable context);

/// Answers the request with a body of unknown length (chunked), read piece by piece from
/// `read` as the client takes it. `finished` is called once in every case, on failure too.
/// Returns 0, or -1 when the answer is refused.
int forum_http_answer_stream(
    forum_http_exchange *_Nonnull exchange, unsigned status, const uint8_t *_Nullable headers,
    size_t headers_length, forum_http_stream_read _Nonnull read,
    forum_http_stream_finished _Nonnull finished, void *_Nullable context);

/// A listening TCP socket (non-blocking, close-on-exec, SO_REUSEADDR) on a numeric IPv4 or IPv6
/// address. Returns the descriptor, or -1 with `*error` set to the errno of the step that failed
/// (EINVAL for an address that is not numeric).
int forum_http_listen(const char *_Nonnull numeric_host, unsigned port, int *_Nonnull error);

/// The port a socket is bound to (the one the kernel chose for port 0), or 0.
unsigned forum_http_bound_port(int socket);

typedef struct forum_http_config {
  /// From forum_http_listen; owned by the server from forum_http_start on, even on failure.
  int listen_socket;
  /// PEM text, NUL-terminated; both NULL for plain HTTP.
  const char *_Nullable tls_certificate;
  const char *_Nullable tls_key;
  /// Open connections at once; each has a thread of its own, which runs the handler for it.
  unsigned connection_limit;
  /// Open connections from one client address at once (0: no limit of its own).
  unsigned per_address_connection_limit;
  /// A connection with no traffic for this long is closed.
  unsigned idle_timeout_seconds;
  /// A connection is closed when a request's line and headers have not all come this long after
  /// it opened or after its last answer (the TLS handshake included): a byte now and then does
  /// not keep it.
  unsigned header_deadline_seconds;
  /// A connection is closed when a request's body has not all come this long after its headers.
  unsigned body_deadline_seconds;
  /// Bytes held for request bodies (and their decoded parts) across all connections, each counted
  /// twice (once for the handler's copy); a request that would pass it is answered by `respond`
  /// with `server_busy` set, its body unread or dropped.
  size_t buffer_budget;
  /// Per connection: request line and headers must fit in it.
  size_t connection_memory;
  size_t body_limit;
  forum_http_respond _Nonnull respond;
  /// NULL: every request is let in.
  forum_http_admit _Nullable admit;
  void *_Nullable context;
} forum_http_config;

/// TLS versions spoken: 1.2 and 1.3 only (GnuTLS priority string).
#define FORUM_HTTP_TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"


typedef struct forum_http_server forum_http_server;

/// Opens libmicrohttpd (once per process) and starts the server's listening thread. On failure
/// returns NULL with the reason (the loader's, or libmicrohttpd's own words) in `reason`.
forum_http_server *_Nullable forum_http_start(
    const forum_http_config *_Nonnull config, char *_Nonnull reason, size_t reason_size);

/// Stops accepting connections: requests already received are still answered (each with
/// `Connection: close`).
void forum_http_quiesce(forum_http_server *_Nonnull server);

/// Requests begun and not yet completed (answered, or their client gone).
size_t forum_http_in_flight(forum_http_server *_Nonnull server);

/// Stops the listening and connection threads (a handler running is let finish), closes every
/// connection and the listening socket, and frees the server.
void forum_http_stop(forum_http_server *_Nonnull server);

/// Bytes held for request bodies across all connections now (for tests and benchmarks).
size_t forum_http_buffered(forum_http_server *_Nonnull server);

#endif
