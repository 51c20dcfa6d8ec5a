#include "CMicroHTTPD.h"

#include <microhttpd.h>

#include <arpa/inet.h>
#include <dlfcn.h>
#include <malloc.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

// Every libmicrohttpd function the server calls, each field typed as the function it is named
// after (from microhttpd.h), so a call through the table is checked as a direct call would be.
// A direct MHD_ call fails to link, on purpose: the library is never linked.
#define FORUM_MHD_FUNCTIONS(X)                                                                 \
  X(MHD_start_daemon)                                                                          \
  X(MHD_quiesce_daemon)                                                                        \
  X(MHD_stop_daemon)                                                                           \
  X(MHD_is_feature_supported)                                                                  \
  X(MHD_get_connection_values_n)                                                               \
  X(MHD_get_connection_info)                                                                   \
  X(MHD_lookup_connection_value)                                                               \
  X(MHD_create_post_processor)                                                                 \
  X(MHD_post_process)                                                                          \
  X(MHD_destroy_post_processor)                                                                \
  X(MHD_create_response_from_buffer)                                                           \
  X(MHD_create_response_from_callback)                                                         \
  X(MHD_set_connection_option)                                                                 \
  X(MHD_add_response_header)                                                                   \
  X(MHD_queue_response)                                                                        \
  X(MHD_destroy_response)

#define FORUM_MHD_FIELD(name) __typeof__(name) *name;
typedef struct forum_mhd {
  FORUM_MHD_FUNCTIONS(FORUM_MHD_FIELD)
} forum_mhd;
#undef FORUM_MHD_FIELD

static forum_mhd mhd;
static pthread_once_t mhd_once = PTHREAD_ONCE_INIT;
static char mhd_failure[256];

static void mhd_open(void) {
  const char *name = "libmicrohttpd.so.12";
  void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    const char *error = dlerror();
    snprintf(mhd_failure, sizeof mhd_failure, "%s", error != NULL ? error : name);
    return;
  }
#define FORUM_MHD_RESOLVE(function)                                                            \
  mhd.function = (__typeof__(function) *)dlsym(library, #function);                            \
  if (mhd.function == NULL) {                                                                  \
    snprintf(mhd_failure, sizeof mhd_failure, "%s has no %s", name, #function);                \
    return;                                                                                    \
  }
  FORUM_MHD_FUNCTIONS(FORUM_MHD_RESOLVE)
#undef FORUM_MHD_RESOLVE
}

// How much of a body over the limit is read and dropped so that its answer reaches the client.
#define DISCARD_ALLOWANCE ((unsigned long long)32 << 20)

// Where a connection is in its request, for the deadlines: waiting for a request's line and
// headers (from its opening or its last answer), for its body, or being answered (no deadline:
// the handler's time is its own).
enum phase { PHASE_HEAD, PHASE_BODY, PHASE_ANSWER };

// One open connection, from libmicrohttpd's "started" notice to its "closed" one (given before it
// closes the socket, so `fd` is never another connection's while it is listed).
typedef struct connection_clock {
  struct connection_clock *previous, *next;
  int fd;
  enum phase phase;
  uint64_t since;  // milliseconds, CLOCK_MONOTONIC
  int cut;
} connection_clock;

struct forum_http_server {
  struct MHD_Daemon *daemon;
  int listen_socket;
  size_t body_limit;
  unsigned idle_timeout;
  forum_http_respond respond;
  forum_http_admit admit;
  void *context;
  // Bytes held for bodies and parts across all requests, and the most allowed.
  atomic_size_t buffered;
  size_t buffer_budget;
  // The open connections, and the thread that cuts those past a deadline.
  pthread_mutex_t clocks_lock;
  pthread_cond_t clocks_wake;
  connection_clock *clocks;
  uint64_t header_deadline, body_deadline;  // milliseconds
  pthread_t reaper;
  int reaper_running;
  int reaper_stop;
  atomic_size_t in_flight;
  atomic_int stopping;
  // The socket quiesce took back from libmicrohttpd, ours to close (-1 while it is the daemon's).
  int quiesced_socket;
  // libmicrohttpd's own words while it starts (why a certificate was refused); dropped after,
  // since later ones may quote what a client sent.
  atomic_int starting;
  char start_reason[256];
};

// What one request gathers between libmicrohttpd's calls.
typedef struct request_state {
  char *target;  // the request target as sent (path?query)
  forum_http_server *server;
  int started;
  int counted;
  int answered;
  int too_large;
  int busy;
  // Bytes of `buffered` this request holds (its body's and its parts' capacities, or the length
  // its Content-Length announced).
  size_t reserved;
  // What its body's and parts' buffers hold now (capacities), and the length announced.
  size_t held;
  size_t expected;
  int form_malformed;
  uint8_t *body;
  size_t body_length, body_capacity;
  size_t discarded;
  struct MHD_PostProcessor *post;
  forum_http_part *parts;
  size_t part_count, part_capacity;
  size_t *part_capacities;
  forum_http_header *headers;
  size_t header_count, header_capacity;
} request_state;

struct forum_http_exchange {
  struct MHD_Connection *connection;
  forum_http_server *server;
  request_state *state;
  int queued;
  int close;
};

static uint64_t now_milliseconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;
}

