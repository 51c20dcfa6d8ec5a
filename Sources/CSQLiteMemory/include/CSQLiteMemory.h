#ifndef CSQLITEMEMORY_H
#define CSQLITEMEMORY_H

/// SQLite's process-wide settings (see sqlite_memory.c); call before the first connection opens.
/// Returns SQLite's answer to the last setting (SQLITE_MISUSE once SQLite is initialized).
int forum_sqlite_configure(void);

#endif
