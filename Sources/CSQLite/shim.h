#include <sqlite3.h>

// Statement journals (and savepoints' sub-journals) in memory, never a temporary file: a write
// with triggers journals more than the 64 KiB SQLite keeps in memory by default and would open,
// unlink and close a temporary file every time. sqlite3_config is variadic, so Swift calls this;
// it works only before SQLite initializes (the first connection), and is harmless after.
static inline int forum_sqlite_statement_journals_in_memory(void) {
  return sqlite3_config(SQLITE_CONFIG_STMTJRNL_SPILL, -1);
}
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