// Takes what `held` bytes of body cost of the server's budget for `state` (what it holds already
// counts): 0 when that would pass the budget (nothing is taken then). A byte held costs two: the
// handler is given a copy while this one is still held (`forum_http_copied` frees this one).
static int reserve(request_state *state, size_t held) {
  forum_http_server *server = state->server;
  size_t total = held * 2;
  if (total / 2 != held) return 0;
  if (total <= state->reserved) return 1;
  size_t extra = total - state->reserved;
  size_t now = atomic_load(&server->buffered);
  do {
    if (now + extra > server->buffer_budget || now + extra < now) return 0;
  } while (!atomic_compare_exchange_weak(&server->buffered, &now, now + extra));
  state->reserved = total;
  return 1;
}

static void release(request_state *state) {
  if (state->reserved > 0) atomic_fetch_sub(&state->server->buffered, state->reserved);
  state->reserved = 0;
}

// The connection's clock moves to `phase`, starting now.
static void set_phase(struct MHD_Connection *connection, forum_http_server *server, enum phase phase) {
  const union MHD_ConnectionInfo *info =
      mhd.MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  if (info == NULL || info->socket_context == NULL) return;
  connection_clock *clock = info->socket_context;
  pthread_mutex_lock(&server->clocks_lock);
  clock->phase = phase;
  clock->since = now_milliseconds();
  pthread_mutex_unlock(&server->clocks_lock);
}

static void on_connection(
    void *cls, struct MHD_Connection *connection, void **socket_context,
    enum MHD_ConnectionNotificationCode code) {
  forum_http_server *server = cls;
  if (code == MHD_CONNECTION_NOTIFY_STARTED) {
    const union MHD_ConnectionInfo *info =
        mhd.MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    connection_clock *clock = calloc(1, sizeof *clock);
    if (info == NULL || clock == NULL) {
      free(clock);
      return;
    }
    clock->fd = info->connect_fd;
    clock->phase = PHASE_HEAD;
    clock->since = now_milliseconds();
    pthread_mutex_lock(&server->clocks_lock);
    clock->next = server->clocks;
    if (server->clocks != NULL) server->clocks->previous = clock;
    server->clocks = clock;
    pthread_mutex_unlock(&server->clocks_lock);
    *socket_context = clock;
    return;
  }
  connection_clock *clock = *socket_context;
  if (clock == NULL) return;
  pthread_mutex_lock(&server->clocks_lock);
  if (clock->previous != NULL) clock->previous->next = clock->next;
  else server->clocks = clock->next;
  if (clock->next != NULL) clock->next->previous = clock->previous;
  pthread_mutex_unlock(&server->clocks_lock);
  free(clock);
  *socket_context = NULL;
}

// Four times a second: a connection past its phase's deadline is shut down; libmicrohttpd then
// reads its end and closes it as a client gone.
static void *reap(void *cls) {
  forum_http_server *server = cls;
  pthread_mutex_lock(&server->clocks_lock);
  while (!server->reaper_stop) {
    uint64_t now = now_milliseconds();
    for (connection_clock *clock = server->clocks; clock != NULL; clock = clock->next) {
      uint64_t deadline = clock->phase == PHASE_HEAD   ? server->header_deadline
                          : clock->phase == PHASE_BODY ? server->body_deadline
                                                       : 0;
      if (clock->cut || deadline == 0 || now - clock->since < deadline) continue;
      clock->cut = 1;
      shutdown(clock->fd, SHUT_RDWR);
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 250 * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
      until.tv_sec += 1;
      until.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&server->clocks_wake, &server->clocks_lock, &until);
  }
  pthread_mutex_unlock(&server->clocks_lock);
  return NULL;
}

