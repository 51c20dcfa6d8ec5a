#include "CSQLiteMemory.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>

// SQLite's allocations go through libc's malloc with the block's size before it, as SQLite's
// own default allocator does, except that blocks of `kept_size` bytes are kept on a short
// per-thread list for the next statement. An in-memory statement journal is made of them: a
// write with triggers inside a transaction journals each page it touches in four of them and
// frees them all at its end (some 80 a comment), and libc serves that size from its slower
// bins (its per-thread cache holds 7 blocks of a size). A thread's kept blocks are freed when
// the thread ends.

enum { kept_size = 1024, kept_most = 128 };

static _Thread_local void *kept_first = 0;
static _Thread_local int kept_count = 0;
static pthread_key_t kept_key;
static pthread_once_t kept_once = PTHREAD_ONCE_INIT;
/// False when no key could be made: then no block is kept (none would be freed at the end).
static int kept_key_made = 0;

static void release_kept(void *unused) {
  (void)unused;
  while (kept_first) {
    void *block = kept_first;
    kept_first = *(void **)block;
    free((sqlite3_int64 *)block - 1);
  }
  kept_count = 0;
}

static void make_kept_key(void) { kept_key_made = pthread_key_create(&kept_key, release_kept) == 0; }

static int memory_roundup(int size) { return (size + 7) & ~7; }

static void *memory_malloc(int size) {
  size = memory_roundup(size);
  if (size == kept_size && kept_first) {
    void *block = kept_first;
    kept_first = *(void **)block;
    kept_count -= 1;
    return block;
  }
  sqlite3_int64 *block = malloc((size_t)size + sizeof(sqlite3_int64));
  if (!block) return 0;
  block[0] = size;
  return block + 1;
}

static void memory_free(void *pointer) {
  if (!pointer) return;
  sqlite3_int64 *block = (sqlite3_int64 *)pointer - 1;
  if (block[0] == kept_size && kept_count < kept_most) {
    if (kept_count == 0) {
      // The key's destructor runs at the thread's end only for a thread that set it.
      pthread_once(&kept_once, make_kept_key);
      if (!kept_key_made || pthread_setspecific(kept_key, (void *)1) != 0) {
        free(block);
        return;
      }
    }
    *(void **)pointer = kept_first;
    kept_first = pointer;
    kept_count += 1;
    return;
  }
  free(block);
}

static int memory_size(void *pointer) {
  return pointer ? (int)((sqlite3_int64 *)pointer)[-1] : 0;
}

static void *memory_realloc(void *pointer, int size) {
  size = memory_roundup(size);
  sqlite3_int64 *block = (sqlite3_int64 *)pointer - 1;
  sqlite3_int64 *moved = realloc(block, (size_t)size + sizeof(sqlite3_int64));
  if (!moved) return 0;
  moved[0] = size;
  return moved + 1;
}

static int memory_init(void *unused) {
  (void)unused;
  return SQLITE_OK;
}

static void memory_shutdown(void *unused) { (void)unused; }

static const sqlite3_mem_methods memory_methods = {
    memory_malloc, memory_free, memory_realloc, memory_size, memory_roundup,
    memory_init,   memory_shutdown, 0};

// Statement journals (and savepoints' sub-journals) in memory, never a temporary file: a write
// with triggers journals more than the 64 KiB SQLite keeps in memory by default and would open,
// unlink and close a temporary file every time (a spill threshold also sizes the journal's
// blocks to itself, but a spilled journal fails where temporary files may not be written).
// Memory statistics off: nothing reads them, and kept they take a process-wide mutex at every
// allocation and free (about 4 % of a piped comment's instructions). sqlite3_config works
// only before SQLite initializes (the first connection) and is harmless after.
int forum_sqlite_configure(void) {
  sqlite3_config(SQLITE_CONFIG_MALLOC, &memory_methods);
  sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  return sqlite3_config(SQLITE_CONFIG_STMTJRNL_SPILL, -1);
}
