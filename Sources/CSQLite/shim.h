#include <sqlite3.h>

#include <string.h>

typedef struct {
  char *out;
  int capacity;
  int length;
} forum_first_token;

static int forum_first_token_found(void *context, int flags, const char *token, int length,
                                   int start, int end) {
  forum_first_token *first = (forum_first_token *)context;
  (void)flags;
  (void)start;
  (void)end;
  if (length <= first->capacity) {
    memcpy(first->out, token, (size_t)length);
    first->length = length;
  }
  return SQLITE_DONE; /* the first token is all the caller wants */
}

/// The first token FTS5's `trigram` tokenizer (with its default case folding) makes of `text`,
/// copied into `out`: the folded text as the index holds it, so a search can look a short word
/// up among the index's own terms. Returns its length in bytes, or -1.
static inline int forum_trigram_first_token(sqlite3 *db, const char *text, int length, char *out,
                                            int capacity) {
  fts5_api *api = NULL;
  sqlite3_stmt *statement = NULL;
  if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &statement, NULL) != SQLITE_OK) return -1;
  sqlite3_bind_pointer(statement, 1, (void *)&api, "fts5_api_ptr", NULL);
  sqlite3_step(statement);
  sqlite3_finalize(statement);
  if (api == NULL) return -1;
  void *userData = NULL;
  fts5_tokenizer tokenizer;
  if (api->xFindTokenizer(api, "trigram", &userData, &tokenizer) != SQLITE_OK) return -1;
  Fts5Tokenizer *instance = NULL;
  if (tokenizer.xCreate(userData, NULL, 0, &instance) != SQLITE_OK) return -1;
  forum_first_token first = {out, capacity, -1};
  tokenizer.xTokenize(instance, &first, FTS5_TOKENIZE_DOCUMENT, text, length,
                      forum_first_token_found);
  tokenizer.xDelete(instance);
  return first.length;
}

/* ---- $regex: PCRE2 (libpcre2-8, opened on first use) as the SQL function forum_regexp ---- */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

/* The few PCRE2 calls used, typed as pcre2.h declares them (no header is needed to build). */
typedef struct {
  int state; /* 0 not tried, 1 loaded, -1 missing */
  void *(*compile)(const unsigned char *, size_t, uint32_t, int *, size_t *, void *);
  void (*code_free)(void *);
  void *(*match_data_create_from_pattern)(const void *, void *);
  void (*match_data_free)(void *);
  int (*match)(const void *, const unsigned char *, size_t, size_t, uint32_t, void *, void *);
  void *(*match_context_create)(void *);
  void (*match_context_free)(void *);
  int (*set_match_limit)(void *, uint32_t);
  int (*set_depth_limit)(void *, uint32_t);
  void *context;
} forum_pcre2;

typedef struct {
  forum_pcre2 *api;
  void *code;
  void *match_data;
} forum_pcre2_pattern;

/* Steps one match may take (PCRE2's match limit): a pattern that backtracks past it on one
   value is refused, in tens of milliseconds, instead of running for ever. */
#define FORUM_REGEX_MATCH_LIMIT 100000
#define FORUM_REGEX_DEPTH_LIMIT 10000
/* The result codes a refused pattern gives the statement (never produced by stepping SQL). */
#define FORUM_REGEX_TOO_COSTLY SQLITE_RANGE
#define FORUM_REGEX_INVALID SQLITE_FORMAT

static inline int forum_pcre2_load(forum_pcre2 *api) {
  if (api->state != 0) return api->state;
  api->state = -1;
  void *library = dlopen("libpcre2-8.so.0", RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) return -1;
#define FORUM_PCRE2(field, name) \
  *(void **)(&api->field) = dlsym(library, name); \
  if (api->field == NULL) return -1;
  FORUM_PCRE2(compile, "pcre2_compile_8")
  FORUM_PCRE2(code_free, "pcre2_code_free_8")
  FORUM_PCRE2(match_data_create_from_pattern, "pcre2_match_data_create_from_pattern_8")
  FORUM_PCRE2(match_data_free, "pcre2_match_data_free_8")
  FORUM_PCRE2(match, "pcre2_match_8")
  FORUM_PCRE2(match_context_create, "pcre2_match_context_create_8")
  FORUM_PCRE2(match_context_free, "pcre2_match_context_free_8")
  FORUM_PCRE2(set_match_limit, "pcre2_set_match_limit_8")
  FORUM_PCRE2(set_depth_limit, "pcre2_set_depth_limit_8")
#undef FORUM_PCRE2
  api->context = api->match_context_create(NULL);
  if (api->context == NULL) return -1;
  api->set_match_limit(api->context, FORUM_REGEX_MATCH_LIMIT);
  api->set_depth_limit(api->context, FORUM_REGEX_DEPTH_LIMIT);
  api->state = 1;
  return 1;
}