static void free_parts(request_state *state) {
  for (size_t i = 0; i < state->part_count; i++) {
    free((void *)state->parts[i].name);
    free((void *)state->parts[i].file_name);
    free((void *)state->parts[i].content_type);
    free((void *)state->parts[i].bytes);
  }
  free(state->parts);
  free(state->part_capacities);
  state->parts = NULL;
  state->part_capacities = NULL;
  state->part_count = state->part_capacity = 0;
}

static void free_state(request_state *state) {
  if (state == NULL) return;
  if (state->server != NULL) release(state);
  if (state->post != NULL) mhd.MHD_destroy_post_processor(state->post);
  free_parts(state);
  free(state->headers);
  free(state->body);
  free(state->target);
  free(state);
}

static char *copy_or_null(const char *text) { return text == NULL ? NULL : strdup(text); }

// The post processor hands each part's bytes in pieces; a piece at offset 0 starts a new part
// (an empty first piece of the same part is merged).
static enum MHD_Result on_form_data(
    void *cls, enum MHD_ValueKind kind, const char *key, const char *filename,
    const char *content_type, const char *transfer_encoding, const char *data, uint64_t off,
    size_t size) {
  (void)kind;
  (void)transfer_encoding;
  request_state *state = cls;
  if (key == NULL) key = "";
  forum_http_part *last = state->part_count > 0 ? &state->parts[state->part_count - 1] : NULL;
  int fresh = off == 0 && !(last != NULL && last->length == 0 && strcmp(last->name, key) == 0);
  if (last == NULL || fresh) {
    if (state->part_count == state->part_capacity) {
      size_t capacity = state->part_capacity == 0 ? 4 : state->part_capacity * 2;
      forum_http_part *parts = realloc(state->parts, capacity * sizeof *parts);
      if (parts == NULL) return MHD_NO;
      state->parts = parts;
      size_t *capacities = realloc(state->part_capacities, capacity * sizeof *capacities);
      if (capacities == NULL) return MHD_NO;
      state->part_capacities = capacities;
      state->part_capacity = capacity;
    }
    forum_http_part *part = &state->parts[state->part_count];
    memset(part, 0, sizeof *part);
    part->name = strdup(key);
    part->file_name = copy_or_null(filename);
    part->content_type = copy_or_null(content_type);
    state->part_capacities[state->part_count] = 0;
    state->part_count++;
    if (part->name == NULL) return MHD_NO;
    last = part;
  }
  if (size == 0) return MHD_YES;
  size_t *capacity = &state->part_capacities[state->part_count - 1];
  if (last->length + size > *capacity) {
    size_t wanted = *capacity == 0 ? 4096 : *capacity;
    while (wanted < last->length + size) wanted *= 2;
    if (!reserve(state, state->held + wanted - *capacity)) {
      state->busy = 1;
      return MHD_NO;
    }
    uint8_t *bytes = realloc((void *)last->bytes, wanted);
    if (bytes == NULL) return MHD_NO;
    last->bytes = bytes;
    state->held += wanted - *capacity;
    *capacity = wanted;
  }
  memcpy((uint8_t *)last->bytes + last->length, data, size);
  last->length += size;
  return MHD_YES;
}

// Frees the body and its parts; what they took of the budget stays taken.
static void free_body(request_state *state) {
  if (state->post != NULL) {
    mhd.MHD_destroy_post_processor(state->post);
    state->post = NULL;
  }
  free(state->body);
  state->body = NULL;
  state->body_length = state->body_capacity = 0;
  free_parts(state);
  state->held = 0;
}

// What is kept of a body found over the limit: nothing.
static void drop_body(request_state *state) {
  free_body(state);
  release(state);
}

static enum MHD_Result on_header(
    void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size, const char *value,
    size_t value_size) {
  (void)kind;
  (void)key_size;
  request_state *state = cls;
  if (state->header_count == state->header_capacity) {
    size_t capacity = state->header_capacity == 0 ? 16 : state->header_capacity * 2;
    forum_http_header *headers = realloc(state->headers, capacity * sizeof *headers);
    if (headers == NULL) return MHD_NO;
    state->headers = headers;
    state->header_capacity = capacity;
  }
  state->headers[state->header_count++] = (forum_http_header){
      .name = key, .value = value != NULL ? value : "", .value_length = value_size};
  return MHD_YES;
}

static enum MHD_Result queue_response(
    struct MHD_Connection *connection, forum_http_server *server, unsigned status,
    const uint8_t *headers, size_t headers_length, struct MHD_Response *response, int close);

