#ifndef FORUM_CLIBPQ_H
#define FORUM_CLIBPQ_H

// libpq's declarations, for their types only: forum does not link libpq. Its 37 shared libraries
// (OpenSSL, Kerberos, LDAP…) would load at every start of every command, SQLite boards included.
// The PostgreSQL engine loads it with dlopen when a postgresql:// board is opened and calls it
// through the table below. Calling a PQ function directly fails to link, which is the point.
#include <postgresql/libpq-fe.h>

// Every libpq function the engine calls. Each field has exactly the type of the function it is
// named after (taken from libpq-fe.h), so a call through the table is checked as a direct call.
#define FORUM_LIBPQ_FUNCTIONS(X)                                                               \
  X(PQconninfoParse)                                                                           \
  X(PQconninfoFree)                                                                            \
  X(PQfreemem)                                                                                 \
  X(PQconnectdbParams)                                                                         \
  X(PQstatus)                                                                                  \
  X(PQerrorMessage)                                                                            \
  X(PQconnectionUsedPassword)                                                                  \
  X(PQconnectionNeedsPassword)                                                                 \
  X(PQuser)                                                                                    \
  X(PQfinish)                                                                                  \
  X(PQsetNoticeProcessor)                                                                      \
  X(PQexec)                                                                                    \
  X(PQprepare)                                                                                 \
  X(PQexecPrepared)                                                                            \
  X(PQclear)                                                                                   \
  X(PQresultStatus)                                                                            \
  X(PQresultErrorField)                                                                        \
  X(PQntuples)                                                                                 \
  X(PQnfields)                                                                                 \
  X(PQfname)                                                                                   \
  X(PQgetisnull)                                                                               \
  X(PQgetlength)                                                                               \
  X(PQgetvalue)                                                                                \
  X(PQsocket)                                                                                  \
  X(PQconsumeInput)                                                                            \
  X(PQnotifies)                                                                                \
  X(PQsendQuery)                                                                               \
  X(PQsendQueryPrepared)                                                                       \
  X(PQisBusy)                                                                                  \
  X(PQgetResult)                                                                               \
  X(PQsetSingleRowMode)                                                                        \
  X(PQgetCancel)                                                                               \
  X(PQcancel)                                                                                  \
  X(PQfreeCancel)                                                                               \
  X(PQbackendPID)

#define FORUM_LIBPQ_FIELD(name) __typeof__(name) *_Nonnull name;

/// libpq's functions, resolved from the loaded library.
typedef struct ForumLibPQ {
  FORUM_LIBPQ_FUNCTIONS(FORUM_LIBPQ_FIELD)
} ForumLibPQ;

#undef FORUM_LIBPQ_FIELD

/// Opens the shared library `name` (searched as dlopen searches) and resolves every function of
/// the table from it. The table and the library stay for the life of the process. On failure,
/// returns NULL with what failed (dlopen's reason, or the first function missing) in `reason`,
/// and keeps nothing open.
const ForumLibPQ *_Nullable forum_libpq_load(
    const char *_Nonnull name, char *_Nonnull reason, unsigned long reasonSize);

#endif
