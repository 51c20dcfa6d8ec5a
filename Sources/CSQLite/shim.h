#include <sqlite3.h>

// Statement journals (and savepoints' sub-journals) in memory, never a temporary file: a write
// with triggers journals more than the 64 KiB SQLite keeps in memory by default and would open,
// unlink and close a temporary file every time. sqlite3_config is variadic, so Swift calls this;
// it works only before SQLite initializes (the first connection), and is harmless after.
static inline int forum_sqlite_statement_journals_in_memory(void) {
  return sqlite3_config(SQLITE_CONFIG_STMTJRNL_SPILL, -1);
}