static enum MHD_Result queue(
    struct MHD_Connection *connection, forum_http_server *server, unsigned status,
    const uint8_t *headers, size_t headers_length, const uint8_t *body, size_t body_length,
    int close) {
  struct MHD_Response *response = mhd.MHD_create_response_from_buffer(
      body_length, (void *)(body != NULL ? body : (const uint8_t *)""), MHD_RESPMEM_MUST_COPY);
  if (response == NULL) return MHD_NO;
  return queue_response(connection, server, status, headers, headers_length, response, close);
}

// Adds the headers, queues the response and lets go of it (libmicrohttpd holds it until sent).
static enum MHD_Result queue_response(
    struct MHD_Connection *connection, forum_http_server *server, unsigned status,
    const uint8_t *headers, size_t headers_length, struct MHD_Response *response, int close) {
  // The idle clock starts again at the answer: a handler that waited (a long-poll) is not
  // taken for a silent connection the moment it answers.
  mhd.MHD_set_connection_option(connection, MHD_CONNECTION_OPTION_TIMEOUT, server->idle_timeout);
  size_t at = 0;
  while (headers != NULL && at < headers_length) {
    const char *name = (const char *)headers + at;
    size_t name_length = strnlen(name, headers_length - at);
    if (at + name_length + 1 >= headers_length) break;
    const char *value = name + name_length + 1;
    size_t value_length = strnlen(value, headers_length - at - name_length - 1);
    if (at + name_length + 1 + value_length >= headers_length) break;
    if (mhd.MHD_add_response_header(response, name, value) != MHD_YES) {
      mhd.MHD_destroy_response(response);
      return MHD_NO;
    }
    at += name_length + 1 + value_length + 1;
  }
  if ((close || atomic_load(&server->stopping)) &&
      mhd.MHD_add_response_header(response, MHD_HTTP_HEADER_CONNECTION, "close") != MHD_YES) {
    mhd.MHD_destroy_response(response);
    return MHD_NO;
  }
  enum MHD_Result result = mhd.MHD_queue_response(connection, status, response);
  mhd.MHD_destroy_response(response);
  return result;
}

int forum_http_answer(
    forum_http_exchange *exchange, unsigned status, const uint8_t *headers,
    size_t headers_length, const uint8_t *body, size_t body_length) {
  if (exchange->queued) return -1;
  int close = exchange->close || exchange->state->too_large || exchange->state->busy;
  if (queue(
          exchange->connection, exchange->server, status, headers, headers_length, body,
          body_length, close) != MHD_YES) {
    return -1;
  }
  exchange->queued = 1;
  return 0;
}

typedef struct stream_state {
  forum_http_stream_read read;
  forum_http_stream_finished finished;
  void *context;
} stream_state;

static ssize_t stream_reader(void *cls, uint64_t pos, char *buffer, size_t capacity) {
  (void)pos;
  stream_state *stream = cls;
  long count = stream->read(stream->context, (uint8_t *)buffer, capacity);
  // Never 0: with a thread per connection libmicrohttpd would ask again at once, busy.
  if (count <= 0) return MHD_CONTENT_READER_END_OF_STREAM;
  return (ssize_t)count;
}

static void stream_free(void *cls) {
  stream_state *stream = cls;
  stream->finished(stream->context);
  free(stream);
}

int forum_http_answer_stream(
    forum_http_exchange *exchange, unsigned status, const uint8_t *headers,
    size_t headers_length, forum_http_stream_read read, forum_http_stream_finished finished,
    void *context) {
  if (exchange->queued) {
    finished(context);
    return -1;
  }
  stream_state *stream = malloc(sizeof *stream);
  if (stream == NULL) {
    finished(context);
    return -1;
  }
  *stream = (stream_state){.read = read, .finished = finished, .context = context};
  struct MHD_Response *response = mhd.MHD_create_response_from_callback(
      MHD_SIZE_UNKNOWN, 16 * 1024, stream_reader, stream, stream_free);
  if (response == NULL) {
    stream_free(stream);
    return -1;
  }
  int close = exchange->close || exchange->state->too_large || exchange->state->busy;
  if (queue_response(
          exchange->connection, exchange->server, status, headers, headers_length, response,
          close) != MHD_YES) {
    return -1;
  }
  exchange->queued = 1;
  return 0;
}

// The client's socket and numeric address, for the handler's hang-up probe and its budgets.
static void client_of(struct MHD_Connection *connection, forum_http_request *request) {
  request->client_socket = -1;
  request->client_address[0] = 0;
  const union MHD_ConnectionInfo *info =
      mhd.MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
  if (info != NULL) request->client_socket = info->connect_fd;
  info = mhd.MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  if (info == NULL || info->client_addr == NULL) return;
  const struct sockaddr *address = info->client_addr;
  if (address->sa_family == AF_INET) {
    inet_ntop(AF_INET, &((const struct sockaddr_in *)address)->sin_addr, request->client_address,
              sizeof request->client_address);
  } else if (address->sa_family == AF_INET6) {
    inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)address)->sin6_addr,
              request->client_address, sizeof request->client_address);
  }
}