static void forum_pcre2_pattern_free(void *pointer) {
  forum_pcre2_pattern *pattern = (forum_pcre2_pattern *)pointer;
  if (pattern->match_data) pattern->api->match_data_free(pattern->match_data);
  if (pattern->code) pattern->api->code_free(pattern->code);
  free(pattern);
}

static void forum_pcre2_free(void *pointer) {
  forum_pcre2 *api = (forum_pcre2 *)pointer;
  if (api->state == 1 && api->context) api->match_context_free(api->context);
  free(api);
}

/* forum_regexp(pattern, flags, value): 1 when the text matches (flags: 1 caseless, 2 multiline,
   4 extended; a dot always matches a line break, as in PostgreSQL), 0 when not or when the
   value is not text. The compiled pattern is kept for the statement (auxiliary data). */
static void forum_regexp_function(sqlite3_context *context, int count, sqlite3_value **values) {
  (void)count;
  forum_pcre2 *api = (forum_pcre2 *)sqlite3_user_data(context);
  if (sqlite3_value_type(values[2]) != SQLITE_TEXT) {
    sqlite3_result_int(context, 0);
    return;
  }
  if (forum_pcre2_load(api) != 1) {
    sqlite3_result_error(context, "libpcre2-8 cannot be loaded", -1);
    return;
  }
  forum_pcre2_pattern *pattern = (forum_pcre2_pattern *)sqlite3_get_auxdata(context, 0);
  if (pattern == NULL) {
    const unsigned char *text = sqlite3_value_text(values[0]);
    int length = sqlite3_value_bytes(values[0]);
    int flags = sqlite3_value_int(values[1]);
    uint32_t options = 0x00080000u /* UTF */ | 0x00000020u /* DOTALL */ | 0x00100000u /* NEVER_BACKSLASH_C */;
    if (flags & 1) options |= 0x00000008u; /* CASELESS */
    if (flags & 2) options |= 0x00000400u; /* MULTILINE */
    if (flags & 4) options |= 0x00000080u; /* EXTENDED */
    pattern = (forum_pcre2_pattern *)calloc(1, sizeof(forum_pcre2_pattern));
    if (pattern == NULL || text == NULL) {
      free(pattern);
      sqlite3_result_error_nomem(context);
      return;
    }
    pattern->api = api;
    int error = 0;
    size_t offset = 0;
    pattern->code = api->compile(text, (size_t)length, options, &error, &offset, NULL);
    if (pattern->code != NULL)
      pattern->match_data = api->match_data_create_from_pattern(pattern->code, NULL);
    if (pattern->code == NULL || pattern->match_data == NULL) {
      forum_pcre2_pattern_free(pattern);
      sqlite3_result_error(context, "the $regex pattern is invalid", -1);
      sqlite3_result_error_code(context, FORUM_REGEX_INVALID);
      return;
    }
    sqlite3_set_auxdata(context, 0, pattern, forum_pcre2_pattern_free);
    pattern = (forum_pcre2_pattern *)sqlite3_get_auxdata(context, 0);
    if (pattern == NULL) {
      sqlite3_result_error_nomem(context);
      return;
    }
  }
  const unsigned char *subject = sqlite3_value_text(values[2]);
  int length = sqlite3_value_bytes(values[2]);
  int found = api->match(pattern->code, subject, (size_t)length, 0, 0, pattern->match_data,
                         api->context);
  if (found >= 0) {
    sqlite3_result_int(context, 1);
  } else if (found == -1) { /* PCRE2_ERROR_NOMATCH */
    sqlite3_result_int(context, 0);
  } else {
    sqlite3_result_error(context, "the $regex pattern backtracks too much", -1);
    sqlite3_result_error_code(context, FORUM_REGEX_TOO_COSTLY);
  }
}

/* Registers forum_regexp on a connection; PCRE2 is opened only when a query calls it. */
static inline int forum_sqlite_register_regexp(sqlite3 *db) {
  forum_pcre2 *api = (forum_pcre2 *)calloc(1, sizeof(forum_pcre2));
  if (api == NULL) return SQLITE_NOMEM;
  return sqlite3_create_function_v2(db, "forum_regexp", 3,
                                    SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY, api,
                                    forum_regexp_function, NULL, NULL, forum_pcre2_free);
}