// The request as gathered so far, for `respond` or `admit` (valid while `state` is).
static forum_http_request gathered(
    struct MHD_Connection *connection, const char *method, request_state *state) {
  state->header_count = 0;
  mhd.MHD_get_connection_values_n(connection, MHD_HEADER_KIND, on_header, state);
  const char *target = state->target != NULL ? state->target : "";
  const char *mark = strchr(target, '?');
  size_t path_length = mark != NULL ? (size_t)(mark - target) : strlen(target);
  const char *query = mark != NULL ? mark + 1 : "";
  return (forum_http_request){
      .method = method,
      .path = target,
      .path_length = path_length,
      .query = query,
      .query_length = strlen(query),
      .headers = state->headers,
      .header_count = state->header_count,
      .body = state->body,
      .body_length = state->body_length,
      .parts = state->form_malformed ? NULL : state->parts,
      .part_count = state->form_malformed ? 0 : state->part_count,
      .body_too_large = state->too_large,
      .server_busy = state->busy && !state->too_large,
      .form_malformed = state->form_malformed,
  };
}

static enum MHD_Result dispatch(
    forum_http_server *server, struct MHD_Connection *connection, const char *method,
    request_state *state) {
  state->answered = 1;
  if (state->post != NULL) {
    // A multipart body that ends before its closing boundary is refused here.
    if (mhd.MHD_destroy_post_processor(state->post) != MHD_YES) state->form_malformed = 1;
    state->post = NULL;
  }
  if (state->too_large || state->busy) drop_body(state);
  set_phase(connection, server, PHASE_ANSWER);
  forum_http_request request = gathered(connection, method, state);
  client_of(connection, &request);
  forum_http_exchange exchange = {
      .connection = connection, .server = server, .state = state, .queued = 0, .close = 0};
  server->respond(server->context, &request, &exchange);
  if (exchange.queued) return MHD_YES;
  static const char failure[] = "the server could not answer";
  return queue(
      connection, server, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, 0, (const uint8_t *)failure,
      sizeof failure - 1, 1);
}

// The handler's head admission: 1 when it refused (its answer is queued, the body never read).
static int admit(
    forum_http_server *server, struct MHD_Connection *connection, const char *method,
    request_state *state) {
  forum_http_request head = gathered(connection, method, state);
  forum_http_exchange exchange = {
      .connection = connection, .server = server, .state = state, .queued = 0, .close = 1};
  server->admit(server->context, &head, &exchange);
  if (!exchange.queued) return 0;
  state->answered = 1;
  set_phase(connection, server, PHASE_ANSWER);
  return 1;
}

// The Content-Length headers of a request: how many, the length they say, and whether they
// disagree or one is no number (each may be a list: "5, 5").
typedef struct lengths {
  int count;
  int invalid;
  unsigned long long value;
} lengths;

static enum MHD_Result on_length(
    void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size, const char *value,
    size_t value_size) {
  (void)kind;
  lengths *seen = cls;
  if (key_size != 14 || strncasecmp(key, "Content-Length", 14) != 0) return MHD_YES;
  size_t at = 0;
  do {
    while (at < value_size && (value[at] == ' ' || value[at] == '\t')) at++;
    unsigned long long number = 0;
    size_t digits = 0;
    while (at < value_size && value[at] >= '0' && value[at] <= '9') {
      unsigned digit = (unsigned)(value[at] - '0');
      if (number > (~0ULL - digit) / 10) seen->invalid = 1;
      number = number * 10 + digit;
      digits++;
      at++;
    }
    while (at < value_size && (value[at] == ' ' || value[at] == '\t')) at++;
    if (digits == 0 || (at < value_size && value[at] != ',')) seen->invalid = 1;
    if (seen->count > 0 && number != seen->value) seen->invalid = 1;
    seen->value = number;
    seen->count++;
  } while (at++ < value_size && !seen->invalid);
  return MHD_YES;
}

// RFC 9112 § 6.3: a length that cannot be trusted is answered 400 and the connection closed.
static enum MHD_Result refuse_framing(
    forum_http_server *server, struct MHD_Connection *connection, request_state *state) {
  static const char body[] = "{\"code\":\"E400002\",\"error\":\"Content-Length is invalid.\"}";
  static const char headers[] = "Content-Type\0application/json";
  state->answered = 1;
  set_phase(connection, server, PHASE_ANSWER);
  return queue(
      connection, server, MHD_HTTP_BAD_REQUEST, (const uint8_t *)headers, sizeof headers,
      (const uint8_t *)body, sizeof body - 1, 1);
}

static int is_multipart(const char *content_type) {
  if (content_type == NULL) return 0;
  while (*content_type == ' ' || *content_type == '\t') content_type++;
  return strncasecmp(content_type, "multipart/form-data", 19) == 0;
}

// The first call, once the line and headers are in: nothing of the body is read yet.
static enum MHD_Result on_head(
    forum_http_server *server, struct MHD_Connection *connection, const char *method,
    request_state *state) {
  state->started = 1;
  state->counted = 1;
  state->server = server;
  atomic_fetch_add(&server->in_flight, 1);
  set_phase(connection, server, PHASE_BODY);
  lengths length = {0, 0, 0};
  mhd.MHD_get_connection_values_n(connection, MHD_HEADER_KIND, on_length, &length);
  if (length.invalid) return refuse_framing(server, connection, state);
  const char *coding = mhd.MHD_lookup_connection_value(
      connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
  int has_body = (length.count > 0 && length.value > 0) || coding != NULL;
  if (has_body && server->admit != NULL && admit(server, connection, method, state)) {
    return MHD_YES;
  }
  const char *type =
      mhd.MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
  int multipart = is_multipart(type);
  if (length.count > 0 && coding == NULL) {
    unsigned long long declared = length.value;
    if (declared > server->body_limit) {
      state->too_large = 1;
    } else if (!reserve(state, (size_t)declared * (multipart ? 2 : 1))) {
      // The body and its decoded parts would pass what all connections may hold.
      state->busy = 1;
    } else {
      state->expected = (size_t)declared;
    }
    if (state->too_large || state->busy) {
      const char *expect =
          mhd.MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_EXPECT);
      // A client waiting for "100 Continue" is answered now and sends nothing more. One that
      // sends its body anyway would lose the answer to a reset if the connection closed on
      // unread bytes: up to a bound, the body is read and dropped, and answered after.
      if (expect != NULL || declared > server->body_limit + DISCARD_ALLOWANCE) {
        return dispatch(server, connection, method, state);
      }
      return MHD_YES;
    }
  }
  if (multipart) {
    state->post = mhd.MHD_create_post_processor(connection, 64 * 1024, on_form_data, state);
    if (state->post == NULL) state->form_malformed = 1;
  }
  return MHD_YES;
}

static enum MHD_Result on_request(
    void *cls, struct MHD_Connection *connection, const char *url, const char *method,
    const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls) {
  (void)url;
  (void)version;
  forum_http_server *server = cls;
  request_state *state = *con_cls;
  if (state == NULL) {
    // No target was recorded (cannot happen with the URI callback set); answer for "/".
    state = calloc(1, sizeof *state);
    if (state == NULL) return MHD_NO;
    *con_cls = state;
  }
  if (!state->started) return on_head(server, connection, method, state);
  if (*upload_data_size > 0) {
    size_t size = *upload_data_size;
    *upload_data_size = 0;
    if (state->answered) return MHD_YES;
    if (!state->too_large && !state->busy && state->body_length + size > server->body_limit) {
      // Over the limit (a chunked body, or one sent past its length): dropped, answered at its end.
      state->too_large = 1;
      drop_body(state);
    }
    if (!state->too_large && !state->busy && state->body_length + size > state->body_capacity) {
      size_t wanted = state->body_capacity == 0 ? 16384 : state->body_capacity;
      if (wanted < state->expected) wanted = state->expected;
      while (wanted < state->body_length + size) wanted *= 2;
      if (wanted > server->body_limit) wanted = server->body_limit;
      if (!reserve(state, state->held + wanted - state->body_capacity)) {
        state->busy = 1;
        drop_body(state);
      } else {
        uint8_t *body = realloc(state->body, wanted);
        if (body == NULL) return MHD_NO;
        state->held += wanted - state->body_capacity;
        state->body = body;
        state->body_capacity = wanted;
      }
    }
    if (state->too_large || state->busy) {
      state->discarded += size;
      return state->discarded > server->body_limit + DISCARD_ALLOWANCE ? MHD_NO : MHD_YES;
    }
    memcpy(state->body + state->body_length, upload_data, size);
    state->body_length += size;
    if (state->post != NULL && !state->form_malformed &&
        mhd.MHD_post_process(state->post, upload_data, size) != MHD_YES) {
      state->form_malformed = 1;
      // The parts would pass the budget: all of it is dropped, answered at its end.
      if (state->busy) drop_body(state);
    }
    return MHD_YES;
  }
  if (state->answered) return MHD_YES;
  return dispatch(server, connection, method, state);
}

static void *on_target(void *cls, const char *uri, struct MHD_Connection *connection) {
  (void)cls;
  (void)connection;
  request_state *state = calloc(1, sizeof *state);
  if (state == NULL) return NULL;
  state->target = strdup(uri != NULL ? uri : "");
  return state;
}

static void on_completed(
    void *cls, struct MHD_Connection *connection, void **con_cls,
    enum MHD_RequestTerminationCode toe) {
  (void)toe;
  forum_http_server *server = cls;
  // The next request's line and headers are awaited from now.
  set_phase(connection, server, PHASE_HEAD);
  request_state *state = *con_cls;
  if (state == NULL) return;
  if (state->counted) atomic_fetch_sub(&server->in_flight, 1);
  free_state(state);
  *con_cls = NULL;
}

static void on_log(void *cls, const char *format, va_list arguments) {
  forum_http_server *server = cls;
  if (!atomic_load(&server->starting) || server->start_reason[0] != 0) return;
  vsnprintf(server->start_reason, sizeof server->start_reason, format, arguments);
  size_t length = strlen(server->start_reason);
  while (length > 0 && (server->start_reason[length - 1] == '\n' ||
                        server->start_reason[length - 1] == '.')) {
    server->start_reason[--length] = 0;
  }
}

int forum_http_listen(const char *numeric_host, unsigned port, int *error) {
  struct sockaddr_storage address;
  memset(&address, 0, sizeof address);
  socklen_t length;
  int family;
  struct sockaddr_in *v4 = (struct sockaddr_in *)&address;
  struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&address;
  if (port > 65535) {
    *error = EINVAL;
    return -1;
  }
  if (inet_pton(AF_INET, numeric_host, &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons((uint16_t)port);
    length = sizeof *v4;
    family = AF_INET;
  } else if (inet_pton(AF_INET6, numeric_host, &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons((uint16_t)port);
    length = sizeof *v6;
    family = AF_INET6;
  } else {
    *error = EINVAL;
    return -1;
  }
  int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = errno;
    return -1;
  }
  int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  if (family == AF_INET6) {
    // `[::]` takes IPv4 clients too; `[::1]` is only IPv6 either way.
    int off = 0;
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
  }
  if (bind(fd, (struct sockaddr *)&address, length) != 0 || listen(fd, 1024) != 0) {
    *error = errno;
    close(fd);
    return -1;
  }
  return fd;
}

unsigned forum_http_bound_port(int socket) {
  struct sockaddr_storage address;
  socklen_t length = sizeof address;
  if (getsockname(socket, (struct sockaddr *)&address, &length) != 0) return 0;
  if (address.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&address)->sin_port);
  if (address.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&address)->sin6_port);
  return 0;
}

forum_http_server *forum_http_start(
    const forum_http_config *config, char *reason, size_t reason_size) {
  pthread_once(&mhd_once, mhd_open);
  // A body's buffers (up to the body limit) are mapped apart and given back to the system when
  // freed, not kept in malloc's arenas to the process's high-water mark.
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
  if (mhd_failure[0] != 0) {
    snprintf(reason, reason_size, "%s", mhd_failure);
    close(config->listen_socket);
    return NULL;
  }
  int tls = config->tls_certificate != NULL && config->tls_key != NULL;
  if (tls && mhd.MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
    snprintf(reason, reason_size, "libmicrohttpd was built without TLS");
    close(config->listen_socket);
    return NULL;
  }
  forum_http_server *server = calloc(1, sizeof *server);
  if (server == NULL) {
    snprintf(reason, reason_size, "out of memory");
    close(config->listen_socket);
    return NULL;
  }
  // libmicrohttpd gets a copy of the socket, and ours is closed here whatever happens: a daemon
  // that fails to start closes the socket it was given (0.9.75 does on each failure past its
  // options), so a close of that number afterwards could close what another thread opened
  // under it meanwhile (in the test process, another test's pipe, which then read as a socket:
  // ENOTCONN). A failure before libmicrohttpd reads its options would leave the copy open.
  server->listen_socket = fcntl(config->listen_socket, F_DUPFD_CLOEXEC, 0);
  int copy_error = errno;
  close(config->listen_socket);
  if (server->listen_socket < 0) {
    snprintf(reason, reason_size, "cannot copy the listening socket: %s", strerror(copy_error));
    free(server);
    return NULL;
  }
  server->quiesced_socket = -1;
  server->body_limit = config->body_limit;
  server->idle_timeout = config->idle_timeout_seconds;
  server->respond = config->respond;
  server->admit = config->admit;
  atomic_init(&server->buffered, 0);
  server->buffer_budget = config->buffer_budget;
  server->header_deadline = (uint64_t)config->header_deadline_seconds * 1000;
  server->body_deadline = (uint64_t)config->body_deadline_seconds * 1000;
  pthread_mutex_init(&server->clocks_lock, NULL);
  pthread_cond_init(&server->clocks_wake, NULL);
  server->context = config->context;
  atomic_init(&server->in_flight, 0);
  atomic_init(&server->stopping, 0);
  atomic_init(&server->starting, 1);
  // A thread of its own for each connection (poll, not select: descriptors past 1,024), so a
  // request never waits for another connection's handler, however long that one runs; one
  // listening thread accepts. ITC so that quiesce can take the socket away from it.
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                   MHD_USE_POLL | MHD_USE_ITC | MHD_USE_ERROR_LOG | (tls ? MHD_USE_TLS : 0);
  // The logger first: libmicrohttpd says so in its first message otherwise, and that message
  // would be the start_reason kept in place of the TLS library's (a key that does not fit).
  struct MHD_OptionItem options[20] = {
      {MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)on_log, server},
      {MHD_OPTION_LISTEN_SOCKET, server->listen_socket, NULL},
      {MHD_OPTION_CONNECTION_LIMIT, config->connection_limit, NULL},
      {MHD_OPTION_CONNECTION_TIMEOUT, config->idle_timeout_seconds, NULL},
      {MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)config->connection_memory, NULL},
      {MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)on_target, server},
      {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, server},
      {MHD_OPTION_SIGPIPE_HANDLED_BY_APP, 1, NULL},
      {MHD_OPTION_PER_IP_CONNECTION_LIMIT, config->per_address_connection_limit, NULL},
      {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, server},
  };
  size_t count = 10;
  if (tls) {
    options[count++] =
        (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)FORUM_HTTP_TLS_PRIORITIES};
    options[count++] = (struct MHD_OptionItem){
        MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)config->tls_certificate};
    options[count++] =
        (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)config->tls_key};
  }
  options[count] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
  server->daemon = mhd.MHD_start_daemon(
      flags, 0, NULL, NULL, on_request, server, MHD_OPTION_ARRAY, options, MHD_OPTION_END);
  atomic_store(&server->starting, 0);
  if (server->daemon == NULL) {
    snprintf(
        reason, reason_size, "%s",
        server->start_reason[0] != 0 ? server->start_reason : "libmicrohttpd did not start");
    // The copy is libmicrohttpd's, closed on its way out (see above); ours is closed.
    pthread_cond_destroy(&server->clocks_wake);
    pthread_mutex_destroy(&server->clocks_lock);
    free(server);
    return NULL;
  }
  if (server->header_deadline > 0 || server->body_deadline > 0) {
    server->reaper_running = pthread_create(&server->reaper, NULL, reap, server) == 0;
  }
  return server;
}

void forum_http_quiesce(forum_http_server *server) {
  atomic_store(&server->stopping, 1);
  if (server->quiesced_socket < 0) server->quiesced_socket = mhd.MHD_quiesce_daemon(server->daemon);
}

size_t forum_http_in_flight(forum_http_server *server) {
  return atomic_load(&server->in_flight);
}

size_t forum_http_buffered(forum_http_server *server) { return atomic_load(&server->buffered); }

void forum_http_copied(forum_http_exchange *exchange) {
  if (exchange->state->answered) free_body(exchange->state);
}

void forum_http_stop(forum_http_server *server) {
  atomic_store(&server->stopping, 1);
  if (server->reaper_running) {
    pthread_mutex_lock(&server->clocks_lock);
    server->reaper_stop = 1;
    pthread_cond_signal(&server->clocks_wake);
    pthread_mutex_unlock(&server->clocks_lock);
    pthread_join(server->reaper, NULL);
  }
  mhd.MHD_stop_daemon(server->daemon);
  // Until quiesced, the daemon closes the socket it was given itself.
  if (server->quiesced_socket >= 0) close(server->quiesced_socket);
  pthread_cond_destroy(&server->clocks_wake);
  pthread_mutex_destroy(&server->clocks_lock);
  free(server);
}
